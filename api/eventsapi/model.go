package eventsapi

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
)

// contactResp is the contact an event is about, masked as the contact list
// masks it.
type contactResp struct {
	ID          uuid.UUID  `json:"id"`
	PhoneNumber string     `json:"phone_number" description:"masked when the organization masks phone numbers"`
	Name        string     `json:"name"`
	AssignedTo  *uuid.UUID `json:"assigned_to,omitempty" description:"the contact's assignee; absent when the event does not say (calls) or nobody is assigned"`
}

// eventResp is the data of every event of the stream; the SSE event name
// is its type and the SSE id its id.
type eventResp struct {
	ID      string          `json:"id" description:"the stream position: send it back as Last-Event-ID to resume after it"`
	Type    string          `json:"type" enum:"message.created,message.status,contact.assigned,transfer.created,transfer.assigned,transfer.resumed,call.ringing,call.answered,call.ended,campaign.progress,import.progress,reset,end"`
	At      time.Time       `json:"at"`
	Contact *contactResp    `json:"contact,omitempty" description:"the contact the event is about (messages, assignments, transfers, calls)"`
	Data    json.RawMessage `json:"data" description:"the type's fields (docs/API.md, Live events)"`
}

func toEventResp(e *live.Event, m orgsettings.Masker) eventResp {
	r := eventResp{ID: e.ID, Type: e.Type, At: web.UTC(e.At), Data: e.Data}
	if c := e.Contact; c != nil {
		r.Contact = &contactResp{ID: c.ID, PhoneNumber: m.Phone(c.PhoneNumber), Name: m.Name(c.Name), AssignedTo: c.AssignedTo}
	}
	if len(r.Data) == 0 {
		r.Data = json.RawMessage("{}")
	}
	return r
}
