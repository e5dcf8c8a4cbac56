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
