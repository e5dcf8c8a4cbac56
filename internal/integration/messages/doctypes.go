package messages

import "wharf/internal/integration/docframe"

// The integration's DocTypes.
const (
	DoctypeAccount        = "Platform Account"
	DoctypeMessage        = "Platform Message"
	DoctypeTemplate       = "Platform Template"
	DoctypeTemplateButton = "Platform Template Button"
	DoctypeFlow           = "Platform Flow"
	DoctypeFlowScreen     = "Platform Flow Screen"
	DoctypeFlowField      = "Platform Flow Field"
)

// Platform Message statuses: Queued until the provider answered, then the
// provider's own status names.
const (
	StatusQueued    = "Queued"
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusRead      = "read"
	StatusFailed    = "failed"
)

const module = "Wharf"

func f(name, label, typ string, opts ...func(*docframe.Field)) docframe.Field {
	fl := docframe.Field{Fieldname: name, Label: label, Fieldtype: typ}
	for _, o := range opts {
		o(&fl)
	}
	return fl
}

func reqd(f *docframe.Field)     { f.Reqd = 1 }
func indexed(f *docframe.Field)  { f.SearchIndex = 1 }
func listed(f *docframe.Field)   { f.InListView = 1 }
func readOnly(f *docframe.Field) { f.ReadOnly = 1 }
func options(o string) func(*docframe.Field) {
	return func(f *docframe.Field) { f.Options = o }
}
func def(v string) func(*docframe.Field) {
	return func(f *docframe.Field) { f.Default = docframe.FlexString(v) }
}

