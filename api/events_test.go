package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
)

// wait is how long a test waits for an event that should come (the stream
// delivers within milliseconds; the slack is for a busy machine).
const wait = 10 * time.Second

// quiet is how long a test listens to show that an event does not come,
// after an event published later has already arrived (so the first one
// would have been there).
const quiet = 300 * time.Millisecond

type liveEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Contact *struct {
		ID          string `json:"id"`
		PhoneNumber string `json:"phone_number"`
		Name        string `json:"name"`
	} `json:"contact"`
	Data map[string]any `json:"data"`
}

func decodeEvent(t *testing.T, ev apptest.SSE) liveEvent {
	t.Helper()
	var le liveEvent
	if err := json.Unmarshal([]byte(ev.Data), &le); err != nil {
		t.Fatalf("event %q: %v", ev.Data, err)
	}
	if ev.Event != le.Type || (ev.ID != "" && ev.ID != le.ID) {
		t.Fatalf("SSE event %q id %q carries type %q id %q", ev.Event, ev.ID, le.Type, le.ID)
	}
	return le
}

// nextOf answers the next event of type typ (skipping others), failing the
// test when none comes.
func nextOf(t *testing.T, s *apptest.EventStream, typ string) liveEvent {
	t.Helper()
	for {
		ev, ok := s.Next(wait)
		if !ok {
			t.Fatalf("no %s event within %s", typ, wait)
		}
		if le := decodeEvent(t, ev); le.Type == typ {
			return le
		}
	}
}

func openEvents(t *testing.T, e *apptest.Env, auth apptest.Auth, header map[string]string) *apptest.EventStream {
	t.Helper()
	s := e.OpenStream(e.Server.URL, "/api/events", auth, header)
	if s.Status != 200 {
		t.Fatalf("GET /api/events: %d %s", s.Status, s.Body)
	}
	if c, ok := s.Comment(wait); !ok || c != "connected" {
		t.Fatalf("no connected comment: %q", c)
	}
	return s
}

func newContact(t *testing.T, e *apptest.Env, auth apptest.Auth, phone, name string) string {
	t.Helper()
	var c struct{ ID string }
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": phone, "name": name}, auth).Expect(t, 201).Into(t, &c)
	return c.ID
}

func newTransfer(t *testing.T, e *apptest.Env, auth apptest.Auth, contactID string, teamID *string) string {
	t.Helper()
	var tr struct{ ID string }
	e.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contactID, "team_id": teamID}, auth).Expect(t, 201).Into(t, &tr)
	return tr.ID
}

// A change made through the API reaches an open stream as a typed event
// with an id, the contact and the data to render it.
func TestEventStreamDeliversATransfer(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	s := openEvents(t, e, admin.Auth(), nil)
	contact := newContact(t, e, admin.Auth(), "+15550001001", "Ann")
	id := newTransfer(t, e, admin.Auth(), contact, nil)
	ev := nextOf(t, s, "transfer.created")
	if ev.ID == "" || ev.Data["transfer_id"] != id || ev.Contact == nil || ev.Contact.ID != contact ||
		ev.Contact.PhoneNumber != "+15550001001" || ev.Contact.Name != "Ann" {
		t.Fatalf("event %+v", ev)
	}
	e.Do("PUT", "/api/chatbot/transfers/"+id+"/resume", nil, admin.Auth()).Expect(t, 200)
	if ev := nextOf(t, s, "transfer.resumed"); ev.Data["transfer_id"] != id || ev.Data["status"] != "resumed" {
		t.Fatalf("resumed event %+v", ev)
	}
}

