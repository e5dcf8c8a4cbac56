package accounts

import (
	"testing"

	"wharf/models"
)

func TestEveryAcceptedTierHasARate(t *testing.T) {
	for _, tier := range Tiers {
		if _, ok := tierRates[tier]; !ok {
			t.Errorf("tier %s has no rate", tier)
		}
	}
	want := map[string]int{"TIER_1K": 10, "TIER_10K": 30, "TIER_100K": 80, "TIER_UNLIMITED": 0, "SOMETHING_NEW": 10, "tier_10k": 30}
	for tier, rate := range want {
		if got := RateFor(tier); got != rate {
			t.Errorf("%s: %d, want %d", tier, got, rate)
		}
	}
	a := models.PlatformAccount{}
	if EffectiveTier(&a) != "TIER_1K" {
		t.Fatal("default tier")
	}
	a.MessagingLimit = "TIER_100K"
	if EffectiveTier(&a) != "TIER_100K" {
		t.Fatal("provider tier")
	}
	a.MessagingTierOverride = "TIER_UNLIMITED"
	if EffectiveTier(&a) != "TIER_UNLIMITED" {
		t.Fatal("override")
	}
}
