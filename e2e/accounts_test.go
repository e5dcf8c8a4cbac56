package e2e_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

func TestAccountCRUDAndEncryptedToken(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	create := func(body map[string]any) *apptest.Resp { return e.Do("POST", "/api/accounts", body, admin.Auth()) }
	create(map[string]any{"name": "x"}).Expect(t, 400)
	create(map[string]any{"name": "x", "phone_number_id": "abc", "business_account_id": "1", "access_token": "t"}).Expect(t, 400)

	id := e.ConnectAccount(admin.Auth(), "Support")
	// One account per number in an organization (other organizations may
	// claim it too: e2e/claims_test.go).
	create(map[string]any{"name": "Other", "phone_number_id": e.PhoneNumberID(), "business_account_id": e.WABA.ID, "access_token": "t"}).Expect(t, 409)
	create(map[string]any{"name": "support", "phone_number_id": "999", "business_account_id": e.WABA.ID, "access_token": "t"}).Expect(t, 409)

	var list struct {
		Items []map[string]any `json:"items"`
	}
	r := e.Do("GET", "/api/accounts", nil, admin.Auth()).Expect(t, 200)
	r.Into(t, &list)
	if len(list.Items) != 1 || strings.Contains(string(r.Body), e.WABA.AccessToken) || list.Items[0]["status"] != "active" {
		t.Fatalf("list %s", r.Body)
	}
	// The list carries each account's health (the console's accounts page).
	if it := list.Items[0]; it["quality_rating"] != "GREEN" || it["messaging_tier"] != "TIER_1K" || it["messaging_limit"] != "TIER_1K" ||
		it["messaging_tier_override"] != "" || it["last_error"] != "" || it["verified_name"] != "Acme" {
		t.Fatalf("list item %v", it)
	}
	e.Do("PUT", "/api/accounts/"+id, map[string]any{"messaging_tier": "tier_10k"}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/accounts", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if it := list.Items[0]; it["messaging_tier"] != "TIER_10K" || it["messaging_tier_override"] != "TIER_10K" || it["messaging_limit"] != "TIER_1K" {
		t.Fatalf("list item after the override %v", it)
	}
	e.Do("PUT", "/api/accounts/"+id, map[string]any{"messaging_tier": ""}, admin.Auth()).Expect(t, 200)
	var detail struct {
		AccessToken        string `json:"access_token"`
		WebhookVerifyToken string `json:"webhook_verify_token"`
		QualityRating      string `json:"quality_rating"`
		MessagingLimit     string `json:"messaging_limit"`
		PhoneNumber        string `json:"phone_number"`
		Status             string `json:"status"`
	}
	e.Do("GET", "/api/accounts/"+id, nil, admin.Auth()).Expect(t, 200).Into(t, &detail)
	if detail.AccessToken != e.WABA.AccessToken || detail.QualityRating != "GREEN" || detail.MessagingLimit != "TIER_1K" ||
		detail.PhoneNumber != "+1 555-010-0001" || detail.Status != "active" || detail.WebhookVerifyToken != "verify-Support" {
		t.Fatalf("detail %+v", detail)
	}
	var row models.PlatformAccount
	e.DB.Take(&row, "id = ?", id)
	if bytes.Contains(row.AccessTokenEnc, []byte(e.WABA.AccessToken)) {
		t.Fatal("access token stored in plaintext")
	}

	// A bad token: the test says so and the account is marked disconnected.
	e.Do("PUT", "/api/accounts/"+id, map[string]any{"access_token": "wrong-token", "name": "Support 2"}, admin.Auth()).Expect(t, 200)
	var test struct {
		Connected bool   `json:"connected"`
		Error     string `json:"error"`
	}
	e.Do("POST", "/api/accounts/"+id+"/test", nil, admin.Auth()).Expect(t, 200).Into(t, &test)
	if test.Connected || !strings.Contains(test.Error, "190") {
		t.Fatalf("test with a bad token %+v", test)
	}
	e.Do("GET", "/api/accounts/"+id, nil, admin.Auth()).Expect(t, 200).Into(t, &detail)
	if detail.Status != "disconnected" {
		t.Fatalf("status after 190: %s", detail.Status)
	}
	e.Do("GET", "/api/accounts", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if it := list.Items[0]; it["status"] != "disconnected" || !strings.Contains(it["last_error"].(string), "190") {
		t.Fatalf("list item after 190 %v", it)
	}
	e.Do("PUT", "/api/accounts/"+id, map[string]any{"phone_number_id": "1"}, admin.Auth()).Expect(t, 400)
	e.Do("DELETE", "/api/accounts/"+id, nil, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/accounts/"+id, nil, admin.Auth()).Expect(t, 404)
}

// A hand-connected account is activated by the account:refresh job.
func TestAccountRefreshJobActivates(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	admin := e.Admin()
	var a struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	e.Do("POST", "/api/accounts", map[string]any{"name": "Auto", "phone_number_id": e.PhoneNumberID(), "business_account_id": e.WABA.ID,
		"access_token": e.WABA.AccessToken}, admin.Auth()).Expect(t, 201).Into(t, &a)
	if a.Status != "pending" {
		t.Fatalf("new account %s, want pending", a.Status)
	}
	apptest.Eventually(t, 10*time.Second, "activation by the refresh job", func() bool {
		var row models.PlatformAccount
		e.DB.Take(&row, "id = ?", a.ID)
		return row.Status == "active" && row.QualityRating == "GREEN" && row.VerifiedAt != nil
	})
}

func seedSignup(t *testing.T, e *apptest.SimEnv, admin apptest.Session) {
	e.Do("PUT", "/api/org/settings", map[string]any{"provider_app_id": platformsim.DefaultAppID, "provider_config_id": "cfg-7",
		"provider_app_secret": e.AppSecret}, admin.Auth()).Expect(t, 200)
}

func TestEmbeddedSignupRegistersTheNumber(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "c1"}, admin.Auth()).Expect(t, 400) // no app settings yet
	var before map[string]any
	e.Do("GET", "/api/embedded-signup/config", nil, admin.Auth()).Expect(t, 200).Into(t, &before)
	if before["configured"] != false {
		t.Fatalf("config before the app settings: %v", before)
	}
	seedSignup(t, e, admin)

	var cfg map[string]any
	r := e.Do("GET", "/api/embedded-signup/config", nil, admin.Auth()).Expect(t, 200)
	r.Into(t, &cfg)
	if cfg["platform_app_id"] != platformsim.DefaultAppID || cfg["platform_config_id"] != "cfg-7" || cfg["platform_api_version"] != "v21.0" ||
		cfg["configured"] != true || cfg["script_url"] != e.SimServer.URL+"/_sim/embedded_signup/sdk.js" ||
		strings.Contains(string(r.Body), e.AppSecret) {
		t.Fatalf("config %s", r.Body)
	}

	waba := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Signup Co", PhoneNumbers: []platformsim.PhoneNumber{{VerifiedName: "Signup Co"}}})
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "code-1", AccessToken: "user-token-1", WABAIDs: []string{waba.ID}})
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{}, admin.Auth()).Expect(t, 400)
	var out struct {
		Account struct {
			ID                string `json:"id"`
			Status            string `json:"status"`
			PhoneNumberID     string `json:"phone_number_id"`
			BusinessAccountID string `json:"business_account_id"`
			Name              string `json:"name"`
		} `json:"account"`
		PIN     string `json:"pin"`
		Warning string `json:"warning"`
	}
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "code-1"}, admin.Auth()).Expect(t, 200).Into(t, &out)
	if out.Account.Status != "active" || out.Account.PhoneNumberID != waba.PhoneNumbers[0].ID || out.Account.BusinessAccountID != waba.ID ||
		!regexp.MustCompile(`^\d{6}$`).MatchString(out.PIN) || out.Warning != "" || out.Account.Name != "Signup Co" {
		t.Fatalf("exchange answer %+v", out)
	}
	// The simulator saw the subscription and the registration with that PIN.
	if e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: waba.ID + "/subscribed_apps"}) != 1 {
		t.Fatal("app not subscribed")
	}
	regs := e.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: waba.PhoneNumbers[0].ID + "/register"})
	if len(regs) != 1 || !strings.Contains(string(regs[0].Body), out.PIN) {
		t.Fatalf("register requests %+v", regs)
	}
	var row models.PlatformAccount
	e.DB.Take(&row, "id = ?", out.Account.ID)
	if len(row.PinEnc) == 0 || bytes.Contains(row.PinEnc, []byte(out.PIN)) || bytes.Contains(row.AccessTokenEnc, []byte("user-token-1")) {
		t.Fatal("PIN or token not encrypted")
	}
	// The code is single-use.
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "code-1"}, admin.Auth()).Expect(t, 400)
}

