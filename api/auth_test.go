package api_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"wharf/internal/apptest"
	"wharf/models"
)

func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoginIssuesOneHourAccessAndSevenDayRefresh(t *testing.T) {
	e := apptest.New(t, nil)
	s := e.Admin()
	if s.ExpiresIn != 3600 {
		t.Fatalf("expires_in = %d, want 3600", s.ExpiresIn)
	}
	c := claimsOf(t, s.AccessToken)
	exp, iat := c["exp"].(float64), c["iat"].(float64)
	if exp-iat != 3600 {
		t.Fatalf("access token lifetime = %v s, want 3600", exp-iat)
	}
	var rt models.RefreshToken
	if err := e.DB.Order("created_at DESC").Take(&rt).Error; err != nil {
		t.Fatal(err)
	}
	if d := time.Until(rt.ExpiresAt); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour {
		t.Fatalf("refresh token lifetime = %s, want 7 days", d)
	}
	// The refresh token is kept only as a hash.
	var n int64
	e.DB.Model(&models.RefreshToken{}).Where("token_hash = ?", []byte(s.RefreshToken)).Count(&n)
	if n != 0 {
		t.Fatal("refresh token stored in plaintext")
	}
}

func TestTokenLifetimesAreConfigurable(t *testing.T) {
	e := apptest.New(t, map[string]string{"ACCESS_TOKEN_TTL": "15m", "REFRESH_TOKEN_TTL": "48h"})
	s := e.Admin()
	if s.ExpiresIn != 900 {
		t.Fatalf("expires_in = %d, want 900", s.ExpiresIn)
	}
	var rt models.RefreshToken
	e.DB.Order("created_at DESC").Take(&rt)
	if d := time.Until(rt.ExpiresAt); d < 47*time.Hour || d > 48*time.Hour {
		t.Fatalf("refresh lifetime %s, want 48h", d)
	}
}

func TestLoginErrorsDoNotRevealWhichFieldWasWrong(t *testing.T) {
	e := apptest.New(t, nil)
	wrongPassword := e.Do("POST", "/api/auth/login", map[string]string{"email": apptest.AdminEmail, "password": "wrong-password"}, nil)
	unknownEmail := e.Do("POST", "/api/auth/login", map[string]string{"email": "nobody@example.com", "password": apptest.AdminPassword}, nil)
	for _, r := range []*apptest.Resp{wrongPassword, unknownEmail} {
		r.Expect(t, 401)
		if r.Message != "invalid email or password" || r.Outcome != "error" || string(r.Data) != "null" {
			t.Fatalf("unexpected error answer: %s", r.Body)
		}
	}
	// Emails are case-insensitive.
	e.Do("POST", "/api/auth/login", map[string]string{"email": strings.ToUpper(apptest.AdminEmail), "password": apptest.AdminPassword}, nil).Expect(t, 200)
	e.Do("POST", "/api/auth/login", map[string]string{"email": "", "password": ""}, nil).Expect(t, 400)
}

func TestRefreshRotatesAndRejectsReuse(t *testing.T) {
	e := apptest.New(t, nil)
	s := e.Admin()
	var next apptest.Session
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": s.RefreshToken}, nil).Expect(t, 200).Into(t, &next)
	if next.RefreshToken == s.RefreshToken || next.RefreshToken == "" || next.AccessToken == "" || next.ExpiresIn != 3600 {
		t.Fatalf("refresh did not rotate: %+v", next)
	}
	e.Do("GET", "/api/me", nil, next.Auth()).Expect(t, 200)

	// The old token is spent: presenting it again fails and revokes the
	// family, including the token that replaced it.
	r := e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": s.RefreshToken}, nil).Expect(t, 401)
	if !strings.Contains(r.Message, "already used") {
		t.Fatalf("message %q", r.Message)
	}
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": next.RefreshToken}, nil).Expect(t, 401)

	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": "wrt_00"}, nil).Expect(t, 401)
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": "garbage"}, nil).Expect(t, 401)
}

func TestLogoutRevokesRefreshToken(t *testing.T) {
	e := apptest.New(t, nil)
	s := e.Admin()
	e.Do("POST", "/api/auth/logout", map[string]string{"refresh_token": s.RefreshToken}, nil).Expect(t, 200)
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": s.RefreshToken}, nil).Expect(t, 401)
}

