package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

type sentAnswer struct {
	ID                string `json:"id"`
	PlatformMessageID string `json:"platform_message_id"`
	Status            string `json:"status"`
}

// A text sent through the API reaches the provider with the right JSON and
// is moved to read by the provider's status webhooks.
func TestTextMessageReachesProviderAndStatusesMoveItToRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550006666", "Dee", "hi")
	var sent sentAnswer
	f.Do("POST", "/api/contacts/"+contact+"/messages", map[string]any{"type": "text", "text": "Hello Dee"}, f.admin.Auth()).
		Expect(t, 201).Into(t, &sent)
	if sent.Status != "sent" || !strings.HasPrefix(sent.PlatformMessageID, "wamid.") {
		t.Fatalf("answer %+v", sent)
	}
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: f.PhoneNumberID() + "/messages"})
	if len(reqs) != 1 {
		t.Fatalf("%d send requests", len(reqs))
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	text, _ := body["text"].(map[string]any)
	if body["messaging_product"] != "whatsapp" || body["recipient_type"] != "individual" || body["to"] != "15550006666" ||
		body["type"] != "text" || text["body"] != "Hello Dee" || body["biz_opaque_callback_data"] != sent.ID {
		t.Fatalf("provider got %s", reqs[0].Body)
	}
	m := f.waitStatus(t, sent.ID, "read")
	if m.SentAt == nil || m.DeliveredAt == nil || m.ReadAt == nil || m.SentBy == nil {
		t.Fatalf("timestamps %+v", m)
	}
	// The API shows the same.
	var list struct {
		Items []struct {
			ID, Status, Direction string
			Content               map[string]any `json:"content"`
		} `json:"items"`
		Total int `json:"total"`
	}
	f.Do("GET", "/api/contacts/"+contact+"/messages", nil, f.admin.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 2 || list.Items[1].ID != sent.ID || list.Items[1].Status != "read" || list.Items[1].Direction != "outgoing" ||
		list.Items[0].Direction != "incoming" || list.Items[1].Content["text"] != "Hello Dee" {
		t.Fatalf("list %+v", list)
	}
}

// Statuses arriving twice or out of order only move a message forward, and
// a read without a delivered counts as both.
func TestStatusesOnlyMoveForward(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, func(c *platformsim.Config) { c.SentAfter, c.DeliveredAfter, c.ReadAfter = -1, -1, -1 })
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550007777", "Ed", "hi")
	var sent sentAnswer
	f.Do("POST", "/api/contacts/"+contact+"/messages", map[string]any{"type": "text", "text": "x"}, f.admin.Auth()).Expect(t, 201).Into(t, &sent)
	post := func(status string) {
		if code, err := f.Sim.PostStatus(t.Context(), sent.PlatformMessageID, status, 0); err != nil || code != 200 {
			t.Fatalf("post %s: %d %v", status, code, err)
		}
	}
	post("read")
	f.waitStatus(t, sent.ID, "read")
	post("delivered")
	post("sent")
	post("read")
	post("failed")
	time.Sleep(500 * time.Millisecond)
	m := f.message(t, sent.ID)
	if m.Status != "read" || m.DeliveredAt == nil || m.FailedAt != nil {
		t.Fatalf("after stale statuses: %s delivered_at=%v failed_at=%v", m.Status, m.DeliveredAt, m.FailedAt)
	}
}

func TestFailedStatusKeepsTheProviderError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, func(c *platformsim.Config) { c.FailRecipients = map[string]int{"15550008888": 131026} })
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550008888", "Flo", "hi")
	var sent sentAnswer
	f.Do("POST", "/api/contacts/"+contact+"/messages", map[string]any{"type": "text", "text": "x"}, f.admin.Auth()).Expect(t, 201).Into(t, &sent)
	m := f.waitStatus(t, sent.ID, "failed")
	if m.ErrorCode == nil || *m.ErrorCode != 131026 || m.ErrorTitle == "" {
		t.Fatalf("failed message %+v", m)
	}
	r := f.Do("GET", "/api/contacts/"+contact+"/messages", nil, f.admin.Auth()).Expect(t, 200)
	if !strings.Contains(string(r.Body), `"code":131026`) {
		t.Fatalf("error not shown: %s", r.Body)
	}
}

func TestFreeFormMessagesNeedTheServiceWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	var c struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+1 555 000 9999", "name": "New"}, f.admin.Auth()).Expect(t, 201).Into(t, &c)
	r := f.Do("POST", "/api/contacts/"+c.ID+"/messages", map[string]any{"type": "text", "text": "hi"}, f.admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "24 hours") {
		t.Fatalf("message %q", r.Message)
	}
	// A window that closed 25 hours ago.
	f.DB.Model(&models.Contact{}).Where("id = ?", c.ID).Update("last_inbound_at", time.Now().Add(-25*time.Hour))
	f.Do("POST", "/api/contacts/"+c.ID+"/messages", map[string]any{"type": "text", "text": "hi"}, f.admin.Auth()).Expect(t, 400)
	if n := f.Sim.CountRequests(platformsim.RequestFilter{Path: "/messages"}); n != 0 {
		t.Fatalf("%d requests reached the provider", n)
	}
	var count int64
	f.DB.Model(&models.Message{}).Count(&count)
	if count != 0 {
		t.Fatal("a refused send stored a message")
	}
}

func TestInteractiveMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550001212", "Gil", "hi")
	send := func(in map[string]any) *apptest.Resp {
		return f.Do("POST", "/api/contacts/"+contact+"/messages", map[string]any{"type": "interactive", "interactive": in}, f.admin.Auth())
	}
	btn := func(title string) map[string]any { return map[string]any{"id": "b-" + title, "title": title} }
	send(map[string]any{"type": "button", "body": "Pick", "buttons": []any{btn("a"), btn("b"), btn("c"), btn("d")}}).Expect(t, 400)
	send(map[string]any{"type": "button", "body": "Pick", "buttons": []any{}}).Expect(t, 400)
	r := send(map[string]any{"type": "button", "body": "Pick", "buttons": []any{btn(strings.Repeat("x", 21))}}).Expect(t, 400)
	if !strings.Contains(r.Message, "20") {
		t.Fatalf("title error %q", r.Message)
	}
	send(map[string]any{"type": "button", "body": "", "buttons": []any{btn("a")}}).Expect(t, 400)
	send(map[string]any{"type": "carousel", "body": "x"}).Expect(t, 400)
	send(map[string]any{"type": "cta_url", "body": "See", "button_text": "Open", "url": "javascript:alert(1)"}).Expect(t, 400)
	if n := f.Sim.CountRequests(platformsim.RequestFilter{Path: "/messages"}); n != 0 {
		t.Fatalf("invalid sends reached the provider: %d", n)
	}

	send(map[string]any{"type": "button", "body": "Pick one", "buttons": []any{btn("Yes"), btn("No"), map[string]any{"title": strings.Repeat("z", 20)}}}).Expect(t, 201)
	send(map[string]any{"type": "cta_url", "body": "Our site", "button_text": "Visit", "url": "https://example.com/x"}).Expect(t, 201)
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var b1, b2 struct {
		Type        string `json:"type"`
		Interactive struct {
			Type string `json:"type"`
			Body struct {
				Text string `json:"text"`
			} `json:"body"`
			Action struct {
				Buttons []struct {
					Type  string `json:"type"`
					Reply struct{ ID, Title string }
				} `json:"buttons"`
				Name       string            `json:"name"`
				Parameters map[string]string `json:"parameters"`
			} `json:"action"`
		} `json:"interactive"`
	}
	_ = json.Unmarshal(reqs[0].Body, &b1)
	_ = json.Unmarshal(reqs[1].Body, &b2)
	if b1.Type != "interactive" || b1.Interactive.Type != "button" || b1.Interactive.Body.Text != "Pick one" || len(b1.Interactive.Action.Buttons) != 3 ||
		b1.Interactive.Action.Buttons[0].Reply.ID != "b-Yes" || b1.Interactive.Action.Buttons[2].Reply.ID != "btn_3" || b1.Interactive.Action.Buttons[0].Type != "reply" {
		t.Fatalf("button message %s", reqs[0].Body)
	}
	if b2.Interactive.Type != "cta_url" || b2.Interactive.Action.Name != "cta_url" || b2.Interactive.Action.Parameters["display_text"] != "Visit" ||
		b2.Interactive.Action.Parameters["url"] != "https://example.com/x" {
		t.Fatalf("cta message %s", reqs[1].Body)
	}
}

func mediaServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cat.png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", "2048")
			if r.Method == http.MethodGet {
				_, _ = w.Write(make([]byte, 2048))
			}
		case "/big.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			w.Header().Set("Content-Length", fmt.Sprint(6<<20))
		case "/page.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", "10")
		case "/report.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("Content-Length", fmt.Sprint(20<<20))
		case "/stream.mp4": // no length on HEAD: the GET is read up to the limit
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "video/mp4")
			w.(http.Flusher).Flush()
			_, _ = w.Write(make([]byte, 17<<20))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestMediaMessagesAreCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550001313", "Hal", "hi")
	media := mediaServer(t)
	send := func(typ, path, caption string) *apptest.Resp {
		return f.Do("POST", "/api/messages/media", map[string]any{"contact_id": contact, "type": typ, "media_url": media.URL + path, "caption": caption}, f.admin.Auth())
	}
	for _, c := range []struct {
		typ, path, want string
	}{
		{"image", "/big.jpg", "over the limit"},
		{"image", "/page.html", "not accepted"},
		{"video", "/cat.png", "not accepted"},
		{"video", "/stream.mp4", "over the limit"},
		{"image", "/missing.png", "404"},
		{"sticker", "/cat.png", "type must be"},
		{"audio", "/cat.png", "not accepted"},
	} {
		r := send(c.typ, c.path, "")
		if r.Status != 400 || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s %s: %d %q, want 400 %q", c.typ, c.path, r.Status, r.Message, c.want)
		}
	}
	if n := f.Sim.CountRequests(platformsim.RequestFilter{Path: "/messages"}); n != 0 {
		t.Fatalf("%d refused media reached the provider", n)
	}
	var sent sentAnswer
	send("image", "/cat.png", "A cat").Expect(t, 201).Into(t, &sent)
	send("document", "/report.pdf", "").Expect(t, 201)
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	var b struct {
		Type  string `json:"type"`
		Image struct {
			Link, Caption string
		} `json:"image"`
		Document struct {
			Link, Filename string
		} `json:"document"`
	}
	_ = json.Unmarshal(reqs[0].Body, &b)
	if b.Type != "image" || b.Image.Link != media.URL+"/cat.png" || b.Image.Caption != "A cat" {
		t.Fatalf("image request %s", reqs[0].Body)
	}
	_ = json.Unmarshal(reqs[1].Body, &b)
	if b.Document.Filename != "report.pdf" {
		t.Fatalf("document request %s", reqs[1].Body)
	}
	f.waitStatus(t, sent.ID, "read")
}

// Media links to internal addresses are refused unless OUTBOUND_ALLOW_PRIVATE.
func TestMediaLinksToInternalAddressesAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"OUTBOUND_ALLOW_PRIVATE": "false"}, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550001414", "Ida", "hi")
	media := mediaServer(t)
	for _, u := range []string{media.URL + "/cat.png", "http://169.254.169.254/latest/meta-data", "http://printer.local/x.png", "http://localhost/x.png"} {
		r := f.Do("POST", "/api/messages/media", map[string]any{"contact_id": contact, "type": "image", "media_url": u}, f.admin.Auth())
		if r.Status != 400 || !strings.Contains(r.Message, "not allowed") {
			t.Errorf("%s: %d %q", u, r.Status, r.Message)
		}
	}
}