// An agent outside a team never receives that team's transfer events; the
// general queue's reach them (as GET /api/chatbot/transfers lists them),
// and a member of the team gets the team's.
func TestEventStreamKeepsTeamTransfersToTheTeam(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	outsider := e.CreateUser(admin.Auth(), "outsider@x.com", "Agent")
	member := e.CreateUser(admin.Auth(), "member@x.com", "Agent")
	var team struct{ ID string }
	e.Do("POST", "/api/teams", map[string]any{"name": "Billing", "assignment_strategy": "manual"}, admin.Auth()).Expect(t, 201).Into(t, &team)
	e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": member.User.ID, "role": "agent"}, admin.Auth()).Expect(t, 201)

	out := openEvents(t, e, outsider.Auth(), nil)
	in := openEvents(t, e, member.Auth(), nil)
	secret := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550001002", "Team only"), &team.ID)
	general := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550001003", "Anyone"), nil)

	if ev := nextOf(t, in, "transfer.created"); ev.Data["transfer_id"] != secret {
		t.Fatalf("the member's first transfer event is %+v, want the team's %s", ev, secret)
	}
	// The outsider's first transfer event is the general queue's: the
	// team's, published before it, was not sent.
	if ev := nextOf(t, out, "transfer.created"); ev.Data["transfer_id"] != general {
		t.Fatalf("the outsider received %+v; want only the general queue's %s", ev, general)
	}
	if ev, ok := out.Next(quiet); ok {
		t.Fatalf("the outsider received another event: %+v", ev)
	}
}

// A user never receives another organization's events, and the
// organization's masking applies to the numbers and names of the events.
func TestEventStreamIsScopedToTheOrganizationAndMasked(t *testing.T) {
	e := apptest.New(t, nil)
	boot := e.Admin()
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, boot.Auth()).Expect(t, 201).Into(t, &orgB)
	var bootInB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, boot.Auth()).Expect(t, 200).Into(t, &bootInB)
	a := e.CreateUser(boot.Auth(), "a-admin@x.com", "Admin")

	e.Do("PUT", "/api/org/settings", map[string]any{"mask_phone_numbers": true}, a.Auth()).Expect(t, 200)
	s := openEvents(t, e, a.Auth(), nil)
	// B's transfer first, then A's.
	newTransfer(t, e, bootInB.Auth(), newContact(t, e, bootInB.Auth(), "+15550002001", "Org B contact"), nil)
	mine := newTransfer(t, e, a.Auth(), newContact(t, e, a.Auth(), "+15550002002", "+15550002002"), nil)
	ev := nextOf(t, s, "transfer.created")
	if ev.Data["transfer_id"] != mine {
		t.Fatalf("A's first transfer event is %+v, want A's own %s", ev, mine)
	}
	if ev.Contact == nil || strings.Contains(ev.Contact.PhoneNumber, "0002002") || ev.Contact.PhoneNumber == "" ||
		strings.Contains(ev.Contact.Name, "0002002") {
		t.Fatalf("the contact is not masked: %+v", ev.Contact)
	}
	if ev, ok := s.Next(quiet); ok {
		t.Fatalf("another event: %+v", ev)
	}
}

// Last-Event-ID replays what a client missed, in order; a position older
// than the window (or no position at all) gets a reset event first.
func TestEventStreamReplaysFromLastEventID(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	s := openEvents(t, e, admin.Auth(), nil)
	first := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550003001", "One"), nil)
	seen := nextOf(t, s, "transfer.created")
	if seen.Data["transfer_id"] != first {
		t.Fatalf("first event %+v", seen)
	}
	s.Close()
	second := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550003002", "Two"), nil)
	third := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550003003", "Three"), nil)

	r := openEvents(t, e, admin.Auth(), map[string]string{"Last-Event-ID": seen.ID})
	for _, want := range []string{second, third} {
		if ev := nextOf(t, r, "transfer.created"); ev.Data["transfer_id"] != want {
			t.Fatalf("replayed %+v, want transfer %s", ev, want)
		}
	}
	// Live events follow the replay, without repeating it.
	fourth := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550003004", "Four"), nil)
	if ev := nextOf(t, r, "transfer.created"); ev.Data["transfer_id"] != fourth {
		t.Fatalf("after the replay %+v, want transfer %s", ev, fourth)
	}

	for _, old := range []string{"1-0", "not-a-position"} {
		o := openEvents(t, e, admin.Auth(), map[string]string{"Last-Event-ID": old})
		ev, ok := o.Next(wait)
		if !ok || ev.Event != "reset" {
			t.Fatalf("Last-Event-ID %q: first event %+v, want reset", old, ev)
		}
		o.Close()
	}
}

