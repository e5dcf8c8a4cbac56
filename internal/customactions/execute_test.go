package customactions_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/customactions"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// receiver records the requests it gets and answers with answer.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []*http.Request
	bodies []string
}

func newReceiver(t *testing.T, answer http.HandlerFunc) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, string(b))
		r.mu.Unlock()
		answer(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

const trickyName = `Zoë "Z" O'Neil & Sons / Ltd ?#=+ 日本`

func caller() customactions.Caller {
	return customactions.Caller{UserID: uuid.New(), Name: "Ann Agent", Email: "ann@example.test", Role: "Agent"}
}

func TestWebhookFillsEveryPlaceAndAnswersTheTargetsJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{AllowPrivate: true})
	ctx := context.Background()
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ticket": 42, "ok": true}`))
	})
	contact := b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.Name = trickyName + "\r\nX-Evil: 1"; c.ProfileName = "zoe" })
	a, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("Ticket"), ActionType: str("webhook"), Config: map[string]any{
		"url":     rcv.URL + "/contacts/{{contact.name}}/t?phone={{contact.phone_number}}&who={{user.email}}&org={{organization.name}}",
		"method":  "PUT",
		"headers": map[string]any{"X-Contact": "{{contact.name}}", "Authorization": "Bearer s3cret"},
		"body":    `{"id": "{{contact.id}}", "name": "{{contact.name}}", "profile": "{{contact.profile_name}}", "user": {"id": "{{user.id}}", "name": "{{user.name}}", "role": "{{user.role}}"}, "org": "{{organization.id}}"}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A masking organization still gives its own system the real number.
	b.f.DB.Model(&models.Organization{}).Where("id = ?", b.org.ID).Update("settings", `{"mask_phone_numbers": true}`)
	who := caller()
	res, err := b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, who)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Toast == nil || res.Toast.Type != "success" {
		t.Fatalf("result %+v", res)
	}
	if d, ok := res.Data.(map[string]any); !ok || d["ticket"] != float64(42) {
		t.Fatalf("data %#v", res.Data)
	}
	if len(rcv.got) != 1 {
		t.Fatalf("%d requests", len(rcv.got))
	}
	req, body := rcv.got[0], rcv.bodies[0]
	if req.Method != "PUT" {
		t.Errorf("method %s", req.Method)
	}
	if want := "/contacts/" + contact.Name + "/t"; req.URL.Path != want {
		t.Errorf("path %q, want %q (raw %q)", req.URL.Path, want, req.URL.RawPath)
	}
	q := req.URL.Query()
	if len(q) != 3 || q.Get("phone") != contact.PhoneNumber || q.Get("who") != who.Email || q.Get("org") != b.org.Name {
		t.Errorf("query %v (raw %q)", q, req.URL.RawQuery)
	}
	if got := req.Header.Get("X-Contact"); got != trickyName+"X-Evil: 1" || req.Header.Get("X-Evil") != "" {
		t.Errorf("header X-Contact %q, X-Evil %q", got, req.Header.Get("X-Evil"))
	}
	if req.Header.Get("Authorization") != "Bearer s3cret" || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", req.Header)
	}
	var sent struct {
		ID, Name, Profile, Org string
		User                   struct{ ID, Name, Role string }
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if sent.ID != contact.ID.String() || sent.Name != contact.Name || sent.Profile != "zoe" || sent.Org != b.org.ID.String() ||
		sent.User.ID != who.UserID.String() || sent.User.Name != "Ann Agent" || sent.User.Role != "Agent" {
		t.Errorf("body %s", body)
	}
}

// Every way a call can fail is a result with Success false and a message
// that says which, never an error of the service.
func TestWebhookFailuresAreResults(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{AllowPrivate: true})
	ctx := context.Background()
	contact := b.f.Contact(b.org.ID, nil)
	mk := func(name, u string) uuid.UUID {
		a, err := b.s.Create(ctx, b.org.ID, nil, webhookInput(name, u))
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	failing := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte("database down"))
	})
	huge := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2<<20)))
	})
	text := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("queued")) })
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()

	for _, c := range []struct {
		url, msg string
		ok       bool
		data     any
	}{
		{failing.URL, "the target answered 500 Internal Server Error", false, "database down"},
		{huge.URL, "the target's answer is larger than 1 MB (status 200)", false, nil},
		{"http://" + dead + "/x", "the target could not be reached", false, nil},
		{text.URL, "Webhook executed successfully", true, "queued"},
	} {
		res, err := b.s.Execute(ctx, b.org.ID, mk(c.url, c.url), contact.ID, caller())
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if res.Success != c.ok || res.Message != c.msg || res.Data != c.data || res.Toast == nil || (res.Toast.Type == "error") == c.ok {
			t.Errorf("%s: %+v (toast %+v)", c.url, res, res.Toast)
		}
	}
}

// A strict instance refuses a private target at save time, and again when
// an action saved under a laxer rule runs; the answer names no address.
func TestWebhookPrivateTargetOnAStrictInstance(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	_, err := b.s.Create(ctx, b.org.ID, nil, webhookInput("Local", rcv.URL))
	testfactory.WantError(t, err, apperr.Invalid, "config.url: the address is not allowed")

	// Saved while the instance allowed private targets.
	a := models.CustomAction{OrganizationID: b.org.ID, Name: "Local", Icon: "zap", ActionType: "webhook", IsActive: true}
	a.Config.V = map[string]any{"url": rcv.URL + "/{{contact.id}}", "method": "POST", "headers": map[string]any{}, "body": ""}
	if err := b.f.DB.Create(&a).Error; err != nil {
		t.Fatal(err)
	}
	res, err := b.s.Execute(ctx, b.org.ID, a.ID, b.f.Contact(b.org.ID, nil).ID, caller())
	if err != nil {
		t.Fatal(err)
	}
	host, _ := url.Parse(rcv.URL)
	if res.Success || res.Message != "the target's address is not allowed" ||
		strings.Contains(res.Message, host.Host) || len(rcv.got) != 0 {
		t.Fatalf("result %+v, %d requests", res, len(rcv.got))
	}
}

func TestURLActionTokenWorksOnceAndExpires(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	contact := b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.Name = "A/B & C" })
	a, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("CRM"), ActionType: str("url"),
		Config: map[string]any{"url": "http://10.0.0.9/c/{{contact.name}}?p={{contact.phone_number}}"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, caller())
	if err != nil || !res.Success || !strings.HasPrefix(res.RedirectURL, customactions.RedirectPrefix) {
		t.Fatalf("%+v %v", res, err)
	}
	token := strings.TrimPrefix(res.RedirectURL, customactions.RedirectPrefix)
	if len(token) != 64 {
		t.Fatalf("token %q", token)
	}
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	if ttl := rdb.TTL(ctx, "wharf:custom_actions:redirect:"+token).Val(); ttl <= 4*time.Minute || ttl > customactions.RedirectTTL {
		t.Fatalf("ttl %s", ttl)
	}
	target, err := b.s.Redirect(ctx, token)
	if want := "http://10.0.0.9/c/A%2FB%20&%20C?p=%2B" + strings.TrimPrefix(contact.PhoneNumber, "+"); err != nil || target != want {
		t.Fatalf("target %q %v, want %q", target, err, want)
	}
	_, err = b.s.Redirect(ctx, token)
	testfactory.WantError(t, err, apperr.NotFound, "This link has expired or was already used")
	for _, bad := range []string{"", "abc", strings.Repeat("z", 64), strings.ToUpper(token)} {
		_, err = b.s.Redirect(ctx, bad)
		testfactory.WantError(t, err, apperr.NotFound, "This link has expired or was already used")
	}

	// Opened many times at once, a link redirects once.
	res, _ = b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, caller())
	token = strings.TrimPrefix(res.RedirectURL, customactions.RedirectPrefix)
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for range 20 {
		wg.Go(func() {
			if _, err := b.s.Redirect(ctx, token); err == nil {
				mu.Lock()
				opened++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if opened != 1 {
		t.Fatalf("opened %d times", opened)
	}

	// Expired: Redis forgets the token.
	res, _ = b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, caller())
	token = strings.TrimPrefix(res.RedirectURL, customactions.RedirectPrefix)
	rdb.PExpire(ctx, "wharf:custom_actions:redirect:"+token, time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	_, err = b.s.Redirect(ctx, token)
	testfactory.WantError(t, err, apperr.NotFound, "This link has expired or was already used")
}

// A javascript action is never run: its code comes back with the context,
// whose number is masked when the organization masks numbers (it ends up
// in the user's browser); a URL action's number too.
func TestJavaScriptContextAndMasking(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	contact := b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.Name = "Zoë"; c.ProfileName = "+1 555 000 1234" })
	a, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("Script"), ActionType: str("javascript"),
		Config: map[string]any{"code": "window.open('/x?' + context.contact.id)"}})
	if err != nil {
		t.Fatal(err)
	}
	who := caller()
	res, err := b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, who)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := res.Data.(customactions.ScriptData)
	if !res.Success || !ok || d.Code != "window.open('/x?' + context.contact.id)" || res.Toast == nil {
		t.Fatalf("%+v", res)
	}
	want := customactions.Context{
		Contact:      customactions.ContactContext{ID: contact.ID.String(), PhoneNumber: contact.PhoneNumber, Name: "Zoë", ProfileName: "+1 555 000 1234"},
		User:         customactions.UserContext{ID: who.UserID.String(), Name: who.Name, Email: who.Email, Role: who.Role},
		Organization: customactions.OrganizationContext{ID: b.org.ID.String(), Name: b.org.Name},
	}
	if d.Context != want {
		t.Fatalf("context %+v, want %+v", d.Context, want)
	}

	b.f.DB.Model(&models.Organization{}).Where("id = ?", b.org.ID).Update("settings", `{"mask_phone_numbers": true}`)
	res, _ = b.s.Execute(ctx, b.org.ID, a.ID, contact.ID, who)
	c := res.Data.(customactions.ScriptData).Context.Contact
	if c.PhoneNumber == contact.PhoneNumber || c.PhoneNumber == "" || strings.Contains(c.PhoneNumber, contact.PhoneNumber[len(contact.PhoneNumber)-8:]) ||
		c.ProfileName == "+1 555 000 1234" || c.Name != "Zoë" {
		t.Fatalf("masked context %+v", c)
	}
	u, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("CRM"), ActionType: str("url"),
		Config: map[string]any{"url": "https://crm.example/?p={{contact.phone_number}}"}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ = b.s.Execute(ctx, b.org.ID, u.ID, contact.ID, who)
	target, _ := b.s.Redirect(ctx, strings.TrimPrefix(res.RedirectURL, customactions.RedirectPrefix))
	if strings.Contains(target, strings.TrimPrefix(contact.PhoneNumber, "+")) {
		t.Fatalf("url action revealed the number: %s", target)
	}
}

// A contact's profile name is the contact's choice: one that would be a
// ".." path segment is not sent (it would move up the target's path).
func TestWebhookRefusesADotSegmentValue(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{AllowPrivate: true})
	ctx := context.Background()
	rcv := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	a, err := b.s.Create(ctx, b.org.ID, nil, webhookInput("Profile", rcv.URL+"/users/{{contact.profile_name}}/delete"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.s.Execute(ctx, b.org.ID, a.ID, b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.ProfileName = ".." }).ID, caller())
	if err != nil || res.Success || !strings.Contains(res.Message, "path segment") || len(rcv.got) != 0 {
		t.Fatalf("%+v %v; %d requests", res, err, len(rcv.got))
	}
}

func TestExecuteRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	a, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("S"), ActionType: str("javascript"),
		Config: map[string]any{"code": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	other := b.f.Org()
	_, err = b.s.Execute(ctx, b.org.ID, a.ID, b.f.Contact(other.ID, nil).ID, caller())
	testfactory.WantError(t, err, apperr.NotFound, "not found")
	_, err = b.s.Execute(ctx, b.org.ID, a.ID, uuid.New(), caller())
	testfactory.WantError(t, err, apperr.NotFound, "not found")
	if _, err := b.s.Update(ctx, b.org.ID, a.ID, customactions.Input{IsActive: new(bool)}); err != nil {
		t.Fatal(err)
	}
	_, err = b.s.Execute(ctx, b.org.ID, a.ID, b.f.Contact(b.org.ID, nil).ID, caller())
	testfactory.WantError(t, err, apperr.Invalid, "this custom action is inactive")
}
