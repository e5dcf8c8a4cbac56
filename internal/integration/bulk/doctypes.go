package bulk

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
)

// Bulk message statuses: Draft until submitted, Queued until the first
// recipient is settled (or while scheduled), In Progress while sending,
// then Completed, or Partially Failed when a recipient failed or its
// outcome is unknown. Paused follows a campaign the pipeline paused (an
// account or template problem); Cancelled a cancelled document.
const (
	StatusDraft           = "Draft"
	StatusQueued          = "Queued"
	StatusInProgress      = "In Progress"
	StatusCompleted       = "Completed"
	StatusPartiallyFailed = "Partially Failed"
	StatusPaused          = "Paused"
	StatusCancelled       = "Cancelled"
)

func flag(on bool) docframe.Flag {
	if on {
		return 1
	}
	return 0
}

// The integration base's DocTypes a bulk message links to (internal/integration/messages
// defines them; EnsureDocTypes has the framework create them first).
const (
	PlatformAccount  = "Platform Account"
	PlatformTemplate = "Platform Template"
)

// definitions are the built-in DocTypes, in creation order (a Table or Link
// needs its DocType first).
func definitions() []docframe.DocType {
	recipientFields := []docframe.Field{
		{Fieldname: "mobile_number", Label: "Mobile Number", Fieldtype: docframe.TypeData, Reqd: flag(true), InListView: flag(true)},
		{Fieldname: "recipient_name", Label: "Recipient Name", Fieldtype: docframe.TypeData, InListView: flag(true)},
		{Fieldname: "recipient_data", Label: "Recipient Data", Fieldtype: docframe.TypeJSON},
	}
	return []docframe.DocType{
		{Name: BulkRecipient, Module: "Wharf", Istable: flag(true), Fields: recipientFields},
		{Name: RecipientList, Module: "Wharf", Autoname: "field:list_name", TitleField: "list_name", Fields: []docframe.Field{
			{Fieldname: "list_name", Label: "List Name", Fieldtype: docframe.TypeData, Reqd: flag(true), Unique: flag(true), InListView: flag(true)},
			{Fieldname: "recipients", Label: "Recipients", Fieldtype: docframe.TypeTable, Options: BulkRecipient},
		}},
		{Name: BulkMessage, Module: "Wharf", IsSubmittable: flag(true), Autoname: "naming_series:", NamingSeries: "BULK-.YYYY.-.#####",
			TitleField: "title", Fields: []docframe.Field{
				{Fieldname: "title", Label: "Title", Fieldtype: docframe.TypeData, Reqd: flag(true), InListView: flag(true)},
				{Fieldname: "platform_account", Label: "Platform Account", Fieldtype: docframe.TypeLink, Options: PlatformAccount},
				{Fieldname: "template", Label: "Template", Fieldtype: docframe.TypeLink, Options: PlatformTemplate, Reqd: flag(true)},
				{Fieldname: "recipient_type", Label: "Recipient Type", Fieldtype: docframe.TypeSelect, Options: "Individual\nRecipient List",
					Default: "Individual"},
				{Fieldname: "recipients", Label: "Recipients", Fieldtype: docframe.TypeTable, Options: BulkRecipient},
				{Fieldname: "recipient_list", Label: "Recipient List", Fieldtype: docframe.TypeLink, Options: RecipientList},
				{Fieldname: "variable_type", Label: "Variable Type", Fieldtype: docframe.TypeSelect, Options: "Common\nUnique", Default: "Common"},
				{Fieldname: "template_variables", Label: "Template Variables", Fieldtype: docframe.TypeJSON},
				{Fieldname: "attach", Label: "Attach", Fieldtype: docframe.TypeAttach},
				{Fieldname: "scheduled_time", Label: "Scheduled Time", Fieldtype: docframe.TypeDatetime},
				{Fieldname: "status", Label: "Status", Fieldtype: docframe.TypeSelect, Default: StatusDraft, ReadOnly: flag(true), InListView: flag(true), SearchIndex: flag(true),
					Options: StatusDraft + "\n" + StatusQueued + "\n" + StatusInProgress + "\n" + StatusCompleted + "\n" + StatusPartiallyFailed +
						"\n" + StatusPaused + "\n" + StatusCancelled},
				{Fieldname: "recipient_count", Label: "Recipient Count", Fieldtype: docframe.TypeInt, ReadOnly: flag(true)},
				{Fieldname: "sent_count", Label: "Sent Count", Fieldtype: docframe.TypeInt, ReadOnly: flag(true)},
				{Fieldname: "failed_count", Label: "Failed Count", Fieldtype: docframe.TypeInt, ReadOnly: flag(true)},
				{Fieldname: "campaign", Label: "Campaign", Fieldtype: docframe.TypeData, ReadOnly: flag(true), SearchIndex: flag(true)},
			}},
	}
}

// EnsureDocTypes creates (or brings up to date) the domain's DocTypes in
// the organization; idempotent, it writes nothing when they are current.
// The integration base's Platform Account and Platform Template DocTypes,
// which the Links name, are created first through the framework's
// BuiltIn. A definition stored before template and platform_account were
// Links is upgraded in place (docframe lets a Data field become a Link
// while documents exist).
// Called at an organization's set-up with the integration's other
// DocTypes, and by the domain's methods on first use.
func (s *Service) EnsureDocTypes(ctx context.Context, orgID uuid.UUID) error {
	// Reading the linked DocTypes' permissions has the framework create them
	// when the organization has none yet (docframe.Options.BuiltIn, which
	// the app wires to the integration base).
	for _, dt := range []string{PlatformAccount, PlatformTemplate} {
		if err := s.frame.Require(ctx, system, orgID, dt, docframe.PermRead); err != nil {
			return err
		}
	}
	for _, def := range definitions() {
		if err := s.frame.EnsureDocType(ctx, orgID, def); err != nil {
			return err
		}
	}
	return nil
}

// Guards tie the DocTypes to the core permissions of campaigns (a bulk
// message is a campaign underneath, a recipient list its recipients) and
// mask the recipients' numbers and names as campaign recipients are masked
// (docframe.Guard), for docframe.Options.Guards. Submitting or cancelling
// starts or stops the campaign: campaigns:update, as in the core API.
func Guards() []docframe.Guard {
	rights := map[string]string{docframe.PermRead: "campaigns:read", docframe.PermCreate: "campaigns:create",
		docframe.PermWrite: "campaigns:update", docframe.PermDelete: "campaigns:delete"}
	bulk := map[string]string{docframe.PermSubmit: "campaigns:update", docframe.PermCancel: "campaigns:update"}
	for k, v := range rights {
		bulk[k] = v
	}
	return []docframe.Guard{
		{Doctype: BulkMessage, Rights: bulk},
		{Doctype: RecipientList, Rights: rights},
		{Doctype: BulkRecipient, Phones: []string{"mobile_number"}, Names: []string{"recipient_name"}},
	}
}
