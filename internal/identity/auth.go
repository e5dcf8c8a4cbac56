package identity

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// Session is what register, login, refresh and switch-org hand out.
type Session struct {
	Principal    *Principal
	AccessToken  string
	RefreshToken string
	ExpiresIn    int // seconds
	// RefreshExpiresAt is when the refresh token expires (the console's
	// cookie expires with it).
	RefreshExpiresAt time.Time
}

// errBadLogin is the single answer to a wrong email or a wrong password, so
// that the response does not reveal which one was wrong.
var errBadLogin = apperr.Unauthorizedf("invalid email or password")

// RegisterInput is the body of POST /api/auth/register.
type RegisterInput struct {
	Email, Password, FullName string
	OrganizationID            string
}

// errRegistrationClosed answers self-registration into an organization that
// has switched it off (the orgsettings flag self_registration_enabled).
var errRegistrationClosed = apperr.Forbiddenf("self-registration is disabled for this organization")

// Register creates a user in an existing organization with its default role,
// when the organization accepts self-registration. Everything that can refuse
// the request is checked before the password is hashed.
func (s *Service) Register(ctx context.Context, in RegisterInput) (*Session, error) {
	orgID, err := uuid.Parse(strings.TrimSpace(in.OrganizationID))
	if err != nil {
		return nil, apperr.Invalidf("organization_id must be a UUID")
	}
	user, err := validNewUser(in.Email, in.Password, in.FullName)
	if err != nil {
		return nil, err
	}
	if _, err := registrationRole(ctx, s.db, orgID); err != nil {
		return nil, err
	}
	if user.PasswordHash, err = s.hashPassword(ctx, in.Password); err != nil {
		return nil, err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Checked again: the settings or the default role may have changed
		// while the password was being hashed.
		role, err := registrationRole(ctx, tx, orgID)
		if err != nil {
			return err
		}
		return insertUserWithMembership(tx, user, orgID, role.ID)
	})
	if err != nil {
		return nil, err
	}
	return s.startSession(ctx, user.ID, orgID, uuid.New())
}

// registrationRole returns the role self-registration hands out in orgID, or
// why it cannot: unknown organization (404), self-registration switched off,
// or a default role that carries administrative permissions (possible only
// in data written before that rule existed).
func registrationRole(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (*models.Role, error) {
	open, err := orgsettings.SelfRegistrationOpen(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	if !open {
		return nil, errRegistrationClosed
	}
	role, err := roleForAssignment(ctx, db, orgID, nil)
	if err != nil {
		return nil, err
	}
	perms, err := rolePermissions(ctx, db, role.ID)
	if err != nil {
		return nil, err
	}
	if bad := forbiddenForDefault(perms); len(bad) > 0 {
		return nil, apperr.Forbiddenf("self-registration is disabled for this organization: its default role carries %s, which self-registered users may not hold",
			strings.Join(bad, ", "))
	}
	return role, nil
}

// newUser validates and prepares a user row, hashing the password.
func (s *Service) newUser(ctx context.Context, email, password, fullName string) (*models.User, error) {
	u, err := validNewUser(email, password, fullName)
	if err != nil {
		return nil, err
	}
	if u.PasswordHash, err = s.hashPassword(ctx, password); err != nil {
		return nil, err
	}
	return u, nil
}

// validNewUser validates a new user's fields and returns the row without its
// password hash.
func validNewUser(email, password, fullName string) (*models.User, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return nil, err
	}
	if err := ValidatePassword("password", password); err != nil {
		return nil, err
	}
	fullName = strings.TrimSpace(fullName)
	if fullName == "" {
		return nil, apperr.Invalidf("full_name is required")
	}
	if len(fullName) > 200 {
		return nil, apperr.Invalidf("full_name must be at most 200 characters")
	}
	return &models.User{Email: email, FullName: fullName, IsActive: true, IsAvailable: true}, nil
}

func insertUserWithMembership(tx *gorm.DB, u *models.User, orgID, roleID uuid.UUID) error {
	u.OrganizationID = orgID
	if err := tx.Create(u).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return apperr.Conflictf("a user with this email already exists")
		}
		return err
	}
	return tx.Create(&models.OrganizationMember{OrganizationID: orgID, UserID: u.ID, RoleID: roleID, IsDefault: true}).Error
}

func normalizeEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return "", apperr.Invalidf("email is required")
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 254 {
		return "", apperr.Invalidf("email is not a valid address")
	}
	return email, nil
}

