package platformsim

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestSendTextStatusesInOrder(t *testing.T) {
	f := setup(t, Config{SentAfter: 10 * time.Millisecond, DeliveredAfter: 60 * time.Millisecond, ReadAfter: 110 * time.Millisecond})

	body := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": "15551234567",
		"type": "text", "text": map[string]any{"body": "hello", "preview_url": false},
		"biz_opaque_callback_data": "outbox-42"}
	code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, body)
	if code != 200 {
		t.Fatalf("send: %d %v", code, out)
	}
	if out["messaging_product"] != "whatsapp" {
		t.Errorf("messaging_product %v", out["messaging_product"])
	}
	contact := out["contacts"].([]any)[0].(map[string]any)
	if contact["input"] != "15551234567" || contact["wa_id"] != "15551234567" {
		t.Errorf("contacts %v", out["contacts"])
	}
	msg := out["messages"].([]any)[0].(map[string]any)
	id, _ := msg["id"].(string)
	if !strings.HasPrefix(id, "wamid.") || msg["message_status"] != "accepted" {
		t.Errorf("messages %v", out["messages"])
	}

	waitFor(t, 3*time.Second, "three statuses", func() bool { return len(f.recv.messageHooks()) == 3 })
	var got []string
	for _, h := range f.recv.messageHooks() {
		if h.Metadata.PhoneNumberID != f.phone || h.Metadata.DisplayPhoneNumber != "15550100001" || h.MessagingProduct != "whatsapp" {
			t.Errorf("metadata %+v", h.Metadata)
		}
		for _, st := range h.Statuses {
			got = append(got, st.Status)
			if st.ID != id || st.RecipientID != "15551234567" || st.BizOpaque != "outbox-42" || st.Timestamp == "" {
				t.Errorf("status %+v", st)
			}
			if st.Status != "read" && (st.Conversation == nil || st.Conversation.Origin.Type != "service" ||
				st.Pricing == nil || !st.Pricing.Billable || st.Pricing.PricingModel != "CBP" || st.Pricing.Category != "service") {
				t.Errorf("conversation/pricing of %s: %+v %+v", st.Status, st.Conversation, st.Pricing)
			}
		}
	}
	if strings.Join(got, ",") != "sent,delivered,read" {
		t.Errorf("statuses %v, want sent,delivered,read", got)
	}
	for _, h := range f.recv.hooks("messages") {
		if h.Object != "whatsapp_business_account" || h.Entry[0].ID != f.ba.ID {
			t.Errorf("envelope %+v", h)
		}
	}

	msgs := f.sim.Messages(MessageFilter{To: "15551234567"})
	if len(msgs) != 1 || msgs[0].ID != id || msgs[0].Status != "read" || msgs[0].Type != "text" ||
		msgs[0].BizOpaqueCallbackData != "outbox-42" || msgs[0].PhoneNumberID != f.phone {
		t.Errorf("messages %+v", msgs)
	}
	waitFor(t, time.Second, "webhook log", func() bool {
		whs := f.sim.Webhooks()
		return len(whs) == 3 && whs[0].StatusCode+whs[1].StatusCode+whs[2].StatusCode == 600
	})
	whs := f.sim.Webhooks()
	if whs[0].Attempts != 1 || whs[0].StatusCode != 200 {
		t.Fatalf("webhook log %+v", whs[0])
	}
	// The log shows exactly the bytes that were posted (and signed).
	f.recv.mu.Lock()
	for i, wh := range whs {
		if !bytes.Equal(wh.Body, f.recv.bodies[i]) {
			t.Errorf("logged body %s\nposted body %s", wh.Body, f.recv.bodies[i])
		}
	}
	f.recv.mu.Unlock()
}

func TestFailRecipientsGetFailedStatus(t *testing.T) {
	f := setup(t, Config{SentAfter: 5 * time.Millisecond, DeliveredAfter: 10 * time.Millisecond, ReadAfter: 15 * time.Millisecond,
		FailRecipients: map[string]int{"15550009999": 131026}})
	id := f.sendText(t, "15550009999", nil)
	waitFor(t, 2*time.Second, "failed status", func() bool { return len(f.recv.messageHooks()) == 1 })
	time.Sleep(60 * time.Millisecond) // nothing else may follow
	hooks := f.recv.messageHooks()
	if len(hooks) != 1 || len(hooks[0].Statuses) != 1 {
		t.Fatalf("hooks %+v", hooks)
	}
	st := hooks[0].Statuses[0]
	if st.ID != id || st.Status != "failed" || len(st.Errors) != 1 {
		t.Fatalf("status %+v", st)
	}
	e := st.Errors[0]
	if e.Code != 131026 || e.Title == "" || e.Message == "" || e.ErrorData.Details == "" {
		t.Errorf("error %+v", e)
	}
}