func TestForeignTokensAreRejected(t *testing.T) {
	e := apptest.New(t, nil)
	s := e.Admin()
	good := claimsOf(t, s.AccessToken)
	claims := jwt.MapClaims(good)

	sign := func(method jwt.SigningMethod, key any) string {
		tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	expired := jwt.MapClaims{}
	for k, v := range good {
		expired[k] = v
	}
	expired["exp"] = float64(time.Now().Add(-time.Minute).Unix())
	expiredTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, expired).SignedString([]byte(e.Cfg.JWTSecret))

	cases := map[string]string{
		"other key":      sign(jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx")),
		"alg none":       none,
		"HS384 same key": sign(jwt.SigningMethodHS384, []byte(e.Cfg.JWTSecret)),
		"RS256":          sign(jwt.SigningMethodRS256, rsaKey),
		"expired":        expiredTok,
		"tampered":       s.AccessToken[:len(s.AccessToken)-2] + "xx",
		"refresh token":  s.RefreshToken,
	}
	for name, tok := range cases {
		r := e.Do("GET", "/api/me", nil, apptest.Bearer(tok))
		if r.Status != 401 || r.Outcome != "error" {
			t.Errorf("%s: status %d %s", name, r.Status, r.Body)
		}
	}
	// The control: the same claims with our key and algorithm are accepted.
	e.Do("GET", "/api/me", nil, apptest.Bearer(sign(jwt.SigningMethodHS256, []byte(e.Cfg.JWTSecret)))).Expect(t, 200)
	e.Do("GET", "/api/me", nil, nil).Expect(t, 401)
	r := e.Do("GET", "/api/me", nil, func(r *httpReq) { r.Header.Set("Authorization", "Basic abc") })
	r.Expect(t, 401)
}

func TestRegisterNeedsExistingOrganizationAndValidInput(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	// An organization created through the API accepts self-registration;
	// the bootstrap organization does not (TestSelfRegistrationCanBeSwitchedOff).
	var created struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Open"}, admin.Auth()).Expect(t, 201).Into(t, &created)
	org := created.ID
	body := func(email, pw, name, org string) map[string]string {
		return map[string]string{"email": email, "password": pw, "full_name": name, "organization_id": org}
	}
	e.Do("POST", "/api/auth/register", body("a@x.com", "short", "A", org), nil).Expect(t, 400)
	e.Do("POST", "/api/auth/register", body("not-an-email", "password-123", "A", org), nil).Expect(t, 400)
	e.Do("POST", "/api/auth/register", body("a@x.com", "password-123", "", org), nil).Expect(t, 400)
	e.Do("POST", "/api/auth/register", body("a@x.com", "password-123", "A", "nope"), nil).Expect(t, 400)
	e.Do("POST", "/api/auth/register", body("a@x.com", "password-123", "A", "00000000-0000-0000-0000-000000000000"), nil).Expect(t, 404)

	var out struct {
		User struct {
			ID, Email, FullName, OrganizationID string
			Role                                struct{ ID, Name string }
		} `json:"user"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	r := e.Do("POST", "/api/auth/register", body("A@X.com", "password-123", "Ann", org), nil).Expect(t, 201)
	r.Into(t, &out)
	if out.User.Email != "a@x.com" || out.User.Role.Name != "Agent" || out.ExpiresIn != 3600 || out.AccessToken == "" {
		t.Fatalf("register answer: %s", r.Body)
	}
	if !strings.Contains(string(r.Body), `"full_name":"Ann"`) || !strings.Contains(string(r.Body), `"organization_id":"`+org) {
		t.Fatalf("register answer lacks fields: %s", r.Body)
	}
	e.Do("POST", "/api/auth/register", body("a@X.com", "password-123", "Ann", org), nil).Expect(t, 409)

	// The password is stored as an argon2id hash.
	var u models.User
	e.DB.Take(&u, "email = ?", "a@x.com")
	if !strings.HasPrefix(u.PasswordHash, "$argon2id$") || strings.Contains(u.PasswordHash, "password-123") {
		t.Fatalf("password hash %q", u.PasswordHash)
	}
}

func TestSwitchOrgTokensCarryTargetRoleAndPermissions(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Second Org"}, admin.Auth()).Expect(t, 201).Into(t, &org)

	// An agent of the first organization is added to the second as Manager.
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	var sw apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, admin.Auth()).Expect(t, 200).Into(t, &sw)
	managerRole := e.RoleID(sw.Auth(), "Manager")
	e.Do("POST", "/api/organizations/members", map[string]string{"email": "agent@x.com", "role_id": managerRole}, sw.Auth()).Expect(t, 201)

	r := e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, agent.Auth()).Expect(t, 200)
	var out struct {
		User struct {
			OrganizationID string `json:"organization_id"`
			Role           struct {
				Name        string `json:"name"`
				Permissions []struct{ Resource, Action string }
			} `json:"role"`
		} `json:"user"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int    `json:"expires_in"`
	}
	r.Into(t, &out)
	if out.User.OrganizationID != org.ID || out.User.Role.Name != "Manager" || out.ExpiresIn != 3600 || out.RefreshToken == "" {
		t.Fatalf("switch-org answer: %s", r.Body)
	}
	hasCampaigns := false
	for _, p := range out.User.Role.Permissions {
		hasCampaigns = hasCampaigns || (p.Resource == "campaigns" && p.Action == "create")
	}
	if !hasCampaigns {
		t.Fatalf("Manager permissions missing campaigns:create: %s", r.Body)
	}
	c := claimsOf(t, out.AccessToken)
	if c["org"] != org.ID || c["role"] != "Manager" {
		t.Fatalf("token claims %v", c)
	}
	perms := c["permissions"].([]any)
	if !containsAny(perms, "campaigns:create") || containsAny(perms, "users:delete") {
		t.Fatalf("token permissions %v", perms)
	}
	// The new token acts in the target organization with the target role.
	var me struct {
		OrganizationID string   `json:"organization_id"`
		Permissions    []string `json:"permissions"`
		Role           struct{ Name string }
	}
	e.Do("GET", "/api/me", nil, apptest.Bearer(out.AccessToken)).Expect(t, 200).Into(t, &me)
	if me.OrganizationID != org.ID || me.Role.Name != "Manager" {
		t.Fatalf("me after switch: %+v", me)
	}
	// Refreshing keeps the organization.
	var ref apptest.Session
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": out.RefreshToken}, nil).Expect(t, 200).Into(t, &ref)
	if claimsOf(t, ref.AccessToken)["org"] != org.ID {
		t.Fatal("refresh lost the organization")
	}
	// Not a member: 404, and a malformed id: 400.
	var third struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Third"}, admin.Auth()).Expect(t, 201).Into(t, &third)
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": third.ID}, agent.Auth()).Expect(t, 404)
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": "x"}, agent.Auth()).Expect(t, 400)

	// The memberships list shows both.
	var mine struct {
		Organizations []struct {
			OrganizationID string `json:"organization_id"`
			RoleName       string `json:"role_name"`
			IsDefault      bool   `json:"is_default"`
		} `json:"organizations"`
	}
	e.Do("GET", "/api/me/organizations", nil, agent.Auth()).Expect(t, 200).Into(t, &mine)
	if len(mine.Organizations) != 2 || !mine.Organizations[0].IsDefault || mine.Organizations[0].RoleName != "Agent" {
		t.Fatalf("memberships %+v", mine)
	}
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestEveryRoleCanReadProfileAndChangePassword(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	// A custom role with no permissions at all.
	e.Do("POST", "/api/roles", map[string]any{"name": "Nothing", "permissions": []string{}}, admin.Auth()).Expect(t, 201)
	nobody := e.CreateUser(admin.Auth(), "nobody@x.com", "Nothing")

	var me struct {
		Email        string   `json:"email"`
		Permissions  []string `json:"permissions"`
		IsSuperAdmin bool     `json:"is_super_admin"`
		Role         struct{ Name string }
		CreatedAt    string `json:"created_at"`
	}
	e.Do("GET", "/api/me", nil, nobody.Auth()).Expect(t, 200).Into(t, &me)
	if me.Email != "nobody@x.com" || len(me.Permissions) != 0 || me.IsSuperAdmin || me.Role.Name != "Nothing" {
		t.Fatalf("me: %+v", me)
	}
	if _, err := time.Parse(time.RFC3339, me.CreatedAt); err != nil || !strings.HasSuffix(me.CreatedAt, "Z") {
		t.Fatalf("created_at %q is not RFC 3339 UTC", me.CreatedAt)
	}

	pw := func(cur, next string) *apptest.Resp {
		return e.Do("PUT", "/api/me/password", map[string]string{"current_password": cur, "new_password": next}, nobody.Auth())
	}
	pw("password-123", "short").Expect(t, 400)
	if r := pw("wrong-password", "new-password-1"); r.Status != 400 || r.Message != "current password is incorrect" {
		t.Fatalf("wrong current password: %d %s", r.Status, r.Body)
	}
	pw("", "new-password-1").Expect(t, 400)
	pw("password-123", "new-password-1").Expect(t, 200)
	e.Do("POST", "/api/auth/login", map[string]string{"email": "nobody@x.com", "password": "password-123"}, nil).Expect(t, 401)
	e.Login("nobody@x.com", "new-password-1")
	// Changing the password ends the other sessions at their next refresh.
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": nobody.RefreshToken}, nil).Expect(t, 401)
}
