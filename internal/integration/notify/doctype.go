package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"wharf/internal/integration/docframe"
)

// The DocTypes of this package.
const (
	NotificationDoctype = "Platform Notification"
	FieldDoctype        = "Platform Notification Field"
)

// Notification types and the events a DocType Event notification may
// choose (docframe's published event names). Days Before and Days After
// are in the Select, as Frappe has them, and refused by validation.
const (
	TypeDocTypeEvent   = "DocType Event"
	TypeSchedulerEvent = "Scheduler Event"
	eventDaysBefore    = "Days Before"
	eventDaysAfter     = "Days After"
)

var supportedEvents = []string{docframe.EventAfterInsert, docframe.EventAfterSave, docframe.EventAfterSubmit,
	docframe.EventAfterCancel, docframe.EventBeforeDelete}

// The integration base's DocTypes a notification links to (internal/integration/messages
// defines them): EnsureDocTypes has the framework create them first.
const (
	PlatformTemplate = "Platform Template"
	PlatformAccount  = "Platform Account"
)

var fieldDef = docframe.DocType{Name: FieldDoctype, Module: "Wharf", Istable: 1, Fields: []docframe.Field{
	{Fieldname: "field_name", Label: "Field Name", Fieldtype: "Data", Reqd: 1, InListView: 1},
}}

var notificationDef = docframe.DocType{Name: NotificationDoctype, Module: "Wharf", Autoname: "field:notification_name",
	TitleField: "notification_name", SearchFields: "reference_doctype, template",
	Fields: []docframe.Field{
		{Fieldname: "notification_name", Label: "Notification Name", Fieldtype: "Data", Reqd: 1, Unique: 1, InListView: 1},
		{Fieldname: "notification_type", Label: "Notification Type", Fieldtype: "Select", Reqd: 1, Default: TypeDocTypeEvent,
			Options: TypeDocTypeEvent + "\n" + TypeSchedulerEvent, InListView: 1},
		{Fieldname: "reference_doctype", Label: "Reference Document Type", Fieldtype: "Link", Options: "DocType", Reqd: 1, InListView: 1},
		{Fieldname: "doctype_event", Label: "DocType Event", Fieldtype: "Select",
			Options: strings.Join(append(slices.Clone(supportedEvents), eventDaysBefore, eventDaysAfter), "\n")},
		{Fieldname: "date_changed", Label: "Reference Date", Fieldtype: "Data"},
		{Fieldname: "days_in_advance", Label: "Days Before or After", Fieldtype: "Int"},
		{Fieldname: "event_frequency", Label: "Event Frequency", Fieldtype: "Select", Options: "All\nHourly\nDaily\nWeekly\nMonthly\nCron"},
		{Fieldname: "cron_format", Label: "Cron Format", Fieldtype: "Data"},
		{Fieldname: "template", Label: "Template", Fieldtype: "Link", Options: PlatformTemplate, Reqd: 1},
		{Fieldname: "platform_account", Label: "Platform Account", Fieldtype: "Link", Options: PlatformAccount},
		{Fieldname: "field_name", Label: "Field Name (phone)", Fieldtype: "Data"},
		{Fieldname: "fields", Label: "Fields", Fieldtype: "Table", Options: FieldDoctype},
		{Fieldname: "condition", Label: "Condition", Fieldtype: "Text"},
		{Fieldname: "attach_document_print", Label: "Attach Document Print", Fieldtype: "Check"},
		{Fieldname: "custom_attachment", Label: "Custom Attachment", Fieldtype: "Check"},
		{Fieldname: "attach", Label: "Attach", Fieldtype: "Attach"},
		{Fieldname: "set_property_after_alert", Label: "Set Property After Alert", Fieldtype: "Data"},
		{Fieldname: "property_value", Label: "Property Value", Fieldtype: "Data"},
		{Fieldname: "button_url_template", Label: "Button URL Template", Fieldtype: "Data"},
		{Fieldname: "button_fields", Label: "Button Fields", Fieldtype: "Data"},
		{Fieldname: "disabled", Label: "Disabled", Fieldtype: "Check"},
		// Written by the worker when the notification fails (its condition
		// errs or exceeds a budget, a send is refused), for its Admin.
		{Fieldname: "last_error", Label: "Last Error", Fieldtype: "Small Text", ReadOnly: 1},
		{Fieldname: "last_error_at", Label: "Last Error At", Fieldtype: "Datetime", ReadOnly: 1},
	}}

