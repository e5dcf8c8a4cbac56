package console

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleChatbot drives the chatbot pages: an admin saves the settings
// (the AI key write-only: never in an answer or on the page; a provider
// change without a new key drops it, and the page says so from the API's
// answer), creates, edits and deletes keyword rules (a bad regular
// expression refused next to Keywords; delete asks first), adds, edits
// and deletes AI contexts, and builds a flow of three steps (the API's
// refusal of an empty buttons step shown on that step, a step moved up from
// the keyboard with the focus following it), then changes it and deletes
// another flow; the API then holds all of it. A customer's
// message through the simulator gets the rule's reply at the provider, and
// the flow's trigger starts it at the moved step, whose session the
// sessions page shows. An agent (chatbot:read only) sees everything
// without a control to change it.
func TestConsoleChatbot(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	a := f.Admin.Auth()
	f.Do("POST", "/api/teams", map[string]any{"name": "Orders desk"}, a).Expect(t, 201)
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	const aiKey = "sk-test-write-only-0123456789"
	type settings struct {
		ChatbotEnabled  bool   `json:"chatbot_enabled"`
		GreetingMessage string `json:"greeting_message"`
		FallbackMessage string `json:"fallback_message"`
		AIProvider      string `json:"ai_provider"`
		AIModel         string `json:"ai_model"`
		HasAIAPIKey     bool   `json:"has_ai_api_key"`
		BusinessHours   []struct {
			Day         int
			Open, Close string
		} `json:"business_hours"`
	}
	readSettings := func(t *testing.T) settings {
		t.Helper()
		r := f.Do("GET", "/api/chatbot/settings", nil, a).Expect(t, 200)
		if strings.Contains(string(r.Body), aiKey) {
			t.Fatalf("the settings answer has the AI key: %s", r.Body)
		}
		var s settings
		r.Into(t, &s)
		return s
	}
	// The key is nowhere on the page: not in its markup, not in a field.
	keyNotOnPage := func(t *testing.T) {
		t.Helper()
		if eval[bool](p, `document.documentElement.outerHTML.includes(`+js(aiKey)+`) || [...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(`+js(aiKey)+`))`) {
			t.Fatal("the AI key is on the page")
		}
	}
	errorNextTo := func(label, text string) {
		p.t.Helper()
		p.waitUntil("the error next to "+label, `(() => { const i = labelled(`+js(label)+`); const d = i && i.getAttribute('aria-describedby'); return !!d && d.split(' ').some((id) => (document.getElementById(id)?.textContent || '').includes(`+js(text)+`)) })()`)
	}

	t.Run("settings: saved, the AI key write-only, dropped by a provider change", func(t *testing.T) {
		p.in(t)
		p.click("link", "Chatbot")
		p.seeRole("heading", "Chatbot")
		p.see("No key stored")
		p.toggle("The chatbot answers incoming messages")
		p.fill("Greeting message", "Welcome to Acme!")
		p.fill("Fallback message", "Sorry, I did not get that.")
		p.fill("AI model", "gpt-4o-mini")
		p.fill("AI API key", aiKey)
		p.click("button", "Add business hours")
		p.waitUntil("Monday, 9 to 17", `labelled('Day 1').value === '1' && labelled('Opens (day 1)').value === '09:00' && labelled('Closes (day 1)').value === '17:00'`)
		// A refusal of the API shows next to its cause.
		p.fill("Greeting buttons", "A title far longer than twenty")
		p.click("button", "Save chatbot settings")
		errorNextTo("Greeting buttons", "needs a title of at most 20 characters")
		if readSettings(t).ChatbotEnabled {
			t.Fatal("a refused save changed the settings")
		}
		p.fill("Greeting buttons", "Prices\nOpening hours")
		p.click("button", "Save chatbot settings")
		p.see("Chatbot settings saved.")
		p.see("A key is stored")
		p.seeRole("heading", "Chatbot")
		s := readSettings(t)
		if !s.ChatbotEnabled || s.GreetingMessage != "Welcome to Acme!" || s.AIModel != "gpt-4o-mini" || !s.HasAIAPIKey ||
			len(s.BusinessHours) != 1 || s.BusinessHours[0].Day != 1 || s.BusinessHours[0].Open != "09:00" || s.BusinessHours[0].Close != "17:00" {
			t.Fatalf("settings after saving: %+v", s)
		}
		keyNotOnPage(t)
		p.reload()
		p.see("A key is stored")
		keyNotOnPage(t)
		p.axe("chatbot settings")

		// Another provider without a new key: the page warns, the API drops
		// the key, and the page says so.
		p.choose("AI provider", "Anthropic")
		p.see("Saving drops the stored key")
		p.click("button", "Save chatbot settings")
		p.see("The stored AI key was removed")
		p.see("No key stored")
		if s := readSettings(t); s.HasAIAPIKey || s.AIProvider != "anthropic" {
			t.Fatalf("after the provider change: %+v", s)
		}
		p.fill("AI API key", aiKey)
		p.click("button", "Save chatbot settings")
		p.see("A key is stored")
		if s := readSettings(t); !s.HasAIAPIKey {
			t.Fatalf("the key given again is not stored: %+v", s)
		}
		keyNotOnPage(t)
		// The answer to a save with the key does not carry it either.
		if r := f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_api_key": aiKey}, a).Expect(t, 200); strings.Contains(string(r.Body), aiKey) ||
			!strings.Contains(string(r.Body), `"has_ai_api_key":true`) {
			t.Fatalf("the answer to saving the key: %s", r.Body)
		}
		p.shot("settings")
	})

	type rule struct {
		ID        string   `json:"id"`
		Name      string   `json:"name"`
		Keywords  []string `json:"keywords"`
		MatchType string   `json:"match_type"`
		Response  string   `json:"response"`
		Priority  int      `json:"priority"`
	}
	rules := func(t *testing.T) map[string]rule {
		t.Helper()
		var out struct{ Items []rule }
		f.Do("GET", "/api/chatbot/keywords", nil, a).Expect(t, 200).Into(t, &out)
		m := map[string]rule{}
		for _, r := range out.Items {
			m[r.Name] = r
		}
		return m
	}

	t.Run("keyword rules: created, edited, deleted after a confirmation", func(t *testing.T) {
		p.in(t)
		f.Do("POST", "/api/chatbot/keywords", map[string]any{"name": "Old promo", "keywords": []string{"promo"}, "match_type": "exact", "response": "Gone."}, a).Expect(t, 201)
		p.click("link", "Keyword rules")
		p.see("Old promo")
		p.click("button", "New keyword rule")
		p.fill("Rule name", "Prices")
		p.choose("Match", "Matches the regular expression")
		p.fill("Keywords", "(unclosed")
		p.fill("Reply", "Prices start at $10.")
		p.submitDialog()
		errorNextTo("Keywords", "invalid regular expression")
		p.shot("rule-refused")
		p.choose("Match", "Contains")
		p.fill("Keywords", "price, cost")
		p.axe("keyword rule form")
		p.submitDialog()
		p.see("Keyword rule Prices created.")
		p.seeRole("button", "Edit Prices")
		p.click("button", "Edit Prices")
		p.fill("Priority", "5")
		p.submitDialog()
		p.see("Keyword rule Prices saved.")
		r := rules(t)["Prices"]
		if r.MatchType != "contains" || strings.Join(r.Keywords, ",") != "price,cost" || r.Response != "Prices start at $10." || r.Priority != 5 {
			t.Fatalf("the rule on the server: %+v", r)
		}

		p.click("button", "Delete Old promo")
		p.seeRole("heading", "Delete this keyword rule?")
		p.click("button", "Keep the rule")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this keyword rule?')`)
		if _, ok := rules(t)["Old promo"]; !ok {
			t.Fatal("Keep the rule deleted it")
		}
		p.click("button", "Delete Old promo")
		p.click("button", "Delete keyword rule")
		p.see("Keyword rule Old promo deleted.")
		if _, ok := rules(t)["Old promo"]; ok {
			t.Fatal("the rule is still on the server")
		}
		p.axe("keyword rules")
	})

	t.Run("AI contexts: added, edited, deleted", func(t *testing.T) {
		p.in(t)
		p.click("link", "AI contexts")
		p.see("No AI context yet")
		p.click("button", "New AI context")
		p.fill("Context name", "Opening hours")
		p.fill("Text for the model", "We are open Monday to Friday, 9 to 17.")
		p.fill("Trigger keywords", "open, hours")
		p.submitDialog()
		p.see("AI context Opening hours created.")
		var out struct {
			Items []struct {
				Name            string   `json:"name"`
				ContextType     string   `json:"context_type"`
				Content         string   `json:"content"`
				TriggerKeywords []string `json:"trigger_keywords"`
			}
		}
		f.Do("GET", "/api/chatbot/ai-contexts", nil, a).Expect(t, 200).Into(t, &out)
		if len(out.Items) != 1 || out.Items[0].ContextType != "static" || out.Items[0].Content != "We are open Monday to Friday, 9 to 17." ||
			strings.Join(out.Items[0].TriggerKeywords, ",") != "open,hours" {
			t.Fatalf("contexts on the server: %+v", out.Items)
		}
		p.click("button", "Edit Opening hours")
		p.fill("Priority", "3")
		p.submitDialog()
		p.see("AI context Opening hours saved.")
		f.Do("GET", "/api/chatbot/ai-contexts", nil, a).Expect(t, 200).Into(t, &out)
		if len(out.Items) != 1 || !strings.Contains(string(f.Do("GET", "/api/chatbot/ai-contexts", nil, a).Body), `"priority":3`) {
			t.Fatalf("the edited context on the server: %+v", out.Items)
		}
		f.Do("POST", "/api/chatbot/ai-contexts", map[string]any{"name": "Old prices", "context_type": "static", "content": "Everything is $5."}, a).Expect(t, 201)
		p.reload()
		p.click("button", "Delete Old prices")
		p.click("button", "Delete AI context")
		p.see("AI context Old prices deleted.")
		f.Do("GET", "/api/chatbot/ai-contexts", nil, a).Expect(t, 200).Into(t, &out)
		if len(out.Items) != 1 || out.Items[0].Name != "Opening hours" {
			t.Fatalf("contexts after the delete: %+v", out.Items)
		}
		p.axe("AI contexts")
	})

	var flowID string
	t.Run("a flow: three steps, a refusal on its step, one moved up from the keyboard", func(t *testing.T) {
		p.in(t)
		p.click("link", "Flows")
		p.see("No flow yet")
		p.click("link", "New flow")
		p.seeRole("heading", "New flow")
		p.fill("Flow name", "Order status")
		p.fill("Trigger keywords", "order")
		p.fill("Step 1 message", "What is your order number?")
		p.choose("Step 1 waits for", "A typed answer")
		p.fill("Step 1 keeps the answer as", "order_no")
		p.click("button", "Add step")
		p.waitUntil("the new step's kind focused", `document.activeElement === labelled('Step 2 kind')`)
		p.choose("Step 2 kind", "Choice of buttons")
		p.fill("Step 2 message", "What do you need?")
		p.fill("Step 2 keeps the answer as", "topic")
		p.click("button", "Add step")
		p.choose("Step 3 kind", "Hand to a person")
		p.choose("Step 3 hand to", "Orders desk")
		p.fill("Step 3 message", "Connecting you to the orders desk.")
		p.fill("Step 3 notes for the agent", "Order {{order_no}}: {{topic}}")
		// Step 2 has no button yet: the API's refusal shows on it.
		p.click("button", "Create flow")
		errorNextTo("Step 2 buttons", "buttons must have 1 to 10 buttons")
		p.shot("step-refused")
		p.fill("Step 2 buttons", "Track it\nCancel it")
		// Step 2 goes first, from the keyboard; the focus follows it.
		p.do("focus Move step 2 up", chromedp.Focus(chromedp.JSPath(withPrelude(`byRole('button', 'Move step 2 up')`))))
		p.do("press Enter", chromedp.KeyEvent("\r"))
		p.waitUntil("the moved step first", `labelled('Step 1 message')?.value === 'What do you need?' && labelled('Step 2 message')?.value === 'What is your order number?'`)
		p.waitUntil("the focus on the moved step", `document.activeElement === byRole('button', 'Move step 1 down')`)
		p.axe("flow editor")
		p.prefersDark(true)
		p.axe("flow editor, dark")
		p.prefersDark(false)
		p.shot("flow-editor")
		p.click("button", "Create flow")
		p.see("Flow Order status created.")
		p.seeRole("heading", "Order status")
		flowID = strings.TrimPrefix(p.path(), "/console/chatbot/flows/")

		var fl struct {
			Name            string   `json:"name"`
			TriggerKeywords []string `json:"trigger_keywords"`
			Steps           []struct {
				StepOrder   int    `json:"step_order"`
				MessageType string `json:"message_type"`
				Message     string `json:"message"`
				InputType   string `json:"input_type"`
				StoreAs     string `json:"store_as"`
				Buttons     []struct {
					Title string `json:"title"`
				} `json:"buttons"`
				TransferConfig *struct {
					TeamID *string `json:"team_id"`
					Notes  string  `json:"notes"`
				} `json:"transfer_config"`
			} `json:"steps"`
		}
		f.Do("GET", "/api/chatbot/flows/"+flowID, nil, a).Expect(t, 200).Into(t, &fl)
		st := fl.Steps
		if fl.Name != "Order status" || strings.Join(fl.TriggerKeywords, ",") != "order" || len(st) != 3 ||
			st[0].StepOrder != 1 || st[0].MessageType != "buttons" || st[0].Message != "What do you need?" || len(st[0].Buttons) != 2 ||
			st[0].Buttons[0].Title != "Track it" || st[0].StoreAs != "topic" ||
			st[1].StepOrder != 2 || st[1].MessageType != "text" || st[1].InputType != "text" || st[1].StoreAs != "order_no" ||
			st[2].StepOrder != 3 || st[2].MessageType != "transfer" || st[2].TransferConfig == nil || st[2].TransferConfig.TeamID == nil ||
			st[2].TransferConfig.Notes != "Order {{order_no}}: {{topic}}" {
			b, _ := json.Marshal(fl)
			t.Fatalf("the flow on the server: %s", b)
		}
		p.reload()
		p.waitUntil("the saved steps shown", `labelled('Step 1 message')?.value === 'What do you need?' && labelled('Step 3 hand to')?.selectedOptions[0]?.text === 'Orders desk'`)
		// Changed and saved again; another flow deleted from the list, after a confirmation.
		p.fill("Step 2 name", "Order number")
		p.click("button", "Save flow")
		p.see("Flow saved.")
		if body := string(f.Do("GET", "/api/chatbot/flows/"+flowID, nil, a).Expect(t, 200).Body); !strings.Contains(body, `"step_name":"Order number"`) {
			t.Fatalf("the saved flow: %s", body)
		}
		f.Do("POST", "/api/chatbot/flows", map[string]any{"name": "Old survey", "steps": []map[string]any{{"step_order": 1, "message_type": "text", "message": "Rate us"}}}, a).Expect(t, 201)
		p.click("link", "← Flows")
		p.click("button", "Delete Old survey")
		p.seeRole("heading", "Delete this flow?")
		p.click("button", "Delete flow")
		p.see("Flow Old survey deleted.")
		if body := string(f.Do("GET", "/api/chatbot/flows", nil, a).Expect(t, 200).Body); strings.Contains(body, "Old survey") || !strings.Contains(body, "Order status") {
			t.Fatalf("flows after the delete: %s", body)
		}
		p.click("link", "Order status")
		p.waitUntil("the flow's steps", `labelled('Step 2 name')?.value === 'Order number'`)
		if os.Getenv("WHARF_SCREENSHOTS") != "" {
			p.do("a narrow window", chromedp.EmulateViewport(420, 860))
			p.shot("flow-narrow")
			p.do("a wide window", chromedp.EmulateViewport(1280, 860))
		}
	})

	// botSays waits for a message to the number whose text (or
	// interactive body) is want.
	botSays := func(t *testing.T, to, want string) {
		t.Helper()
		var seen []string
		apptest.Eventually(t, 20*time.Second, "the bot's reply "+want+" to "+to, func() bool {
			seen = seen[:0]
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: to}) {
				var body struct {
					Text        struct{ Body string } `json:"text"`
					Interactive struct {
						Body struct{ Text string } `json:"body"`
					} `json:"interactive"`
				}
				_ = json.Unmarshal(m.Body, &body)
				text := body.Text.Body + body.Interactive.Body.Text
				seen = append(seen, text)
				if text == want {
					return true
				}
			}
			return false
		})
	}

	t.Run("end to end: the rule answers at the provider, the flow starts at its moved step", func(t *testing.T) {
		p.in(t)
		f.Incoming(platformsim.Incoming{From: "15550004001", ProfileName: "Rita", Type: "text", Text: "How much does it cost?"})
		botSays(t, "15550004001", "Prices start at $10.")
		f.Incoming(platformsim.Incoming{From: "15550004002", ProfileName: "Omar", Type: "text", Text: "order"})
		botSays(t, "15550004002", "What do you need?")

		p.click("link", "Sessions")
		p.seeRole("heading", "Chatbot")
		p.see("Omar")
		p.see("Order status at step 1")
		p.axe("sessions")
		p.shot("sessions")
	})

	t.Run("an agent reads the chatbot without a control to change it", func(t *testing.T) {
		g := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		g.click("link", "Chatbot")
		g.see("A key is stored")
		g.see("Your role may read these settings but not change them.")
		if g.has("button", "Save chatbot settings") || g.has("button", "Add business hours") ||
			!eval[bool](g, `labelled('Greeting message').disabled || labelled('Greeting message').closest('fieldset').disabled`) {
			t.Fatal("an agent may change the settings")
		}
		g.click("link", "Keyword rules")
		g.see("Prices start at $10.")
		if g.has("button", "New keyword rule") || g.has("button", "Edit Prices") || g.has("button", "Delete Prices") {
			t.Fatal("an agent is offered to change keyword rules")
		}
		g.click("link", "AI contexts")
		g.see("Opening hours")
		if g.has("button", "New AI context") || g.has("button", "Edit Opening hours") {
			t.Fatal("an agent is offered to change AI contexts")
		}
		g.click("link", "Flows")
		g.seeRole("link", "Order status")
		if g.has("link", "New flow") || g.has("button", "Delete Order status") {
			t.Fatal("an agent is offered to change flows")
		}
		g.click("link", "Order status")
		g.waitUntil("the steps shown", `labelled('Step 1 message')?.value === 'What do you need?'`)
		if g.has("button", "Save flow") || g.has("button", "Add step") || g.has("button", "Move step 1 down") || g.has("button", "Remove step 1") ||
			!eval[bool](g, `labelled('Step 1 message').closest('fieldset').disabled`) {
			t.Fatal("an agent is offered to change the flow")
		}
		g.axe("flow, read-only")
		g.shot("flow-read-only")
		g.open("/console/chatbot/flows/new")
		g.see("You cannot open this page")
	})
}