func TestThroughputCap(t *testing.T) {
	f := setup(t, Config{ThroughputPerSecond: 5, SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	first := f.sendText(t, "15551234567", nil)
	for range 4 {
		f.sendText(t, "15551234567", nil)
	}
	body := map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "x"}}
	code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, body)
	e := wantError(t, code, out, 400, 130429)
	if e["error_subcode"] == nil {
		t.Errorf("no subcode in %v", e)
	}
	// Mark-as-read is not a send and is not throttled.
	code, out = f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken,
		map[string]any{"messaging_product": "whatsapp", "status": "read", "message_id": first})
	if code != 200 || out["success"] != true {
		t.Fatalf("mark as read: %d %v", code, out)
	}
	// Another phone number has its own allowance.
	code, _ = f.do(t, "POST", "/v21.0/"+f.other.PhoneNumbers[0].ID+"/messages", otherToken, body)
	if code != 200 {
		t.Errorf("other number throttled: %d", code)
	}
	time.Sleep(1010 * time.Millisecond)
	f.sendText(t, "15551234567", nil)
	if n := len(f.sim.Messages(MessageFilter{PhoneNumberID: f.phone})); n != 6 {
		t.Errorf("%d messages recorded, want 6", n)
	}
}

func TestErrorRateInjectsTransientErrors(t *testing.T) {
	f := setup(t, Config{ErrorRate: 1, SentAfter: 1 * time.Millisecond})
	body := map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "x"}}
	for range 3 {
		code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, body)
		wantError(t, code, out, 500, 131000)
	}
	time.Sleep(30 * time.Millisecond)
	if n := len(f.sim.Messages(MessageFilter{})); n != 0 {
		t.Errorf("%d messages recorded", n)
	}
	if n := len(f.sim.Webhooks()); n != 0 {
		t.Errorf("%d webhooks posted", n)
	}
	if n := f.sim.CountRequests(RequestFilter{Path: "/messages"}); n != 3 {
		t.Errorf("%d requests logged", n)
	}
}

func TestLatency(t *testing.T) {
	f := setup(t, Config{Latency: 300 * time.Millisecond})
	start := time.Now()
	f.do(t, "GET", "/v21.0/"+f.phone, testToken, nil)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	start = time.Now()
	f.do(t, "GET", "/_sim/health", "", nil)
	if d := time.Since(start); d >= 300*time.Millisecond {
		t.Errorf("control API delayed by %v", d)
	}
}

func TestAuthAndErrorShape(t *testing.T) {
	f := setup(t, Config{})
	path := "/v21.0/" + f.phone + "/messages"
	body := map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "x"}}

	code, out := f.do(t, "POST", path, "", body)
	e := wantError(t, code, out, 401, 190)
	if !strings.Contains(e["message"].(string), "Invalid OAuth access token") {
		t.Errorf("message %v", e["message"])
	}
	code, out = f.do(t, "POST", path, "nope", body)
	wantError(t, code, out, 401, 190)
	code, out = f.do(t, "POST", path, otherToken, body) // no access to this account
	wantError(t, code, out, 401, 190)

	code, out = f.do(t, "GET", "/v21.0/999999999999", testToken, nil)
	e = wantError(t, code, out, 404, 100)
	if e["error_subcode"] != float64(33) || !strings.Contains(e["message"].(string), "Unsupported get request. Object with ID '999999999999' does not exist") {
		t.Errorf("unknown object error %v", e)
	}
	// A business account id has no messages edge.
	code, out = f.do(t, "POST", "/v21.0/"+f.ba.ID+"/messages", testToken, body)
	wantError(t, code, out, 400, 100)
	code, out = f.do(t, "GET", "/v21.0/"+f.phone+"/nonsense", testToken, nil)
	wantError(t, code, out, 400, 2500)
}

