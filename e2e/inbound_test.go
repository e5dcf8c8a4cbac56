package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

func TestVerificationHandshake(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"PLATFORM_WEBHOOK_VERIFY_TOKEN": "global-verify"}, nil)
	get := func(q string) (int, string) {
		res, err := http.Get(f.Server.URL + "/api/webhook?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return res.StatusCode, b.String()
	}
	if code, body := get("hub.mode=subscribe&hub.verify_token=verify-Main&hub.challenge=12345"); code != 200 || body != "12345" {
		t.Fatalf("account token: %d %q", code, body)
	}
	if code, body := get("hub.mode=subscribe&hub.verify_token=global-verify&hub.challenge=abc"); code != 200 || body != "abc" {
		t.Fatalf("global token: %d %q", code, body)
	}
	for _, q := range []string{"hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1", "hub.mode=unsubscribe&hub.verify_token=verify-Main&hub.challenge=1",
		"hub.mode=subscribe&hub.challenge=1", ""} {
		if code, _ := get(q); code != 403 {
			t.Errorf("%q: %d, want 403", q, code)
		}
	}
}

// An incoming message creates the contact with its profile name, is stored
// once, and fires message.incoming (and contact.created) to a receiver with a
// valid signature.
func TestIncomingMessageCreatesContactAndFiresSignedWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	rcv := apptest.NewReceiver(t)
	var wh struct{ ID string }
	f.Do("POST", "/api/webhooks", map[string]any{"name": "CRM", "url": rcv.URL, "secret": "shh",
		"events": []string{"message.incoming", "contact.created"}, "headers": map[string]string{"X-Tenant": "acme"}}, f.admin.Auth()).
		Expect(t, 201).Into(t, &wh)

	wamid := f.Incoming(platformsim.Incoming{From: "15550001111", ProfileName: "Ann Lee", Type: "text", Text: "Hello there"})
	apptest.Eventually(t, 10*time.Second, "two events at the receiver", func() bool { return len(rcv.Got()) >= 2 })
	var contact models.Contact
	if err := f.DB.Take(&contact, "phone_number = ?", "+15550001111").Error; err != nil {
		t.Fatal(err)
	}
	if contact.ProfileName != "Ann Lee" || contact.AccountID == nil || contact.AccountID.String() != f.accountID || contact.LastInboundAt == nil {
		t.Fatalf("contact %+v", contact)
	}
	var msgs []models.Message
	f.DB.Where("contact_id = ?", contact.ID).Find(&msgs)
	if len(msgs) != 1 || msgs[0].Direction != "incoming" || msgs[0].Type != "text" || msgs[0].Content.V["text"] != "Hello there" ||
		*msgs[0].PlatformMessageID != wamid {
		t.Fatalf("messages %+v", msgs)
	}
	events := map[string]map[string]any{}
	for _, r := range rcv.Got() {
		if r.Header.Get("X-Webhook-Signature") != webhooks.Signature("shh", r.Body) {
			t.Fatalf("bad signature on %s", r.Body)
		}
		if r.Header.Get("User-Agent") != "Wharf-Webhook/1.0" || r.Header.Get("X-Tenant") != "acme" || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers %v", r.Header)
		}
		var p struct {
			Event     string         `json:"event"`
			Timestamp string         `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatal(err)
		}
		if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
			t.Fatalf("timestamp %q", p.Timestamp)
		}
		events[p.Event] = p.Data
	}
	in := events["message.incoming"]
	if in == nil || in["message_id"] != msgs[0].ID.String() || in["contact_id"] != contact.ID.String() || in["contact_phone"] != "+15550001111" ||
		in["contact_name"] != "Ann Lee" || in["message_type"] != "text" || in["platform_account"] != "Main" {
		t.Fatalf("message.incoming data %v", in)
	}
	if content, _ := in["content"].(map[string]any); content["text"] != "Hello there" {
		t.Fatalf("content %v", in["content"])
	}
	if cc := events["contact.created"]; cc == nil || cc["contact_id"] != contact.ID.String() || cc["source"] != "incoming" {
		t.Fatalf("contact.created data %v", cc)
	}
	// A second message from the same contact is not a new contact.
	f.Incoming(platformsim.Incoming{From: "15550001111", ProfileName: "Ann Lee", Type: "text", Text: "again"})
	apptest.Eventually(t, 10*time.Second, "third event", func() bool { return len(rcv.Got()) >= 3 })
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.Got()); n != 3 {
		t.Fatalf("%d events, want 3 (no second contact.created)", n)
	}
}

// signedPost sends a raw webhook the way the provider would.
func signedPost(t *testing.T, url, secret string, body []byte) int {
	req, _ := http.NewRequest("POST", url+"/api/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(platform.SignatureHeader, platform.Sign(secret, body))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func textWebhook(phoneID, from, wamid, text string) []byte {
	return []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
		"contacts":[{"profile":{"name":"Mallory"},"wa_id":%q}],
		"messages":[{"from":%q,"id":%q,"timestamp":"1700000000","type":"text","text":{"body":%q}}]}}]}]}`, phoneID, from, from, wamid, text))
}

