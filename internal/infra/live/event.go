// Package live carries the per-user event stream's events (GET /api/events)
// from the domains where a change happens, in the api or the worker, to
// every api replica that serves a user of the organization.
//
// A domain publishes an Event through the Publisher it was given at
// construction, after its change committed. The Redis Bus appends it to the
// organization's short replay stream and announces it on the organization's
// pub/sub channel in one script; each api process holds one subscription per
// organization it serves streams for, and hands each event to that
// organization's streams, which check its Audience against their viewer and
// mask its contact before writing it (docs/API.md, Live events).
package live

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
)

// The event types of the stream.
const (
	MessageCreated   = "message.created"   // a message stored, received or sent
	MessageStatus    = "message.status"    // a message's delivery status moved on
	ContactAssigned  = "contact.assigned"  // a contact's assignee changed
	ContactRead      = "contact.read"      // a conversation was marked read (its unread count changed)
	TransferCreated  = "transfer.created"  // a chat transfer to agents was requested
	TransferAssigned = "transfer.assigned" // picked up by, or assigned to, an agent
	TransferResumed  = "transfer.resumed"  // the chatbot took the conversation back
	CallRinging      = "call.ringing"      // a call waits for an agent
	CallAnswered     = "call.answered"     // an agent (or the contact) answered
	CallEnded        = "call.ended"        // the call is over
	CampaignProgress = "campaign.progress" // a campaign's counters or status changed
	ImportProgress   = "import.progress"   // an import job moved on
	// Reset is not published: a stream sends it when the client's
	// Last-Event-ID is older than the replay window.
	Reset = "reset"
	// End is the last event of a stream the server ends (data.reason:
	// token_expired, unauthorized, fell_behind); the client reconnects.
	End = "end"
)

// Types lists the published types (the OpenAPI enum).
var Types = []string{MessageCreated, MessageStatus, ContactAssigned, ContactRead, TransferCreated, TransferAssigned, TransferResumed,
	CallRinging, CallAnswered, CallEnded, CampaignProgress, ImportProgress, Reset, End}

// Contact is the contact an event is about. Phone numbers and contact names
// travel only here, so that a stream masks them in one place as the list
// answers do.
type Contact struct {
	ID          uuid.UUID  `json:"id"`
	PhoneNumber string     `json:"phone_number"`
	Name        string     `json:"name"`
	AssignedTo  *uuid.UUID `json:"assigned_to"`
}

// Audience is who may receive an event: the rules of the list endpoint
// that shows the same rows.
type Audience struct {
	// AnyPerm: the viewer needs one of these permissions (none: any user).
	AnyPerm []string `json:"p,omitempty"`
	// Contact-scoped events (messages, assignments): a viewer without
	// contacts:read sees only those of contacts assigned to them or whose
	// transfer they hold, the Owners.
	ContactScoped bool        `json:"c,omitempty"`
	Owners        []uuid.UUID `json:"o,omitempty"`
	// Team-scoped events (transfers): a viewer without transfers:assign
	// sees the general queue's (no team), their teams', and those assigned
	// to them (Agent), as GET /api/chatbot/transfers lists them.
	TeamScoped bool       `json:"t,omitempty"`
	Team       *uuid.UUID `json:"tm,omitempty"`
	Agent      *uuid.UUID `json:"a,omitempty"`
	// User, when set, is the only user who receives the event (an
	// import's progress goes to whoever started it).
	User *uuid.UUID `json:"u,omitempty"`
}

// Event is one change. ID is the stream position the Bus gave it
// ("<ms>-<seq>", a Redis stream id), also the SSE id.
type Event struct {
	ID       string          `json:"-"`
	Type     string          `json:"type"`
	At       time.Time       `json:"at"`
	Contact  *Contact        `json:"contact,omitempty"`
	Data     json.RawMessage `json:"data"`
	Audience Audience        `json:"aud"`
}

// New builds an event of type typ whose data is the JSON of data.
func New(typ string, data any, aud Audience) Event {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("null")
	}
	return Event{Type: typ, At: time.Now().UTC(), Data: b, Audience: aud}
}

// WithContact returns e about contact c.
func (e Event) WithContact(c Contact) Event {
	e.Contact = &c
	return e
}

// Publisher is what a domain is given to publish its events. Publish is
// called after the change committed; it never fails the change: a lost
// event is a stream that shows the change at the client's next reload.
type Publisher interface {
	Publish(ctx context.Context, orgID uuid.UUID, events ...Event)
}

// Discard publishes nothing: processes and tests without streams.
type Discard struct{}

// Publish drops the events.
func (Discard) Publish(context.Context, uuid.UUID, ...Event) {}

// Or returns p, or Discard when p is nil (a Deps field left out).
func Or(p Publisher) Publisher {
	if p == nil {
		return Discard{}
	}
	return p
}

// Viewer is a stream's user as the audience rules see them.
type Viewer struct {
	UserID uuid.UUID
	Can    func(perm string) bool
	Teams  []uuid.UUID
}

// Sees reports whether v may receive e.
func (v Viewer) Sees(e *Event) bool {
	a := &e.Audience
	if a.User != nil && *a.User != v.UserID {
		return false
	}
	if len(a.AnyPerm) > 0 && !slices.ContainsFunc(a.AnyPerm, v.Can) {
		return false
	}
	if a.ContactScoped && !v.Can("contacts:read") && !slices.Contains(a.Owners, v.UserID) {
		return false
	}
	if a.TeamScoped && !v.Can("transfers:assign") {
		mine := a.Agent != nil && *a.Agent == v.UserID
		if a.Team != nil && !mine && !slices.Contains(v.Teams, *a.Team) {
			return false
		}
	}
	return true
}