// EnsureDocTypes creates or updates the DocTypes of notifications in the
// organization (idempotent: the integration calls it at set-up). The
// Platform Template and Platform Account DocTypes it links to are created
// first through the framework's BuiltIn (or must exist without it). A
// definition stored when template and platform_account were Data fields is
// upgraded in place (docframe lets a Data field become a Link).
func (s *Service) EnsureDocTypes(ctx context.Context, orgID uuid.UUID) error {
	// Reading the linked DocTypes' permissions has the framework create them
	// when the organization has none yet (docframe.Options.BuiltIn, which
	// the app wires to the integration base).
	for _, dt := range []string{PlatformAccount, PlatformTemplate} {
		if err := s.fw().Require(ctx, admin, orgID, dt, docframe.PermRead); err != nil {
			return fmt.Errorf("ensure %s: %w", NotificationDoctype, err)
		}
	}
	for _, def := range []docframe.DocType{fieldDef, notificationDef} {
		if err := s.fw().EnsureDocType(ctx, orgID, def); err != nil {
			return fmt.Errorf("ensure %s: %w", def.Name, err)
		}
	}
	return nil
}

// standardFields may be named wherever a field of the reference DocType
// may (parameters, the phone field).
var standardFields = []string{"name", "owner", "modified_by", "creation", "modified", "docstatus"}

// refFields answers the reference DocType's value fields by name and type,
// or a 417 when the organization has no such DocType.
func (s *Service) refFields(ctx context.Context, orgID uuid.UUID, doctype string) (map[string]string, error) {
	dt, err := s.fw().GetDocType(ctx, admin, orgID, doctype)
	if err != nil {
		return nil, docframe.Validationf("Reference Document Type %s: no such DocType", doctype)
	}
	out := map[string]string{}
	rows, _ := dt["fields"].([]any)
	for _, r := range rows {
		row, _ := r.(map[string]any)
		name, _ := row["fieldname"].(string)
		typ, _ := row["fieldtype"].(string)
		out[name] = typ
	}
	return out, nil
}

// daysEvent reports the DocType events evaluated once a day against a date
// field (Days Before, Days After) rather than on a document's change.
func daysEvent(event string) bool { return event == eventDaysBefore || event == eventDaysAfter }

