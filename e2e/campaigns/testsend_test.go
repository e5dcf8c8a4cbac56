package campaigns_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// A test send reaches the numbers named, with given values or a recipient's,
// through the simulator, and leaves the campaign as it was (draft, no
// counter moved, no recipient added). A contact opted out of marketing is
// refused for a marketing template while the other number still goes.
// Refusals change nothing and send nothing.
func TestCampaignTestSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	f.StartWorker()
	admin := f.Admin.Auth()
	c := f.campaign(3, nil)
	type result struct {
		PhoneNumber string  `json:"phone_number"`
		MessageID   *string `json:"message_id"`
		Error       string  `json:"error"`
	}
	var out struct{ Results []result }
	path := "/api/campaigns/" + c.ID + "/test-send"
	sentTo := func(n string) []platformsim.Message {
		return f.Sim.Messages(platformsim.MessageFilter{To: strings.TrimPrefix(n, "+")})
	}

	// Given values.
	f.Do("POST", path, map[string]any{"phone_numbers": []string{"+15558880001", "+1 555 888 0002"},
		"values": map[string]string{"1": "Tess", "2": "T-1"}}, admin).Expect(t, 200).Into(t, &out)
	if len(out.Results) != 2 || out.Results[0].MessageID == nil || out.Results[1].MessageID == nil || out.Results[1].PhoneNumber != "+15558880002" {
		t.Fatalf("results %+v", out.Results)
	}
	apptest.Eventually(t, 10*time.Second, "both tests at the provider", func() bool {
		return len(sentTo("+15558880001")) == 1 && len(sentTo("+15558880002")) == 1
	})
	if b := string(sentTo("+15558880001")[0].Body); !strings.Contains(b, `"Tess"`) || !strings.Contains(b, `"T-1"`) {
		t.Fatalf("the test message %s", b)
	}

	// A recipient's values, by the campaign's mapping.
	var recipients struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	f.Do("GET", "/api/campaigns/"+c.ID+"/recipients?limit=1", nil, admin).Expect(t, 200).Into(t, &recipients)
	f.Do("POST", path, map[string]any{"phone_numbers": []string{"+15558880003"}, "recipient_id": recipients.Items[0].ID}, admin).
		Expect(t, 200).Into(t, &out)
	apptest.Eventually(t, 10*time.Second, "the recipient's test at the provider", func() bool { return len(sentTo("+15558880003")) == 1 })
	if b := string(sentTo("+15558880003")[0].Body); !strings.Contains(b, `"Customer `) || !strings.Contains(b, `"A-0000`) {
		t.Fatalf("the test with a recipient's values %s", b)
	}

	// The campaign is as it was.
	if got := f.get(c.ID); got.Status != "draft" || got.TotalRecipients != 3 || got.SentCount != 0 || got.FailedCount != 0 {
		t.Fatalf("after test sends the campaign is %s", got)
	}

	// Refusals: nothing sent.
	before := f.requests()
	six := []string{"+15558880011", "+15558880012", "+15558880013", "+15558880014", "+15558880015", "+15558880016"}
	for _, bad := range []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"phone_numbers": six, "values": map[string]string{"1": "a", "2": "b"}}, 400, "phone_numbers: at most 5 numbers per test send"},
		{map[string]any{"phone_numbers": []string{}, "values": map[string]string{"1": "a", "2": "b"}}, 400, "phone_numbers: give 1 to 5 numbers"},
		{map[string]any{"phone_numbers": []string{"12"}, "values": map[string]string{"1": "a", "2": "b"}}, 400, `phone_numbers: "12"`},
		{map[string]any{"phone_numbers": []string{"+15558880020"}, "values": map[string]string{"1": "a"}}, 400, "values: give a value for 2 (or a recipient_id)"},
		{map[string]any{"phone_numbers": []string{"+15558880020"}, "values": map[string]string{"1": "a", "2": "b", "9": "c"}}, 400, `values: the template has no placeholder "9"`},
		{map[string]any{"phone_numbers": []string{"+15558880020"}, "recipient_id": uuid.NewString()}, 404, "recipient not found in this campaign"},
	} {
		r := f.Do("POST", path, bad.body, admin)
		if r.Status != bad.status || !strings.HasPrefix(r.Message, bad.msg) {
			t.Errorf("%v: %d %q, want %d %q", bad.body, r.Status, r.Message, bad.status, bad.msg)
		}
	}
	if r := f.Do("POST", "/api/campaigns/"+uuid.NewString()+"/test-send", map[string]any{"phone_numbers": []string{"+15558880020"},
		"values": map[string]string{"1": "a", "2": "b"}}, admin); r.Status != 404 {
		t.Errorf("an unknown campaign: %d", r.Status)
	}
	agent := f.CreateUser(admin, "agent@example.test", "Agent").Auth()
	if r := f.Do("POST", path, map[string]any{"phone_numbers": []string{"+15558880020"}, "values": map[string]string{"1": "a", "2": "b"}}, agent); r.Status != 403 {
		t.Errorf("an agent's test send: %d", r.Status)
	}
	time.Sleep(500 * time.Millisecond)
	if n := f.requests() - before; n != 0 {
		t.Fatalf("refused test sends made %d provider requests", n)
	}

	// Marketing: an opted-out contact is refused, the other number goes.
	// (A template of its own: the category is set before anything reads it.)
	promo := f.SeedTemplate(f.OrgID, f.AccountID, "spring_promo", "Hi {{1}}, {{2}} off", false)
	if err := f.DB.Exec(`UPDATE templates SET category = 'MARKETING' WHERE id = ?`, promo.ID).Error; err != nil {
		t.Fatal(err)
	}
	var pc campaignOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Promo", "account_id": f.AccountID, "template_id": promo.ID,
		"variable_mapping": map[string]string{"1": "name", "2": "order_id"}}, admin).Expect(t, 201).Into(t, &pc)
	path = "/api/campaigns/" + pc.ID + "/test-send"
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15558880030"}, admin).Expect(t, 201).Into(t, &contact)
	f.Do("PUT", "/api/contacts/"+contact.ID+"/opt-out", map[string]any{"marketing_opt_out": true}, admin).Expect(t, 200)
	f.Do("POST", path, map[string]any{"phone_numbers": []string{"+15558880030", "+15558880031"}, "values": map[string]string{"1": "a", "2": "b"}},
		admin).Expect(t, 200).Into(t, &out)
	if out.Results[0].MessageID != nil || !strings.Contains(out.Results[0].Error, "opted out") || out.Results[1].MessageID == nil {
		t.Fatalf("marketing test send %s", fmt.Sprint(out.Results))
	}
	apptest.Eventually(t, 10*time.Second, "the subscribed number's test", func() bool { return len(sentTo("+15558880031")) == 1 })
	if n := len(sentTo("+15558880030")); n != 0 {
		t.Fatalf("%d messages to the opted-out contact", n)
	}
}
