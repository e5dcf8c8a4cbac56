// Package orgsettings owns the per-organization settings: both endpoint
// families of the spec read and write the same stored values, unset values
// fall back to server defaults, and the provider app secret is kept
// encrypted and never returned.
package orgsettings

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // timezone names validate even where the OS has no zoneinfo

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/audio"
	"wharf/internal/infra/secrets"
	"wharf/internal/infra/storage"
	"wharf/internal/infra/versioned"
	"wharf/models"
)

// Defaults are the server defaults that unset settings fall back to.
var Defaults = Settings{
	Timezone:            "UTC",
	DateFormat:          "YYYY-MM-DD",
	MaxCallDuration:     3600,
	TransferTimeoutSecs: 60,
	// Open unless the organization says otherwise, as the spec shows; the
	// bootstrap organization is created closed (see Initial).
	SelfRegistrationEnabled: true,
	OptOutKeywords:          DefaultOptOutKeywords,
	OptInKeywords:           DefaultOptInKeywords,
}

// DateFormats are the accepted date_format values.
var DateFormats = []string{"YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD-MM-YYYY", "DD.MM.YYYY", "YYYY/MM/DD"}

// Settings are the effective settings of an organization.
type Settings struct {
	MaskPhoneNumbers     bool
	Timezone             string
	DateFormat           string
	CallingEnabled       bool
	MaxCallDuration      int
	TransferTimeoutSecs  int
	HoldMusicFile        string
	RingbackFile         string
	ProviderAppID        string
	ProviderConfigID     string
	HasProviderAppSecret bool
	// SelfRegistrationEnabled lets anyone who knows the organization's id
	// join it with its default role through POST /api/auth/register.
	SelfRegistrationEnabled bool
	// Opt-out and opt-in keywords, and their confirmations (keywords.go).
	OptOutKeywords     []string
	OptInKeywords      []string
	OptOutConfirmation string
	OptInConfirmation  string
}

// stored is the JSON kept in organizations.settings; nil means unset.
type stored struct {
	MaskPhoneNumbers    *bool   `json:"mask_phone_numbers,omitempty"`
	Timezone            *string `json:"timezone,omitempty"`
	DateFormat          *string `json:"date_format,omitempty"`
	CallingEnabled      *bool   `json:"calling_enabled,omitempty"`
	MaxCallDuration     *int    `json:"max_call_duration,omitempty"`
	TransferTimeoutSecs *int    `json:"transfer_timeout_secs,omitempty"`
	HoldMusicFile       *string `json:"hold_music_file,omitempty"`
	RingbackFile        *string `json:"ringback_file,omitempty"`
	ProviderAppID       *string `json:"provider_app_id,omitempty"`
	ProviderConfigID    *string `json:"provider_config_id,omitempty"`
	// SelfRegistrationEnabled: migration 00008 writes false into the
	// oldest organization of a database that predates this setting.
	SelfRegistrationEnabled *bool     `json:"self_registration_enabled,omitempty"`
	OptOutKeywords          *[]string `json:"opt_out_keywords,omitempty"`
	OptInKeywords           *[]string `json:"opt_in_keywords,omitempty"`
	OptOutConfirmation      *string   `json:"opt_out_confirmation,omitempty"`
	OptInConfirmation       *string   `json:"opt_in_confirmation,omitempty"`
}

func (s stored) resolve(hasSecret bool) Settings {
	out := Defaults
	set(&out.MaskPhoneNumbers, s.MaskPhoneNumbers)
	set(&out.Timezone, s.Timezone)
	set(&out.DateFormat, s.DateFormat)
	set(&out.CallingEnabled, s.CallingEnabled)
	set(&out.MaxCallDuration, s.MaxCallDuration)
	set(&out.TransferTimeoutSecs, s.TransferTimeoutSecs)
	set(&out.HoldMusicFile, s.HoldMusicFile)
	set(&out.RingbackFile, s.RingbackFile)
	set(&out.ProviderAppID, s.ProviderAppID)
	set(&out.ProviderConfigID, s.ProviderConfigID)
	set(&out.SelfRegistrationEnabled, s.SelfRegistrationEnabled)
	set(&out.OptOutKeywords, s.OptOutKeywords)
	set(&out.OptInKeywords, s.OptInKeywords)
	set(&out.OptOutConfirmation, s.OptOutConfirmation)
	set(&out.OptInConfirmation, s.OptInConfirmation)
	out.HasProviderAppSecret = hasSecret
	return out
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Service reads and writes organization settings.
type Service struct {
	db        *gorm.DB
	box       *secrets.Box
	store     storage.Store
	transcode *audio.Transcoder
	// maskers caches Masker answers and keywords the opt-out keywords
	// (nil: every call reads the organization); see WithMaskerCache and
	// WithKeywordCache.
	maskers  *versioned.Cache[uuid.UUID, Masker]
	keywords *versioned.Cache[uuid.UUID, Keywords]
}

// Option changes a default of NewService.
type Option func(*Service)

// WithMaskerCache keeps organizations' maskers in process, exact across
// replicas through a version per organization in rdb that Apply replaces
// (internal/versioned); maxAge bounds an entry's life should an invalidation
// be lost. The api uses it: every answer that shows a contact asks.
func WithMaskerCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) Option {
	return func(s *Service) { s.maskers = versioned.New[uuid.UUID, Masker](rdb, maxAge, 50_000, log) }
}