func TestEmbeddedSignupFallbackCoexistenceAndFailedRegistration(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	seedSignup(t, e, admin)
	type answer struct {
		Account struct {
			ID                string `json:"id"`
			Status            string `json:"status"`
			BusinessAccountID string `json:"business_account_id"`
		} `json:"account"`
		PIN     string `json:"pin"`
		Warning string `json:"warning"`
	}

	// No granular scopes: the shared business accounts are used.
	shared := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Shared", PhoneNumbers: []platformsim.PhoneNumber{{}}})
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "shared", AccessToken: "tok-shared", SharedWABAIDs: []string{shared.ID}})
	var a answer
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "shared", "name": "Fallback"}, admin.Auth()).Expect(t, 200).Into(t, &a)
	if a.Account.BusinessAccountID != shared.ID || a.Account.Status != "active" {
		t.Fatalf("fallback %+v", a)
	}

	// A number still on the business app: active, no PIN, no registration.
	coex := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Coex", PhoneNumbers: []platformsim.PhoneNumber{{PlatformType: "SMB"}}})
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "coex", AccessToken: "tok-coex", WABAIDs: []string{coex.ID}})
	a = answer{}
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "coex"}, admin.Auth()).Expect(t, 200).Into(t, &a)
	if a.Account.Status != "active" || a.PIN != "" {
		t.Fatalf("coexistence %+v", a)
	}
	if e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: coex.PhoneNumbers[0].ID + "/register"}) != 0 {
		t.Fatal("a coexistence number was registered")
	}
	e.Do("POST", "/api/accounts/"+a.Account.ID+"/register", map[string]any{}, admin.Auth()).Expect(t, 200)

	// Registration fails: pending_registration with a warning; the register
	// endpoint reports the provider's refusal.
	bad := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Bad", PhoneNumbers: []platformsim.PhoneNumber{{RegisterErrorCode: 133005}}})
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "bad", AccessToken: "tok-bad", WABAIDs: []string{bad.ID}})
	a = answer{}
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "bad"}, admin.Auth()).Expect(t, 200).Into(t, &a)
	if a.Account.Status != "pending_registration" || a.Warning == "" || a.PIN != "" {
		t.Fatalf("failed registration %+v", a)
	}
	e.Do("POST", "/api/accounts/"+a.Account.ID+"/register", map[string]any{"pin": "12"}, admin.Auth()).Expect(t, 400)
	r := e.Do("POST", "/api/accounts/"+a.Account.ID+"/register", map[string]any{"pin": "123456"}, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "133005") {
		t.Fatalf("register error %q", r.Message)
	}
}