func TestForgedOrUnsignedWebhooksAreRejectedAndStoreNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	body := textWebhook(f.PhoneNumberID(), "15559990000", "wamid.forged1", "give me money")
	if code := signedPost(t, f.Server.URL, "", body); code != 401 {
		t.Fatalf("unsigned: %d", code)
	}
	if code := signedPost(t, f.Server.URL, "not-the-secret", body); code != 401 {
		t.Fatalf("forged: %d", code)
	}
	// A signature of a different body does not verify this one.
	req, _ := http.NewRequest("POST", f.Server.URL+"/api/webhook", bytes.NewReader(body))
	req.Header.Set(platform.SignatureHeader, platform.Sign(f.AppSecret, []byte("{}")))
	res, _ := http.DefaultClient.Do(req)
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("signature of another body: %d", res.StatusCode)
	}
	var n int64
	f.DB.Model(&models.InboundEvent{}).Count(&n)
	if n != 0 {
		t.Fatalf("%d inbound events stored from rejected webhooks", n)
	}
	f.DB.Model(&models.Contact{}).Count(&n)
	if n != 0 {
		t.Fatal("a contact was created")
	}
	if code := signedPost(t, f.Server.URL, f.AppSecret, []byte("not json")); code != 400 {
		t.Fatalf("signed garbage: %d", code)
	}
	// The organization's own app secret also verifies its accounts' webhooks.
	f.Do("PUT", "/api/org/settings", map[string]any{"provider_app_secret": "org-own-secret"}, f.admin.Auth()).Expect(t, 200)
	if code := signedPost(t, f.Server.URL, "org-own-secret", body); code != 200 {
		t.Fatalf("org secret: %d", code)
	}
	// A valid signature for an unknown phone number: acknowledged, nothing stored.
	f.DB.Exec("DELETE FROM inbound_events")
	if code := signedPost(t, f.Server.URL, f.AppSecret, textWebhook("42", "15559990000", "wamid.x", "hi")); code != 200 {
		t.Fatalf("unknown phone: %d", code)
	}
	f.DB.Model(&models.InboundEvent{}).Count(&n)
	if n != 0 {
		t.Fatal("stored an event for an unknown phone number")
	}
}

func TestRedeliveredWebhookStoresNothingTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	for i := 0; i < 3; i++ {
		f.Incoming(platformsim.Incoming{From: "15550002222", ProfileName: "Bo", Type: "text", Text: "once", MessageID: "wamid.same-id"})
	}
	body := textWebhook(f.PhoneNumberID(), "15550002222", "wamid.same-id", "once")
	if code := signedPost(t, f.Server.URL, f.AppSecret, body); code != 200 {
		t.Fatal(code)
	}
	apptest.Eventually(t, 10*time.Second, "all events processed", func() bool {
		var pending int64
		f.DB.Model(&models.InboundEvent{}).Where("processed_at IS NULL").Count(&pending)
		return pending == 0
	})
	var n int64
	f.DB.Model(&models.Message{}).Where("platform_message_id = ?", "wamid.same-id").Count(&n)
	if n != 1 {
		t.Fatalf("%d copies of a redelivered message", n)
	}
	f.DB.Model(&models.Contact{}).Count(&n)
	if n != 1 {
		t.Fatalf("%d contacts", n)
	}
}