func TestSendValidation(t *testing.T) {
	f := setup(t, Config{SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1, ThroughputPerSecond: -1})
	path := "/v21.0/" + f.phone + "/messages"
	base := func(typ string, obj any) map[string]any {
		m := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": "15551234567", "type": typ}
		if obj != nil {
			m[typ] = obj
		}
		return m
	}
	buttons := func(n int, title string) map[string]any {
		var bs []any
		for i := range n {
			bs = append(bs, map[string]any{"type": "reply", "reply": map[string]any{"id": "b" + itoa(i), "title": title}})
		}
		return map[string]any{"type": "button", "body": map[string]any{"text": "Pick"}, "action": map[string]any{"buttons": bs}}
	}
	list := func(rows int) map[string]any {
		var rs []any
		for i := range rows {
			rs = append(rs, map[string]any{"id": "r" + itoa(i), "title": "Row"})
		}
		return map[string]any{"type": "list", "body": map[string]any{"text": "Pick"},
			"action": map[string]any{"button": "Options", "sections": []any{map[string]any{"title": "S", "rows": rs}}}}
	}
	cta := func(url string) map[string]any {
		return map[string]any{"type": "cta_url", "body": map[string]any{"text": "See"},
			"action": map[string]any{"name": "cta_url", "parameters": map[string]any{"display_text": "Open", "url": url}}}
	}
	flowMsg := map[string]any{"type": "flow", "body": map[string]any{"text": "Go"}, "action": map[string]any{"name": "flow",
		"parameters": map[string]any{"flow_message_version": "3", "flow_token": "t", "flow_id": "1", "flow_cta": "Start",
			"flow_action": "navigate", "flow_action_payload": map[string]any{"screen": "A"}}}}
	callPerm := map[string]any{"type": "call_permission_request", "body": map[string]any{"text": "May we call?"},
		"action": map[string]any{"name": "call_permission_request"}}
	wrongProduct := base("text", map[string]any{"body": "x"})
	wrongProduct["messaging_product"] = "sms"
	badTo := base("text", map[string]any{"body": "x"})
	badTo["to"] = "+1 555 123"

	cases := []struct {
		name string
		body any
		code int // 0: accepted
	}{
		{"text", base("text", map[string]any{"body": "hi"}), 0},
		{"text too long", base("text", map[string]any{"body": strings.Repeat("a", 4097)}), 131009},
		{"text without body", base("text", map[string]any{}), 100},
		{"bad to", badTo, 131009},
		{"wrong product", wrongProduct, 100},
		{"unknown type", base("sticker", map[string]any{"id": "1"}), 131009},
		{"image link", base("image", map[string]any{"link": "https://example.com/a.jpg", "caption": "c"}), 0},
		{"image ftp link", base("image", map[string]any{"link": "ftp://example.com/a.jpg"}), 131009},
		{"image unknown id", base("image", map[string]any{"id": "12345"}), 131009},
		{"document nothing", base("document", map[string]any{"filename": "a.pdf"}), 131009},
		{"buttons", base("interactive", buttons(3, "Yes")), 0},
		{"four buttons", base("interactive", buttons(4, "Yes")), 131009},
		{"long button title", base("interactive", buttons(1, strings.Repeat("t", 21))), 131009},
		{"list", base("interactive", list(10)), 0},
		{"list eleven rows", base("interactive", list(11)), 131009},
		{"cta_url", base("interactive", cta("https://example.com")), 0},
		{"cta_url bad url", base("interactive", cta("nope")), 131009},
		{"flow", base("interactive", flowMsg), 0},
		{"call permission request", base("interactive", callPerm), 0},
		{"unknown interactive", base("interactive", map[string]any{"type": "carousel", "body": map[string]any{"text": "x"}}), 131009},
		{"reaction", base("reaction", map[string]any{"message_id": "wamid.x", "emoji": "👍"}), 0},
		{"location", base("location", map[string]any{"latitude": 1.5, "longitude": 2.5}), 0},
		{"location without longitude", base("location", map[string]any{"latitude": 1.5}), 100},
		{"not JSON", "{nope", 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := f.do(t, "POST", path, testToken, c.body)
			if c.code == 0 {
				if code != 200 {
					t.Fatalf("%d %v", code, out)
				}
				return
			}
			wantError(t, code, out, 400, c.code)
		})
	}
}

func TestMarkAsRead(t *testing.T) {
	f := setup(t, Config{})
	id, status, err := f.sim.Incoming(context.Background(), Incoming{PhoneNumberID: f.phone, From: "15550001111", Text: "hi"})
	if err != nil || status != 200 {
		t.Fatalf("incoming: %v %d", err, status)
	}
	path := "/v21.0/" + f.phone + "/messages"
	code, out := f.do(t, "POST", path, testToken, map[string]any{"messaging_product": "whatsapp", "status": "read", "message_id": id})
	if code != 200 || out["success"] != true {
		t.Fatalf("%d %v", code, out)
	}
	code, out = f.do(t, "POST", path, testToken, map[string]any{"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.unknown"})
	wantError(t, code, out, 400, 100)
}

