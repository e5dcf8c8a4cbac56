package platformsim

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestOAuthExchangeAndDebugToken(t *testing.T) {
	f := setup(t, Config{})
	f.sim.AddOAuthCode(OAuthCode{Code: "code-1", AccessToken: "user-token-1", WABAIDs: []string{f.ba.ID}})
	// No granular targets: the client must fall back to the shared list.
	f.sim.AddOAuthCode(OAuthCode{Code: "code-2", AccessToken: "user-token-2", SharedWABAIDs: []string{f.ba.ID, f.other.ID}})

	exchange := func(id, secret, code string) (int, map[string]any) {
		q := url.Values{"client_id": {id}, "client_secret": {secret}, "code": {code}, "redirect_uri": {""}}
		return f.do(t, "GET", "/v21.0/oauth/access_token?"+q.Encode(), "", nil)
	}
	code, out := exchange(testAppID, "wrong", "code-1")
	wantError(t, code, out, 400, 101)
	code, out = exchange(testAppID, testSecret, "unknown")
	if e := wantError(t, code, out, 400, 100); e["error_subcode"] != float64(36007) {
		t.Errorf("unknown code: %v", e)
	}
	// The token does not work before the exchange.
	code, _ = f.do(t, "GET", "/v21.0/"+f.phone, "user-token-1", nil)
	if code != 401 {
		t.Errorf("token usable before the exchange: %d", code)
	}
	code, out = exchange(testAppID, testSecret, "code-1")
	if code != 200 || out["access_token"] != "user-token-1" || out["token_type"] != "bearer" {
		t.Fatalf("exchange: %d %v", code, out)
	}
	code, out = exchange(testAppID, testSecret, "code-1")
	wantError(t, code, out, 400, 100) // single use
	if code, _ := f.do(t, "GET", "/v21.0/"+f.phone, "user-token-1", nil); code != 200 {
		t.Errorf("exchanged token refused: %d", code)
	}

	debug := func(token, input string) (int, map[string]any) {
		return f.do(t, "GET", "/v21.0/debug_token?input_token="+input, token, nil)
	}
	appToken := testAppID + "|" + testSecret
	code, out = debug("user-token-1", "user-token-1")
	wantError(t, code, out, 401, 190)
	code, out = debug(appToken, "user-token-1")
	if code != 200 {
		t.Fatalf("debug_token: %d %v", code, out)
	}
	data := out["data"].(map[string]any)
	if data["app_id"] != testAppID || data["is_valid"] != true || data["type"] != "USER" || len(data["scopes"].([]any)) == 0 {
		t.Errorf("debug data %v", data)
	}
	scopes := data["granular_scopes"].([]any)
	for _, want := range []string{"whatsapp_business_management", "whatsapp_business_messaging"} {
		found := false
		for _, s := range scopes {
			m := s.(map[string]any)
			if m["scope"] == want {
				found = true
				if fmt.Sprint(m["target_ids"]) != "["+f.ba.ID+"]" {
					t.Errorf("%s targets %v", want, m["target_ids"])
				}
			}
		}
		if !found {
			t.Errorf("scope %s missing in %v", want, scopes)
		}
	}
	// The app token may also come as the access_token parameter.
	code, _ = f.do(t, "GET", "/v21.0/debug_token?input_token=nope&access_token="+url.QueryEscape(appToken), "", nil)
	if code != 200 {
		t.Errorf("app token as parameter: %d", code)
	}
	_, out = debug(appToken, "nope")
	if out["data"].(map[string]any)["is_valid"] != false {
		t.Errorf("unknown token valid: %v", out)
	}

	// Fallback: no target ids, then the shared accounts.
	if code, out := exchange(testAppID, testSecret, "code-2"); code != 200 {
		t.Fatalf("exchange 2: %d %v", code, out)
	}
	_, out = debug(appToken, "user-token-2")
	for _, s := range out["data"].(map[string]any)["granular_scopes"].([]any) {
		if ids, ok := s.(map[string]any)["target_ids"]; ok {
			t.Errorf("granular targets %v, want none", ids)
		}
	}
	code, out = f.do(t, "GET", "/v21.0/me/whatsapp_business_accounts", "user-token-2", nil)
	if code != 200 {
		t.Fatalf("shared accounts: %d %v", code, out)
	}
	var ids []string
	for _, d := range out["data"].([]any) {
		m := d.(map[string]any)
		ids = append(ids, m["id"].(string))
		if m["name"] == "" {
			t.Errorf("no name in %v", m)
		}
	}
	if !slices.Equal(ids, []string{f.ba.ID, f.other.ID}) {
		t.Errorf("shared %v", ids)
	}
	code, out = f.do(t, "GET", "/v21.0/me/whatsapp_business_accounts", "", nil)
	wantError(t, code, out, 401, 190)
}

