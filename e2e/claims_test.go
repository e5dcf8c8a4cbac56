package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// The answers of the phone number ownership rules (internal/accounts).
const (
	msgOwnedElsewhere = "this phone number is connected to another organization"
	msgTakenOver      = "another organization verified this phone number"
)

// newOrg creates an organization as the super admin and returns a session
// of its own Admin, who belongs to no other organization.
func newOrg(t *testing.T, e *apptest.SimEnv, super apptest.Session, slug string) apptest.Session {
	t.Helper()
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org " + slug}, super.Auth()).Expect(t, 201).Into(t, &org)
	var in apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, super.Auth()).Expect(t, 200).Into(t, &in)
	return e.CreateUser(in.Auth(), slug+"-admin@x.com", "Admin")
}

// claimNumber connects an account by hand and checks the spec's answer:
// 201, pending.
func claimNumber(t *testing.T, e *apptest.SimEnv, s apptest.Session, name, phoneID, wabaID, token string) string {
	t.Helper()
	var a struct{ ID, Status string }
	e.Do("POST", "/api/accounts", map[string]any{"name": name, "phone_number_id": phoneID, "business_account_id": wabaID,
		"access_token": token}, s.Auth()).Expect(t, 201).Into(t, &a)
	if a.Status != models.AccountPending {
		t.Fatalf("new account %s, want pending", a.Status)
	}
	return a.ID
}

