package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/ai"
	"wharf/platformsim"
)

// aiSettings is what these tests read of the chatbot settings.
type aiSettings struct {
	HasAIAPIKey bool   `json:"has_ai_api_key"`
	AIBaseURL   string `json:"ai_base_url"`
	AIProvider  string `json:"ai_provider"`
}

// carries reports whether a request to a fake model server carries secret
// anywhere: the key it was sent with, any header, or the body.
func carries(r apptest.LLMRequest, secret string) bool {
	if r.Key == secret || strings.Contains(string(r.Body), secret) {
		return true
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, secret) {
				return true
			}
		}
	}
	return false
}

// nthKey waits for the n-th request to llm and answers its key.
func nthKey(t *testing.T, llm *apptest.FakeLLM, n int) string {
	t.Helper()
	apptest.Eventually(t, 15*time.Second, fmt.Sprintf("request %d to the model server", n), func() bool { return len(llm.Requests()) >= n })
	return llm.Requests()[n-1].Key
}

// The key follows its URL (issue 18, item 1): an Admin stores key K with
// the model server A; a Manager (chatbot:update) points ai_base_url at B:
// the answer says the key is gone, and B never receives K, nor the
// process's AI_API_KEY, which goes only to AI_API_URL. A URL and a key given
// together keep the new key; a change of provider drops it too; the binding
// is checked again when the key is used.
func TestChatbotAIKeyFollowsItsURL(t *testing.T) {
	t.Parallel()
	platformLLM := apptest.NewFakeLLM(t) // AI_API_URL
	const processKey, keyK, keyK2 = "sk-platform-process-key", "sk-first-org-key", "sk-second-org-key"
	f := newFixture(t, map[string]string{"AI_API_URL": platformLLM.OpenAIBaseURL(), "AI_API_KEY": processKey}, nil)
	f.StartWorker()
	a := f.admin.Auth()
	manager := f.CreateUser(a, "ai-manager@example.test", "Manager").Auth()
	serverA, serverB := apptest.NewFakeLLM(t), apptest.NewFakeLLM(t)
	serverA.SetReply("from A")
	serverB.SetReply("from B")
	platformLLM.SetReply("from the platform")

	var st aiSettings
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_provider": "openai",
		"ai_model": "gpt-test", "ai_api_key": keyK, "ai_base_url": serverA.OpenAIBaseURL(), "fallback_message": "Fallback."}, a).
		Expect(t, 200).Into(t, &st)
	if !st.HasAIAPIKey {
		t.Fatalf("after storing the key: %+v", st)
	}
	const from = "15550181001"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "one"})
	if got := botSays(t, f, from, 1); got[0].text() != "from A" {
		t.Fatalf("reply %+v", got)
	}
	if k := nthKey(t, serverA, 1); k != keyK {
		t.Fatalf("A got key %q, want the key stored for it", k)
	}

	// The Manager changes the URL alone: the key is dropped, and says so.
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_base_url": serverB.OpenAIBaseURL()}, manager).Expect(t, 200).Into(t, &st)
	if st.HasAIAPIKey || st.AIBaseURL != serverB.OpenAIBaseURL() {
		t.Fatalf("after the Manager's URL change: %+v, want has_ai_api_key false", st)
	}
	f.Do("GET", "/api/chatbot/settings", nil, a).Expect(t, 200).Into(t, &st)
	if st.HasAIAPIKey {
		t.Fatal("the dropped key is still stored")
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "two"})
	if got := botSays(t, f, from, 2); got[1].text() != "from B" {
		t.Fatalf("reply %+v", got[1])
	}
	if k := nthKey(t, serverB, 1); k != "" {
		t.Fatalf("B got key %q, want none", k)
	}

	// Saving the same URL again (a form sent whole) keeps what is stored;
	// a URL and a key together keep the new key, which goes to B.
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_base_url": serverB.OpenAIBaseURL(), "ai_api_key": keyK2}, manager).
		Expect(t, 200).Into(t, &st)
	if !st.HasAIAPIKey {
		t.Fatalf("URL and key together: %+v, want the key kept", st)
	}
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_base_url": serverB.OpenAIBaseURL(), "ai_provider": "openai",
		"system_prompt": "Be brief."}, manager).Expect(t, 200).Into(t, &st)
	if !st.HasAIAPIKey {
		t.Fatalf("unchanged URL and provider: %+v, want the key kept", st)
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "three"})
	botSays(t, f, from, 3)
	if k := nthKey(t, serverB, 2); k != keyK2 {
		t.Fatalf("B got key %q, want the key given with its URL", k)
	}

	// Stored by whatever path without the API (a direct change of the
	// row): the key is not sent to a URL it was not stored for.
	if err := f.DB.Exec(`UPDATE chatbot_settings SET ai_base_url = ? WHERE organization_id = ?`, serverA.OpenAIBaseURL(), f.orgID).Error; err != nil {
		t.Fatal(err)
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "four"})
	botSays(t, f, from, 4)
	if k := nthKey(t, serverA, 2); k != "" {
		t.Fatalf("A got key %q, stored for B: want none", k)
	}
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_base_url": serverB.OpenAIBaseURL(), "ai_api_key": keyK2}, a).Expect(t, 200)

	// A change of provider alone drops the key too.
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_provider": "anthropic"}, manager).Expect(t, 200).Into(t, &st)
	if st.HasAIAPIKey || st.AIProvider != "anthropic" {
		t.Fatalf("after the provider change: %+v, want has_ai_api_key false", st)
	}

	// Without a URL of its own the organization uses AI_API_URL, with the
	// process's key.
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"ai_provider": "openai", "ai_base_url": ""}, manager).Expect(t, 200)
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "five"})
	if got := botSays(t, f, from, 5); got[4].text() != "from the platform" {
		t.Fatalf("reply %+v", got[4])
	}
	if k := nthKey(t, platformLLM, 1); k != processKey {
		t.Fatalf("AI_API_URL got key %q, want AI_API_KEY", k)
	}

	for name, srv := range map[string]*apptest.FakeLLM{"A": serverA, "B": serverB} {
		for i, r := range srv.Requests() {
			if carries(r, processKey) {
				t.Fatalf("request %d to %s carries AI_API_KEY", i, name)
			}
			if name == "B" && carries(r, keyK) {
				t.Fatalf("request %d to B carries the key stored for A", i)
			}
			if name == "A" && carries(r, keyK2) {
				t.Fatalf("request %d to A carries the key stored for B", i)
			}
		}
	}
}

