package app

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/wharfapp"
	"wharf/internal/wharfbulk"
	"wharf/internal/wharfnotify"
)

// notifySender sends the notifications' templates as Outgoing Platform
// Messages (wharfapp), so that they go through the core's send path and
// show in the framework like any other message. The notification ledger
// moves a send to "sending" before it calls this, so a retry never sends
// twice; a button URL parameter and an attachment are not sent yet
// (wharfapp's SendTemplate has no header or button parameters).
type notifySender struct{ wharf *wharfapp.Service }

func (n notifySender) SendTemplate(ctx context.Context, orgID uuid.UUID, m wharfnotify.TemplateSend) (string, error) {
	return n.wharf.SendTemplate(ctx, orgID, wharfapp.SendTemplate{Account: m.Account, To: m.To, Template: m.Template,
		Parameters: m.Parameters, ReferenceDoctype: m.ReferenceDoctype, ReferenceName: m.ReferenceName})
}

// builtInDocTypes creates the integration's DocTypes in an organization on
// first use of any of them (docframe.Options.BuiltIn): wharfapp's own, the
// notifications' and the bulk messages'. Each package's EnsureDocTypes is
// idempotent and safe under concurrent first use.
func builtInDocTypes(w *wharfapp.Service, n *wharfnotify.Service, b *wharfbulk.Service) func(context.Context, uuid.UUID, string) (bool, error) {
	return func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error) {
		switch doctype {
		case wharfnotify.NotificationDoctype, wharfnotify.FieldDoctype:
			// The notifications link to the integration's DocTypes.
			if err := w.Ensure(ctx, orgID); err != nil {
				return true, err
			}
			return true, n.EnsureDocTypes(ctx, orgID)
		case wharfbulk.BulkMessage, wharfbulk.BulkRecipient, wharfbulk.RecipientList:
			if err := w.Ensure(ctx, orgID); err != nil {
				return true, err
			}
			return true, b.EnsureDocTypes(ctx, orgID)
		}
		return w.BuiltIn(ctx, orgID, doctype)
	}
}