// doctypes are the definitions, in the order they must be ensured (a Link
// or Table names a DocType ensured before it). None has permission rows:
// their rights are the core permissions of Guards.
func (s *Service) doctypes() []docframe.DocType {
	return []docframe.DocType{
		{Name: DoctypeAccount, Module: module, Autoname: "field:account_name", TitleField: "account_name", SearchFields: "phone_id",
			Fields: []docframe.Field{
				f("account_name", "Account Name", "Data", reqd, listed),
				f("token", "Token", "Password", reqd),
				f("phone_id", "Phone ID", "Data", reqd, listed),
				f("business_id", "Business ID", "Data", reqd),
				f("app_id", "App ID", "Data", reqd),
				f("app_secret", "App Secret", "Password"),
				f("webhook_verify_token", "Webhook Verify Token", "Data", reqd),
				f("url", "URL", "Data", def(s.ProviderURL)),
				f("version", "Version", "Data", def("v17.0")),
				f("status", "Status", "Data", readOnly, listed),
				f("is_default_incoming", "Default Incoming", "Check"),
				f("is_default_outgoing", "Default Outgoing", "Check"),
			}},
		{Name: DoctypeTemplateButton, Module: module, Istable: 1, Fields: []docframe.Field{
			f("button_type", "Button Type", "Select", options("Quick Reply\nCall\nURL"), reqd),
			f("button_label", "Button Label", "Data", reqd),
			f("url", "URL", "Data"),
			f("phone_number", "Phone Number", "Data"),
		}},
		{Name: DoctypeTemplate, Module: module, Autoname: "hash", TitleField: "template_name", SearchFields: "template_name",
			Fields: []docframe.Field{
				f("template_name", "Template Name", "Data", reqd, listed, indexed),
				f("language_code", "Language Code", "Data", reqd, def("en_US")),
				f("category", "Category", "Data", def("UTILITY")),
				f("header_type", "Header Type", "Data"),
				f("header", "Header", "Data"),
				f("template", "Template", "Text", reqd),
				f("footer", "Footer", "Data"),
				f("buttons", "Buttons", "Table", options(DoctypeTemplateButton)),
				f("status", "Status", "Data", readOnly, listed),
				f("template_id", "Template ID", "Data", readOnly, indexed),
				f("platform_account", "Platform Account", "Link", options(DoctypeAccount)),
			}},
		{Name: DoctypeFlowScreen, Module: module, Istable: 1, Fields: []docframe.Field{
			f("screen_id", "Screen ID", "Data", reqd),
			f("title", "Title", "Data"),
			f("terminal", "Terminal", "Check"),
		}},
		{Name: DoctypeFlowField, Module: module, Istable: 1, Fields: []docframe.Field{
			f("screen_id", "Screen ID", "Data", reqd),
			f("field_name", "Field Name", "Data", reqd),
			f("field_type", "Field Type", "Select", options("TextInput\nTextArea\nDropdown\nDatePicker\nRadioButtonsGroup\nCheckboxGroup\nOptIn\nTextHeading\nTextBody"), reqd),
			f("label", "Label", "Data"),
			f("required", "Required", "Check"),
			f("options", "Options", "Small Text"),
		}},
		{Name: DoctypeFlow, Module: module, Autoname: "field:flow_name", TitleField: "flow_name",
			Fields: []docframe.Field{
				f("flow_name", "Flow Name", "Data", reqd, listed),
				f("platform_account", "Platform Account", "Link", options(DoctypeAccount)),
				f("category", "Category", "Data", def("OTHER")),
				f("screens", "Screens", "Table", options(DoctypeFlowScreen)),
				f("fields", "Fields", "Table", options(DoctypeFlowField)),
				f("status", "Status", "Select", options("Draft\nPublished\nDeprecated"), def("Draft"), listed),
				f("flow_id", "Flow ID", "Data", readOnly),
				f("core_flow_id", "Core Flow ID", "Data", readOnly),
			}},
		{Name: DoctypeMessage, Module: module, Autoname: "hash", TitleField: "to", SearchFields: "to, from_number, message_id",
			Fields: []docframe.Field{
				f("type", "Type", "Select", options("Outgoing\nIncoming"), def("Outgoing"), reqd, listed),
				f("to", "To", "Data", listed, indexed),
				f("from_number", "From", "Data", indexed),
				f("message", "Message", "Small Text"),
				f("content_type", "Content Type", "Select",
					options("text\nimage\nvideo\ndocument\naudio\nsticker\nbutton\ninteractive\nflow\ntemplate\nlocation\ncontacts\nreaction\nunknown"), def("text")),
				f("message_type", "Message Type", "Select", options("Manual\nTemplate\nreceived"), def("Manual")),
				f("message_id", "Message ID", "Data", readOnly, indexed),
				f("status", "Status", "Select", options("Queued\nsent\ndelivered\nread\nfailed"), listed),
				f("error", "Error", "Small Text", readOnly),
				f("template", "Template", "Link", options(DoctypeTemplate)),
				f("template_parameters", "Template Parameters", "JSON"),
				f("buttons", "Buttons", "JSON"),
				f("flow", "Flow", "Link", options(DoctypeFlow)),
				f("flow_cta", "Flow CTA", "Data"),
				f("button_text", "Button Text", "Data", readOnly),
				f("media_id", "Media ID", "Data", readOnly),
				f("mime_type", "MIME Type", "Data", readOnly),
				f("reference_doctype", "Reference DocType", "Link", options("DocType")),
				f("reference_name", "Reference Name", "Dynamic Link", options("reference_doctype")),
				f("platform_account", "Platform Account", "Link", options(DoctypeAccount)),
				f("bulk_message", "Bulk Message", "Data", indexed),
				f("core_message_id", "Core Message ID", "Data", readOnly, indexed),
				// A bulk message's send: the campaign recipient it projects
				// (internal/integration/bulk), found by its message_id.
				f("core_recipient_id", "Core Recipient ID", "Data", readOnly),
			}},
	}
}

// Guards tie the DocTypes to the core permissions that guard the same data
// in the core API, and to its masking and secrets (docframe.Guard), for
// docframe.Options.Guards. A right without a core permission (changing or
// deleting a Platform Message, which the core never allows) is the Admin's.
func Guards() []docframe.Guard {
	crud := func(resource string) map[string]string {
		return map[string]string{docframe.PermRead: resource + ":read", docframe.PermCreate: resource + ":create",
			docframe.PermWrite: resource + ":update", docframe.PermDelete: resource + ":delete"}
	}
	return []docframe.Guard{
		{Doctype: DoctypeAccount, Rights: crud("accounts"), Secrets: []string{"token", "app_secret", "webhook_verify_token"}},
		{Doctype: DoctypeMessage, Rights: map[string]string{docframe.PermRead: "messages:read", docframe.PermCreate: "messages:create"},
			Phones: []string{"to", "from_number"}},
		{Doctype: DoctypeTemplate, Rights: crud("templates")},
		{Doctype: DoctypeFlow, Rights: crud("flows")},
	}
}