// A model answer past the cap (1 MB) is not read to its end: the contact
// gets the fallback.
func TestChatbotAIAnswerPastTheCapSendsTheFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	llm := apptest.NewFakeLLM(t)
	llm.SetReply(strings.Repeat("long ", ai.MaxResponseBytes/5+1))
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": llm.OpenAIBaseURL(), "fallback_message": "Please try later."}, f.admin.Auth()).Expect(t, 200)
	const from = "15550181101"
	wamid := f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hello"})
	if got := botSays(t, f, from, 1); got[0].text() != "Please try later." {
		t.Fatalf("reply %+v", got)
	}
	if o := evaluated(t, f, wamid); o != "fallback" {
		t.Fatalf("outcome %q", o)
	}
	if n := len(llm.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// An organization has at most 20 AI contexts: the 21st is a 409 naming the
// limit, and nothing is created, also when the creations race.
func TestChatbotAIContextsPerOrganizationAreBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	ctxBody := func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("Context %d", i), "context_type": "static", "content": "text"}
	}
	for i := range 20 {
		f.Do("POST", "/api/chatbot/ai-contexts", ctxBody(i), a).Expect(t, 201)
	}
	r := f.Do("POST", "/api/chatbot/ai-contexts", ctxBody(20), a).Expect(t, 409)
	if !strings.Contains(r.Message, "at most 20 AI contexts") {
		t.Fatalf("message %q", r.Message)
	}
	var list struct {
		Items []struct{ Name string } `json:"items"`
	}
	f.Do("GET", "/api/chatbot/ai-contexts", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Items) != 20 {
		t.Fatalf("%d contexts after the refusal, want 20", len(list.Items))
	}

	// Another organization has its own 20; racing creations stop at 20.
	b, _ := f.orgB(t, "Contexts B", "contexts-b@example.test")
	var created, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			switch f.Do("POST", "/api/chatbot/ai-contexts", ctxBody(i), b.Auth()).Status {
			case 201:
				created.Add(1)
			case 409:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	f.Do("GET", "/api/chatbot/ai-contexts", nil, b.Auth()).Expect(t, 200).Into(t, &list)
	if created.Load() != 20 || refused.Load() != 10 || len(list.Items) != 20 {
		t.Fatalf("30 racing creations: %d created, %d refused, %d stored; want 20, 10, 20", created.Load(), refused.Load(), len(list.Items))
	}
}

