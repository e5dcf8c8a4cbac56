package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// sent is a message the simulator accepted, decoded as far as the chatbot
// tests read it.
type sent struct {
	Type string `json:"type"`
	Text struct {
		Body string `json:"body"`
	} `json:"text"`
	Interactive struct {
		Type string `json:"type"`
		Body struct {
			Text string `json:"text"`
		} `json:"body"`
		Action struct {
			Button  string `json:"button"`
			Buttons []struct {
				Reply struct{ ID, Title string } `json:"reply"`
			} `json:"buttons"`
			Sections []struct {
				Rows []struct{ ID, Title string } `json:"rows"`
			} `json:"sections"`
		} `json:"action"`
	} `json:"interactive"`
}

// botSays waits until the simulator has n messages to the number and
// answers them in send order.
func botSays(t *testing.T, f *fixture, to string, n int) []sent {
	t.Helper()
	var msgs []platformsim.Message
	apptest.Eventually(t, 15*time.Second, fmt.Sprintf("%d bot messages to %s", n, to), func() bool {
		msgs = f.Sim.Messages(platformsim.MessageFilter{To: to})
		return len(msgs) >= n
	})
	time.Sleep(300 * time.Millisecond) // and no more
	msgs = f.Sim.Messages(platformsim.MessageFilter{To: to})
	if len(msgs) != n {
		t.Fatalf("%d messages to %s, want %d", len(msgs), to, n)
	}
	out := make([]sent, n)
	for i, m := range msgs {
		if err := json.Unmarshal(m.Body, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// evaluated waits until the bot has evaluated the incoming message with
// the provider id wamid and answers its outcome.
func evaluated(t *testing.T, f *fixture, wamid string) string {
	t.Helper()
	var outcome string
	apptest.Eventually(t, 15*time.Second, "the bot evaluated "+wamid, func() bool {
		f.DB.Raw(`SELECT i.outcome FROM chatbot_inbox i JOIN messages m ON m.id = i.message_id
			WHERE m.platform_message_id = ? AND i.evaluated_at IS NOT NULL`, wamid).Scan(&outcome)
		return outcome != ""
	})
	return outcome
}

func (s sent) text() string {
	if s.Type == "text" {
		return s.Text.Body
	}
	return s.Interactive.Body.Text
}

// Greeting (a list for four buttons), keyword rules by priority (exactly
// one answers, with the exact response text), and the fallback with reply
// buttons, through the simulator.
func TestChatbotGreetingKeywordsAndFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	four := []map[string]string{{"title": "Prices"}, {"title": "Hours"}, {"title": "Support"}, {"title": "Other"}}
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "greeting_message": "Welcome {{contact_name}}!",
		"greeting_buttons": four, "fallback_message": "Sorry, I did not get that.",
		"fallback_buttons": []map[string]string{{"title": "Talk to us"}, {"title": "Menu"}}}, a).Expect(t, 200)
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"greeting_buttons": []map[string]string{{"title": strings.Repeat("x", 21)}}}, a).Expect(t, 400)
	f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "price", "keywords": []string{"price"}, "match_type": "contains",
		"response": "Prices start at $10.", "priority": 1}, a).Expect(t, 201)
	f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "price list", "keywords": []string{"price list"}, "match_type": "contains",
		"response": "  Here is the full list.\n", "priority": 5}, a).Expect(t, 201)
	f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "order", "keywords": []string{`^order\s+#?\d+$`}, "match_type": "regex",
		"response": "Looking up your order.", "priority": 3}, a).Expect(t, 201)
	if r := f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "bad", "keywords": []string{"(unclosed"}, "match_type": "regex",
		"response": "x"}, a).Expect(t, 400); !strings.Contains(r.Message, "invalid regular expression") {
		t.Fatalf("bad regex: %q", r.Message)
	}
	f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "x", "keywords": []string{"x"}, "match_type": "fuzzy", "response": "x"}, a).Expect(t, 400)

	const from = "15550003333"
	f.Incoming(platformsim.Incoming{From: from, ProfileName: "Ann", Type: "text", Text: "hello"})
	got := botSays(t, f, from, 1)
	if g := got[0]; g.Interactive.Type != "list" || g.text() != "Welcome Ann!" || len(g.Interactive.Action.Sections) != 1 ||
		len(g.Interactive.Action.Sections[0].Rows) != 4 || g.Interactive.Action.Button == "" {
		t.Fatalf("greeting %+v", g)
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "Could I see the PRICE LIST?"})
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "what is the price"})
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "Order #123"})
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hello again"})
	got = botSays(t, f, from, 5)
	want := []string{"Welcome Ann!", "  Here is the full list.\n", "Prices start at $10.", "Looking up your order.", "Sorry, I did not get that."}
	for i, w := range want {
		if got[i].text() != w {
			t.Fatalf("reply %d: %q, want %q (all: %+v)", i, got[i].text(), w, got)
		}
	}
	if fb := got[4]; fb.Interactive.Type != "button" || len(fb.Interactive.Action.Buttons) != 2 {
		t.Fatalf("fallback %+v", fb)
	}
}