// Login checks credentials and opens a session in the user's default
// organization.
func (s *Service) Login(ctx context.Context, email, password string) (*Session, error) {
	if strings.TrimSpace(email) == "" || password == "" {
		return nil, apperr.Invalidf("email and password are required")
	}
	u, err := s.checkCredentials(ctx, email, password)
	if err != nil {
		return nil, err
	}
	orgID, err := s.defaultOrg(ctx, *u)
	if err != nil {
		return nil, err
	}
	return s.startSession(ctx, u.ID, orgID, uuid.New())
}

// checkCredentials returns the active user with this email and password.
// Unknown emails cost the same password check as known ones, and both
// failures give the same answer.
func (s *Service) checkCredentials(ctx context.Context, email, password string) (*models.User, error) {
	var u models.User
	err := s.db.WithContext(ctx).Where("lower(email) = ?", strings.ToLower(strings.TrimSpace(email))).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if _, err := s.verifyPassword(ctx, dummyHash(), password); err != nil {
			return nil, err
		}
		return nil, errBadLogin
	}
	if err != nil {
		return nil, err
	}
	if match, err := s.verifyPassword(ctx, u.PasswordHash, password); err != nil {
		return nil, err
	} else if !match {
		return nil, errBadLogin
	}
	if !u.IsActive {
		return nil, apperr.Unauthorizedf("user account is disabled")
	}
	return &u, nil
}

// defaultOrg picks the membership marked default, then the home organization,
// then the oldest membership.
func (s *Service) defaultOrg(ctx context.Context, u models.User) (uuid.UUID, error) {
	var m models.OrganizationMember
	err := s.db.WithContext(ctx).Where("user_id = ?", u.ID).
		Order(clause.Expr{SQL: "is_default DESC, (organization_id = ?) DESC, created_at", Vars: []any{u.OrganizationID}}).
		Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if u.IsSuperAdmin {
			return u.OrganizationID, nil
		}
		return uuid.Nil, apperr.Forbiddenf("your account is not a member of any organization")
	}
	return m.OrganizationID, err
}

// startSession issues an access token and a refresh token in family.
func (s *Service) startSession(ctx context.Context, userID, orgID, family uuid.UUID) (*Session, error) {
	p, err := loadPrincipal(ctx, s.db, userID, orgID)
	if err != nil {
		return nil, err
	}
	return s.issue(ctx, s.db, p, family)
}

func (s *Service) issue(ctx context.Context, db *gorm.DB, p *Principal, family uuid.UUID) (*Session, error) {
	access, err := s.tokens.SignAccess(p)
	if err != nil {
		return nil, err
	}
	refresh, hash, err := newOpaqueToken(refreshPrefix, 32)
	if err != nil {
		return nil, err
	}
	row := models.RefreshToken{TokenHash: hash, FamilyID: family, UserID: p.UserID, OrganizationID: p.OrgID,
		ExpiresAt: s.now().Add(s.tokens.refreshTTL)}
	if err := db.WithContext(ctx).Create(&row).Error; err != nil {
		return nil, err
	}
	return &Session{Principal: p, AccessToken: access, RefreshToken: refresh, ExpiresIn: int(s.tokens.accessTTL.Seconds()),
		RefreshExpiresAt: row.ExpiresAt}, nil
}

// Refresh rotates a refresh token: the presented token is spent and a new one
// of the same family is returned. Presenting a spent token again means it
// leaked (or a client retried after losing the answer): the whole family is
// revoked and the caller must log in again.
func (s *Service) Refresh(ctx context.Context, token string) (*Session, error) {
	if !strings.HasPrefix(token, refreshPrefix) {
		return nil, apperr.Unauthorizedf("invalid refresh token")
	}
	var sess *Session
	var reused bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rt models.RefreshToken
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("token_hash = ?", hashToken(token)).Take(&rt).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return apperr.Unauthorizedf("invalid refresh token")
		}
		if err != nil {
			return err
		}
		now := s.now()
		switch {
		case rt.RevokedAt != nil:
			return apperr.Unauthorizedf("refresh token has been revoked")
		case rt.UsedAt != nil:
			reused = true
			return tx.Model(&models.RefreshToken{}).Where("family_id = ? AND revoked_at IS NULL", rt.FamilyID).
				Update("revoked_at", now).Error
		case !rt.ExpiresAt.After(now):
			return apperr.Unauthorizedf("refresh token has expired")
		}
		if err := tx.Model(&rt).Update("used_at", now).Error; err != nil {
			return err
		}
		p, err := loadPrincipal(ctx, tx, rt.UserID, rt.OrganizationID)
		if err != nil {
			return err
		}
		sess, err = s.issue(ctx, tx, p, rt.FamilyID)
		return err
	})
	if reused {
		s.log.Warn("refresh token reuse detected; session family revoked")
		return nil, apperr.Unauthorizedf("refresh token was already used; the session has been revoked, log in again")
	}
	return sess, err
}

