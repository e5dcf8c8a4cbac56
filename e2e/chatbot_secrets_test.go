package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"wharf/models"
	"wharf/platformsim"
)

// The secrets of the bot's configuration are write-only: an api_fetch
// step's header values and URL credentials, and an api AI context's URL
// credentials, are answered masked to the Agent (chatbot:read) and to the
// Admin who wrote them. A round trip of what GET answered keeps them (the
// bot's request still carries the original Authorization), a new value
// replaces one, and a mask never follows a step to another host.
func TestChatbotSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	var mu sync.Mutex
	var seen []*http.Request
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(r.Context()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"order": {"status": "shipped"}}`)
	}))
	t.Cleanup(shop.Close)
	const mask = "********"
	admin := f.admin.Auth()
	agent := f.CreateUser(admin, "bot-reader@example.test", "Agent").Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true}, admin).Expect(t, 200)
	type flowOut struct {
		ID    string            `json:"id"`
		Steps []models.FlowStep `json:"steps"`
	}
	var flow flowOut
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Track", "trigger_keywords": []string{"track"}, "steps": []map[string]any{
		{"step_name": "lookup", "step_order": 1, "message_type": "api_fetch", "message": "Your order is {{status}}.",
			"api_config": map[string]any{"url": shop.URL + "/orders?phone={{phone_number}}&api_key=K-77",
				"headers":          map[string]string{"Authorization": "Bearer flow-secret", "X-Shop": "shop-one"},
				"response_mapping": map[string]string{"status": "order.status"}}},
	}}, admin).Expect(t, 201).Into(t, &flow)
	wantURL := shop.URL + "/orders?phone={{phone_number}}&api_key=" + mask
	check := func(who string, steps []models.FlowStep) {
		t.Helper()
		c := steps[0].APIConfig
		if c == nil || c.URL != wantURL || c.Headers["Authorization"] != mask || c.Headers["X-Shop"] != mask {
			t.Errorf("%s reads %+v", who, c)
		}
	}
	check("the creator", flow.Steps)
	for _, path := range []string{"/api/chatbot/flows", "/api/chatbot/flows/" + flow.ID} {
		r := f.Do("GET", path, nil, agent).Expect(t, 200)
		for _, s := range []string{"flow-secret", "K-77", "shop-one"} {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("GET %s shows %q: %s", path, s, r.Body)
			}
		}
	}
	var read flowOut
	f.Do("GET", "/api/chatbot/flows/"+flow.ID, nil, agent).Expect(t, 200).Into(t, &read)
	check("an agent", read.Steps)

	// The round trip keeps the secrets: the bot's request carries them.
	f.Do("PUT", "/api/chatbot/flows/"+flow.ID, map[string]any{"completion_message": "Bye.", "steps": read.Steps}, admin).Expect(t, 200)
	const from = "15550008888"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "track"})
	if got := botSays(t, f, from, 2); got[0].text() != "Your order is shipped." || got[1].text() != "Bye." {
		t.Fatalf("bot said %+v", got)
	}
	mu.Lock()
	r := seen[len(seen)-1]
	mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer flow-secret" || r.Header.Get("X-Shop") != "shop-one" || r.URL.Query().Get("api_key") != "K-77" {
		t.Fatalf("the bot sent %v ?%s", r.Header, r.URL.RawQuery)
	}

	stored := func() models.APIConfig {
		var row models.ChatbotFlow
		if err := f.DB.Take(&row, "id = ?", flow.ID).Error; err != nil {
			t.Fatal(err)
		}
		return *row.Steps.V[0].APIConfig
	}
	// A new value replaces, a header left out is removed, the mask keeps.
	steps := read.Steps
	steps[0].APIConfig.Headers = map[string]string{"Authorization": "Bearer rotated"}
	f.Do("PUT", "/api/chatbot/flows/"+flow.ID, map[string]any{"steps": steps}, admin).Expect(t, 200)
	if c := stored(); !reflect.DeepEqual(c.Headers, map[string]string{"Authorization": "Bearer rotated"}) ||
		c.URL != shop.URL+"/orders?phone={{phone_number}}&api_key=K-77" {
		t.Fatalf("stored after the change %+v", c)
	}

	// A mask sent to another host, or with nothing stored, is refused and
	// changes nothing.
	before := stored()
	steps[0].APIConfig.URL = "https://elsewhere.example.com/orders"
	steps[0].APIConfig.Headers = map[string]string{"Authorization": mask}
	if r := f.Do("PUT", "/api/chatbot/flows/"+flow.ID, map[string]any{"steps": steps}, admin).Expect(t, 400); !strings.HasPrefix(r.Message,
		"steps[0].api_config.headers.Authorization: a masked value (********) is kept only while the URL's scheme, host and port stay the same") {
		t.Errorf("another host: %q", r.Message)
	}
	if r := f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Copy", "steps": read.Steps}, admin).Expect(t, 400); !strings.Contains(r.Message,
		"there is none to keep") {
		t.Errorf("create with masks: %q", r.Message)
	}
	if after := stored(); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused update changed the step: %+v", after)
	}

	// An api AI context's URL credentials too.
	var ctx struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	f.Do("POST", "/api/chatbot/ai-contexts", map[string]any{"name": "Stock", "context_type": "api",
		"content": shop.URL + "/stock?token=T-55"}, admin).Expect(t, 201).Into(t, &ctx)
	if ctx.Content != shop.URL+"/stock?token="+mask {
		t.Errorf("context content %q", ctx.Content)
	}
	if r := f.Do("GET", "/api/chatbot/ai-contexts", nil, agent).Expect(t, 200); strings.Contains(string(r.Body), "T-55") {
		t.Errorf("the agent reads the context's token: %s", r.Body)
	}
	f.Do("PUT", "/api/chatbot/ai-contexts/"+ctx.ID, map[string]any{"content": ctx.Content, "priority": 5}, admin).Expect(t, 200)
	var row models.AIContext
	if err := f.DB.Take(&row, "id = ?", ctx.ID).Error; err != nil || row.Content != shop.URL+"/stock?token=T-55" || row.Priority != 5 {
		t.Fatalf("context after a round trip %+v %v", row, err)
	}
}