// A three-step flow: a choice (re-asked on an unknown answer), a free text,
// then a transfer to a round-robin team with the notes filled; the bot is
// silent while the transfer is active, the collected data stays readable,
// and after resume the bot answers again.
func TestChatbotFlowCollectsAnswersAndTransfers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	agent := f.CreateUser(a, "flow-agent@example.test", "Agent")
	var team struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Sales", "assignment_strategy": "round_robin"}, a).Expect(t, 201).Into(t, &team)
	f.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": agent.User.ID}, a).Expect(t, 201)
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "fallback_message": "Type start."}, a).Expect(t, 200)
	steps := []map[string]any{
		{"step_name": "topic", "step_order": 1, "message_type": "buttons", "message": "What is it about?", "input_type": "select",
			"buttons": []map[string]string{{"title": "Sales"}, {"title": "Billing"}}, "store_as": "topic"},
		{"step_name": "name", "step_order": 2, "message_type": "text", "message": "Your name, please?", "input_type": "text", "store_as": "name"},
		{"step_name": "handover", "step_order": 3, "message_type": "transfer", "message": "Thanks {{name}}, connecting you.",
			"transfer_config": map[string]any{"team_id": team.ID, "notes": "{{name}} asks about {{topic}}"}},
	}
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Intake", "trigger_keywords": []string{"start"}, "steps": append(steps,
		map[string]any{"step_order": 1, "message_type": "text", "message": "dup"})}, a).Expect(t, 400)
	var flow struct{ ID string }
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Intake", "trigger_keywords": []string{"start"},
		"initial_message": "Let's begin.", "steps": steps}, a).Expect(t, 201).Into(t, &flow)

	const from = "15550004444"
	f.Incoming(platformsim.Incoming{From: from, ProfileName: "Bob", Type: "text", Text: "START"})
	got := botSays(t, f, from, 2)
	if got[0].text() != "Let's begin." || got[1].Interactive.Type != "button" || len(got[1].Interactive.Action.Buttons) != 2 {
		t.Fatalf("flow start %+v", got)
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "pizza"})
	got = botSays(t, f, from, 3)
	if got[2].text() != "What is it about?" {
		t.Fatalf("re-ask %+v", got[2])
	}
	billing := got[1].Interactive.Action.Buttons[1].Reply
	f.Incoming(platformsim.Incoming{From: from, Type: "interactive", Interactive: &platformsim.IncomingInteractive{Type: "button_reply",
		ID: billing.ID, Title: billing.Title}})
	got = botSays(t, f, from, 4)
	if got[3].text() != "Your name, please?" {
		t.Fatalf("step 2 %+v", got[3])
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "Bob Stone"})
	got = botSays(t, f, from, 5)
	if got[4].text() != "Thanks Bob Stone, connecting you." {
		t.Fatalf("handover %+v", got[4])
	}

	var list struct {
		Transfers []struct {
			ID        string  `json:"id"`
			ContactID string  `json:"contact_id"`
			Source    string  `json:"source"`
			Notes     string  `json:"notes"`
			AgentID   *string `json:"agent_id"`
			TeamID    *string `json:"team_id"`
		} `json:"transfers"`
	}
	f.Do("GET", "/api/chatbot/transfers?status=active", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Transfers) != 1 {
		t.Fatalf("transfers %+v", list)
	}
	tr := list.Transfers[0]
	if tr.Source != "flow" || tr.Notes != "Bob Stone asks about Billing" || tr.AgentID == nil || *tr.AgentID != agent.User.ID ||
		tr.TeamID == nil || *tr.TeamID != team.ID {
		t.Fatalf("transfer %+v", tr)
	}
	var data struct {
		SessionID   *string        `json:"session_id"`
		FlowID      *string        `json:"flow_id"`
		FlowName    string         `json:"flow_name"`
		SessionData map[string]any `json:"session_data"`
	}
	f.Do("GET", "/api/contacts/"+tr.ContactID+"/session-data", nil, agent.Auth()).Expect(t, 200).Into(t, &data)
	if data.SessionID == nil || data.FlowID == nil || *data.FlowID != flow.ID || data.FlowName != "Intake" ||
		data.SessionData["name"] != "Bob Stone" || data.SessionData["topic"] != "Billing" {
		t.Fatalf("session data after the transfer %+v", data)
	}

	wamid := f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hello?"})
	if outcome := evaluated(t, f, wamid); outcome != "silent: an agent has the conversation" {
		t.Fatalf("while transferred: %q", outcome)
	}
	botSays(t, f, from, 5)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, agent.Auth()).Expect(t, 200)
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "anyone?"})
	got = botSays(t, f, from, 6)
	if got[5].text() != "Type start." {
		t.Fatalf("after resume %+v", got[5])
	}
}

