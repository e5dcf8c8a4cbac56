package chatbot

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"wharf/internal/messaging"
	"wharf/models"
)

func TestAPIFetchStep(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "body": string(b), "q": r.URL.Query().Get("q"),
				"auth": r.Header.Get("X-Auth")})
		default:
			_, _ = io.WriteString(w, `{"name": "Bob", "deep": {"list": [{"v": 7}]}}`)
		}
	}))
	t.Cleanup(srv.Close)
	step := func(input string, cfg *models.APIConfig) models.FlowStep {
		return models.FlowStep{StepOrder: 1, MessageType: "api_fetch", Message: "Hi {{who}} {{api_error}}", InputType: input, APIConfig: cfg}
	}
	get := func(path string) *models.APIConfig {
		return &models.APIConfig{URL: srv.URL + path, Method: "GET", ResponseMapping: map[string]string{"who": "name", "v": "deep.list.0.v"}}
	}
	runChecks(t, env, []checkCase{
		{name: "needs api_config", step: step("", nil), err: "steps[0]: an api_fetch step needs api_config.url"},
		{name: "needs an http URL", step: step("", &models.APIConfig{URL: "ftp://example.com/x"}), err: "needs api_config.url, an http(s) URL"},
		{name: "GET or POST", step: step("", &models.APIConfig{URL: srv.URL, Method: "put"}), err: "steps[0]: api_config.method must be GET or POST"},
		{name: "body is JSON", step: step("", &models.APIConfig{URL: srv.URL, Method: "POST", Body: `{"a": `}), err: "api_config.body must be JSON"},
		{name: "mapping keys are variable names", step: step("", &models.APIConfig{URL: srv.URL, ResponseMapping: map[string]string{"a-b": "x"}}),
			err: "api_config.response_mapping keys must be variable names"},
		{name: "method defaults to GET", step: step("", &models.APIConfig{URL: srv.URL}), want: func(t *testing.T, st models.FlowStep) {
			if st.APIConfig.Method != "GET" {
				t.Errorf("%+v", st.APIConfig)
			}
		}},
		{name: "method upper-cased, placeholder body", step: step("", &models.APIConfig{URL: srv.URL, Method: "post", Body: `{"a": {{x}}}`}),
			want: func(t *testing.T, st models.FlowStep) {
				if st.APIConfig.Method != "POST" {
					t.Errorf("%+v", st.APIConfig)
				}
			}},
	})
	vars := func(t *testing.T, want map[string]any) func(*testing.T, *stepEnv, *models.ChatbotSession) {
		return func(t *testing.T, _ *stepEnv, sess *models.ChatbotSession) {
			if !sameJSON(sess.Variables.V, want) {
				t.Errorf("variables %v, want %v", sess.Variables.V, want)
			}
		}
	}
	runEnters(t, env, apiFetchStep{}, []enterCase{
		{name: "maps the answer and goes on", step: step("", get("/")), next: stepGoesOn, replies: []messaging.Reply{{Text: "Hi Bob "}},
			want: vars(t, map[string]any{"who": "Bob", "v": 7.0})},
		{name: "waits with an input", step: step("text", get("/")), next: stepWaits, replies: []messaging.Reply{{Text: "Hi Bob "}},
			want: vars(t, map[string]any{"who": "Bob", "v": 7.0})},
		{name: "a failure sets api_error and goes on", step: step("", get("/fail")), next: stepGoesOn,
			replies: []messaging.Reply{{Text: "Hi  request failed: status 500"}}, want: vars(t, map[string]any{"api_error": "request failed: status 500"})},
		{name: "POST fills the body, the query and headers", vars: map[string]any{"x": `a"b`},
			step: step("", &models.APIConfig{URL: srv.URL + "/echo?q={{x}}", Method: "POST", Body: `{"a": {{x}}}`, Headers: map[string]string{"X-Auth": "k {{x}}"},
				ResponseMapping: map[string]string{"body": "body", "q": "q", "auth": "auth", "method": "method"}}),
			next: stepGoesOn, replies: []messaging.Reply{{Text: "Hi  "}},
			want: vars(t, map[string]any{"x": `a"b`, "body": `{"a": "a\"b"}`, "q": `a"b`, "auth": `k a"b`, "method": "POST"})},
		{name: "no config only replies", step: step("", nil), next: stepGoesOn, replies: []messaging.Reply{{Text: "Hi  "}}, want: vars(t, map[string]any{})},
	})
	withButtons := step("select", get("/"))
	withButtons.Buttons = buttons("A")
	runAnswers(t, env, apiFetchStep{}, []answerCase{
		{name: "text as it is", step: step("text", get("/")), typ: "text", content: map[string]any{"text": "x"}, value: "x", ok: true},
		{name: "select asks again with its buttons", step: withButtons, typ: "text", content: map[string]any{"text": "B"}, ok: false,
			replies: []messaging.Reply{{Text: "Hi  ", Buttons: replyButtons("A")}}},
	})
}