func TestPhoneNumbersRegisterAndSubscribe(t *testing.T) {
	f := setup(t, Config{})
	bad := f.sim.AddBusinessAccount(BusinessAccount{Name: "Broken", AccessToken: "tok-broken",
		PhoneNumbers: []PhoneNumber{{DisplayPhoneNumber: "+1 555-000-0099", RegisterErrorCode: 133005}}})

	code, out := f.do(t, "GET", "/v21.0/"+f.phone, testToken, nil)
	if code != 200 || out["display_phone_number"] != "+1 555-010-0001" || out["verified_name"] != "Acme" ||
		out["quality_rating"] != "GREEN" || out["platform_type"] != "CLOUD_API" || out["messaging_limit_tier"] != "TIER_1K" ||
		out["throughput"].(map[string]any)["level"] != "STANDARD" || out["id"] != f.phone {
		t.Errorf("phone: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v21.0/"+f.ba.ID+"/phone_numbers", testToken, nil)
	if data := out["data"].([]any); code != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != f.phone {
		t.Errorf("phone_numbers: %d %v", code, out)
	}

	register := func(token, phone, pin string) (int, map[string]any) {
		return f.do(t, "POST", "/v21.0/"+phone+"/register", token, map[string]any{"messaging_product": "whatsapp", "pin": pin})
	}
	code, out = register(testToken, f.phone, "12345")
	wantError(t, code, out, 400, 131009)
	code, out = register("tok-broken", bad.PhoneNumbers[0].ID, "123456")
	wantError(t, code, out, 400, 133005)
	code, out = register(testToken, f.phone, "123456")
	if code != 200 || out["success"] != true {
		t.Fatalf("register: %d %v", code, out)
	}

	code, out = f.do(t, "POST", "/v21.0/"+f.ba.ID+"/subscribed_apps", testToken, nil)
	if code != 200 || out["success"] != true {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	_, out = f.do(t, "GET", "/v21.0/"+f.ba.ID+"/subscribed_apps", testToken, nil)
	data := out["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["whatsapp_business_api_data"].(map[string]any)["id"] != testAppID {
		t.Errorf("subscribed apps %v", out)
	}
	var acme BusinessAccount
	for _, ba := range f.sim.BusinessAccounts() {
		if ba.ID == f.ba.ID {
			acme = ba
		}
	}
	if !acme.PhoneNumbers[0].Registered || !slices.Equal(acme.SubscribedApps, []string{testAppID}) || acme.AccessToken != testToken {
		t.Errorf("account state %+v", acme)
	}
}

func TestSeedingThroughControlAPI(t *testing.T) {
	f := setup(t, Config{})
	code, out := f.do(t, "POST", "/_sim/business_accounts", "", map[string]any{
		"id": "200000000000077", "name": "Seeded", "access_token": "tok-seeded",
		"phone_numbers": []any{map[string]any{"id": "300000000000077", "display_phone_number": "+1 555-000-0077",
			"verified_name": "Seeded Co", "messaging_limit_tier": "TIER_10K", "platform_type": "SMB", "is_on_biz_app": true,
			"whatsapp_business_manager_messaging_limit": "TIER_2K"}},
	})
	if code != 200 || out["id"] != "200000000000077" {
		t.Fatalf("seed: %d %v", code, out)
	}
	ph := out["phone_numbers"].([]any)[0].(map[string]any)
	if ph["id"] != "300000000000077" || ph["quality_rating"] != "GREEN" || ph["throughput_level"] != "STANDARD" {
		t.Errorf("seeded phone %v", ph)
	}
	code, out = f.do(t, "GET", "/v21.0/300000000000077?fields=id,messaging_limit_tier,whatsapp_business_manager_messaging_limit,is_on_biz_app,platform_type", "tok-seeded", nil)
	if code != 200 || out["whatsapp_business_manager_messaging_limit"] != "TIER_2K" || out["is_on_biz_app"] != true ||
		out["platform_type"] != "SMB" || out["verified_name"] != nil {
		t.Errorf("fields: %d %v", code, out)
	}
	// Generated ids never collide with seeded ones.
	code, out = f.do(t, "POST", "/v21.0/200000000000077/owned_product_catalogs", "tok-seeded", map[string]any{"name": "C"})
	if code != 200 || out["id"] == "300000000000077" || out["id"] == "200000000000077" {
		t.Errorf("catalog: %d %v", code, out)
	}
	// An id of another kind is refused.
	code, _ = f.do(t, "POST", "/_sim/business_accounts", "", map[string]any{"id": "300000000000077", "name": "X"})
	if code != http.StatusBadRequest {
		t.Errorf("conflicting id: %d", code)
	}
	code, _ = f.do(t, "POST", "/_sim/oauth_codes", "", map[string]any{"code": "c", "access_token": "t", "waba_ids": []string{"200000000000077"}})
	if code != 200 {
		t.Errorf("oauth code: %d", code)
	}
}