func TestPostStatusOnDemand(t *testing.T) {
	f := setup(t, Config{SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	id := f.sendText(t, "15551234567", map[string]any{"biz_opaque_callback_data": "k"})
	ctx := context.Background()
	for _, st := range []string{"read", "delivered", "delivered"} {
		if code, err := f.sim.PostStatus(ctx, id, st, 0); err != nil || code != 200 {
			t.Fatalf("post %s: %d %v", st, code, err)
		}
	}
	if code, err := f.sim.PostStatus(ctx, id, "failed", 131047); err != nil || code != 200 {
		t.Fatalf("post failed: %d %v", code, err)
	}
	var got []string
	for _, h := range f.recv.messageHooks() {
		got = append(got, h.Statuses[0].Status)
		if h.Statuses[0].BizOpaque != "k" {
			t.Errorf("biz opaque %q", h.Statuses[0].BizOpaque)
		}
	}
	if strings.Join(got, ",") != "read,delivered,delivered,failed" {
		t.Errorf("got %v", got)
	}
	if last := f.recv.messageHooks()[3].Statuses[0]; last.Errors[0].Code != 131047 {
		t.Errorf("failed status %+v", last)
	}
	if _, err := f.sim.PostStatus(ctx, "wamid.none", "read", 0); err == nil {
		t.Error("unknown message accepted")
	}
	// Through the control API, with a timestamp.
	code, out := f.do(t, "POST", "/_sim/statuses", "", map[string]any{"message_id": id, "status": "sent", "timestamp": 1700000000})
	if code != 200 || out["status_code"] != float64(200) {
		t.Fatalf("%d %v", code, out)
	}
	hs := f.recv.messageHooks()
	if ts := hs[len(hs)-1].Statuses[0].Timestamp; ts != "1700000000" {
		t.Errorf("timestamp %q", ts)
	}
}

func TestWebhookRetryAfterServerError(t *testing.T) {
	f := setup(t, Config{SentAfter: 0, DeliveredAfter: -1, ReadAfter: -1})
	f.recv.failNext.Store(1)
	f.sendText(t, "15551234567", nil)
	// The log is updated once the receiver's answer is back, a moment after
	// the receiver has seen the body.
	waitFor(t, 4*time.Second, "retried webhook in the log", func() bool {
		whs := f.sim.Webhooks()
		return len(whs) == 1 && whs[0].StatusCode == 200
	})
	if whs := f.sim.Webhooks(); whs[0].Attempts != 2 {
		t.Fatalf("%d attempts, want 2", whs[0].Attempts)
	}
	if n := len(f.recv.messageHooks()); n != 1 {
		t.Errorf("%d webhooks accepted, want 1", n)
	}
	if n := f.recv.calls.Load(); n != 2 {
		t.Errorf("%d posts, want 2", n)
	}
}

func TestStatusQueueBatchesPerPhone(t *testing.T) {
	q := newWebhookQueue()
	for i := range 5 {
		q.pushStatus("A", statusItem{msg: &message{id: "a" + itoa(i)}})
	}
	q.pushStatus("B", statusItem{msg: &message{id: "b0"}})
	q.pushDelivery(&delivery{body: []byte("{}")})
	q.pushStatus("B", statusItem{msg: &message{id: "b1"}})

	var got []string
	for range 4 {
		d, sts, ok := q.pop(3)
		if !ok {
			t.Fatal("closed")
		}
		if d != nil {
			got = append(got, "body")
			continue
		}
		ids := []string{}
		for _, s := range sts {
			ids = append(ids, s.msg.id)
		}
		got = append(got, strings.Join(ids, "+"))
	}
	if want := "a0+a1+a2,b0+b1,body,a3+a4"; strings.Join(got, ",") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	q.close()
	if _, _, ok := q.pop(1); ok {
		t.Error("pop after close")
	}
}

func TestStatusBatchingEndToEnd(t *testing.T) {
	f := setup(t, Config{SentAfter: 20 * time.Millisecond, DeliveredAfter: -1, ReadAfter: -1, StatusBatchSize: 5, ThroughputPerSecond: -1})
	// Without a URL, statuses are dropped rather than piling up.
	f.sim.SetWebhookURL("")
	f.sendText(t, "15551234567", nil)
	time.Sleep(60 * time.Millisecond)
	if len(f.sim.Webhooks()) != 0 {
		t.Fatal("webhook posted without a URL")
	}
	f.sim.SetWebhookURL(f.hookURL)
	for range 30 {
		f.sendText(t, "15551234567", nil)
	}
	count := func() int {
		n := 0
		for _, h := range f.recv.messageHooks() {
			if len(h.Statuses) > 5 {
				t.Errorf("%d statuses in one webhook", len(h.Statuses))
			}
			n += len(h.Statuses)
		}
		return n
	}
	waitFor(t, 3*time.Second, "30 statuses", func() bool { return count() == 30 })
}
