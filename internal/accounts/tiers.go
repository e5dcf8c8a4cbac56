package accounts

import (
	"strings"

	"wharf/models"
)

// Messaging tiers pace every send of an account (internal/outbound): the
// rate is messages per second of our own; 0 means no limit of ours (the
// provider's throughput cap still applies). Unknown tiers get the lowest
// rate.
var tierRates = map[string]int{
	"TIER_50": 10, "TIER_250": 10, "TIER_1K": 10, "TIER_2K": 10,
	"TIER_10K": 30, "TIER_100K": 80, "TIER_UNLIMITED": 0,
}

// EffectiveTier is the tier that paces an account: its override, else the
// tier the provider reports, else TIER_1K.
func EffectiveTier(a *models.PlatformAccount) string {
	switch {
	case a.MessagingTierOverride != "":
		return a.MessagingTierOverride
	case a.MessagingLimit != "":
		return a.MessagingLimit
	}
	return "TIER_1K"
}

// RateFor returns the messages per second of a tier (0: unlimited).
func RateFor(tier string) int {
	if r, ok := tierRates[strings.ToUpper(tier)]; ok {
		return r
	}
	return 10
}

// Rate is the messages per second that pace account a (0: unlimited).
func Rate(a *models.PlatformAccount) int { return RateFor(EffectiveTier(a)) }