// WithKeywordCache keeps organizations' opt-out and opt-in keywords in
// process the same way (the version Apply replaces). The worker uses it:
// every short incoming message is matched against them, and reading the
// organization's row for it was one of the inbound transaction's round trips
// (docs/BENCHMARKS.md, "Chatbot replies, round 4").
func WithKeywordCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) Option {
	return func(s *Service) { s.keywords = versioned.New[uuid.UUID, Keywords](rdb, maxAge, 50_000, log) }
}

// versionKey names the version of an organization's settings, which every
// cache of them is kept under.
func versionKey(org uuid.UUID) string { return "wharf:orgsettings:v:" + org.String() }

// NewService wires the settings domain. transcoder may be nil in processes
// that take no uploads.
func NewService(db *gorm.DB, box *secrets.Box, store storage.Store, transcoder *audio.Transcoder, opts ...Option) *Service {
	s := &Service{db: db, box: box, store: store, transcode: transcoder}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Get returns the organization's name and effective settings.
func (s *Service) Get(ctx context.Context, orgID uuid.UUID) (string, Settings, error) {
	org, st, err := s.load(ctx, s.db, orgID)
	if err != nil {
		return "", Settings{}, err
	}
	return org.Name, st.resolve(len(org.ProviderAppSecretEnc) > 0), nil
}

func (s *Service) load(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (*models.Organization, stored, error) {
	return loadOrg(ctx, db, orgID)
}

func loadOrg(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (*models.Organization, stored, error) {
	var org models.Organization
	if err := db.WithContext(ctx).Take(&org, "id = ?", orgID).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, stored{}, apperr.NotFoundf("organization not found")
		}
		return nil, stored{}, err
	}
	var st stored
	if len(org.Settings) > 0 {
		if err := json.Unmarshal(org.Settings, &st); err != nil {
			return nil, stored{}, err
		}
	}
	return &org, st, nil
}

// Of is the effective settings of an organization row its caller already
// loaded (the current organization's timezone and date format, which every
// member sees).
func Of(org *models.Organization) (Settings, error) {
	var st stored
	if len(org.Settings) > 0 {
		if err := json.Unmarshal(org.Settings, &st); err != nil {
			return Settings{}, err
		}
	}
	return st.resolve(len(org.ProviderAppSecretEnc) > 0), nil
}

// Update is a partial change; nil fields stay as they are. Empty Name and
// empty ProviderAppSecret are ignored, as are MaxCallDuration and
// TransferTimeoutSecs that are not positive (the spec's rules).
type Update struct {
	Name                *string
	MaskPhoneNumbers    *bool
	Timezone            *string
	DateFormat          *string
	CallingEnabled      *bool
	MaxCallDuration     *int
	TransferTimeoutSecs *int
	HoldMusicFile       *string
	RingbackFile        *string
	ProviderAppID       *string
	ProviderConfigID    *string
	ProviderAppSecret   *string
	// SelfRegistrationEnabled needs nothing beyond settings:update, which the
	// route requires: whoever may change the settings may open or close the
	// organization.
	SelfRegistrationEnabled *bool
	// Opt-out and opt-in keywords (keywords.go): a list replaces the
	// stored one; an empty confirmation sends none.
	OptOutKeywords     *[]string
	OptInKeywords      *[]string
	OptOutConfirmation *string
	OptInConfirmation  *string
}

// Apply validates u and merges it into the stored settings. The merge is a
// JSON concatenation in SQL, so two concurrent updates of different fields
// both survive.
func (s *Service) Apply(ctx context.Context, orgID uuid.UUID, u Update) error {
	patch := stored{
		MaskPhoneNumbers:        u.MaskPhoneNumbers,
		CallingEnabled:          u.CallingEnabled,
		ProviderAppID:           trimmed(u.ProviderAppID),
		ProviderConfigID:        trimmed(u.ProviderConfigID),
		SelfRegistrationEnabled: u.SelfRegistrationEnabled,
	}
	if u.Timezone != nil {
		tz := strings.TrimSpace(*u.Timezone)
		if _, err := time.LoadLocation(tz); err != nil || tz == "" || tz == "Local" {
			return apperr.Invalidf("timezone must be an IANA time zone name such as UTC or Europe/Paris")
		}
		patch.Timezone = &tz
	}
	if u.DateFormat != nil {
		if !slices.Contains(DateFormats, *u.DateFormat) {
			return apperr.Invalidf("date_format must be one of %s", strings.Join(DateFormats, ", "))
		}
		patch.DateFormat = u.DateFormat
	}
	if u.MaxCallDuration != nil && *u.MaxCallDuration > 0 {
		if *u.MaxCallDuration > 86400 {
			return apperr.Invalidf("max_call_duration must be at most 86400 seconds")
		}
		patch.MaxCallDuration = u.MaxCallDuration
	}
	if u.TransferTimeoutSecs != nil && *u.TransferTimeoutSecs > 0 {
		if *u.TransferTimeoutSecs > 3600 {
			return apperr.Invalidf("transfer_timeout_secs must be at most 3600 seconds")
		}
		patch.TransferTimeoutSecs = u.TransferTimeoutSecs
	}
	if u.OptOutKeywords != nil || u.OptInKeywords != nil || u.OptOutConfirmation != nil || u.OptInConfirmation != nil {
		_, cur, err := s.Get(ctx, orgID)
		if err != nil {
			return err
		}
		if err := checkKeywords(u, cur, &patch); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		kind string
		v    *string
		dst  **string
	}{{"hold_music_file", HoldMusic, u.HoldMusicFile, &patch.HoldMusicFile}, {"ringback_file", Ringback, u.RingbackFile, &patch.RingbackFile}} {
		if f.v == nil {
			continue
		}
		name := strings.TrimSpace(*f.v)
		if name != "" {
			ok, err := s.audioExists(ctx, orgID, f.kind, name)
			if err != nil {
				return err
			}
			if !ok {
				return apperr.Invalidf("%s must name a file uploaded with POST /api/org/audio (type %s), or be empty", f.name, f.kind)
			}
		}
		*f.dst = &name
	}
	updates := map[string]any{"updated_at": time.Now().UTC()}
	if u.Name != nil {
		if name := strings.TrimSpace(*u.Name); name != "" {
			if len([]rune(name)) > 100 {
				return apperr.Invalidf("name must be at most 100 characters")
			}
			updates["name"] = name
		}
	}
	if u.ProviderAppSecret != nil && strings.TrimSpace(*u.ProviderAppSecret) != "" {
		enc, err := s.box.SealString(strings.TrimSpace(*u.ProviderAppSecret))
		if err != nil {
			return err
		}
		updates["provider_app_secret_enc"] = enc
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	updates["settings"] = gorm.Expr("settings || ?::jsonb", string(b))
	res := s.db.WithContext(ctx).Model(&models.Organization{}).Where("id = ?", orgID).Updates(updates)
	s.changed(ctx, orgID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("organization not found")
	}
	return nil
}

// changed replaces the organization's settings version after a change
// committed, so that no process serves its cached settings again.
func (s *Service) changed(ctx context.Context, orgID uuid.UUID) {
	covers := func(k uuid.UUID) bool { return k == orgID }
	if s.maskers != nil {
		s.maskers.Changed(ctx, versionKey(orgID), covers)
	}
	if s.keywords != nil {
		s.keywords.Changed(ctx, versionKey(orgID), covers)
	}
}

// Initial is the settings JSON a new organization is created with. Only
// self-registration is written explicitly, so that the choice made at
// creation (closed for the bootstrap organization, open for the others)
// does not depend on a default that may change later.
func Initial(selfRegistration bool) []byte {
	b, err := json.Marshal(stored{SelfRegistrationEnabled: &selfRegistration})
	if err != nil {
		panic(err) // a struct of one bool always marshals
	}
	return b
}

// SelfRegistrationOpen reports whether the organization accepts
// self-registration; an unknown organization is a 404. It reads through db so
// that a caller can use it inside its transaction.
func SelfRegistrationOpen(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (bool, error) {
	_, st, err := loadOrg(ctx, db, orgID)
	if err != nil {
		return false, err
	}
	return st.resolve(false).SelfRegistrationEnabled, nil
}

// ProviderAppSecret returns the decrypted app secret, or "" when none is set.
func (s *Service) ProviderAppSecret(ctx context.Context, orgID uuid.UUID) (string, error) {
	org, _, err := s.load(ctx, s.db, orgID)
	if err != nil || len(org.ProviderAppSecretEnc) == 0 {
		return "", err
	}
	return s.box.OpenString(org.ProviderAppSecretEnc)
}

func trimmed(p *string) *string {
	if p == nil {
		return nil
	}
	v := strings.TrimSpace(*p)
	return &v
}