// intOf reads a whole number as the framework stores it (an Int field's
// JSON number); an empty value is 0.
func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case nil:
		return 0, true
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func str(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

func on(v any) bool {
	switch n := v.(type) {
	case int64:
		return n != 0
	case int:
		return n != 0
	case float64:
		return n != 0
	case bool:
		return n
	case json.Number:
		return n.String() != "0" && n.String() != ""
	}
	return false
}

// rowsOf answers a Table field's rows, however they are held (as the
// framework sets them, or decoded from JSON).
func rowsOf(v any) []map[string]any {
	switch rows := v.(type) {
	case []map[string]any:
		return rows
	case []any:
		out := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			if m, ok := r.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// validate refuses a Platform Notification that could never work, with a
// 417 naming what is wrong, before it is stored.
func (s *Service) validate(ctx context.Context, doc *docframe.Doc) error {
	ref := str(doc.Get("reference_doctype"))
	if ref == "" {
		return nil // docframe's mandatory check names it
	}
	fields, err := s.refFields(ctx, doc.OrganizationID, ref)
	if err != nil {
		return err
	}
	// A notification sends its reference DocType's data (parameters, or
	// anything a scheduled script copies into _data_list) to numbers of
	// its choosing: its author must be able to read that DocType.
	if err := s.fw().Require(ctx, doc.Actor(), doc.OrganizationID, ref, docframe.PermRead); err != nil {
		return err
	}
	known := func(label, f string) error {
		if f == "" || slices.Contains(standardFields, f) {
			return nil
		}
		t, ok := fields[f]
		if !ok {
			return docframe.Validationf("%s: %s has no field %s", label, ref, f)
		}
		if t == "Table" || t == "Password" {
			return docframe.Validationf("%s: field %s of %s is a %s field", label, f, ref, t)
		}
		if s.fw().IsSecret(ref, f) {
			return docframe.Validationf("%s: field %s of %s is a secret: it is never sent", label, f, ref)
		}
		return nil
	}
	kind := str(doc.Get("notification_type"))
	event := str(doc.Get("doctype_event"))
	switch kind {
	case TypeDocTypeEvent:
		switch {
		case event == eventDaysBefore || event == eventDaysAfter:
			f := str(doc.Get("date_changed"))
			if f == "" {
				return docframe.Validationf("Reference Date (date_changed) is required for %s: the Date or Datetime field of %s to compare with today", event, ref)
			}
			if t := fields[f]; t != "Date" && t != "Datetime" && f != "creation" && f != "modified" {
				return docframe.Validationf("Reference Date: %s is not a Date or Datetime field of %s", f, ref)
			}
			if n, ok := intOf(doc.Get("days_in_advance")); !ok || n < 0 || n > 3650 {
				return docframe.Validationf("Days Before or After (days_in_advance) must be a whole number of days from 0 to 3650")
			}
		case !slices.Contains(supportedEvents, event):
			return docframe.Validationf("DocType Event is required for a DocType Event notification (one of %s)", strings.Join(supportedEvents, ", "))
		}
		if str(doc.Get("field_name")) == "" {
			return docframe.Validationf("Field Name (the phone field) is required for a DocType Event notification")
		}
	case TypeSchedulerEvent:
		freq := str(doc.Get("event_frequency"))
		if freq == "" {
			return docframe.Validationf("Event Frequency is required for a Scheduler Event notification")
		}
		if freq == "Cron" {
			if _, err := cron.ParseStandard(str(doc.Get("cron_format"))); err != nil {
				return docframe.Validationf("Cron Format %q: %v", str(doc.Get("cron_format")), err)
			}
		}
	}
	if err := known("Field Name", str(doc.Get("field_name"))); err != nil {
		return err
	}
	if kind == TypeDocTypeEvent {
		// Scheduler Event rows may name the keys of _data_list objects.
		rows := rowsOf(doc.Get("fields"))
		for i, r := range rows {
			if err := known(fmt.Sprintf("Fields row %d", i+1), str(r["field_name"])); err != nil {
				return err
			}
		}
	}
	if err := known("Button Fields", str(doc.Get("button_fields"))); err != nil {
		return err
	}
	if p := str(doc.Get("set_property_after_alert")); p != "" {
		if slices.Contains(standardFields, p) {
			return docframe.Validationf("Set Property After Alert: %s is a standard property, not a field", p)
		}
		if err := known("Set Property After Alert", p); err != nil {
			return err
		}
		if kind == TypeDocTypeEvent && event == docframe.EventBeforeDelete {
			return docframe.Validationf("Set Property After Alert cannot be used on Before Delete: the document is gone")
		}
	}
	if on(doc.Get("attach_document_print")) && on(doc.Get("custom_attachment")) {
		return docframe.Validationf("Attach Document Print and Custom Attachment are both set: the template has one document header")
	}
	if on(doc.Get("custom_attachment")) && str(doc.Get("attach")) == "" {
		return docframe.Validationf("Custom Attachment needs a file in Attach")
	}
	if a := str(doc.Get("attach")); a != "" {
		// The provider fetches the template's header media itself.
		if u, err := url.Parse(a); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return docframe.Validationf("Attach %q must be an absolute http(s) URL: the provider fetches the file itself", a)
		}
	}
	if _, err := compile(str(doc.Get("condition")), kind == TypeSchedulerEvent || daysEvent(event)); err != nil {
		return docframe.Validationf("Condition: %v", err)
	}
	return nil
}

// Guards ties Platform Notification to the core permissions of campaigns
// (docframe.Guard), for docframe.Options.Guards: a notification sends a
// template to numbers taken from documents without anyone pressing send,
// which the core allows only to those who may run campaigns.
func Guards() []docframe.Guard {
	return []docframe.Guard{{Doctype: NotificationDoctype, Rights: map[string]string{docframe.PermRead: "campaigns:read",
		docframe.PermCreate: "campaigns:create", docframe.PermWrite: "campaigns:update", docframe.PermDelete: "campaigns:delete"}}}
}
