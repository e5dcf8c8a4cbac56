package e2e_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// inboxRow is the part of a contact list row the inbox reads.
type inboxRow struct {
	ID                   string  `json:"id"`
	Name                 string  `json:"name"`
	ProfileName          string  `json:"profile_name"`
	AssignedTo           *string `json:"assigned_to"`
	UnreadCount          int     `json:"unread_count"`
	LastMessagePreview   string  `json:"last_message_preview"`
	LastMessageDirection string  `json:"last_message_direction"`
}

type inboxPage struct {
	Items []inboxRow `json:"items"`
	Total int64      `json:"total"`
}

func (f *fixture) inbox(t *testing.T, auth apptest.Auth, query string) inboxPage {
	t.Helper()
	var p inboxPage
	f.Do("GET", "/api/contacts?"+query, nil, auth).Expect(t, 200).Into(t, &p)
	return p
}

func names(p inboxPage) string {
	var out []string
	for _, r := range p.Items {
		out = append(out, r.ProfileName)
	}
	return strings.Join(out, ",")
}

// waitMessages waits until the contact numbered from has n messages stored.
func (f *fixture) waitMessages(t *testing.T, from string, n int64) {
	t.Helper()
	apptest.Eventually(t, 10*time.Second, "messages of "+from, func() bool {
		var got int64
		f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.phone_number = ?`, "+"+from).Scan(&got)
		return got == n
	})
}

// The contact list carries each conversation's unread count and last
// message, kept as messages are stored (incoming and outgoing), and filters
// by assignee, unread and active transfer; refusals name the parameter.
func TestInboxListFiltersAndPreviews(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	ann := f.contactFromIncoming(t, "15550007001", "Ann", "first")
	f.Incoming(platformsim.Incoming{From: "15550007001", ProfileName: "Ann", Type: "text", Text: "second, a longer line of text"})
	f.waitMessages(t, "15550007001", 2)
	bob := f.contactFromIncoming(t, "15550007002", "Bob", "hello")
	f.Incoming(platformsim.Incoming{From: "15550007002", ProfileName: "Bob", Type: "image", Caption: "the receipt", MimeType: "image/jpeg"})
	f.waitMessages(t, "15550007002", 2)
	cy := f.contactFromIncoming(t, "15550007003", "Cy", "hi")

	all := f.inbox(t, a, "")
	if names(all) != "Cy,Bob,Ann" {
		t.Fatalf("order %s", names(all))
	}
	byName := map[string]inboxRow{}
	for _, r := range all.Items {
		byName[r.ProfileName] = r
	}
	if r := byName["Ann"]; r.UnreadCount != 2 || r.LastMessagePreview != "second, a longer line of text" || r.LastMessageDirection != "incoming" {
		t.Fatalf("Ann %+v", r)
	}
	if r := byName["Bob"]; r.UnreadCount != 2 || r.LastMessagePreview != "[image] the receipt" {
		t.Fatalf("Bob %+v", r)
	}

	// A reply becomes the preview, outgoing, and moves Ann to the top; it
	// leaves the unread count alone (reading does that).
	f.Do("POST", "/api/contacts/"+ann+"/messages", map[string]any{"type": "text", "text": "On it"}, a).Expect(t, 201)
	all = f.inbox(t, a, "")
	if names(all) != "Ann,Cy,Bob" || all.Items[0].LastMessagePreview != "On it" || all.Items[0].LastMessageDirection != "outgoing" ||
		all.Items[0].UnreadCount != 2 {
		t.Fatalf("after the reply %s %+v", names(all), all.Items[0])
	}

	agent := f.CreateUser(a, "agent-inbox@x.com", "Agent")
	f.Do("PUT", "/api/contacts/"+bob+"/assign", map[string]any{"user_id": agent.User.ID}, a).Expect(t, 200)
	f.Do("PUT", "/api/contacts/"+cy+"/assign", map[string]any{"user_id": f.admin.User.ID}, a).Expect(t, 200)
	if got := names(f.inbox(t, agent.Auth(), "assigned=me")); got != "Bob" {
		t.Fatalf("assigned=me %s", got)
	}
	if got := names(f.inbox(t, a, "assigned="+agent.User.ID)); got != "Bob" {
		t.Fatalf("assigned=<agent> %s", got)
	}
	if got := names(f.inbox(t, a, "assigned=none")); got != "Ann" {
		t.Fatalf("assigned=none %s", got)
	}
	f.Do("PUT", "/api/contacts/"+cy+"/read", nil, a).Expect(t, 200)
	if got := names(f.inbox(t, a, "unread=true")); got != "Ann,Bob" {
		t.Fatalf("unread=true %s", got)
	}
	if got := f.inbox(t, a, "unread=true&assigned=me"); len(got.Items) != 0 || got.Total != 0 {
		t.Fatalf("unread mine %+v", got)
	}
	var tr struct{ ID string }
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": cy}, a).Expect(t, 201).Into(t, &tr)
	if got := f.inbox(t, a, "has_transfer=true"); names(got) != "Cy" || got.Total != 1 {
		t.Fatalf("has_transfer %+v", got)
	}
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, a).Expect(t, 200)
	if got := names(f.inbox(t, a, "has_transfer=true")); got != "" {
		t.Fatalf("has_transfer after resume %s", got)
	}

	for q, msg := range map[string]string{
		"assigned=someone": "assigned must be me, none or a user's id",
		"unread=yes":       "unread must be true or false",
		"has_transfer=1":   "has_transfer must be true or false",
	} {
		wantError(t, f.Do("GET", "/api/contacts?"+q, nil, a), 400, msg)
	}
}

// Marking a conversation read sends the provider's read receipt for its
// last incoming message once, resets its unread count, and tells the
// stream; a second call sends nothing.
func TestMarkConversationReadSendsOneReceipt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	s := f.OpenStream(f.Server.URL, "/api/events", a, nil)
	if s.Status != 200 {
		t.Fatalf("stream: %d %s", s.Status, s.Body)
	}
	id := f.contactFromIncoming(t, "15550007101", "Dee", "one")
	f.Incoming(platformsim.Incoming{From: "15550007101", Type: "text", Text: "two"})
	f.waitMessages(t, "15550007101", 2)
	var last models.Message
	f.DB.Where("contact_id = ?", id).Order("created_at DESC").Take(&last)

	receipts := func() []platformsim.Request {
		var out []platformsim.Request
		for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) {
			if strings.Contains(string(r.Body), `"status":"read"`) {
				out = append(out, r)
			}
		}
		return out
	}
	var r struct {
		ContactID     string  `json:"contact_id"`
		UnreadCount   int     `json:"unread_count"`
		ReceiptSent   bool    `json:"receipt_sent"`
		ReadMessageID *string `json:"read_message_id"`
	}
	// The provider failing: a 502, and nothing marked read, so that the
	// next call sends the receipt.
	if err := f.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/messages", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	wantError(t, f.Do("PUT", "/api/contacts/"+id+"/read", nil, a), 502, "the provider failed")
	if st := f.message(t, last.ID.String()).Status; st == models.StatusRead {
		t.Fatal("the message is read though the receipt failed")
	}
	if p := f.inbox(t, a, "unread=true"); len(p.Items) != 1 || p.Items[0].UnreadCount != 2 {
		t.Fatalf("after the failed receipt %+v", p)
	}
	failed := len(receipts())
	f.Do("PUT", "/api/contacts/"+id+"/read", nil, a).Expect(t, 200).Into(t, &r)
	if !r.ReceiptSent || r.UnreadCount != 0 || r.ReadMessageID == nil || *r.ReadMessageID != last.ID.String() {
		t.Fatalf("first read %+v (last incoming %s)", r, last.ID)
	}
	if got := receipts(); len(got) != failed+1 || !strings.Contains(string(got[len(got)-1].Body), *last.PlatformMessageID) {
		t.Fatalf("receipts %+v", got)
	}
	if f.message(t, last.ID.String()).Status != models.StatusRead {
		t.Fatal("the last incoming message is not read")
	}
	ev := awaitEvent(t, s, "contact.read", func(e streamEvent) bool { return e.Type == "contact.read" })
	if ev.Contact == nil || ev.Contact.ID != id {
		t.Fatalf("contact.read %+v", ev)
	}

	// Again: nothing more reaches the provider.
	f.Do("PUT", "/api/contacts/"+id+"/read", nil, a).Expect(t, 200).Into(t, &r)
	if r.ReceiptSent || r.UnreadCount != 0 {
		t.Fatalf("second read %+v", r)
	}
	if got := receipts(); len(got) != failed+1 {
		t.Fatalf("%d receipts after the second call", len(got)-failed)
	}
	// The message route, on the same message, sends nothing either.
	f.Do("PUT", "/api/messages/"+last.ID.String()+"/read", nil, a).Expect(t, 200)
	if got := receipts(); len(got) != failed+1 {
		t.Fatalf("%d receipts after the message route", len(got)-failed)
	}

	// A new message counts again; a contact without messages reads fine.
	f.Incoming(platformsim.Incoming{From: "15550007101", Type: "text", Text: "three"})
	f.waitMessages(t, "15550007101", 3)
	if p := f.inbox(t, a, "unread=true"); len(p.Items) != 1 || p.Items[0].UnreadCount != 1 {
		t.Fatalf("after a new message %+v", p)
	}
	// Read from several tabs at once: one receipt.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Do("PUT", "/api/contacts/"+id+"/read", nil, a).Expect(t, 200)
		}()
	}
	wg.Wait()
	if got := receipts(); len(got) != failed+2 {
		t.Fatalf("%d receipts after four concurrent reads of one new message", len(got)-failed-1)
	}
	if p := f.inbox(t, a, "unread=true"); len(p.Items) != 0 {
		t.Fatalf("unread after the concurrent reads %+v", p)
	}
	// The account of the last message disconnected (its messages keep no
	// account): no receipt can go, and the conversation is read all the same.
	f.Incoming(platformsim.Incoming{From: "15550007101", Type: "text", Text: "four"})
	f.waitMessages(t, "15550007101", 4)
	f.DB.Exec(`UPDATE messages SET account_id = NULL WHERE contact_id = ?`, id)
	f.Do("PUT", "/api/contacts/"+id+"/read", nil, a).Expect(t, 200).Into(t, &r)
	if r.ReceiptSent || r.UnreadCount != 0 || r.ReadMessageID == nil {
		t.Fatalf("read without an account %+v", r)
	}
	var quiet struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550007199"}, a).Expect(t, 201).Into(t, &quiet)
	f.Do("PUT", "/api/contacts/"+quiet.ID+"/read", nil, a).Expect(t, 200).Into(t, &r)
	if r.ReceiptSent || r.ReadMessageID != nil {
		t.Fatalf("a contact without messages %+v", r)
	}
	wantError(t, f.Do("PUT", "/api/contacts/"+uuid.NewString()+"/read", nil, a), 404, "contact not found")
}

// Without contacts:read, a user sees only the contacts assigned to them and
// those whose active transfer they hold: in the list, and each other
// contact, its messages, media, sends and reads are a 404 as if it did not
// exist. A user with contacts:read sees them all.
func TestInboxShowsOnlyMyContactsWithoutContactsRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	f.Do("POST", "/api/roles", map[string]any{"name": "Desk", "permissions": []string{"messages:read", "messages:create",
		"transfers:read", "transfers:write"}}, a).Expect(t, 201)
	desk := f.CreateUser(a, "desk-inbox@x.com", "Desk")
	d := desk.Auth()
	held := f.contactFromIncoming(t, "15550007201", "Held", "hello")
	other := f.contactFromIncoming(t, "15550007202", "Other", "hello")
	mine := f.contactFromIncoming(t, "15550007203", "Mine", "hello")
	f.Incoming(platformsim.Incoming{From: "15550007202", Type: "image", MimeType: "image/jpeg"})
	f.waitMessages(t, "15550007202", 2)
	var tr struct{ ID string }
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": held}, a).Expect(t, 201).Into(t, &tr)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/assign", map[string]any{"agent_id": desk.User.ID}, a).Expect(t, 200)
	f.Do("PUT", "/api/contacts/"+mine+"/assign", map[string]any{"user_id": desk.User.ID}, a).Expect(t, 200)

	if p := f.inbox(t, d, ""); names(p) != "Mine,Held" || p.Total != 2 {
		t.Fatalf("desk's list %s (total %d)", names(p), p.Total)
	}
	if p := f.inbox(t, d, "search=Other"); len(p.Items) != 0 {
		t.Fatalf("desk finds %s", names(p))
	}
	if p := f.inbox(t, f.CreateUser(a, "agent-all@x.com", "Agent").Auth(), ""); p.Total != 3 {
		t.Fatalf("an agent with contacts:read sees %s", names(p))
	}
	for _, id := range []string{held, mine} {
		f.Do("GET", "/api/contacts/"+id, nil, d).Expect(t, 200)
		f.Do("GET", "/api/contacts/"+id+"/messages", nil, d).Expect(t, 200)
	}
	f.Do("POST", "/api/contacts/"+mine+"/messages", map[string]any{"type": "text", "text": "yours"}, d).Expect(t, 201)
	f.Do("PUT", "/api/contacts/"+held+"/read", nil, d).Expect(t, 200)

	var img models.Message
	f.DB.Where("contact_id = ? AND type = 'image'", other).Take(&img)
	apptest.Eventually(t, 10*time.Second, "the image stored", func() bool {
		return f.message(t, img.ID.String()).MediaStatus != nil && *f.message(t, img.ID.String()).MediaStatus == models.MediaStored
	})
	f.Do("GET", "/api/messages/"+img.ID.String()+"/media", nil, a).Expect(t, 200)
	wantError(t, f.Do("GET", "/api/contacts/"+other, nil, d), 404, "contact not found")
	wantError(t, f.Do("GET", "/api/contacts/"+other+"/messages", nil, d), 404, "contact not found")
	wantError(t, f.Do("POST", "/api/contacts/"+other+"/messages", map[string]any{"type": "text", "text": "x"}, d), 404, "contact not found")
	wantError(t, f.Do("PUT", "/api/contacts/"+other+"/read", nil, d), 404, "contact not found")
	wantError(t, f.Do("GET", "/api/messages/"+img.ID.String()+"/media", nil, d), 404, "message not found")
	wantError(t, f.Do("PUT", "/api/messages/"+img.ID.String()+"/read", nil, d), 404, "message not found")
	if n := len(f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})); n != 2 { // the reply and held's receipt
		t.Fatalf("%d requests reached the provider", n)
	}

	// Once the transfer goes back to the bot, the held contact is no
	// longer the desk's.
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, a).Expect(t, 200)
	if p := f.inbox(t, d, ""); names(p) != "Mine" {
		t.Fatalf("after the resume %s", names(p))
	}
	wantError(t, f.Do("GET", "/api/contacts/"+held+"/messages", nil, d), 404, "contact not found")
}

// wantError checks an error envelope's status and message.
func wantError(t *testing.T, r *apptest.Resp, status int, msg string) {
	t.Helper()
	if r.Status != status || r.Outcome != "error" || !strings.Contains(r.Message, msg) {
		t.Errorf("answer %d %s, want %d error containing %q", r.Status, r.Body, status, msg)
	}
}
