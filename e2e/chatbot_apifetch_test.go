package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// api_fetch steps: a failure gives the session (and any message that shows
// {{api_error}}) a generic reason, never an address or a Go error; a POST
// body carries a contact's answer as one string value whatever it holds.
func TestChatbotAPIFetchErrorsAreGenericAndBodiesEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	var mu sync.Mutex
	var bodies [][]byte
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/order":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
			fmt.Fprint(w, `{"ok": true}`)
		case "/redirect":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		case "/hang":
			<-r.Context().Done()
		}
	}))
	t.Cleanup(api.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true}, a).Expect(t, 200)
	fetchStep := func(order int, url string) map[string]any {
		return map[string]any{"step_order": order, "message_type": "api_fetch", "message": "Result: {{api_error}}",
			"api_config": map[string]any{"url": url}}
	}
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Failures", "trigger_keywords": []string{"check"},
		"steps": []map[string]any{fetchStep(1, closedURL+"/x"), fetchStep(2, api.URL+"/redirect"), fetchStep(3, api.URL+"/missing"),
			fetchStep(4, api.URL+"/hang")}}, a).Expect(t, 201)
	// A body that is not JSON is refused when saved.
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Bad", "trigger_keywords": []string{"bad"},
		"steps": []map[string]any{{"step_order": 1, "message_type": "api_fetch", "api_config": map[string]any{"url": api.URL + "/order",
			"method": "POST", "body": `{"name": {{name}`}}}}, a).Expect(t, 400)
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Order", "trigger_keywords": []string{"order"}, "completion_message": "Done.",
		"steps": []map[string]any{
			{"step_order": 1, "message_type": "text", "message": "Your name?", "input_type": "text", "store_as": "name"},
			{"step_order": 2, "message_type": "api_fetch", "api_config": map[string]any{"url": api.URL + "/order", "method": "POST",
				"body": `{"name": "{{name}}", "greeting": "Dear {{ name }}!", "phone": {{phone_number}}, "note": "a \"quoted\" {{name}}"}`}},
		}}, a).Expect(t, 201)

	const from = "15550181301"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "check"})
	// The replies go out together, after the last step's 10 s timeout.
	apptest.Eventually(t, 60*time.Second, "the flow's replies", func() bool {
		return len(f.Sim.Messages(platformsim.MessageFilter{To: from})) >= 4
	})
	got := botSays(t, f, from, 4)
	for i, want := range []string{"Result: request failed: refused", "Result: request failed: not allowed",
		"Result: request failed: status 404", "Result: request failed: timeout"} {
		if got[i].text() != want {
			t.Fatalf("reply %d: %q, want %q", i, got[i].text(), want)
		}
	}
	var apiError string
	f.DB.Raw(`SELECT s.variables->>'api_error' FROM chatbot_sessions s JOIN contacts c ON c.id = s.contact_id WHERE c.phone_number = ?`,
		"+"+from).Scan(&apiError)
	if apiError != "request failed: timeout" {
		t.Fatalf("the session's api_error is %q", apiError)
	}

	answer := "Ann\", \"admin\": true, \"x\": \"\\ {{phone_number}}\n<b>"
	const from2 = "15550181302"
	f.Incoming(platformsim.Incoming{From: from2, Type: "text", Text: "order"})
	botSays(t, f, from2, 1)
	f.Incoming(platformsim.Incoming{From: from2, Type: "text", Text: answer})
	botSays(t, f, from2, 2)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d POSTs to the API, want 1", len(bodies))
	}
	var sentBody map[string]any
	if err := json.Unmarshal(bodies[0], &sentBody); err != nil {
		t.Fatalf("the body %q is not JSON: %v", bodies[0], err)
	}
	want := map[string]any{"name": answer, "greeting": "Dear " + answer + "!", "phone": "+" + from2, "note": `a "quoted" ` + answer}
	if len(sentBody) != len(want) {
		t.Fatalf("body %v, want exactly the fields %v", sentBody, want)
	}
	for k, v := range want {
		if sentBody[k] != v {
			t.Fatalf("body field %s = %#v, want %#v (body %s)", k, sentBody[k], v, bodies[0])
		}
	}
}