// A user holds at most 5 streams; the sixth is a 429 in the error
// envelope, and closing one frees its place.
func TestEventStreamCapsStreamsPerUser(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var open []*apptest.EventStream
	for range 5 {
		open = append(open, openEvents(t, e, admin.Auth(), nil))
	}
	over := e.OpenStream(e.Server.URL, "/api/events", admin.Auth(), nil)
	var env struct{ Status, Message string }
	if over.Status != 429 || json.Unmarshal(over.Body, &env) != nil || env.Status != "error" || !strings.Contains(env.Message, "at most 5") {
		t.Fatalf("sixth stream: %d %s", over.Status, over.Body)
	}
	// Another user is not affected.
	other := e.CreateUser(admin.Auth(), "other@x.com", "Agent")
	openEvents(t, e, other.Auth(), nil).Close()

	open[0].Close()
	apptest.Eventually(t, 5*time.Second, "a closed stream frees its place", func() bool {
		s := e.OpenStream(e.Server.URL, "/api/events", admin.Auth(), nil)
		defer s.Close()
		return s.Status == 200
	})
}

// One process serves at most EVENT_STREAMS_MAX streams (503 beyond), sends
// a heartbeat comment every EVENT_STREAM_HEARTBEAT, and ends a stream when
// its access token expires, saying so (the client reconnects with a fresh
// token).
func TestEventStreamProcessCapHeartbeatAndExpiry(t *testing.T) {
	e := apptest.New(t, map[string]string{"EVENT_STREAMS_MAX": "1", "EVENT_STREAM_HEARTBEAT": "200ms", "ACCESS_TOKEN_TTL": "3s"})
	admin := e.Admin()
	s := openEvents(t, e, admin.Auth(), nil)
	if c, ok := s.Comment(wait); !ok || c != "ping" {
		t.Fatalf("no heartbeat: %q", c)
	}
	over := e.OpenStream(e.Server.URL, "/api/events", admin.Auth(), nil)
	if over.Status != 503 || !strings.Contains(string(over.Body), "cannot take more event streams") {
		t.Fatalf("second stream on a one-stream process: %d %s", over.Status, over.Body)
	}
	ev, ok := s.Next(wait)
	if !ok || ev.Event != "end" || !strings.Contains(ev.Data, "token_expired") {
		t.Fatalf("at the token's expiry: %+v", ev)
	}
	if _, ok := s.Next(wait); ok {
		t.Fatal("the stream went on after its end event")
	}
}

// A shutting-down api ends its streams (so that http.Server.Shutdown is not
// held by them) with an end event, and refuses new ones with a 503: the
// clients reconnect to another replica with their Last-Event-ID.
func TestEventStreamEndsOnShutdown(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	s := openEvents(t, e, admin.Auth(), nil)
	e.API.Drain()
	ev, ok := s.Next(wait)
	if !ok || ev.Event != "end" || !strings.Contains(ev.Data, "shutdown") {
		t.Fatalf("on shutdown: %+v", ev)
	}
	if _, ok := s.Next(wait); ok {
		t.Fatal("the stream went on after its end event")
	}
	if again := e.OpenStream(e.Server.URL, "/api/events", admin.Auth(), nil); again.Status != 503 {
		t.Fatalf("a new stream while shutting down: %d %s", again.Status, again.Body)
	}
}

