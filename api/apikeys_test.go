package api_test

import (
	"crypto/sha256"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/jobs"
	"wharf/models"
)

type createdKey struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Key       string  `json:"key"`
	KeyPrefix string  `json:"key_prefix"`
	ExpiresAt *string `json:"expires_at"`
	CreatedAt string  `json:"created_at"`
}

func TestAPIKeyIsShownOnceAndStoredHashed(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "CRM"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	if !regexp.MustCompile(`^whm_[0-9a-f]{32}$`).MatchString(k.Key) {
		t.Fatalf("key %q does not match whm_ + 32 hex", k.Key)
	}
	if k.KeyPrefix != k.Key[:8] || len(k.KeyPrefix) != 8 || k.ExpiresAt != nil || k.Name != "CRM" {
		t.Fatalf("created key %+v", k)
	}
	var row models.APIKey
	e.DB.Take(&row, "id = ?", k.ID)
	sum := sha256.Sum256([]byte(k.Key))
	if string(row.KeyHash) != string(sum[:]) {
		t.Fatal("key is not stored as its SHA-256 hash")
	}
	r := e.Do("GET", "/api/api-keys", nil, admin.Auth()).Expect(t, 200)
	if strings.Contains(string(r.Body), k.Key) || strings.Contains(string(r.Body), `"key":`) {
		t.Fatalf("list reveals the key: %s", r.Body)
	}
	var list []struct {
		ID         string  `json:"id"`
		KeyPrefix  string  `json:"key_prefix"`
		IsActive   bool    `json:"is_active"`
		LastUsedAt *string `json:"last_used_at"`
	}
	r.Into(t, &list)
	if len(list) != 1 || list[0].ID != k.ID || !list[0].IsActive || list[0].LastUsedAt != nil {
		t.Fatalf("list %s", r.Body)
	}

	// The key authenticates as its creator, through X-API-Key.
	var me struct {
		Email string `json:"email"`
	}
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200).Into(t, &me)
	if me.Email != apptest.AdminEmail {
		t.Fatalf("key acts as %q", me.Email)
	}
	for _, bad := range []string{"whm_" + strings.Repeat("0", 32), "whm_short", k.Key + "0", strings.ToUpper(k.Key)} {
		e.Do("GET", "/api/me", nil, apptest.APIKey(bad)).Expect(t, 401)
	}
}

func TestAPIKeyValidation(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	e.Do("POST", "/api/api-keys", map[string]any{"name": ""}, admin.Auth()).Expect(t, 400)
	e.Do("POST", "/api/api-keys", map[string]any{"name": "x", "expires_at": "tomorrow"}, admin.Auth()).Expect(t, 400)
	e.Do("POST", "/api/api-keys", map[string]any{"name": "x", "expires_at": "2001-01-01T00:00:00Z"}, admin.Auth()).Expect(t, 400)
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "x", "expires_at": nil}, admin.Auth()).Expect(t, 201).Into(t, &k)
	if k.ExpiresAt != nil {
		t.Fatal("null expires_at must mean no expiry")
	}
}

func TestAPIKeyExpiryAndDeletionRevokeAtOnce(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var k createdKey
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	e.Do("POST", "/api/api-keys", map[string]any{"name": "expiring", "expires_at": exp}, admin.Auth()).Expect(t, 201).Into(t, &k)
	if k.ExpiresAt == nil || *k.ExpiresAt != exp {
		t.Fatalf("expires_at %v, want %s", k.ExpiresAt, exp)
	}
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200)
	// Time passes: the key is past its expiry.
	e.DB.Model(&models.APIKey{}).Where("id = ?", k.ID).Update("expires_at", time.Now().Add(-time.Second))
	r := e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 401)
	if r.Message != "API key has expired" {
		t.Fatalf("message %q", r.Message)
	}
	var list []struct {
		IsActive bool `json:"is_active"`
	}
	e.Do("GET", "/api/api-keys", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if list[0].IsActive {
		t.Fatal("expired key listed as active")
	}

	var k2 createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "deleted"}, admin.Auth()).Expect(t, 201).Into(t, &k2)
	replica := e.Replica()
	e.DoAt(replica.URL, "GET", "/api/me", nil, apptest.APIKey(k2.Key)).Expect(t, 200)
	e.Do("DELETE", "/api/api-keys/"+k2.ID, nil, admin.Auth()).Expect(t, 200)
	// Revoked at once, on every replica.
	e.Do("GET", "/api/me", nil, apptest.APIKey(k2.Key)).Expect(t, 401)
	e.DoAt(replica.URL, "GET", "/api/me", nil, apptest.APIKey(k2.Key)).Expect(t, 401)
	e.Do("DELETE", "/api/api-keys/"+k2.ID, nil, admin.Auth()).Expect(t, 404)
}