// A transfer keyword hands the contact to the general queue, and the bot
// stays silent until the transfer is resumed.
func TestChatbotTransferKeyword(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "transfer_keywords": []string{"agent", "human"},
		"transfer_message": "Connecting you to a person.", "fallback_message": "Bot here."}, a).Expect(t, 200)
	const from = "15550005555"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "Human"})
	got := botSays(t, f, from, 1)
	if got[0].text() != "Connecting you to a person." {
		t.Fatalf("transfer reply %+v", got[0])
	}
	var list struct {
		Transfers []struct {
			Source string  `json:"source"`
			TeamID *string `json:"team_id"`
		} `json:"transfers"`
		GeneralQueueCount int `json:"general_queue_count"`
	}
	f.Do("GET", "/api/chatbot/transfers", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Transfers) != 1 || list.Transfers[0].Source != "keyword" || list.Transfers[0].TeamID != nil || list.GeneralQueueCount != 1 {
		t.Fatalf("transfers %+v", list)
	}
	wamid := f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "still there?"})
	if outcome := evaluated(t, f, wamid); outcome != "silent: an agent has the conversation" {
		t.Fatalf("while transferred: %q", outcome)
	}
	botSays(t, f, from, 1)
}

// A redelivered webhook (the provider retries what it thinks was lost) is
// answered once: the message is stored once, and only stored messages
// reach the chatbot's inbox.
func TestChatbotAnswersARedeliveredMessageOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "fallback_message": "Hi there."}, f.admin.Auth()).Expect(t, 200)
	const from = "15550006666"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hello"})
	botSays(t, f, from, 1)
	var body []byte
	for _, h := range f.Sim.Webhooks() {
		if strings.Contains(string(h.Body), `"body":"hello"`) {
			body = h.Body
		}
	}
	if body == nil {
		t.Fatal("the incoming webhook is not among the simulator's")
	}
	for range 3 {
		if code := signedPost(t, f.Server.URL, f.AppSecret, body); code != 200 {
			t.Fatalf("redelivery: %d", code)
		}
	}
	time.Sleep(time.Second)
	botSays(t, f, from, 1)
}

// AI replies through a fake OpenAI-compatible server: the request carries
// the system prompt, the matching context and the conversation in order,
// with the organization's key, model, temperature and token limit; when the
// model fails, the fallback goes out instead.
func TestChatbotAIReplyAndFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	llm := apptest.NewFakeLLM(t)
	llm.SetReply("We open at nine.")
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_base_url": "ftp://model"}, a).Expect(t, 400)
	var st struct {
		HasAIAPIKey bool    `json:"has_ai_api_key"`
		AIAPIKey    *string `json:"ai_api_key"`
	}
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_provider": "openai",
		"ai_model": "gpt-test", "ai_api_key": "sk-org-key", "ai_base_url": llm.OpenAIBaseURL(), "ai_temperature": 0.2,
		"ai_max_tokens": 120, "system_prompt": "You are the shop's assistant.", "fallback_message": "Please try later."}, a).
		Expect(t, 200).Into(t, &st)
	if !st.HasAIAPIKey || st.AIAPIKey != nil {
		t.Fatalf("settings show %+v: the key is write-only", st)
	}
	f.Do("POST", "/api/chatbot/ai-contexts", map[string]any{"name": "Hours", "trigger_keywords": []string{"open"}, "context_type": "static",
		"content": "Open 9-17 on weekdays."}, a).Expect(t, 201)
	f.Do("POST", "/api/chatbot/ai-contexts", map[string]any{"name": "Returns", "trigger_keywords": []string{"refund"}, "context_type": "static",
		"content": "Refunds within 30 days."}, a).Expect(t, 201)

	const from = "15550007777"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hi"})
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "When are you open?"})
	got := botSays(t, f, from, 2)
	if got[1].text() != "We open at nine." {
		t.Fatalf("AI reply %+v", got[1])
	}
	reqs := llm.Requests()
	r := reqs[len(reqs)-1]
	if r.Key != "sk-org-key" || r.Model != "gpt-test" || r.Temperature == nil || *r.Temperature != 0.2 || r.MaxTokens != 120 {
		t.Fatalf("request %+v", r)
	}
	if !strings.Contains(r.System, "You are the shop's assistant.") || !strings.Contains(r.System, "Open 9-17") ||
		strings.Contains(r.System, "Refunds") {
		t.Fatalf("system prompt %q: want the prompt and only the matching context", r.System)
	}
	var turns []string
	for _, m := range r.Messages {
		turns = append(turns, m.Role+":"+m.Text)
	}
	want := []string{"user:hi", "assistant:We open at nine.", "user:When are you open?"}
	if strings.Join(turns, "|") != strings.Join(want, "|") {
		t.Fatalf("history %v, want %v", turns, want)
	}

	llm.SetFailure(500, "overloaded")
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "and on sunday?"})
	got = botSays(t, f, from, 3)
	if got[2].text() != "Please try later." {
		t.Fatalf("fallback after an AI failure %+v", got[2])
	}
}

