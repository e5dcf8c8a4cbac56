package campaigns_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// Opt-outs end to end, through the simulator: a contact sends STOP → it is
// opted out (the confirmation answers it, the chatbot does not) → the next
// marketing campaign skips it (skipped, counted as skipped, nothing sent to
// it) and an API marketing send to it is refused, while a utility template
// still reaches it; START → the next campaign includes it again. The
// provider's 131050 on a campaign recipient opts that number out, and the
// campaign after skips it.
func TestOptOutKeywordsAndProviderOptOutThroughCampaigns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	f.StartWorker()
	a := f.Admin.Auth()
	// The fixture's template becomes a marketing one; a utility one beside it.
	f.DB.Exec(`UPDATE templates SET category = 'MARKETING' WHERE id = ?`, f.templateID)
	notice := f.SeedTemplate(f.OrgID, f.AccountID, "shipping_notice", "Hi {{1}}, your parcel {{2}} is on its way", false)
	f.Do("PUT", "/api/org/settings", map[string]any{"opt_out_confirmation": "You will get no more offers. Send START to get them again.",
		"opt_in_confirmation": "Welcome back."}, a).Expect(t, 200)
	// The chatbot answers every other message (greeting, then fallback).
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "greeting_message": "Welcome!",
		"fallback_message": "Sorry, I did not get that."}, a).Expect(t, 200)

	const stopper = "15557000001" // number(1)
	texts := func(to string) []string {
		var out []string
		for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: to}) {
			var body struct {
				Text struct {
					Body string `json:"body"`
				} `json:"text"`
			}
			if m.Type == "text" && json.Unmarshal(m.Body, &body) == nil {
				out = append(out, body.Text.Body)
			}
		}
		return out
	}
	contact := func(number string) models.Contact {
		var c models.Contact
		f.DB.Where("phone_number = ?", number).Limit(1).Find(&c)
		return c
	}

	f.Incoming(platformsim.Incoming{From: stopper, ProfileName: "Sam", Type: "text", Text: " stop "})
	apptest.Eventually(t, 10*time.Second, "the STOP confirmation", func() bool { return len(texts(stopper)) == 1 })
	if c := contact("+" + stopper); !c.MarketingOptOut || c.OptOutSource != models.OptOutKeyword || c.OptedOutAt == nil {
		t.Fatalf("after STOP: %+v", c)
	}
	// The bot is on: it answers the next message, and answered STOP with
	// nothing (else its greeting would be here too).
	f.Incoming(platformsim.Incoming{From: stopper, Type: "text", Text: "hello"})
	apptest.Eventually(t, 10*time.Second, "the bot's answer to hello", func() bool { return len(texts(stopper)) == 2 })
	time.Sleep(500 * time.Millisecond)
	if got := texts(stopper); len(got) != 2 || !strings.HasPrefix(got[0], "You will get no more offers") ||
		(got[1] != "Welcome!" && got[1] != "Sorry, I did not get that.") {
		t.Fatalf("messages to the contact: %q: want the confirmation, then the bot's one answer, to hello", got)
	}

	run := func(n int) (campaignOut, map[string]int64) {
		t.Helper()
		before := f.sends()
		c := f.campaign(n, nil)
		f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200)
		done := f.waitStatus(c.ID, "completed", 30*time.Second)
		after := f.sends()
		got := map[string]int64{}
		for k, v := range after {
			if d := v - before[k]; d > 0 {
				got[k] = int64(d)
			}
		}
		return done, got
	}
	awaitCounts := func(id string, want func(campaignOut) bool) campaignOut {
		t.Helper()
		var c campaignOut
		apptest.Eventually(t, 10*time.Second, "the campaign's counters", func() bool { c = f.get(id); return want(c) })
		return c
	}

	c, sent := run(3)
	c = awaitCounts(c.ID, func(c campaignOut) bool { return c.SkippedCount == 1 && c.SentCount == 2 })
	if c.FailedCount != 0 || sent["+"+stopper] != 0 || len(sent) != 2 || f.recipientsBy(c.ID)["skipped"] != 1 {
		t.Fatalf("the campaign after STOP %s, sends %v: want the opted-out contact skipped, nothing sent to it", c, sent)
	}
	var rec struct {
		Status     string
		ErrorTitle string
	}
	f.DB.Raw(`SELECT status, error_title FROM campaign_recipients WHERE campaign_id = ? AND phone_number = ?`, c.ID, "+"+stopper).Scan(&rec)
	if rec.Status != "skipped" || rec.ErrorTitle != "opted out of marketing" {
		t.Fatalf("the skipped recipient: %+v", rec)
	}
	// An API marketing send is refused; a utility template still goes.
	id := contact("+" + stopper).ID.String()
	params := map[string]any{"1": "Sam", "2": "A-1"}
	r := f.Do("POST", "/api/messages/template", map[string]any{"contact_id": id, "template_id": f.templateID, "template_params": params}, a).Expect(t, 400)
	if !strings.Contains(r.Message, "the contact opted out of marketing messages") {
		t.Fatalf("an API marketing send: %s", r.Body)
	}
	f.Do("POST", "/api/messages/template", map[string]any{"contact_id": id, "template_id": notice.ID.String(), "template_params": params}, a).Expect(t, 202)
	apptest.Eventually(t, 10*time.Second, "the utility template to the opted-out contact", func() bool { return f.sends()["+"+stopper] == 1 })

	// START: opted back in, included again.
	f.Incoming(platformsim.Incoming{From: stopper, Type: "text", Text: "START"})
	apptest.Eventually(t, 10*time.Second, "the START confirmation", func() bool { return len(texts(stopper)) == 3 })
	if c := contact("+" + stopper); c.MarketingOptOut || c.OptedOutAt != nil {
		t.Fatalf("after START: %+v", c)
	}
	c, sent = run(3)
	c = awaitCounts(c.ID, func(c campaignOut) bool { return c.SentCount == 3 })
	if c.SkippedCount != 0 || sent["+"+stopper] != 1 {
		t.Fatalf("the campaign after START %s, sends %v: want everyone", c, sent)
	}

	// The provider's 131050 for number(2), a recipient without a contact.
	const refused = "15557000002"
	f.Sim.UpdateConfig(func(c *platformsim.Config) { c.FailRecipients = map[string]int{refused: 131050} })
	c, _ = run(3)
	awaitCounts(c.ID, func(c campaignOut) bool { return c.FailedCount == 1 })
	apptest.Eventually(t, 10*time.Second, "the provider's opt-out recorded", func() bool { return contact("+" + refused).MarketingOptOut })
	if c := contact("+" + refused); c.OptOutSource != models.OptOutProvider {
		t.Fatalf("after 131050: %+v", c)
	}
	f.Sim.UpdateConfig(func(c *platformsim.Config) { c.FailRecipients = nil })
	c, sent = run(3)
	c = awaitCounts(c.ID, func(c campaignOut) bool { return c.SkippedCount == 1 && c.SentCount == 2 })
	if sent["+"+refused] != 0 || c.FailedCount != 0 {
		t.Fatalf("the campaign after 131050 %s, sends %v: want that number skipped", c, sent)
	}
}