func TestAPIKeyActsWithItsCreatorsCurrentPermissions(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	second := e.CreateUser(admin.Auth(), "second-admin@x.com", "Admin")
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, second.Auth()).Expect(t, 201).Into(t, &k)
	e.Do("GET", "/api/users", nil, apptest.APIKey(k.Key)).Expect(t, 200)

	// Demoting the creator demotes the key.
	var users struct {
		Users []struct{ ID, Email string } `json:"users"`
	}
	e.Do("GET", "/api/users?search=second-admin", nil, admin.Auth()).Expect(t, 200).Into(t, &users)
	e.Do("PUT", "/api/users/"+users.Users[0].ID, map[string]any{"role_id": e.RoleID(admin.Auth(), "Agent")}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/users", nil, apptest.APIKey(k.Key)).Expect(t, 403)
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200)

	// Deactivating the creator disables the key.
	e.Do("PUT", "/api/users/"+users.Users[0].ID, map[string]any{"is_active": false}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 401)
}

func TestAPIKeysCannotUseSessionOnlyEndpoints(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	key := apptest.APIKey(k.Key)
	e.Do("POST", "/api/api-keys", map[string]any{"name": "minted"}, key).Expect(t, 403)
	e.Do("PUT", "/api/me/password", map[string]any{"current_password": apptest.AdminPassword, "new_password": "something-new"}, key).Expect(t, 403)
	e.Do("POST", "/api/auth/switch-org", map[string]any{"organization_id": admin.User.OrganizationID}, key).Expect(t, 403)
}

// last_used_at is written by the worker from an apikey:touch job, at most one
// per key and minute, not on every request.
func TestAPIKeyLastUsedIsRecordedByTheWorkerNotPerRequest(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	for i := 0; i < 20; i++ {
		e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200)
	}
	// Nothing was written yet; exactly one touch job is waiting.
	var row models.APIKey
	e.DB.Take(&row, "id = ?", k.ID)
	if row.LastUsedAt != nil {
		t.Fatal("last_used_at written by the request path")
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: e.Redis.Options().Addr, DB: e.Redis.Options().DB})
	defer insp.Close()
	pending, err := insp.ListPendingTasks(jobs.QueueLow)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Type != jobs.TypeAPIKeyTouch {
		t.Fatalf("pending tasks %d, want one %s", len(pending), jobs.TypeAPIKeyTouch)
	}

	start := time.Now()
	e.StartWorker()
	apptest.Eventually(t, 10*time.Second, "last_used_at", func() bool {
		e.DB.Take(&row, "id = ?", k.ID)
		return row.LastUsedAt != nil
	})
	if d := row.LastUsedAt.Sub(start); d > 5*time.Second || d < -time.Minute {
		t.Fatalf("last_used_at %s is not the time of use", row.LastUsedAt)
	}
	var list []struct {
		LastUsedAt *time.Time `json:"last_used_at"`
	}
	e.Do("GET", "/api/api-keys", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if list[0].LastUsedAt == nil {
		t.Fatal("list does not show last_used_at")
	}
	// A fresh last_used_at means no further job for this minute.
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200)
	pending, _ = insp.ListPendingTasks(jobs.QueueLow)
	if len(pending) != 0 {
		t.Fatalf("%d touch jobs enqueued within the minute", len(pending))
	}
}
