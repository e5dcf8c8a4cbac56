package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
)

const (
	issuer          = "wharf"
	typeAccess      = "access"
	refreshPrefix   = "wrt_"
	signingMethodHS = "HS256"
)

// AccessClaims are the claims of an access token. The role and permissions
// tell the client what the token was issued for; the server re-reads them
// from the database on every request, so that a demotion or removal takes
// effect at once instead of when the token expires.
type AccessClaims struct {
	jwt.RegisteredClaims
	Type        string   `json:"typ"`
	OrgID       string   `json:"org"`
	RoleID      string   `json:"role_id"`
	Role        string   `json:"role"`
	Permissions []string `json:"permissions"`
	SuperAdmin  bool     `json:"super_admin,omitempty"`
}

// Tokens signs and verifies access tokens.
type Tokens struct {
	secret     []byte
	accessTTL  time.Duration
	refreshTTL time.Duration
	now        func() time.Time

	// verified are the access tokens this process has verified, by their
	// whole text, until they expire (verified.go).
	mu       sync.Mutex
	verified map[string]verifiedToken
}

// NewTokens builds a signer with the given secret and lifetimes.
func NewTokens(secret string, accessTTL, refreshTTL time.Duration) *Tokens {
	return &Tokens{secret: []byte(secret), accessTTL: accessTTL, refreshTTL: refreshTTL, now: time.Now,
		verified: map[string]verifiedToken{}}
}

// AccessTTL is the access token lifetime, reported as expires_in.
func (t *Tokens) AccessTTL() time.Duration { return t.accessTTL }

// SignAccess issues an access token for p.
func (t *Tokens) SignAccess(p *Principal) (string, error) {
	now := t.now()
	claims := AccessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   p.UserID.String(),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.accessTTL)),
			ID:        uuid.NewString(),
		},
		Type:        typeAccess,
		OrgID:       p.OrgID.String(),
		RoleID:      p.RoleID.String(),
		Role:        p.RoleName,
		Permissions: p.PermissionList(),
		SuperAdmin:  p.IsSuperAdmin,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
}

// ParseAccess verifies an access token and returns the user and organization
// it names. Only HS256 with our key is accepted: `none`, RS256 with our
// secret as a public key, and tokens of another issuer all fail.
func (t *Tokens) ParseAccess(raw string) (userID, orgID uuid.UUID, err error) {
	if v, ok := t.recall(raw); ok {
		return v.userID, v.orgID, nil
	}
	var c AccessClaims
	_, err = jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{signingMethodHS}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return uuid.Nil, uuid.Nil, apperr.Unauthorizedf("access token has expired")
		}
		return uuid.Nil, uuid.Nil, apperr.Unauthorizedf("invalid access token")
	}
	if c.Type != typeAccess {
		return uuid.Nil, uuid.Nil, apperr.Unauthorizedf("invalid access token")
	}
	userID, err1 := uuid.Parse(c.Subject)
	orgID, err2 := uuid.Parse(c.OrgID)
	if err1 != nil || err2 != nil {
		return uuid.Nil, uuid.Nil, apperr.Unauthorizedf("invalid access token")
	}
	t.remember(raw, verifiedToken{userID: userID, orgID: orgID, expires: c.ExpiresAt.Time})
	return userID, orgID, nil
}

// newOpaqueToken returns a random token with prefix and its SHA-256 hash,
// which is all the database keeps.
func newOpaqueToken(prefix string, nbytes int) (token string, hash []byte, err error) {
	b := make([]byte, nbytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("random token: %w", err)
	}
	token = prefix + hex.EncodeToString(b)
	return token, hashToken(token), nil
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// AccessExpiry answers when a valid access token expires.
func (t *Tokens) AccessExpiry(raw string) (time.Time, error) {
	var c AccessClaims
	_, err := jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{signingMethodHS}), jwt.WithIssuer(issuer), jwt.WithExpirationRequired(), jwt.WithTimeFunc(t.now))
	if err != nil || c.ExpiresAt == nil {
		return time.Time{}, apperr.Unauthorizedf("invalid access token")
	}
	return c.ExpiresAt.Time, nil
}
