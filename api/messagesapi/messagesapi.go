// Package messagesapi is the HTTP surface of messaging: a contact's
// conversation, free-form, media and template sends, and read receipts.
package messagesapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/contacts"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Visibility tells whether a user may see a contact (contacts.Service):
// without contacts:read, only their own (docs/API.md, Inbox).
type Visibility interface {
	CheckVisible(ctx context.Context, orgID uuid.UUID, v contacts.Viewer, id uuid.UUID) error
}

// Handlers serves the messages routes.
type Handlers struct {
	messaging *messaging.Service
	maskers   Maskers
	visible   Visibility
}

// New builds the messages handlers.
func New(msg *messaging.Service, maskers Maskers, visible Visibility) *Handlers {
	return &Handlers{messaging: msg, maskers: maskers, visible: visible}
}

// visibleContact answers whether the caller may see the contact, answering
// 404 itself when not.
func (h *Handlers) visibleContact(c *gin.Context, id uuid.UUID) bool {
	p := web.Principal(c)
	if err := h.visible.CheckVisible(c.Request.Context(), p.OrgID, contacts.ViewerOf(p.UserID, p.Can), id); err != nil {
		web.Fail(c, err)
		return false
	}
	return true
}

// visibleMessage answers whether the caller may see the message's contact,
// answering 404 message not found itself when not (a message of another's
// contact is as unknown as one of another organization).
func (h *Handlers) visibleMessage(c *gin.Context, id uuid.UUID) bool {
	p := web.Principal(c)
	if p.Can("contacts:read") {
		return true
	}
	m, err := h.messaging.Get(c.Request.Context(), p.OrgID, id)
	if err == nil {
		err = h.visible.CheckVisible(c.Request.Context(), p.OrgID, contacts.ViewerOf(p.UserID, p.Can), m.ContactID)
	}
	if err != nil {
		web.Fail(c, messageNotFound(err))
		return false
	}
	return true
}
