package platformsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testSecret = "test-secret"
	testAppID  = "123456789"
	testToken  = "tok-main"
	otherToken = "tok-other"
)

// receiver is the backend's webhook endpoint: it checks every signature and
// keeps the bodies.
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	bodies [][]byte
	// failNext answers that many requests with 500 before accepting.
	failNext atomic.Int32
	calls    atomic.Int32
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if got := r.Header.Get("X-Hub-Signature-256"); !hmac.Equal([]byte(got), []byte(want)) {
		rc.t.Errorf("webhook signature %q, want %q", got, want)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		rc.t.Errorf("webhook content type %q", ct)
	}
	if rc.failNext.Load() > 0 {
		rc.failNext.Add(-1)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, body)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// hook is a decoded webhook, enough for assertions.
type hook struct {
	Object string `json:"object"`
	Entry  []struct {
		ID      string `json:"id"`
		Changes []struct {
			Field string          `json:"field"`
			Value json.RawMessage `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type messagesHook struct {
	MessagingProduct string `json:"messaging_product"`
	Metadata         struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
		PhoneNumberID      string `json:"phone_number_id"`
	} `json:"metadata"`
	Contacts []struct {
		Profile struct {
			Name string `json:"name"`
		} `json:"profile"`
		WaID string `json:"wa_id"`
	} `json:"contacts"`
	Messages []map[string]any `json:"messages"`
	Statuses []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Timestamp    string `json:"timestamp"`
		RecipientID  string `json:"recipient_id"`
		BizOpaque    string `json:"biz_opaque_callback_data"`
		Conversation *struct {
			ID     string `json:"id"`
			Origin struct {
				Type string `json:"type"`
			} `json:"origin"`
		} `json:"conversation"`
		Pricing *struct {
			Billable     bool   `json:"billable"`
			PricingModel string `json:"pricing_model"`
			Category     string `json:"category"`
		} `json:"pricing"`
		Errors []struct {
			Code      int    `json:"code"`
			Title     string `json:"title"`
			Message   string `json:"message"`
			ErrorData struct {
				Details string `json:"details"`
			} `json:"error_data"`
		} `json:"errors"`
	} `json:"statuses"`
}

// hooks decodes the received webhooks whose first change has field.
func (rc *receiver) hooks(field string) []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hook
	for _, b := range rc.bodies {
		var h hook
		if err := json.Unmarshal(b, &h); err != nil {
			rc.t.Fatalf("webhook body %s: %v", b, err)
		}
		if len(h.Entry) == 1 && len(h.Entry[0].Changes) == 1 && h.Entry[0].Changes[0].Field == field {
			out = append(out, h)
		}
	}
	return out
}

// messageHooks returns the values of the received "messages" webhooks.
func (rc *receiver) messageHooks() []messagesHook {
	var out []messagesHook
	for _, h := range rc.hooks("messages") {
		var v messagesHook
		if err := json.Unmarshal(h.Entry[0].Changes[0].Value, &v); err != nil {
			rc.t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

type fixture struct {
	sim   *Simulator
	srv   *httptest.Server
	recv  *receiver
	ba    BusinessAccount
	phone string
	other BusinessAccount
	// hookURL is the receiver's address.
	hookURL string
}

// setup starts a simulator behind an httptest server with a webhook
// receiver and two seeded accounts (testToken owns ba, otherToken other).
func setup(t *testing.T, cfg Config) *fixture {
	t.Helper()
	recv := &receiver{t: t}
	hookSrv := httptest.NewServer(recv)
	cfg.AppID = testAppID
	cfg.AppSecret = testSecret
	cfg.WebhookURL = hookSrv.URL
	sim := New(cfg)
	srv := httptest.NewServer(sim)
	sim.SetBaseURL(srv.URL)
	t.Cleanup(func() {
		srv.Close()
		sim.Close()
		hookSrv.Close()
	})
	ba := sim.AddBusinessAccount(BusinessAccount{Name: "Acme", AccessToken: testToken,
		PhoneNumbers: []PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0001"}}})
	other := sim.AddBusinessAccount(BusinessAccount{Name: "Other", AccessToken: otherToken,
		PhoneNumbers: []PhoneNumber{{}}})
	return &fixture{sim: sim, srv: srv, recv: recv, ba: ba, phone: ba.PhoneNumbers[0].ID, other: other, hookURL: hookSrv.URL}
}

// do calls the simulator and decodes the JSON answer.
func (f *fixture) do(t *testing.T, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	url := path
	if !strings.HasPrefix(path, "http") {
		url = f.srv.URL + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s %s answered non-JSON %q", method, path, raw)
	}
	return res.StatusCode, out
}

// sendText sends a text message and returns its id.
func (f *fixture) sendText(t *testing.T, to string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
		"type": "text", "text": map[string]any{"body": "hello"}}
	for k, v := range extra {
		body[k] = v
	}
	code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, body)
	if code != 200 {
		t.Fatalf("send: %d %v", code, out)
	}
	return out["messages"].([]any)[0].(map[string]any)["id"].(string)
}

// wantError checks the provider error shape and returns the error object.
func wantError(t *testing.T, status int, out map[string]any, wantStatus, wantCode int) map[string]any {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (%v)", status, wantStatus, out)
	}
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", out)
	}
	if int(e["code"].(float64)) != wantCode {
		t.Fatalf("code %v, want %d (%v)", e["code"], wantCode, e)
	}
	if e["type"] != "OAuthException" {
		t.Errorf("type %v", e["type"])
	}
	if msg, _ := e["message"].(string); !strings.HasPrefix(msg, "(#"+itoa(wantCode)+") ") {
		t.Errorf("message %q does not start with (#%d)", msg, wantCode)
	}
	if tr, _ := e["fbtrace_id"].(string); tr == "" {
		t.Errorf("no fbtrace_id")
	}
	data, _ := e["error_data"].(map[string]any)
	if data["messaging_product"] != "whatsapp" || data["details"] == "" || data["details"] == nil {
		t.Errorf("error_data %v", data)
	}
	return e
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// waitFor polls cond until it holds, for up to three times the timeout
// and at least 30 s: the wait claims that cond comes to hold, not how soon
// (a busy machine is slower at everything; apptest.WaitLimit, which this
// package cannot import).
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(max(3*timeout, 30*time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
