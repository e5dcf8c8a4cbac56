package identity

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/jobs"
	"wharf/models"
)

// API key format: the literal prefix and 32 lowercase hex characters.
const (
	apiKeyPrefix    = "whm_"
	apiKeyPrefixLen = 8 // key_prefix shown in lists: "whm_" + 4 hex
)

var apiKeyFormat = regexp.MustCompile(`^whm_[0-9a-f]{32}$`)

// CreatedAPIKey carries the plaintext key, which exists only in this answer.
type CreatedAPIKey struct {
	models.APIKey
	Key string
}

// CreateAPIKey creates a key that acts as p in p's organization.
func (s *Service) CreateAPIKey(ctx context.Context, p *Principal, name string, expiresAt *time.Time) (*CreatedAPIKey, error) {
	if err := sessionOnly(p, "create API keys"); err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, apperr.Invalidf("name is required")
	}
	if len([]rune(name)) > 100 {
		return nil, apperr.Invalidf("name must be at most 100 characters")
	}
	if expiresAt != nil && !expiresAt.After(s.now()) {
		return nil, apperr.Invalidf("expires_at must be in the future")
	}
	key, hash, err := newOpaqueToken(apiKeyPrefix, 16)
	if err != nil {
		return nil, err
	}
	row := models.APIKey{OrganizationID: p.OrgID, UserID: p.UserID, Name: name, KeyHash: hash,
		KeyPrefix: key[:apiKeyPrefixLen], ExpiresAt: expiresAt}
	if expiresAt != nil {
		t := expiresAt.UTC()
		row.ExpiresAt = &t
	}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return nil, err
	}
	return &CreatedAPIKey{APIKey: row, Key: key}, nil
}

// ListAPIKeys lists the organization's keys, newest first.
func (s *Service) ListAPIKeys(ctx context.Context, orgID uuid.UUID) ([]models.APIKey, error) {
	var out []models.APIKey
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("created_at DESC").Find(&out).Error
	return out, err
}

// DeleteAPIKey revokes a key. Keys are looked up on every request, so the
// revocation holds at once on every replica.
func (s *Service) DeleteAPIKey(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.APIKey{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("API key not found")
	}
	return nil
}

// AuthenticateAPIKey finds the key by its SHA-256 hash (one indexed lookup, no
// password hashing per request) and returns the principal of its creator.
func (s *Service) AuthenticateAPIKey(ctx context.Context, key string) (*Principal, error) {
	return s.authenticateKey(ctx, key, uuid.Nil)
}

// AuthenticateAPIToken authenticates Frappe's "Authorization: token
// <api_key>:<api_secret>", where api_key is the key's id (as GET
// /api/api-keys shows it) and api_secret the key itself, with or without
// its whm_ prefix. The key is found by the secret's hash, as
// AuthenticateAPIKey finds it (one indexed lookup), and must have that id.
func (s *Service) AuthenticateAPIToken(ctx context.Context, apiKey, apiSecret string) (*Principal, error) {
	id, err := uuid.Parse(apiKey)
	if err != nil || id == uuid.Nil {
		return nil, apperr.Unauthorizedf("invalid API token")
	}
	if !strings.HasPrefix(apiSecret, apiKeyPrefix) {
		apiSecret = apiKeyPrefix + apiSecret
	}
	return s.authenticateKey(ctx, apiSecret, id)
}

// authenticateKey finds key by its hash; wantID, when set, must be its id.
func (s *Service) authenticateKey(ctx context.Context, key string, wantID uuid.UUID) (*Principal, error) {
	invalid := "invalid API key"
	if wantID != uuid.Nil {
		invalid = "invalid API token"
	}
	if !apiKeyFormat.MatchString(key) {
		return nil, apperr.Unauthorizedf("%s", invalid)
	}
	var k models.APIKey
	err := s.db.WithContext(ctx).Take(&k, "key_hash = ?", hashToken(key)).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && wantID != uuid.Nil && k.ID != wantID) {
		return nil, apperr.Unauthorizedf("%s", invalid)
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if k.ExpiresAt != nil && !k.ExpiresAt.After(now) {
		return nil, apperr.Unauthorizedf("API key has expired")
	}
	p, err := s.principal(ctx, k.UserID, k.OrganizationID)
	if err != nil {
		return nil, err
	}
	p.APIKeyID = &k.ID
	s.usage.record(ctx, k.OrganizationID, k.ID, k.LastUsedAt, now)
	return p, nil
}

// TouchAPIKey stores a use time; it only moves last_used_at forward, so a
// late or repeated task changes nothing.
func (s *Service) TouchAPIKey(ctx context.Context, orgID, id uuid.UUID, at time.Time) error {
	return s.db.WithContext(ctx).Model(&models.APIKey{}).Scopes(tenant.Scope(orgID)).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, at).
		Update("last_used_at", at.UTC()).Error
}

// touchEvery is the resolution of last_used_at.
const touchEvery = time.Minute

// keyUsage turns per-request key use into at most one apikey:touch job per
// key and minute per api process (and, through the task id, across processes).
type keyUsage struct {
	enq  *jobs.Enqueuer
	log  *slog.Logger
	mu   sync.Mutex
	last map[uuid.UUID]time.Time
}

func newKeyUsage(enq *jobs.Enqueuer, log *slog.Logger) *keyUsage {
	return &keyUsage{enq: enq, log: log, last: map[uuid.UUID]time.Time{}}
}

func (u *keyUsage) record(ctx context.Context, orgID, keyID uuid.UUID, stored *time.Time, now time.Time) {
	if u.enq == nil || (stored != nil && now.Sub(*stored) < touchEvery) {
		return
	}
	u.mu.Lock()
	if t, ok := u.last[keyID]; ok && now.Sub(t) < touchEvery {
		u.mu.Unlock()
		return
	}
	u.last[keyID] = now
	if len(u.last) > 10_000 { // forget keys not seen for a while
		for id, t := range u.last {
			if now.Sub(t) > touchEvery {
				delete(u.last, id)
			}
		}
	}
	u.mu.Unlock()
	_, err := u.enq.Enqueue(context.WithoutCancel(ctx), jobs.APIKeyTouch{OrganizationID: orgID, APIKeyID: keyID, UsedAt: now})
	if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
		u.log.Warn("cannot record API key use", "api_key_id", keyID, "error", err)
	}
}

// Recheck loads p's principal again (a long-lived request, such as the
// event stream, checks now and then that its caller is still allowed): an
// error when the user was removed or disabled, or p's API key was deleted
// or has expired; otherwise the principal as it is now, permissions
// included.
func (s *Service) Recheck(ctx context.Context, p *Principal) (*Principal, error) {
	if p.APIKeyID != nil {
		var k models.APIKey
		err := s.db.WithContext(ctx).Select("id", "expires_at").Take(&k, "id = ? AND organization_id = ?", *p.APIKeyID, p.OrgID).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.Unauthorizedf("invalid API key")
		}
		if err != nil {
			return nil, err
		}
		if k.ExpiresAt != nil && !k.ExpiresAt.After(s.now()) {
			return nil, apperr.Unauthorizedf("API key has expired")
		}
	}
	np, err := s.principal(ctx, p.UserID, p.OrgID)
	if err != nil {
		return nil, err
	}
	cp := *np
	cp.APIKeyID = p.APIKeyID
	return &cp, nil
}