// Logout revokes the session family of a refresh token. Unknown tokens are
// accepted silently: logging out twice is not an error.
func (s *Service) Logout(ctx context.Context, token string) error {
	var rt models.RefreshToken
	err := s.db.WithContext(ctx).Where("token_hash = ?", hashToken(token)).Take(&rt).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.db.WithContext(ctx).Model(&models.RefreshToken{}).
		Where("family_id = ? AND revoked_at IS NULL", rt.FamilyID).Update("revoked_at", s.now()).Error
}

// SwitchOrg opens a session in another organization the user belongs to, with
// the role and permissions the user has there.
func (s *Service) SwitchOrg(ctx context.Context, p *Principal, orgIDRaw string) (*Session, error) {
	if err := sessionOnly(p, "switch organization"); err != nil {
		return nil, err
	}
	orgID, err := uuid.Parse(strings.TrimSpace(orgIDRaw))
	if err != nil {
		return nil, apperr.Invalidf("organization_id must be a UUID")
	}
	target, err := loadPrincipal(ctx, s.db, p.UserID, orgID)
	if apperr.Is(err, apperr.Unauthorized) {
		return nil, apperr.NotFoundf("organization not found or you are not a member of it")
	}
	if err != nil {
		return nil, err
	}
	return s.issue(ctx, s.db, target, uuid.New())
}

// ChangePassword checks the current password, stores the new one and revokes
// every refresh token of the user, so other sessions end at their next
// refresh.
func (s *Service) ChangePassword(ctx context.Context, p *Principal, current, next string) error {
	if err := sessionOnly(p, "change a password"); err != nil {
		return err
	}
	if current == "" {
		return apperr.Invalidf("current_password is required")
	}
	if next == "" {
		return apperr.Invalidf("new_password is required")
	}
	if err := ValidatePassword("new_password", next); err != nil {
		return err
	}
	var u models.User
	if err := s.db.WithContext(ctx).Take(&u, "id = ?", p.UserID).Error; err != nil {
		return notFound(err, "user not found")
	}
	if match, err := s.verifyPassword(ctx, u.PasswordHash, current); err != nil {
		return err
	} else if !match {
		return apperr.Invalidf("current password is incorrect")
	}
	hash, err := s.hashPassword(ctx, next)
	if err != nil {
		return err
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&u).Updates(map[string]any{"password_hash": hash, "updated_at": s.now()}).Error; err != nil {
			return err
		}
		return tx.Model(&models.RefreshToken{}).Where("user_id = ? AND revoked_at IS NULL", u.ID).
			Update("revoked_at", s.now()).Error
	})
}

// Memberships lists the organizations of the current user.
type Membership struct {
	OrganizationID uuid.UUID
	Name, Slug     string
	RoleName       string
	RoleID         uuid.UUID
	IsDefault      bool
}

// MyOrganizations lists the user's memberships, default first.
func (s *Service) MyOrganizations(ctx context.Context, p *Principal) ([]Membership, error) {
	var out []Membership
	err := s.db.WithContext(ctx).Raw(`
SELECT o.id AS organization_id, o.name, o.slug, r.name AS role_name, r.id AS role_id, m.is_default
FROM organization_members m
JOIN organizations o ON o.id = m.organization_id
JOIN roles r ON r.id = m.role_id
WHERE m.user_id = ?
ORDER BY m.is_default DESC, o.name`, p.UserID).Scan(&out).Error
	return out, err
}

// PurgeRefreshTokens deletes refresh tokens that can no longer be used: expired
// ones, and spent or revoked ones older than a day (kept that long so reuse
// detection still recognises a replayed token).
func (s *Service) PurgeRefreshTokens(ctx context.Context) (int64, error) {
	now := s.now()
	res := s.db.WithContext(ctx).Where("expires_at < ? OR COALESCE(revoked_at, used_at) < ?", now, now.AddDate(0, 0, -1)).
		Delete(&models.RefreshToken{})
	return res.RowsAffected, res.Error
}

// VerifyLogin checks an email and password without opening a session and
// reports whether the user is a super admin (for the job monitor's Basic
// authentication).
func (s *Service) VerifyLogin(ctx context.Context, email, password string) (isSuperAdmin bool, err error) {
	u, err := s.checkCredentials(ctx, email, password)
	if err != nil {
		return false, err
	}
	return u.IsSuperAdmin, nil
}