// A stream rechecks its user every EVENT_STREAM_RECHECK: a user removed
// meanwhile gets an end event (unauthorized) and the stream closes, although
// the access token it was opened with has not expired.
func TestEventStreamEndsWhenTheUserIsRemoved(t *testing.T) {
	e := apptest.New(t, map[string]string{"EVENT_STREAM_RECHECK": "300ms"})
	admin := e.Admin()
	agent := e.CreateUser(admin.Auth(), "leaving@x.com", "Agent")
	s := openEvents(t, e, agent.Auth(), nil)
	e.Do("DELETE", "/api/users/"+agent.User.ID, nil, admin.Auth()).Expect(t, 200)
	ev, ok := s.Next(wait)
	if !ok || ev.Event != "end" || !strings.Contains(ev.Data, "unauthorized") {
		t.Fatalf("after the user's removal: %+v", ev)
	}
	if _, ok := s.Next(wait); ok {
		t.Fatal("the stream went on after its end event")
	}
}

// An API key opens a stream as its user, and the stream ends at the next
// recheck once the key is deleted.
func TestEventStreamWithAnAPIKeyEndsWhenTheKeyIsDeleted(t *testing.T) {
	e := apptest.New(t, map[string]string{"EVENT_STREAM_RECHECK": "300ms"})
	admin := e.Admin()
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "Dashboard"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	s := openEvents(t, e, apptest.APIKey(k.Key), nil)
	id := newTransfer(t, e, admin.Auth(), newContact(t, e, admin.Auth(), "+15550004001", "Key"), nil)
	if ev := nextOf(t, s, "transfer.created"); ev.Data["transfer_id"] != id {
		t.Fatalf("event %+v", ev)
	}
	e.Do("DELETE", "/api/api-keys/"+k.ID, nil, admin.Auth()).Expect(t, 200)
	ev, ok := s.Next(wait)
	if !ok || ev.Event != "end" || !strings.Contains(ev.Data, "unauthorized") {
		t.Fatalf("after the key's deletion: %+v", ev)
	}
}

// contact.assigned reaches the readers of every contact and both the new
// and the previous assignee; a user without contacts:read gets no other
// contact's assignment.
func TestEventStreamContactAssignments(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	e.Do("POST", "/api/roles", map[string]any{"name": "Desk", "permissions": []string{"messages:read"}}, admin.Auth()).Expect(t, 201)
	desk := e.CreateUser(admin.Auth(), "desk@x.com", "Desk")
	other := e.CreateUser(admin.Auth(), "other@x.com", "Agent")
	mine := newContact(t, e, admin.Auth(), "+15550005001", "Mine")
	theirs := newContact(t, e, admin.Auth(), "+15550005002", "Theirs")
	s := openEvents(t, e, desk.Auth(), nil)
	all := openEvents(t, e, admin.Auth(), nil)

	e.Do("PUT", "/api/contacts/"+theirs+"/assign", map[string]any{"user_id": other.User.ID}, admin.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/contacts/"+mine+"/assign", map[string]any{"user_id": desk.User.ID}, admin.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/contacts/"+mine+"/assign", map[string]any{"user_id": other.User.ID}, admin.Auth()).Expect(t, 200)

	for _, want := range []struct{ contact, to string }{{theirs, other.User.ID}, {mine, desk.User.ID}, {mine, other.User.ID}} {
		if ev := nextOf(t, all, "contact.assigned"); ev.Data["contact_id"] != want.contact || ev.Data["assigned_to"] != want.to {
			t.Fatalf("the admin's event %+v, want %s to %s", ev, want.contact, want.to)
		}
	}
	// The desk: its own assignment, then the one taking the contact away
	// (it was the previous assignee); never the other contact's.
	for _, want := range []string{desk.User.ID, other.User.ID} {
		if ev := nextOf(t, s, "contact.assigned"); ev.Data["contact_id"] != mine || ev.Data["assigned_to"] != want {
			t.Fatalf("the desk's event %+v, want %s assigned to %s", ev, mine, want)
		}
	}
	if ev, ok := s.Next(quiet); ok {
		t.Fatalf("the desk received another event: %+v", ev)
	}
}
