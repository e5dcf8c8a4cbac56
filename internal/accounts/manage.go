package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/jobs"
	"wharf/models"
)

// Input creates or updates an account; nil fields are unchanged.
type Input struct {
	Name               *string
	PhoneNumberID      *string
	BusinessAccountID  *string
	AccessToken        *string
	WebhookVerifyToken *string
	// MessagingTier overrides the tier that paces campaigns ("" clears it).
	MessagingTier *string
}

// Tiers are the accepted tier overrides.
var Tiers = []string{"TIER_50", "TIER_250", "TIER_1K", "TIER_2K", "TIER_10K", "TIER_100K", "TIER_UNLIMITED"}

var providerID = regexp.MustCompile(`^[0-9]{1,32}$`)

// Create connects an account by hand. It starts pending, as an unverified
// claim; the account:refresh job reads its details from the provider and
// verifies it and makes it active when its token works. A number another
// organization owns is refused (409): that verification could never succeed.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*Account, error) {
	defer s.recent.Clear() // after the change, for RecentSender
	a, err := s.create(ctx, s.db, orgID, in)
	if err != nil {
		return nil, err
	}
	s.enqueueRefresh(ctx, orgID, a.ID)
	return a, nil
}

// CreateIn is Create inside the caller's transaction tx (the document
// framework's Platform Account mirror): the account commits or rolls back
// with the caller's work. The caller runs refresh once tx committed (the
// account:refresh job that verifies and activates it).
func (s *Service) CreateIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, in Input) (a *Account, refresh func(context.Context), err error) {
	defer s.recent.Clear()
	if a, err = s.create(ctx, tx, orgID, in); err != nil {
		return nil, nil, err
	}
	return a, func(ctx context.Context) { s.recent.Clear(); s.enqueueRefresh(ctx, orgID, a.ID) }, nil
}

func (s *Service) create(ctx context.Context, db *gorm.DB, orgID uuid.UUID, in Input) (*Account, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", in.Name}, {"phone_number_id", in.PhoneNumberID}, {"business_account_id", in.BusinessAccountID}, {"access_token", in.AccessToken}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			return nil, apperr.Invalidf("%s is required", f.name)
		}
	}
	if !providerID.MatchString(*in.PhoneNumberID) || !providerID.MatchString(*in.BusinessAccountID) {
		return nil, apperr.Invalidf("phone_number_id and business_account_id must be the provider's numeric ids")
	}
	verify := ""
	if in.WebhookVerifyToken != nil {
		verify = strings.TrimSpace(*in.WebhookVerifyToken)
	}
	if verify == "" {
		verify = randomHex(16)
	}
	enc, err := s.box.SealString(strings.TrimSpace(*in.AccessToken))
	if err != nil {
		return nil, err
	}
	row := models.PlatformAccount{OrganizationID: orgID, Name: strings.TrimSpace(*in.Name), PhoneNumberID: *in.PhoneNumberID,
		BusinessAccountID: *in.BusinessAccountID, AccessTokenEnc: enc, WebhookVerifyToken: verify, Status: models.AccountPending}
	err = s.withNumberIn(ctx, db, orgID, row.PhoneNumberID, func(tx *gorm.DB) error { return insert(tx, &row) })
	if err != nil {
		return nil, err
	}
	return s.open(row)
}

// insert creates the row in a nested transaction (a savepoint inside
// withNumber), so that a caller may retry after a conflict.
func insert(db *gorm.DB, row *models.PlatformAccount) error {
	if len([]rune(row.Name)) > 100 {
		return apperr.Invalidf("name must be at most 100 characters")
	}
	err := db.Transaction(func(tx *gorm.DB) error { return tx.Create(row).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Conflictf("the organization already has an account with this name or phone number id")
	}
	return err
}

// msgOwnedElsewhere answers a claim on a number another organization owns.
// It names no organization.
const msgOwnedElsewhere = "this phone number is connected to another organization"

// msgTakenOver is the last_error of a claim that lost its number to another
// organization's verification.
const msgTakenOver = "another organization verified this phone number"

// withNumber runs fn in a transaction holding the phone number's advisory
// lock, after checking that no other organization owns the number (409, and
// fn does not run). Every change of a number's owner, and every provider
// call that acts on a number for an organization (subscribing the app to its
// business account, registering it), runs inside, so that two organizations
// cannot both pass the check. The transaction may thus wait for one provider
// call: only during onboarding, bounded by the provider client's timeout.
func (s *Service) withNumber(ctx context.Context, orgID uuid.UUID, phoneID string, fn func(tx *gorm.DB) error) error {
	return s.withNumberIn(ctx, s.db, orgID, phoneID, fn)
}

// withNumberIn is withNumber in a transaction of db (nested in db's when db
// is one).
func (s *Service) withNumberIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID, phoneID string, fn func(tx *gorm.DB) error) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, "phone_number_id/"+phoneID).Error; err != nil {
			return err
		}
		var owned bool
		err := tx.Raw(`SELECT EXISTS (SELECT 1 FROM platform_accounts
			WHERE phone_number_id = ? AND verified_at IS NOT NULL AND organization_id <> ?)`, phoneID, orgID).Scan(&owned).Error
		if err != nil {
			return err
		}
		if owned {
			return apperr.Conflictf(msgOwnedElsewhere)
		}
		return fn(tx)
	})
}

