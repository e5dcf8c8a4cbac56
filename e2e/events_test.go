package e2e_test

import (
	"encoding/json"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

type streamEvent struct {
	Type    string `json:"type"`
	Contact *struct {
		ID          string `json:"id"`
		PhoneNumber string `json:"phone_number"`
		Name        string `json:"name"`
	} `json:"contact"`
	Data struct {
		MessageID string         `json:"message_id"`
		Direction string         `json:"direction"`
		Status    string         `json:"status"`
		Content   map[string]any `json:"content"`
	} `json:"data"`
}

// awaitEvent reads s until an event satisfies match.
func awaitEvent(t *testing.T, s *apptest.EventStream, what string, match func(streamEvent) bool) streamEvent {
	t.Helper()
	deadline := time.Now().Add(apptest.MinWait)
	for time.Now().Before(deadline) {
		ev, ok := s.Next(time.Until(deadline))
		if !ok {
			break
		}
		var se streamEvent
		if err := json.Unmarshal([]byte(ev.Data), &se); err != nil {
			t.Fatalf("event %q: %v", ev.Data, err)
		}
		if match(se) {
			return se
		}
	}
	t.Fatalf("the stream did not carry %s", what)
	return streamEvent{}
}

// A customer's message posted through the simulator reaches an agent's
// open event stream (api → worker → Redis → the api's stream); the agent's
// reply and its delivery statuses follow on the same stream.
func TestCustomerMessageReachesAnAgentsStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, apptest.FastStatuses)
	f.StartWorker()
	agent := f.CreateUser(f.admin.Auth(), "agent@x.com", "Agent")
	s := f.OpenStream(f.Server.URL, "/api/events", agent.Auth(), nil)
	if s.Status != 200 {
		t.Fatalf("stream: %d %s", s.Status, s.Body)
	}
	if c, ok := s.Comment(apptest.MinWait); !ok || c != "connected" {
		t.Fatalf("no connected comment: %q", c)
	}

	f.Incoming(platformsim.Incoming{From: "15550009001", ProfileName: "Cara", Type: "text", Text: "Where is my order?"})
	in := awaitEvent(t, s, "the incoming message", func(e streamEvent) bool {
		return e.Type == "message.created" && e.Data.Direction == "incoming"
	})
	if in.Data.Content["text"] != "Where is my order?" || in.Contact == nil || in.Contact.PhoneNumber != "+15550009001" || in.Contact.Name != "Cara" {
		t.Fatalf("incoming event %+v", in)
	}

	var sent struct {
		ID string `json:"id"`
	}
	f.Do("POST", "/api/contacts/"+in.Contact.ID+"/messages", map[string]any{"type": "text", "text": "On its way"}, agent.Auth()).
		Expect(t, 201).Into(t, &sent)
	out := awaitEvent(t, s, "the agent's reply", func(e streamEvent) bool {
		return e.Type == "message.created" && e.Data.Direction == "outgoing"
	})
	if out.Data.MessageID != sent.ID || out.Data.Content["text"] != "On its way" {
		t.Fatalf("outgoing event %+v, sent %s", out, sent.ID)
	}
	awaitEvent(t, s, "the reply read", func(e streamEvent) bool {
		return e.Type == "message.status" && e.Data.MessageID == sent.ID && e.Data.Status == "read"
	})
}

// A user without contacts:read receives the message events of the contacts
// assigned to them and of those whose transfer they hold, and no other's.
func TestStreamShowsOnlyMyContactsWithoutContactsRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	f.Do("POST", "/api/roles", map[string]any{"name": "Desk", "permissions": []string{"messages:read", "transfers:read", "transfers:write"}},
		f.admin.Auth()).Expect(t, 201)
	desk := f.CreateUser(f.admin.Auth(), "desk@x.com", "Desk")
	held := f.contactFromIncoming(t, "15550009101", "Held", "hello")
	other := f.contactFromIncoming(t, "15550009102", "Other", "hello")
	assigned := f.contactFromIncoming(t, "15550009103", "Assigned", "hello")
	var tr struct{ ID string }
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": held}, f.admin.Auth()).Expect(t, 201).Into(t, &tr)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/assign", map[string]any{"agent_id": desk.User.ID}, f.admin.Auth()).Expect(t, 200)
	f.Do("PUT", "/api/contacts/"+assigned+"/assign", map[string]any{"user_id": desk.User.ID}, f.admin.Auth()).Expect(t, 200)

	s := f.OpenStream(f.Server.URL, "/api/events", desk.Auth(), nil)
	if s.Status != 200 {
		t.Fatalf("stream: %d %s", s.Status, s.Body)
	}
	// One after another, each stored before the next is sent (so their
	// events are published in this order): the other contact's first, which
	// must not come, so that the held contact's arriving first shows it was
	// left out.
	for _, from := range []string{"15550009102", "15550009101", "15550009103"} {
		f.Incoming(platformsim.Incoming{From: from, Type: "text", Text: "news from " + from})
		apptest.Eventually(t, 10*time.Second, "the message of "+from+" stored", func() bool {
			var n int64
			f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id
				WHERE c.phone_number = ? AND m.content->>'text' = ?`, "+"+from, "news from "+from).Scan(&n)
			return n == 1
		})
	}
	var got []string
	for len(got) < 2 {
		e := awaitEvent(t, s, "a message", func(e streamEvent) bool { return e.Type == "message.created" })
		got = append(got, e.Contact.ID)
	}
	if got[0] != held || got[1] != assigned {
		t.Fatalf("messages of contacts %v; want the held %s, then the assigned %s (never %s)", got, held, assigned, other)
	}
}

// An import's progress, run by the worker, reaches the streams of users
// who may import that table, and not an agent's.
func TestImportProgressReachesTheStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"IMPORT_WAIT": "200ms"}, nil)
	a := f.admin.Auth()
	agent := f.CreateUser(a, "agent-import@x.com", "Agent")
	admin := f.OpenStream(f.Server.URL, "/api/events", a, nil)
	other := f.OpenStream(f.Server.URL, "/api/events", agent.Auth(), nil)
	if admin.Status != 200 || other.Status != 200 {
		t.Fatalf("streams: %d %d", admin.Status, other.Status)
	}
	var queued struct {
		JobID string `json:"job_id"`
	}
	// No worker yet: the import is queued (202), then run once it starts.
	f.importCSV(t, a, "contacts", "phone_number\n+15550009201\n+15550009202\n", "", false).Expect(t, 202).Into(t, &queued)
	f.StartWorker()
	type importEvent struct {
		Type string `json:"type"`
		Data struct {
			JobID         string `json:"job_id"`
			Table         string `json:"table"`
			Status        string `json:"status"`
			TotalRows     int    `json:"total_rows"`
			ProcessedRows int    `json:"processed_rows"`
		} `json:"data"`
	}
	var done importEvent
	deadline := time.Now().Add(apptest.MinWait)
	for done.Data.Status != "done" {
		ev, ok := admin.Next(time.Until(deadline))
		if !ok {
			t.Fatalf("no import.progress done event; last %+v", done)
		}
		if err := json.Unmarshal([]byte(ev.Data), &done); err != nil {
			t.Fatal(err)
		}
		if done.Type != "import.progress" || done.Data.JobID != queued.JobID {
			t.Fatalf("event %s", ev.Data)
		}
	}
	if done.Data.Table != "contacts" || done.Data.TotalRows != 2 || done.Data.ProcessedRows != 2 {
		t.Fatalf("done %+v", done)
	}
	if ev, ok := other.Next(300 * time.Millisecond); ok {
		t.Fatalf("an agent without contacts:import received %s", ev.Data)
	}
}
