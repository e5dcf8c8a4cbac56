package contacts

import (
	"github.com/google/uuid"

	"wharf/internal/infra/live"
	"wharf/models"
)

// LiveAssignment is the data of a contact.assigned event.
type LiveAssignment struct {
	ContactID  uuid.UUID  `json:"contact_id"`
	AssignedTo *uuid.UUID `json:"assigned_to"`
	Previous   *uuid.UUID `json:"previous"`
}

// assignedEvent announces c's new assignee to the readers of every contact
// and to both the previous and the new assignee (the one loses it from
// their inbox, the other gains it).
func assignedEvent(c *models.Contact, before *uuid.UUID) live.Event {
	aud := live.Audience{ContactScoped: true}
	for _, u := range []*uuid.UUID{before, c.AssignedTo} {
		if u != nil {
			aud.Owners = append(aud.Owners, *u)
		}
	}
	name := c.Name
	if name == "" {
		name = c.ProfileName
	}
	return live.New(live.ContactAssigned, LiveAssignment{ContactID: c.ID, AssignedTo: c.AssignedTo, Previous: before}, aud).
		WithContact(live.Contact{ID: c.ID, PhoneNumber: c.PhoneNumber, Name: name, AssignedTo: c.AssignedTo})
}