// `api` AI contexts are fetched at once (two that answer only when both
// requests have arrived both reach the prompt), and a context that failed
// is not fetched again for the next message (its failure is remembered).
func TestChatbotAIContextsAreFetchedAtOnceAndFailuresRemembered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	var inFlight, most, downHits atomic.Int64
	both := make(chan struct{})
	var once sync.Once
	ctxSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			downHits.Add(1)
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == 2 {
			once.Do(func() { close(both) })
		}
		select {
		case <-both:
			fmt.Fprintf(w, "facts of %s", r.URL.Path)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ctxSrv.Close)
	llm := apptest.NewFakeLLM(t)
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": llm.OpenAIBaseURL(), "system_prompt": "Shop bot."}, a).Expect(t, 200)
	for _, c := range []struct{ name, path string }{{"Prices", "/prices"}, {"Stock", "/stock"}, {"Broken", "/down"}} {
		f.Do("POST", "/api/chatbot/ai-contexts", map[string]any{"name": c.name, "context_type": "api", "content": ctxSrv.URL + c.path}, a).
			Expect(t, 201)
	}
	const from = "15550181201"
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "hello"})
	botSays(t, f, from, 1)
	system := llm.Requests()[0].System
	if !strings.Contains(system, "Prices:\nfacts of /prices") || !strings.Contains(system, "Stock:\nfacts of /stock") ||
		strings.Contains(system, "Broken") {
		t.Fatalf("system prompt %q: want both slow contexts, not the broken one", system)
	}
	if most.Load() != 2 {
		t.Fatalf("at most %d context requests in flight at once, want 2", most.Load())
	}
	f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "again"})
	botSays(t, f, from, 2)
	if n := downHits.Load(); n != 1 {
		t.Fatalf("the failing context was fetched %d times for two messages, want once", n)
	}
}

// The fair share (issue 18, item 4): while one organization's model server
// hangs, with many of its contacts (one of them writing several messages)
// waiting on it, another organization's contacts are still answered, and
// the hanging server never has more requests in flight than the
// organization's share of the worker (WORKER_CONCURRENCY 4: one). Once it
// answers, every waiting message gets its reply, in order, once.
func TestChatbotASlowAIServerTakesOnlyItsShareOfTheWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"WORKER_CONCURRENCY": "4", "AI_TIMEOUT": "90s"}, nil)
	f.StartWorker()
	slow, fast := apptest.NewFakeLLM(t), apptest.NewFakeLLM(t)
	slow.SetReplyFunc(func(r apptest.LLMRequest) string { return "slow: " + r.Messages[len(r.Messages)-1].Text })
	fast.SetReply("fast reply")
	release := slow.Hold()
	defer release()
	a := f.admin.Auth()
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": slow.OpenAIBaseURL(), "fallback_message": "Fallback."}, a).Expect(t, 200)

	// Organization B, with a number of its own.
	adminB, _ := f.orgB(t, "Fast Co", "fast-admin@example.test")
	waba := f.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Fast Co", AccessToken: "token-fast-co",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-018-1400", VerifiedName: "Fast Co"}}})
	var acct struct{ ID string }
	f.Do("POST", "/api/accounts", map[string]any{"name": "Fast", "phone_number_id": waba.PhoneNumbers[0].ID, "business_account_id": waba.ID,
		"access_token": waba.AccessToken}, adminB.Auth()).Expect(t, 201).Into(t, &acct)
	f.Do("POST", "/api/accounts/"+acct.ID+"/test", nil, adminB.Auth()).Expect(t, 200)
	f.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": fast.OpenAIBaseURL()}, adminB.Auth()).Expect(t, 200)

	// A's contacts: one writes four messages, four write one each.
	many := "15550181400"
	for i := range 4 {
		f.Incoming(platformsim.Incoming{From: many, Type: "text", Text: fmt.Sprintf("m%d", i)})
	}
	var others []string
	for i := range 4 {
		others = append(others, fmt.Sprintf("1555018141%d", i))
		f.Incoming(platformsim.Incoming{From: others[i], Type: "text", Text: "hello"})
	}
	apptest.Eventually(t, 20*time.Second, "A's model server is asked", func() bool { return slow.InFlight() > 0 })

	// B is answered while A's server still hangs.
	const fromB = "15550181499"
	f.Incoming(platformsim.Incoming{From: fromB, Type: "text", Text: "hi", PhoneNumberID: waba.PhoneNumbers[0].ID})
	apptest.Eventually(t, 45*time.Second, "B's reply while A's model server hangs", func() bool {
		return len(f.Sim.Messages(platformsim.MessageFilter{To: fromB})) == 1
	})
	if n := slow.InFlight(); n == 0 {
		t.Fatal("A's model server stopped hanging before B was answered: the test proves nothing")
	}
	if len(f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()})) != 0 {
		t.Fatal("A's contacts were answered while their model server hung")
	}
	if m := slow.MaxInFlight(); m != 1 {
		t.Fatalf("A's model server had %d requests in flight at once, want its share, 1", m)
	}

	release()
	got := botSays(t, f, many, 4)
	for i := range 4 {
		if want := fmt.Sprintf("slow: m%d", i); got[i].text() != want {
			t.Fatalf("reply %d to the contact with four messages: %q, want %q", i, got[i].text(), want)
		}
	}
	for _, to := range others {
		if got := botSays(t, f, to, 1); got[0].text() != "slow: hello" {
			t.Fatalf("reply to %s: %+v", to, got)
		}
	}
	if m := slow.MaxInFlight(); m != 1 {
		t.Fatalf("A's model server had %d requests in flight at once, want its share, 1", m)
	}
}