func TestRegisterActivatesWithGivenOrGeneratedPIN(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	var a struct{ ID string }
	e.Do("POST", "/api/accounts", map[string]any{"name": "Reg", "phone_number_id": e.PhoneNumberID(), "business_account_id": e.WABA.ID,
		"access_token": e.WABA.AccessToken}, admin.Auth()).Expect(t, 201).Into(t, &a)
	var out struct {
		PIN     string                  `json:"pin"`
		Account struct{ Status string } `json:"account"`
	}
	e.Do("POST", "/api/accounts/"+a.ID+"/register", map[string]any{"pin": "654321"}, admin.Auth()).Expect(t, 200).Into(t, &out)
	if out.PIN != "654321" || out.Account.Status != "active" {
		t.Fatalf("register %+v", out)
	}
	e.Do("POST", "/api/accounts/"+a.ID+"/register", nil, admin.Auth()).Expect(t, 200).Into(t, &out)
	if !regexp.MustCompile(`^\d{6}$`).MatchString(out.PIN) || out.PIN == "654321" {
		t.Fatalf("generated pin %q", out.PIN)
	}
}

// POST /api/accounts/{id}/subscribe subscribes the app to the business
// account's webhooks with the account's token; the provider's refusal, an
// unknown account, a caller without accounts:write and a number another
// organization owns are refused before anything is subscribed.
func TestSubscribeSubscribesTheApp(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	subscribed := func() int {
		for _, ba := range e.Sim.BusinessAccounts() {
			if ba.ID == e.WABA.ID {
				return len(ba.SubscribedApps)
			}
		}
		t.Fatal("the simulator lost the business account")
		return 0
	}
	calls := func() int {
		return e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: e.WABA.ID + "/subscribed_apps"})
	}
	id := claimNumber(t, e, admin, "Hand", e.PhoneNumberID(), e.WABA.ID, e.WABA.AccessToken)
	if subscribed() != 0 {
		t.Fatal("connecting by hand subscribed the app")
	}

	e.Do("POST", "/api/accounts/00000000-0000-0000-0000-000000000000/subscribe", nil, admin.Auth()).Expect(t, 404)
	manager := e.CreateUser(admin.Auth(), "m@x.com", "Manager")
	e.Do("POST", "/api/accounts/"+id+"/subscribe", nil, manager.Auth()).Expect(t, 403)

	e.Do("POST", "/api/accounts/"+id+"/subscribe", nil, admin.Auth()).Expect(t, 200)
	if subscribed() != 1 || calls() != 1 {
		t.Fatalf("after subscribe: %d apps, %d calls", subscribed(), calls())
	}

	// A token the provider refuses: a 400 with its reason.
	e.Do("PUT", "/api/accounts/"+id, map[string]any{"access_token": "wrong-token"}, admin.Auth()).Expect(t, 200)
	r := e.Do("POST", "/api/accounts/"+id+"/subscribe", nil, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "the provider refused subscribing to the account's webhooks") || !strings.Contains(r.Message, "190") {
		t.Fatalf("refused subscribe %q", r.Message)
	}

	// Another organization verifies the number: this claim cannot subscribe.
	other := newOrg(t, e, admin, "other")
	otherID := claimNumber(t, e, other, "Theirs", e.PhoneNumberID(), e.WABA.ID, e.WABA.AccessToken)
	e.Do("POST", "/api/accounts/"+otherID+"/test", nil, other.Auth()).Expect(t, 200)
	before := calls()
	r = e.Do("POST", "/api/accounts/"+id+"/subscribe", nil, admin.Auth()).Expect(t, 409)
	if r.Message != msgOwnedElsewhere || calls() != before {
		t.Fatalf("subscribe of a number owned elsewhere: %q, %d calls", r.Message, calls()-before)
	}
}
