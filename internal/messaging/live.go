package messaging

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/live"
	"wharf/models"
)

// LiveMessage is the data of a message.created event: enough to render the
// message in a conversation (the contact, with its number, is the event's
// contact, masked by the stream).
type LiveMessage struct {
	MessageID  uuid.UUID            `json:"message_id"`
	ContactID  uuid.UUID            `json:"contact_id"`
	Direction  string               `json:"direction" enum:"incoming,outgoing"`
	Type       string               `json:"type"`
	Status     models.MessageStatus `json:"status"`
	Content    map[string]any       `json:"content"`
	OccurredAt time.Time            `json:"occurred_at"`
}

// LiveStatus is the data of a message.status event.
type LiveStatus struct {
	MessageID uuid.UUID            `json:"message_id"`
	ContactID uuid.UUID            `json:"contact_id"`
	Status    models.MessageStatus `json:"status"`
}

// LiveRead is the data of a contact.read event: the conversation was
// marked read, and this many incoming messages are still unread.
type LiveRead struct {
	ContactID   uuid.UUID `json:"contact_id"`
	UnreadCount int       `json:"unread_count"`
}

// messageAudience: who may read a contact's messages (GET
// /api/contacts/{id}/messages needs messages:read), narrowed, for a user
// without contacts:read, to the contact's assignee and the agent holding
// its transfer.
func messageAudience(assignedTo *uuid.UUID, holder uuid.UUID) live.Audience {
	a := live.Audience{AnyPerm: []string{"messages:read"}, ContactScoped: true}
	if assignedTo != nil {
		a.Owners = append(a.Owners, *assignedTo)
	}
	if holder != uuid.Nil && (assignedTo == nil || *assignedTo != holder) {
		a.Owners = append(a.Owners, holder)
	}
	return a
}

// holders reads, in db, who holds the contacts' transfers (a failure is
// logged: the events then reach only the assignees and the readers of
// every contact).
func (s *Service) holdersOf(ctx context.Context, db *gorm.DB, orgID uuid.UUID, contactIDs ...uuid.UUID) map[uuid.UUID]uuid.UUID {
	if s.holders == nil {
		return nil
	}
	h, err := s.holders.Holders(ctx, db, orgID, contactIDs)
	if err != nil {
		s.log.Warn("cannot read who holds the contacts' transfers for their live events", "error", err)
	}
	return h
}

func liveContact(c *models.Contact) live.Contact {
	name := c.Name
	if name == "" {
		name = c.ProfileName
	}
	return live.Contact{ID: c.ID, PhoneNumber: c.PhoneNumber, Name: name, AssignedTo: c.AssignedTo}
}

// messageEvent is the message.created event of m, to publish once m is
// committed; holder is the agent holding the contact's transfer (uuid.Nil:
// none).
func messageEvent(m *models.Message, c *models.Contact, holder uuid.UUID) live.Event {
	return live.New(live.MessageCreated, LiveMessage{MessageID: m.ID, ContactID: c.ID, Direction: m.Direction, Type: m.Type,
		Status: m.Status, Content: m.Content.V, OccurredAt: m.OccurredAt.UTC()}, messageAudience(c.AssignedTo, holder)).WithContact(liveContact(c))
}

// statusChanges reads, inside tx and in one statement, the messages a
// status batch changed (changed) or gave their provider id (reconciled,
// a send whose answer was lost): it answers the message.status events of
// the changed ones, and the ids of those that a framework document
// projects (models.Message.Projected), whose change the projector must
// see. reconciled is empty but for lost answers.
func (s *Service) statusChanges(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, changed, reconciled []uuid.UUID) ([]live.Event, []uuid.UUID, error) {
	ids := changed
	if len(reconciled) > 0 {
		ids = append(slices.Clone(changed), reconciled...)
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	var rows []struct {
		ID          uuid.UUID
		Status      models.MessageStatus
		Projected   bool
		ContactID   uuid.UUID
		PhoneNumber string
		Name        string
		ProfileName string
		AssignedTo  *uuid.UUID
	}
	err := tx.WithContext(ctx).Raw(`SELECT m.id, m.status, m.projected, m.contact_id, c.phone_number, c.name, c.profile_name, c.assigned_to
		FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE m.organization_id = ? AND m.id IN ?`, orgID, ids).Scan(&rows).Error
	if err != nil {
		return nil, nil, err
	}
	var projected []uuid.UUID
	contacts := make([]uuid.UUID, 0, len(rows))
	for _, r := range rows {
		if r.Projected {
			projected = append(projected, r.ID)
		}
		contacts = append(contacts, r.ContactID)
	}
	isChange := func(id uuid.UUID) bool { return len(reconciled) == 0 || slices.Contains(changed, id) }
	holders := s.holdersOf(ctx, tx, orgID, contacts...)
	out := make([]live.Event, 0, len(rows))
	for _, r := range rows {
		if !isChange(r.ID) {
			continue // a provider id alone is no status change
		}
		c := models.Contact{ID: r.ContactID, PhoneNumber: r.PhoneNumber, Name: r.Name, ProfileName: r.ProfileName, AssignedTo: r.AssignedTo}
		out = append(out, live.New(live.MessageStatus, LiveStatus{MessageID: r.ID, ContactID: r.ContactID, Status: r.Status},
			messageAudience(c.AssignedTo, holders[r.ContactID])).WithContact(liveContact(&c)))
	}
	return out, projected, nil
}