func accountRow(t *testing.T, e *apptest.SimEnv, id string) models.PlatformAccount {
	t.Helper()
	var row models.PlatformAccount
	if err := e.DB.Take(&row, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return row
}

func countWhere(t *testing.T, e *apptest.SimEnv, model any, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := e.DB.Model(model).Where(query, args...).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// A claim whose token never worked receives none of the number's inbound
// webhooks, and does not keep the real owner from connecting and verifying
// the number: the owner's verification disconnects it, saying why, and the
// number's messages go to the owner.
func TestUnverifiedClaimGetsNoInboundAndYieldsToTheOwner(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	owner := e.Admin()
	squatter := newOrg(t, e, owner, "squatter")

	squatID := claimNumber(t, e, squatter, "Not mine", e.PhoneNumberID(), e.WABA.ID, "a-guessed-token")
	// The refresh job tried the token: the provider refused it (190); the
	// claim stays pending and unverified.
	apptest.Eventually(t, 10*time.Second, "the refresh job's verdict", func() bool {
		return strings.Contains(accountRow(t, e, squatID).LastError, "190")
	})
	if row := accountRow(t, e, squatID); row.Status != models.AccountPending || row.VerifiedAt != nil {
		t.Fatalf("claim with a bad token: status %s, verified_at %v", row.Status, row.VerifiedAt)
	}

	// The number's inbound webhook is acknowledged and stored for nobody:
	// events are stored while the webhook is answered.
	e.Incoming(platformsim.Incoming{From: "15550007001", ProfileName: "Ann", Type: "text", Text: "for the real owner"})
	if n := countWhere(t, e, &models.InboundEvent{}, "organization_id = ?", squatter.User.OrganizationID); n != 0 {
		t.Fatalf("%d inbound events stored for an unverified claim", n)
	}

	// The real owner connects the same number: 201 pending, then verified.
	ownerID := claimNumber(t, e, owner, "Mine", e.PhoneNumberID(), e.WABA.ID, e.WABA.AccessToken)
	var test struct {
		Connected bool `json:"connected"`
	}
	e.Do("POST", "/api/accounts/"+ownerID+"/test", nil, owner.Auth()).Expect(t, 200).Into(t, &test)
	var detail struct {
		Status     string     `json:"status"`
		LastError  string     `json:"last_error"`
		VerifiedAt *time.Time `json:"verified_at"`
	}
	e.Do("GET", "/api/accounts/"+ownerID, nil, owner.Auth()).Expect(t, 200).Into(t, &detail)
	if !test.Connected || detail.Status != models.AccountActive || detail.VerifiedAt == nil {
		t.Fatalf("owner after test: connected %v, %+v", test.Connected, detail)
	}
	detail.VerifiedAt = nil
	e.Do("GET", "/api/accounts/"+squatID, nil, squatter.Auth()).Expect(t, 200).Into(t, &detail)
	if detail.Status != models.AccountDisconnected || detail.LastError != msgTakenOver || detail.VerifiedAt != nil {
		t.Fatalf("squatter's claim after the owner's verification: %+v", detail)
	}
	// Testing the bad token again changes nothing for the owner.
	e.Do("POST", "/api/accounts/"+squatID+"/test", nil, squatter.Auth()).Expect(t, 200).Into(t, &test)
	if row := accountRow(t, e, squatID); test.Connected || row.Status != models.AccountDisconnected || row.VerifiedAt != nil {
		t.Fatalf("squatter's claim after its own test: connected %v, %+v", test.Connected, row)
	}

	// Inbound now reaches the owner, and still not the squatter.
	e.Incoming(platformsim.Incoming{From: "15550007002", ProfileName: "Bob", Type: "text", Text: "hello owner"})
	apptest.Eventually(t, 10*time.Second, "the owner's contact", func() bool {
		return countWhere(t, e, &models.Contact{}, "organization_id = ? AND phone_number = ?", owner.User.OrganizationID, "+15550007002") == 1
	})
	if n := countWhere(t, e, &models.InboundEvent{}, "organization_id = ?", squatter.User.OrganizationID); n != 0 {
		t.Fatalf("%d inbound events stored for the disconnected claim", n)
	}
	if n := countWhere(t, e, &models.Contact{}, "organization_id = ?", squatter.User.OrganizationID); n != 0 {
		t.Fatalf("%d contacts created for the squatter", n)
	}
}

// A second organization whose token also works for the number cannot take
// it from the organization that verified it: its test is a 409 that changes
// nothing, registration is refused before the provider is called, a new
// claim is refused, and the refresh job leaves its claim disconnected.
// Deleting the owner's account releases the number.
func TestVerifiedNumberIsNotTakenBySecondOrganization(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	owner := e.Admin()
	second := newOrg(t, e, owner, "second")
	// The second organization has a token of its own for the same business
	// account (the simulator grants a second token on a seeded account).
	e.Sim.AddBusinessAccount(platformsim.BusinessAccount{ID: e.WABA.ID, AccessToken: "second-org-token"})

	// Both claim before anyone verifies (no worker yet: the refresh jobs wait).
	secondID := claimNumber(t, e, second, "Also mine", e.PhoneNumberID(), e.WABA.ID, "second-org-token")
	ownerID := claimNumber(t, e, owner, "Mine", e.PhoneNumberID(), e.WABA.ID, e.WABA.AccessToken)
	e.Do("POST", "/api/accounts/"+ownerID+"/test", nil, owner.Auth()).Expect(t, 200)
	ownerBefore := accountRow(t, e, ownerID)
	if ownerBefore.VerifiedAt == nil || ownerBefore.Status != models.AccountActive {
		t.Fatalf("owner not verified: %+v", ownerBefore)
	}
	before := accountRow(t, e, secondID)
	if before.Status != models.AccountDisconnected || before.LastError != msgTakenOver {
		t.Fatalf("second claim after the owner's verification: %+v", before)
	}

	// The second organization's working token does not make it the owner.
	if r := e.Do("POST", "/api/accounts/"+secondID+"/test", nil, second.Auth()).Expect(t, 409); r.Message != msgOwnedElsewhere {
		t.Fatalf("test message %q", r.Message)
	}
	after := accountRow(t, e, secondID)
	if after.Status != before.Status || after.LastError != before.LastError || after.VerifiedAt != nil ||
		after.PhoneNumber != "" || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("the refused test changed the claim: %+v -> %+v", before, after)
	}
	if row := accountRow(t, e, ownerID); row.Status != models.AccountActive || row.VerifiedAt == nil ||
		!row.VerifiedAt.Equal(*ownerBefore.VerifiedAt) || !row.UpdatedAt.Equal(ownerBefore.UpdatedAt) {
		t.Fatalf("the refused test changed the owner: %+v", row)
	}
	// Registering would reset the owner's PIN: refused before the provider sees it.
	if r := e.Do("POST", "/api/accounts/"+secondID+"/register", map[string]any{"pin": "123456"}, second.Auth()).Expect(t, 409); r.Message != msgOwnedElsewhere {
		t.Fatalf("register message %q", r.Message)
	}
	if n := e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: e.PhoneNumberID() + "/register"}); n != 0 {
		t.Fatalf("%d register calls reached the provider", n)
	}
	// A new claim on a number another organization verified is refused.
	third := newOrg(t, e, owner, "third")
	r := e.Do("POST", "/api/accounts", map[string]any{"name": "Mine too", "phone_number_id": e.PhoneNumberID(), "business_account_id": e.WABA.ID,
		"access_token": "second-org-token"}, third.Auth()).Expect(t, 409)
	if r.Message != msgOwnedElsewhere {
		t.Fatalf("create message %q", r.Message)
	}

	// The refresh job on a claim still pending (as a claim created while
	// the owner verified would be) disconnects it instead of verifying it.
	e.DB.Model(&models.PlatformAccount{}).Where("id = ?", secondID).Updates(map[string]any{"status": models.AccountPending, "last_error": ""})
	e.StartWorker()
	e.Do("PUT", "/api/accounts/"+secondID, map[string]any{"access_token": "second-org-token"}, second.Auth()).Expect(t, 200)
	apptest.Eventually(t, 10*time.Second, "the refresh job's verdict", func() bool {
		row := accountRow(t, e, secondID)
		return row.Status == models.AccountDisconnected && row.LastError == msgTakenOver
	})
	if row := accountRow(t, e, secondID); row.VerifiedAt != nil {
		t.Fatal("the refresh job verified a claim on a number another organization owns")
	}

	// Inbound still goes to the owner only.
	e.Incoming(platformsim.Incoming{From: "15550007003", ProfileName: "Cy", Type: "text", Text: "hi"})
	apptest.Eventually(t, 10*time.Second, "the owner's contact", func() bool {
		return countWhere(t, e, &models.Contact{}, "organization_id = ? AND phone_number = ?", owner.User.OrganizationID, "+15550007003") == 1
	})
	if n := countWhere(t, e, &models.InboundEvent{}, "organization_id = ?", second.User.OrganizationID); n != 0 {
		t.Fatalf("%d inbound events stored for the second organization", n)
	}

	// Deleting the owner's account releases the number.
	e.Do("DELETE", "/api/accounts/"+ownerID, nil, owner.Auth()).Expect(t, 200)
	var test struct {
		Connected bool `json:"connected"`
	}
	e.Do("POST", "/api/accounts/"+secondID+"/test", nil, second.Auth()).Expect(t, 200).Into(t, &test)
	if row := accountRow(t, e, secondID); !test.Connected || row.Status != models.AccountActive || row.VerifiedAt == nil || row.LastError != "" {
		t.Fatalf("second claim after the owner left: connected %v, %+v", test.Connected, row)
	}
}

