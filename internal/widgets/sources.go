package widgets

import "slices"

// The data sources: which table a widget counts, the column that places a
// row in a day, and the fields it may filter and group on. Every SQL
// fragment here is fixed text: a widget names fields, never columns, and
// user values only ever reach a query as parameters.

// field is a field of a data source as SQL.
type field struct {
	// expr is the field's value as text over the source's row (its
	// alias), for grouping, filtering and table rows.
	expr string
	// join is what expr needs beside the source's table ("" for none).
	join string
	// exists, when set, filters through a correlated subquery instead of
	// expr ("%s" is the condition on inner): a campaign's message_status
	// is its recipients', several per campaign.
	exists, inner string
	// numeric fields are summed and averaged, and compared as numbers.
	numeric bool
}

// Source is a data source as the data-sources endpoint describes it.
type Source struct {
	Name, Label string
	// Fields are the fields to filter and group on (the spec's table).
	Fields []string
	// NumericFields are the fields sum and avg accept (and filters compare
	// as numbers).
	NumericFields []string
}

type source struct {
	Source
	table, alias, timeCol string
	fields                map[string]field
	// rowFields are the columns of a table widget's latest records besides
	// id and the time column (no personal data: table rows are not masked).
	rowFields []string
}

var sources = []*source{
	{Source: Source{Name: "messages", Label: "Messages", Fields: []string{"status", "direction", "message_type", "platform_account"},
		NumericFields: []string{"delivery_seconds"}},
		table: "messages", alias: "m", timeCol: "m.created_at",
		fields: map[string]field{
			"status":           {expr: "m.status"},
			"direction":        {expr: "m.direction"},
			"message_type":     {expr: "m.type"},
			"platform_account": {expr: "pa.name", join: "LEFT JOIN platform_accounts pa ON pa.id = m.account_id"},
			// From sent to delivered: only delivered sends have one.
			"delivery_seconds": {expr: "EXTRACT(EPOCH FROM m.delivered_at - m.sent_at)", numeric: true},
		},
		rowFields: []string{"status", "direction", "message_type", "platform_account"}},
	{Source: Source{Name: "contacts", Label: "Contacts", Fields: []string{"platform_account", "is_read"}},
		table: "contacts", alias: "c", timeCol: "c.created_at",
		fields: map[string]field{
			"platform_account": {expr: "pa.name", join: "LEFT JOIN platform_accounts pa ON pa.id = c.account_id"},
			// There is no read flag: a contact is read when its latest
			// message is not an incoming one (nothing waits for an answer),
			// or when it has no message at all. One probe of
			// messages_contact_time per contact.
			"is_read": {expr: `CASE WHEN COALESCE((SELECT lm.direction FROM messages lm WHERE lm.contact_id = c.id
				ORDER BY lm.occurred_at DESC, lm.created_at DESC, lm.id DESC LIMIT 1), '') = 'incoming' THEN 'false' ELSE 'true' END`},
		},
		rowFields: []string{"platform_account", "is_read"}},
	{Source: Source{Name: "campaigns", Label: "Campaigns", Fields: []string{"status", "message_status"},
		NumericFields: []string{"total_recipients", "sent_count", "delivered_count", "read_count", "failed_count"}},
		table: "campaigns", alias: "cp", timeCol: "cp.created_at",
		fields: map[string]field{
			"status": {expr: "cp.status"},
			// A campaign counts under each status one of its recipients
			// has (grouped), and matches a filter when one of its
			// recipients does.
			"message_status": {expr: "ms.status", join: "JOIN LATERAL (SELECT DISTINCT r.status FROM campaign_recipients r WHERE r.campaign_id = cp.id) ms ON true",
				exists: "EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = cp.id AND %s)", inner: "r.status"},
			"total_recipients": {expr: "cp.total_recipients", numeric: true},
			"sent_count":       {expr: "cp.sent_count", numeric: true},
			"delivered_count":  {expr: "cp.delivered_count", numeric: true},
			"read_count":       {expr: "cp.read_count", numeric: true},
			"failed_count":     {expr: "cp.failed_count", numeric: true},
		},
		rowFields: []string{"status", "total_recipients", "sent_count", "delivered_count", "read_count", "failed_count"}},
	{Source: Source{Name: "transfers", Label: "Agent transfers", Fields: []string{"status", "source"}, NumericFields: []string{"wait_seconds"}},
		table: "agent_transfers", alias: "t", timeCol: "t.transferred_at",
		fields: map[string]field{
			"status": {expr: "t.status"},
			"source": {expr: "t.source"},
			// From the transfer to its assignment: unassigned ones have none.
			"wait_seconds": {expr: "EXTRACT(EPOCH FROM t.assigned_at - t.transferred_at)", numeric: true},
		},
		rowFields: []string{"status", "source", "wait_seconds"}},
	{Source: Source{Name: "sessions", Label: "Chatbot sessions", Fields: []string{"status"}, NumericFields: []string{"duration_seconds"}},
		table: "chatbot_sessions", alias: "s", timeCol: "s.started_at",
		fields: map[string]field{
			// Sessions have no status column: active until they end, then
			// what ended them.
			"status": {expr: `CASE WHEN s.ended_at IS NULL THEN 'active' WHEN s.end_reason = 'completed' THEN 'completed'
				WHEN s.end_reason = 'transfer' THEN 'transferred' WHEN s.end_reason = 'timeout' THEN 'timed_out' ELSE 'ended' END`},
			"duration_seconds": {expr: "EXTRACT(EPOCH FROM s.ended_at - s.started_at)", numeric: true},
		},
		rowFields: []string{"status", "duration_seconds"}},
}

// Sources describes the data sources, in the order forms show them.
func Sources() []Source {
	out := make([]Source, len(sources))
	for i, s := range sources {
		out[i] = s.Source
	}
	return out
}

func sourceNamed(name string) *source {
	i := slices.IndexFunc(sources, func(s *source) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return sources[i]
}

func sourceNames() []string {
	out := make([]string, len(sources))
	for i, s := range sources {
		out[i] = s.Name
	}
	return out
}
