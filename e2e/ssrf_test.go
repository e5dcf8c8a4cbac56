package e2e_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// redirectTo serves a redirect to target, as a user-controlled server that
// passes the URL checks could.
func redirectTo(t *testing.T, target string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// The webhook test endpoint and the delivery log say "the address is not
// allowed" or "could not be reached", never the connection's error, which
// names the internal address a URL led to.
func TestWebhookErrorsDoNotRevealAddresses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil) // OUTBOUND_ALLOW_PRIVATE: local test servers are reachable
	a := f.admin.Auth()
	dead := closedAddr(t)
	for _, c := range []struct {
		url, want, secret string
	}{
		{redirectTo(t, "http://169.254.169.254:8080/latest/meta-data"), "the address is not allowed", "169.254.169.254"},
		{redirectTo(t, "http://[64:ff9b::a9fe:a9fe]/latest"), "the address is not allowed", "a9fe"},
		{"http://" + dead + "/hook", "could not be reached", dead},
	} {
		var w struct{ ID string }
		f.Do("POST", "/api/webhooks", map[string]any{"name": "probe", "url": c.url, "events": []string{"contact.created"}}, a).
			Expect(t, 201).Into(t, &w)
		var res struct {
			Success bool   `json:"success"`
			Error   string `json:"error"`
		}
		r := f.Do("POST", "/api/webhooks/"+w.ID+"/test", nil, a).Expect(t, 200)
		r.Into(t, &res)
		if res.Success || res.Error != c.want || strings.Contains(string(r.Body), c.secret) {
			t.Errorf("%s: test answered %s, want error %q without %q", c.url, r.Body, c.want, c.secret)
		}
		log := f.Do("GET", "/api/webhooks/"+w.ID+"/deliveries", nil, a).Expect(t, 200)
		if !strings.Contains(string(log.Body), c.want) || strings.Contains(string(log.Body), c.secret) {
			t.Errorf("%s: delivery log %s", c.url, log.Body)
		}
	}
}

// A media link is answered the same way.
func TestMediaLinkErrorsDoNotRevealAddresses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	contact := f.contactFromIncoming(t, "15550001515", "Uma", "hi")
	dead := closedAddr(t)
	for _, c := range []struct{ url, want, secret string }{
		{redirectTo(t, "http://169.254.169.254/latest/meta-data"), "media_url: the address is not allowed", "169.254"},
		{"http://" + dead + "/cat.png", "media_url: could not be reached", dead},
	} {
		r := f.Do("POST", "/api/messages/media", map[string]any{"contact_id": contact, "type": "image", "media_url": c.url}, f.admin.Auth())
		if r.Status != 400 || r.Message != c.want || strings.Contains(string(r.Body), c.secret) {
			t.Errorf("%s: %d %s, want 400 %q", c.url, r.Status, r.Body, c.want)
		}
	}
}