// Embedded signup for a number another organization owns is a 409 before
// the provider app is subscribed or anything is saved; over a claim nobody
// verified it succeeds and disconnects that claim; the same organization
// onboarding again updates its own account.
func TestEmbeddedSignupRespectsNumberOwnership(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	super := e.Admin()
	ownerID := e.ConnectAccount(super.Auth(), "Owner")
	owner := accountRow(t, e, ownerID)

	onboarder := newOrg(t, e, super, "onboarder")
	seedSignup(t, e, onboarder)
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "code-taken", AccessToken: "onboarder-token", WABAIDs: []string{e.WABA.ID}})
	r := e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "code-taken"}, onboarder.Auth()).Expect(t, 409)
	if r.Message != msgOwnedElsewhere {
		t.Fatalf("exchange message %q", r.Message)
	}
	if n := e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: e.WABA.ID + "/subscribed_apps"}); n != 0 {
		t.Fatalf("the app was subscribed %d times to a business account whose number another organization owns", n)
	}
	if n := e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: e.PhoneNumberID() + "/register"}); n != 0 {
		t.Fatalf("%d register calls", n)
	}
	if n := countWhere(t, e, &models.PlatformAccount{}, "organization_id = ?", onboarder.User.OrganizationID); n != 0 {
		t.Fatalf("%d accounts saved for the refused signup", n)
	}
	if row := accountRow(t, e, ownerID); row.Status != models.AccountActive || !row.UpdatedAt.Equal(owner.UpdatedAt) {
		t.Fatalf("the refused signup changed the owner: %+v", row)
	}

	// A squatter's unverified claim does not block the real owner's signup.
	fresh := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Fresh Co", PhoneNumbers: []platformsim.PhoneNumber{{}}})
	freshPhone := fresh.PhoneNumbers[0].ID
	squatter := newOrg(t, e, super, "squatter")
	squatID := claimNumber(t, e, squatter, "Not mine", freshPhone, fresh.ID, "a-guessed-token")
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "code-fresh", AccessToken: "fresh-token", WABAIDs: []string{fresh.ID}})
	type answer struct {
		Account struct {
			ID         string     `json:"id"`
			Status     string     `json:"status"`
			VerifiedAt *time.Time `json:"verified_at"`
		} `json:"account"`
	}
	var out answer
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "code-fresh"}, onboarder.Auth()).Expect(t, 200).Into(t, &out)
	if out.Account.Status != models.AccountActive || out.Account.VerifiedAt == nil {
		t.Fatalf("signup over an unverified claim: %+v", out)
	}
	if row := accountRow(t, e, squatID); row.Status != models.AccountDisconnected || row.LastError != msgTakenOver || row.VerifiedAt != nil {
		t.Fatalf("squatter's claim after the signup: %+v", row)
	}
	if n := e.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: fresh.ID + "/subscribed_apps"}); n != 1 {
		t.Fatalf("%d subscriptions for the onboarded business account", n)
	}

	// Onboarding the same number again updates the organization's account.
	e.Sim.AddOAuthCode(platformsim.OAuthCode{Code: "code-again", AccessToken: "fresh-token-2", WABAIDs: []string{fresh.ID}})
	var again answer
	e.Do("POST", "/api/accounts/exchange-token", map[string]any{"code": "code-again"}, onboarder.Auth()).Expect(t, 200).Into(t, &again)
	if again.Account.ID != out.Account.ID || again.Account.Status != models.AccountActive {
		t.Fatalf("re-onboarding: %+v, first %+v", again, out)
	}
}