// verify applies updates to the account and makes it the owner of its
// number; the other organizations' unverified claims on the number become
// disconnected, saying why. It runs inside withNumber.
func (s *Service) verify(tx *gorm.DB, a *models.PlatformAccount, updates map[string]any) error {
	now := s.now()
	updates["verified_at"] = gorm.Expr("COALESCE(verified_at, ?)", now)
	updates["updated_at"] = now
	res := tx.Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates)
	if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
		// The owner index; withNumber's check makes this unreachable.
		return apperr.Conflictf(msgOwnedElsewhere)
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("account not found")
	}
	return tx.Model(&models.PlatformAccount{}).
		Where("phone_number_id = ? AND organization_id <> ? AND verified_at IS NULL AND (status <> ? OR last_error <> ?)",
			a.PhoneNumberID, a.OrganizationID, models.AccountDisconnected, msgTakenOver).
		Updates(map[string]any{"status": models.AccountDisconnected, "last_error": msgTakenOver, "updated_at": now}).Error
}

// RequestRefresh enqueues the account:refresh job (verification and
// activation) of an account created or changed inside a caller's
// transaction, once it committed.
func (s *Service) RequestRefresh(ctx context.Context, orgID, id uuid.UUID) {
	s.recent.Clear()
	s.enqueueRefresh(ctx, orgID, id)
}

func (s *Service) enqueueRefresh(ctx context.Context, orgID, id uuid.UUID) {
	if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.AccountRefresh{OrganizationID: orgID, AccountID: id}); err != nil {
		s.log.Warn("cannot enqueue account refresh", "account_id", id, "error", err)
	}
}

// Update changes the name, token or verify token.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*Account, error) {
	defer s.recent.Clear() // after the change, for RecentSender
	tokenChanged, err := s.update(ctx, s.db, orgID, id, in)
	if err != nil {
		return nil, err
	}
	if tokenChanged {
		s.enqueueRefresh(ctx, orgID, id)
	}
	return s.Get(ctx, orgID, id)
}

// UpdateIn is Update inside the caller's transaction tx. The caller runs
// refresh (nil when the token did not change) once tx committed.
func (s *Service) UpdateIn(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID, in Input) (refresh func(context.Context), err error) {
	defer s.recent.Clear()
	tokenChanged, err := s.update(ctx, tx, orgID, id, in)
	if err != nil || !tokenChanged {
		return nil, err
	}
	return func(ctx context.Context) { s.recent.Clear(); s.enqueueRefresh(ctx, orgID, id) }, nil
}

func (s *Service) update(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID, in Input) (bool, error) {
	var rows []models.PlatformAccount
	if err := db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
		return false, err
	}
	if len(rows) == 0 {
		return false, apperr.NotFoundf("account not found")
	}
	a := rows[0]
	updates := map[string]any{"updated_at": s.now()}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || len([]rune(name)) > 100 {
			return false, apperr.Invalidf("name must be 1 to 100 characters")
		}
		updates["name"] = name
	}
	tokenChanged := false
	if in.AccessToken != nil && strings.TrimSpace(*in.AccessToken) != "" {
		enc, err := s.box.SealString(strings.TrimSpace(*in.AccessToken))
		if err != nil {
			return false, err
		}
		updates["access_token_enc"] = enc
		// A new token may cure a disconnection: the account is pending
		// again until the refresh this enqueues reads the number with it.
		updates["status"] = gorm.Expr("CASE WHEN status = ? THEN ? ELSE status END", models.AccountDisconnected, models.AccountPending)
		tokenChanged = true
	}
	if in.WebhookVerifyToken != nil && strings.TrimSpace(*in.WebhookVerifyToken) != "" {
		updates["webhook_verify_token"] = strings.TrimSpace(*in.WebhookVerifyToken)
	}
	if in.PhoneNumberID != nil || in.BusinessAccountID != nil {
		return false, apperr.Invalidf("phone_number_id and business_account_id cannot change: connect a new account instead")
	}
	if in.MessagingTier != nil {
		tier := strings.ToUpper(strings.TrimSpace(*in.MessagingTier))
		if tier != "" && !slices.Contains(Tiers, tier) {
			return false, apperr.Invalidf("messaging_tier must be one of %s, or empty to use the provider's", strings.Join(Tiers, ", "))
		}
		updates["messaging_tier_override"] = tier
	}
	// A savepoint, so that a caller's transaction survives a refused name.
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, apperr.Conflictf("an account with this name already exists")
	}
	if err != nil {
		return false, err
	}
	return tokenChanged, nil
}

// Delete disconnects an account; its contacts stay, without an account.
// Deleting the owner of a number releases the number: another
// organization's claim can then be verified.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	return s.DeleteIn(ctx, s.db, orgID, id)
}

// DeleteIn is Delete inside the caller's transaction tx (or through the
// pool when tx is the service's db).
func (s *Service) DeleteIn(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) error {
	defer s.recent.Clear() // after the change, for RecentSender
	res := tx.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.PlatformAccount{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("account not found")
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newPIN returns a uniformly random 6-digit PIN.
func newPIN() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%06d", n.Int64())
}
