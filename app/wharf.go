package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"wharf/internal/integration/bulk"
	"wharf/internal/integration/messages"
	"wharf/internal/integration/notify"
)

// notifySender sends the notifications' templates as Outgoing Platform
// Messages (messages), so that they go through the core's send path and
// show in the framework like any other message: the body parameters, the
// attachment as the header media and the URL button's parameter. The
// notification ledger moves a send to "sending" before it calls this, so a
// retry never sends twice.
type notifySender struct{ wharf *messages.Service }

func (n notifySender) SendTemplate(ctx context.Context, orgID uuid.UUID, m notify.TemplateSend) (string, error) {
	in := messages.SendTemplate{Account: m.Account, To: m.To, Template: m.Template, Parameters: m.Parameters,
		ReferenceDoctype: m.ReferenceDoctype, ReferenceName: m.ReferenceName, ButtonURLParam: m.ButtonURLParam}
	if m.Attachment != nil {
		in.HeaderMediaURL, in.HeaderFilename = m.Attachment.URL, m.Attachment.Filename
	}
	return n.wharf.SendTemplate(ctx, orgID, in)
}

// bulkResolver maps a bulk message's Links to core rows: a Platform
// Account is the core account of its name (messages's mirror; "" keeps the
// core's default sender), a Platform Template the core template its
// template_name names on that account.
type bulkResolver struct {
	wharf *messages.Service
	core  bulk.CoreResolver
}

func (r bulkResolver) AccountFor(ctx context.Context, orgID uuid.UUID, name string) (uuid.UUID, error) {
	if name == "" {
		return r.core.AccountFor(ctx, orgID, "")
	}
	return r.wharf.AccountFor(ctx, orgID, name)
}

func (r bulkResolver) TemplateFor(ctx context.Context, orgID, accountID uuid.UUID, name string) (uuid.UUID, error) {
	return r.wharf.TemplateOn(ctx, orgID, accountID, name)
}

// builtInDocTypeNames are the integration's DocTypes whose documents are
// addressed directly (not child tables): the console's documents page lists
// them from an organization's first visit (docframe.Options.BuiltInNames).
var builtInDocTypeNames = []string{messages.DoctypeAccount, messages.DoctypeMessage, messages.DoctypeTemplate, messages.DoctypeFlow,
	notify.NotificationDoctype, bulk.BulkMessage, bulk.RecipientList}

// builtInDocTypes creates the integration's DocTypes in an organization on
// first use of any of them (docframe.Options.BuiltIn): messages's own, the
// notifications' and the bulk messages'. Each package's EnsureDocTypes is
// idempotent and safe under concurrent first use.
func builtInDocTypes(w *messages.Service, n *notify.Service, b *bulk.Service) func(context.Context, uuid.UUID, string) (bool, error) {
	return func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error) {
		switch doctype {
		case notify.NotificationDoctype, notify.FieldDoctype:
			// The notifications link to the integration's DocTypes.
			if err := w.Ensure(ctx, orgID); err != nil {
				return true, err
			}
			return true, n.EnsureDocTypes(ctx, orgID)
		case bulk.BulkMessage, bulk.BulkRecipient, bulk.RecipientList:
			if err := w.Ensure(ctx, orgID); err != nil {
				return true, err
			}
			return true, b.EnsureDocTypes(ctx, orgID)
		}
		return w.BuiltIn(ctx, orgID, doctype)
	}
}

// UpgradeWharfDocTypes brings the integration's stored DocType definitions
// up to date in every organization that has them, as Frappe's migrate syncs
// standard DocTypes: BuiltIn only creates a missing DocType, so a definition
// stored by an older version (template and platform_account as Data fields
// on notifications and bulk messages, now Links) is upgraded here. It is
// idempotent and safe to run in several processes at once (EnsureDocType
// writes nothing when a definition is current, and locks the row it
// changes); the api runs it in the background at start. It answers how many
// organizations it looked at, and every organization's failure.
func (d *domains) UpgradeWharfDocTypes(ctx context.Context) (int, error) {
	orgs, err := d.Frame.OrganizationsWith(ctx, []string{notify.NotificationDoctype, bulk.BulkMessage})
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, org := range orgs {
		// The integration base first: the Links name its DocTypes. One
		// organization's failure does not keep the others back.
		err := d.Wharf.Ensure(ctx, org)
		if err == nil {
			err = d.Notify.EnsureDocTypes(ctx, org)
		}
		if err == nil {
			err = d.Bulk.EnsureDocTypes(ctx, org)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("organization %s: %w", org, err))
		}
	}
	return len(orgs), errors.Join(errs...)
}