// A flow that calls an API (its answer's fields become variables), sends a
// platform flow and takes the flow's reply into the variables, then
// completes.
func TestChatbotFlowWithAPIFetchAndPlatformFlow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("phone") != "+15550009999" {
			http.Error(w, "unknown customer", 404)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"order": {"status": "shipped", "items": [{"name": "Lamp"}]}}`)
	}))
	t.Cleanup(api.Close)
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true}, a).Expect(t, 200)
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Track", "trigger_keywords": []string{"track"}, "completion_message": "Done.",
		"steps": []map[string]any{
			{"step_order": 1, "message_type": "api_fetch", "message": "Your {{item}} is {{status}}.",
				"api_config": map[string]any{"url": api.URL + "/orders?phone={{phone_number}}", "response_mapping": map[string]string{
					"status": "order.status", "item": "order.items.0.name"}}},
			{"step_order": 2, "message_type": "platform_flow", "message": "Please fill in the form.",
				"flow_config": map[string]any{"flow_id": "777", "flow_cta": "Open form"}},
			{"step_order": 3, "message_type": "text", "message": "Thanks, we will write to {{email}}."},
		}}, a).Expect(t, 201)

	const from = "15550009999"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "track"})
	got := botSays(t, f, from, 2)
	if got[0].text() != "Your Lamp is shipped." || got[1].Interactive.Type != "flow" || got[1].text() != "Please fill in the form." {
		t.Fatalf("replies %+v", got)
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "interactive", Interactive: &platformsim.IncomingInteractive{Type: "nfm_reply",
		ResponseJSON: `{"email": "ann@example.com"}`}})
	got = botSays(t, f, from, 4)
	if got[2].text() != "Thanks, we will write to ann@example.com." || got[3].text() != "Done." {
		t.Fatalf("after the flow reply %+v", got[2:])
	}
}

// The worker keeps the organization's rules, flows and settings in memory
// under a version every change bumps (internal/chatbot, config.go): the
// very next message after a change, made through the API or straight in
// the database, is answered by the new configuration.
func TestChatbotConfigChangeAppliesToTheNextMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "fallback_message": "No idea."}, a).Expect(t, 200)
	var rule struct{ ID string }
	f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "hi", "keywords": []string{"hi"}, "match_type": "exact",
		"response": "Hello one."}, a).Expect(t, 201).Into(t, &rule)
	const from = "15550007777"
	n := 0
	says := func(text, want string) {
		t.Helper()
		f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: text})
		n++
		if got := botSays(t, f, from, n)[n-1].text(); got != want {
			t.Fatalf("%q answered %q, want %q", text, got, want)
		}
	}
	says("hi", "Hello one.")
	says("hey", "No idea.")
	f.Do("PUT", "/api/chatbot/keywords/"+rule.ID, map[string]any{"response": "Hello two.", "keywords": []string{"hi", "hey"}}, a).Expect(t, 200)
	says("hey", "Hello two.")
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"fallback_message": "Still no idea."}, a).Expect(t, 200)
	says("what", "Still no idea.")
	f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Menu", "trigger_keywords": []string{"hi"}, "initial_message": "Menu:",
		"steps": []map[string]any{{"step_name": "pick", "step_order": 1, "message_type": "text", "message": "Pick a number.",
			"input_type": "text", "store_as": "n"}}}, a).Expect(t, 201)
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hi"})
	n += 2
	if got := botSays(t, f, from, n); got[n-2].text() != "Menu:" || got[n-1].text() != "Pick a number." {
		t.Fatalf("the new flow did not start: %+v", got[n-2:])
	}
	// The flow completes (no completion message: no reply).
	if out := evaluated(t, f, f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "7"})); out != "flow Menu" {
		t.Fatalf("the answer to the flow: %q", out)
	}
	f.Do("DELETE", "/api/chatbot/keywords/"+rule.ID, nil, a).Expect(t, 200)
	says("hey", "Still no idea.")
	if err := f.DB.Exec(`UPDATE chatbot_settings SET fallback_message = 'Changed in the database.' WHERE organization_id = ?`,
		f.orgID).Error; err != nil {
		t.Fatal(err)
	}
	says("hey", "Changed in the database.")
}