// Template status webhooks, routed by business account id, reach only the
// verified account of that business account, not a claim that names it.
func TestTemplateUpdatesReachOnlyVerifiedAccounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	squatter := newOrg(t, f.SimEnv, f.admin, "squatter")
	claimNumber(t, f.SimEnv, squatter, "Not mine", "777000111", f.WABA.ID, "a-guessed-token")

	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"time":1700000000,"changes":[{
		"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":123,
		"message_template_name":"welcome","message_template_language":"en_US","reason":"NONE"}}]}]}`, f.WABA.ID))
	if code := signedPost(t, f.Server.URL, f.AppSecret, body); code != 200 {
		t.Fatalf("template webhook: %d", code)
	}
	if n := countWhere(t, f.SimEnv, &models.InboundEvent{}, "organization_id = ?", squatter.User.OrganizationID); n != 0 {
		t.Fatalf("%d template events stored for an unverified claim", n)
	}
	if n := countWhere(t, f.SimEnv, &models.InboundEvent{}, "organization_id = ? AND kind = ?", f.orgID, "template_status"); n != 1 {
		t.Fatalf("%d template events stored for the owner, want 1", n)
	}
}

// A token that can read a number proves access to the number, not that the
// number belongs to the business account the claim names: naming another
// business account (one the token can also reach) next to one's own number
// does not verify, so its template updates never route to the claim.
func TestClaimMustNameTheNumbersOwnBusinessAccount(t *testing.T) {
	t.Parallel()
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	other := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Someone else", AccessToken: e.WABA.AccessToken})
	id := claimNumber(t, e, admin, "Mixed", e.PhoneNumberID(), other.ID, e.WABA.AccessToken)
	var res struct {
		Connected bool   `json:"connected"`
		Error     string `json:"error"`
	}
	e.Do("POST", "/api/accounts/"+id+"/test", nil, admin.Auth()).Expect(t, 200).Into(t, &res)
	if res.Connected || !strings.Contains(res.Error, "not a number of business account") {
		t.Fatalf("test answer %+v", res)
	}
	if row := accountRow(t, e, id); row.VerifiedAt != nil || row.Status != models.AccountPending {
		t.Fatalf("claim %+v", row)
	}
	// Naming the right business account verifies.
	e.Do("DELETE", "/api/accounts/"+id, nil, admin.Auth()).Expect(t, 200)
	good := claimNumber(t, e, admin, "Right", e.PhoneNumberID(), e.WABA.ID, e.WABA.AccessToken)
	e.Do("POST", "/api/accounts/"+good+"/test", nil, admin.Auth()).Expect(t, 200).Into(t, &res)
	if !res.Connected {
		t.Fatalf("right pair: %+v", res)
	}
}
