package customactions

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Caller is the user who runs an action, as their session shows them in
// the organization ({{user.*}}).
type Caller struct {
	UserID uuid.UUID
	Name   string
	Email  string
	Role   string // their role's name in this organization
}

// Toast is what the user interface shows after a run.
type Toast struct {
	Message string
	Type    string // success or error
}

// Result is the outcome of a run. A webhook the target refused, that could
// not be reached or that answered an error is a result with Success false,
// not an error: the run happened, and its outcome is the target's.
type Result struct {
	Success     bool
	Message     string
	Data        any
	Toast       *Toast
	RedirectURL string
}

// Context is what a javascript action's code is given.
type Context struct {
	Contact      ContactContext
	User         UserContext
	Organization OrganizationContext
}

// ContactContext, UserContext and OrganizationContext are the variables
// of a run, by subject.
type (
	ContactContext      struct{ ID, PhoneNumber, Name, ProfileName string }
	UserContext         struct{ ID, Name, Email, Role string }
	OrganizationContext struct{ ID, Name string }
)

// ScriptData is a javascript action's answer: its code and context.
type ScriptData struct {
	Code    string
	Context Context
}

// Execute runs an active action of the organization for a contact of the
// organization (404 for either outside it).
//
// Masking: a webhook's target is the organization's own system, configured
// by someone allowed to create actions, and is given the real phone number
// (a ticket or CRM record needs it). A URL action's address and a
// javascript action's context end up in the user's browser, so when the
// organization masks phone numbers they carry the masked number (and
// masked phone-like names), as every other answer to that user does.
func (s *Service) Execute(ctx context.Context, orgID, id uuid.UUID, contactID uuid.UUID, caller Caller) (*Result, error) {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if !a.IsActive {
		return nil, apperr.Invalidf("this custom action is inactive")
	}
	contact, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	orgName, _, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	c := Context{
		Contact: ContactContext{ID: contact.ID.String(), PhoneNumber: contact.PhoneNumber, Name: contact.Name,
			ProfileName: contact.ProfileName},
		User:         UserContext{ID: caller.UserID.String(), Name: caller.Name, Email: caller.Email, Role: caller.Role},
		Organization: OrganizationContext{ID: orgID.String(), Name: orgName},
	}
	if a.ActionType != models.ActionWebhook {
		m, err := s.settings.Masker(ctx, orgID)
		if err != nil {
			return nil, err
		}
		c.Contact.PhoneNumber = m.Phone(c.Contact.PhoneNumber)
		c.Contact.Name = m.Name(c.Contact.Name)
		c.Contact.ProfileName = m.Name(c.Contact.ProfileName)
	}
	switch a.ActionType {
	case models.ActionWebhook:
		return s.callWebhook(ctx, a, c.values()), nil
	case models.ActionURL:
		return s.redirect(ctx, a, c.values())
	case models.ActionJavaScript:
		code, _ := a.Config.V["code"].(string)
		return &Result{Success: true, Message: "Action ready", Data: ScriptData{Code: code, Context: c},
			Toast: &Toast{Message: a.Name + ": ready", Type: "success"}}, nil
	}
	return nil, apperr.Invalidf("action_type %q cannot be run", a.ActionType)
}

// values are the context as template variables.
func (c Context) values() Values {
	return Values{
		"contact.id": c.Contact.ID, "contact.phone_number": c.Contact.PhoneNumber,
		"contact.name": c.Contact.Name, "contact.profile_name": c.Contact.ProfileName,
		"user.id": c.User.ID, "user.name": c.User.Name, "user.email": c.User.Email, "user.role": c.User.Role,
		"organization.id": c.Organization.ID, "organization.name": c.Organization.Name,
	}
}