// Many messages of one contact, delivered back to back while the worker's
// concurrent tasks race for them, are applied in the order they arrived;
// media and interactive replies are stored with their content.
func TestContactMessagesAppliedInOrderAndEveryTypeStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	for i := 0; i < 25; i++ {
		f.Incoming(platformsim.Incoming{From: "15550003333", Type: "text", Text: fmt.Sprintf("m%02d", i), Timestamp: 1700000000})
	}
	apptest.Eventually(t, 15*time.Second, "25 messages", func() bool {
		var n int64
		f.DB.Model(&models.Message{}).Count(&n)
		return n == 25
	})
	// Same timestamps: the stored order (creation) follows arrival order.
	var msgs []models.Message
	f.DB.Order("created_at").Find(&msgs)
	for i, m := range msgs {
		if m.Content.V["text"] != fmt.Sprintf("m%02d", i) {
			t.Fatalf("message %d is %v", i, m.Content.V["text"])
		}
	}

	f.Incoming(platformsim.Incoming{From: "15550004444", Type: "image", MimeType: "image/jpeg", Caption: "a cat"})
	f.Incoming(platformsim.Incoming{From: "15550004444", Type: "interactive", Interactive: &platformsim.IncomingInteractive{Type: "button_reply", ID: "yes", Title: "Yes"}})
	f.Incoming(platformsim.Incoming{From: "15550004444", Type: "interactive", Interactive: &platformsim.IncomingInteractive{Type: "nfm_reply", ResponseJSON: `{"flow_token":"t1","size":"L"}`}})
	f.Incoming(platformsim.Incoming{From: "15550004444", Type: "unsupported"})
	var got []models.Message
	apptest.Eventually(t, 10*time.Second, "4 more messages", func() bool {
		got = nil
		f.DB.Joins("JOIN contacts c ON c.id = messages.contact_id").Where("c.phone_number = ?", "+15550004444").Order("messages.created_at").Find(&got)
		return len(got) == 4
	})
	if got[0].Type != "image" || got[0].Content.V["caption"] != "a cat" || got[0].Content.V["mime_type"] != "image/jpeg" || got[0].Content.V["id"] == nil {
		t.Fatalf("image %+v", got[0].Content.V)
	}
	if got[1].Type != "interactive" || got[1].Content.V["id"] != "yes" || got[1].Content.V["type"] != "button_reply" {
		t.Fatalf("button reply %+v", got[1].Content.V)
	}
	if resp, _ := got[2].Content.V["response"].(map[string]any); got[2].Type != "flow" || resp["size"] != "L" {
		t.Fatalf("flow reply %s %+v", got[2].Type, got[2].Content.V)
	}
	if got[3].Type != "unsupported" {
		t.Fatalf("unsupported stored as %s", got[3].Type)
	}
}

// A status for a message we never sent is logged; the batch goes on.
func TestStatusForUnknownMessageDoesNotFailTheBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"1","phone_number_id":%q},
		"statuses":[{"id":"wamid.nobody","status":"delivered","timestamp":"1700000000","recipient_id":"15550005555"}],
		"contacts":[{"profile":{"name":"Cy"},"wa_id":"15550005555"}],
		"messages":[{"from":"15550005555","id":"wamid.real","timestamp":"1700000001","type":"text","text":{"body":"still stored"}}]}}]}]}`, f.PhoneNumberID()))
	if code := signedPost(t, f.Server.URL, f.AppSecret, body); code != 200 {
		t.Fatal(code)
	}
	// The message and the statuses are two events, applied by two tasks:
	// wait for both, then check that neither failed.
	apptest.Eventually(t, 10*time.Second, "the message and the status applied", func() bool {
		var n, pending int64
		f.DB.Model(&models.Message{}).Where("platform_message_id = 'wamid.real'").Count(&n)
		f.DB.Model(&models.InboundEvent{}).Where("processed_at IS NULL").Count(&pending)
		return n == 1 && pending == 0
	})
	var events []models.InboundEvent
	f.DB.Order("id").Find(&events)
	if len(events) != 2 {
		t.Fatalf("%d events, want the message's and the status's", len(events))
	}
	for _, ev := range events {
		if ev.ProcessedAt == nil || ev.Attempts != 0 || ev.LastError != "" {
			t.Fatalf("event %+v", ev)
		}
	}
}