func TestTemplateSendsAreQueuedForAPIKeysAndSentByTheWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	tmpl := f.SeedTemplate(f.orgID, f.accountID, "order_ready", "Hi {{1}}, order {{2}} is ready", false)
	var key struct{ Key string }
	f.Do("POST", "/api/api-keys", map[string]any{"name": "shop"}, f.admin.Auth()).Expect(t, 201).Into(t, &key)
	apiKey := apptest.APIKey(key.Key)

	send := func(body map[string]any) *apptest.Resp { return f.Do("POST", "/api/messages/template", body, apiKey) }
	// Validation: nothing is stored, not even the new contact.
	r := send(map[string]any{"phone_number": "+15550002020", "template_name": "order_ready", "template_params": map[string]any{"1": "Jo"}}).Expect(t, 400)
	if !strings.Contains(r.Message, "2") || !strings.Contains(r.Message, "missing") {
		t.Fatalf("missing params message %q", r.Message)
	}
	send(map[string]any{"phone_number": "+15550002020", "template_name": "nope", "template_params": map[string]any{}}).Expect(t, 404)
	send(map[string]any{"phone_number": "bad", "template_name": "order_ready"}).Expect(t, 400)
	send(map[string]any{"template_name": "order_ready"}).Expect(t, 400)
	send(map[string]any{"phone_number": "+15550002020"}).Expect(t, 400)
	send(map[string]any{"phone_number": "+15550002020", "template_name": "order_ready", "account_name": "Nope"}).Expect(t, 400)
	var n int64
	f.DB.Model(&models.Contact{}).Count(&n)
	if n != 0 {
		t.Fatal("an invalid send created a contact")
	}
	pending := tmpl
	pending.ID, pending.Name, pending.Status = uuid.New(), "not_yet", models.TemplatePending
	f.DB.Create(&pending)
	r = send(map[string]any{"phone_number": "+15550002020", "template_name": "not_yet"}).Expect(t, 400)
	if !strings.Contains(r.Message, "APPROVED") {
		t.Fatalf("pending template message %q", r.Message)
	}

	var q struct {
		MessageID    string `json:"message_id"`
		PhoneNumber  string `json:"phone_number"`
		Status       string `json:"status"`
		TemplateName string `json:"template_name"`
	}
	send(map[string]any{"phone_number": "+1 555 000 2020", "template_name": "order_ready", "account_name": "main",
		"template_params": map[string]any{"1": "Jo", "2": 1234}}).Expect(t, 202).Into(t, &q)
	if q.Status != "pending" || q.PhoneNumber != "+15550002020" || q.TemplateName != "order_ready" {
		t.Fatalf("answer %+v", q)
	}
	// Nothing was sent by the api: the worker does it.
	if n := f.Sim.CountRequests(platformsim.RequestFilter{Path: "/messages"}); n != 0 {
		t.Fatal("the api sent the template itself")
	}
	f.StartWorker()
	m := f.waitStatus(t, q.MessageID, "read")
	if m.APIKeyID == nil || m.Type != "template" || m.TemplateName != "order_ready" {
		t.Fatalf("message %+v", m)
	}
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	if len(reqs) != 1 {
		t.Fatalf("%d sends", len(reqs))
	}
	var b struct {
		To       string `json:"to"`
		Template struct {
			Name     string `json:"name"`
			Language struct {
				Code string `json:"code"`
			} `json:"language"`
			Components []struct {
				Type       string `json:"type"`
				Parameters []struct {
					Type, Text string
				} `json:"parameters"`
			} `json:"components"`
		} `json:"template"`
	}
	_ = json.Unmarshal(reqs[0].Body, &b)
	if b.To != "15550002020" || b.Template.Name != "order_ready" || b.Template.Language.Code != "en_US" || len(b.Template.Components) != 1 ||
		b.Template.Components[0].Type != "body" || b.Template.Components[0].Parameters[1].Text != "1234" {
		t.Fatalf("template request %s", reqs[0].Body)
	}
	// The unknown number became a contact; by contact_id and by template_id work too.
	var c models.Contact
	f.DB.Take(&c, "phone_number = ?", "+15550002020")
	send(map[string]any{"contact_id": c.ID, "template_id": tmpl.ID, "template_params": map[string]any{"1": "A", "2": "B"}}).Expect(t, 202)
	apptest.Eventually(t, 10*time.Second, "second send", func() bool {
		return f.Sim.CountRequests(platformsim.RequestFilter{Path: "/messages"}) == 2
	})
}

func TestNamedTemplateParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	f.SeedTemplate(f.orgID, f.accountID, "welcome", "Welcome {{first_name}} to {{city}}", true)
	r := f.Do("POST", "/api/messages/template", map[string]any{"phone_number": "+15550003030", "template_name": "welcome",
		"template_params": map[string]any{"first_name": "Kim"}}, f.admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "city") {
		t.Fatalf("message %q", r.Message)
	}
	var q struct {
		MessageID string `json:"message_id"`
	}
	f.Do("POST", "/api/messages/template", map[string]any{"phone_number": "+15550003030", "template_name": "welcome",
		"template_params": map[string]any{"first_name": "Kim", "city": "Oslo"}}, f.admin.Auth()).Expect(t, 202).Into(t, &q)
	f.waitStatus(t, q.MessageID, "read")
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	if !strings.Contains(string(reqs[0].Body), `"parameter_name":"city"`) || !strings.Contains(string(reqs[0].Body), `"text":"Oslo"`) {
		t.Fatalf("named request %s", reqs[0].Body)
	}
}

func TestMarkRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550004040", "Lu", "read me")
	var in models.Message
	f.DB.Take(&in, "contact_id = ?", contact)
	f.Do("PUT", "/api/messages/"+in.ID.String()+"/read", nil, f.admin.Auth()).Expect(t, 200)
	if f.message(t, in.ID.String()).Status != "read" {
		t.Fatal("not read")
	}
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"status":"read"`) || !strings.Contains(string(reqs[0].Body), *in.PlatformMessageID) {
		t.Fatalf("mark read request %+v", reqs)
	}
	f.Do("PUT", "/api/messages/"+uuid.NewString()+"/read", nil, f.admin.Auth()).Expect(t, 404)
}

func TestMessageListCursors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	for i := 0; i < 7; i++ {
		f.Incoming(platformsim.Incoming{From: "15550005050", Type: "text", Text: fmt.Sprintf("n%d", i), Timestamp: int64(1700000000 + i)})
	}
	var c models.Contact
	apptest.Eventually(t, 10*time.Second, "7 messages", func() bool {
		var n int64
		f.DB.Model(&models.Message{}).Count(&n)
		return n == 7
	})
	f.DB.Take(&c, "phone_number = ?", "+15550005050")
	type page struct {
		Items []struct {
			ID      string         `json:"id"`
			Content map[string]any `json:"content"`
		} `json:"items"`
		Total, Page, Limit int
	}
	texts := func(p page) string {
		var s []string
		for _, it := range p.Items {
			s = append(s, fmt.Sprint(it.Content["text"]))
		}
		return strings.Join(s, ",")
	}
	base := "/api/contacts/" + c.ID.String() + "/messages"
	var p page
	f.Do("GET", base+"?limit=3", nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if texts(p) != "n4,n5,n6" || p.Total != 7 || p.Limit != 3 {
		t.Fatalf("newest page %q %+v", texts(p), p)
	}
	first := p.Items[0].ID
	f.Do("GET", base+"?limit=3&page=2", nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if texts(p) != "n1,n2,n3" {
		t.Fatalf("page 2 %q", texts(p))
	}
	f.Do("GET", base+"?limit=2&before="+first, nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if texts(p) != "n2,n3" {
		t.Fatalf("before %q", texts(p))
	}
	f.Do("GET", base+"?limit=10&after="+first, nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if texts(p) != "n5,n6" {
		t.Fatalf("after %q", texts(p))
	}
	f.Do("GET", base+"?limit=500", nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if p.Limit != 100 || len(p.Items) != 7 {
		t.Fatalf("limit cap %d", p.Limit)
	}
	f.Do("GET", base, nil, f.admin.Auth()).Expect(t, 200).Into(t, &p)
	if p.Limit != 50 {
		t.Fatalf("default limit %d", p.Limit)
	}
	f.Do("GET", base+"?before="+uuid.NewString(), nil, f.admin.Auth()).Expect(t, 400)
	f.Do("GET", base+"?before=x", nil, f.admin.Auth()).Expect(t, 400)
}
