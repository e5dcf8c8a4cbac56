package dataops

import (
	"slices"
	"strings"

	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
)

// column is a column of a table: its key, its label (the export's header,
// and a header an import recognises), the SQL expression that reads it from
// the table aliased t, whether it is a phone number or a name the
// organization's masking applies to, and whether an import takes it.
type column struct {
	key, label, expr string
	byDefault        bool
	phone, name      bool
	imports          importRole
}

// importRole is what an import does with a column.
type importRole int

const (
	notImported importRole = iota
	importRequired
	importOptional
)

// table is an exportable table.
type table struct {
	name string
	from string // FROM clause, the table aliased t
	// search is the condition of a search for term (not empty), with its
	// arguments; masked: the organization masks phone numbers.
	search  func(term string, masked bool) (string, []any)
	order   string // a total order, so that an export is stable
	columns []column
	unique  string // the import's key: a row with an existing value is a duplicate
}

// Column is a table's column as the config endpoint shows it.
type Column struct {
	Key   string
	Label string
}

// Config is what a table offers to export.
type Config struct {
	Table          string
	Columns        []Column
	DefaultColumns []string
}

var tables = []*table{
	{
		name: "contacts",
		from: "contacts t",
		// The contacts list's search, the masking rule included: with
		// masked numbers, a number matches only whole.
		search: contacts.SearchCondition,
		order:  "t.created_at, t.id",
		columns: []column{
			{key: "phone_number", label: "Phone Number", expr: "t.phone_number", byDefault: true, phone: true, imports: importRequired},
			{key: "profile_name", label: "Name", expr: "COALESCE(NULLIF(t.name, ''), t.profile_name)", byDefault: true, name: true,
				imports: importOptional},
			{key: "tags", label: "Tags", byDefault: true, imports: importOptional, expr: `COALESCE((SELECT string_agg(g.name, ',' ORDER BY lower(g.name))
				FROM contact_tags ct JOIN tags g ON g.id = ct.tag_id WHERE ct.contact_id = t.id), '')`},
			{key: "platform_account", label: "Platform Account", expr: "(SELECT a.name FROM platform_accounts a WHERE a.id = t.account_id)",
				imports: importOptional},
			{key: "assigned_user_id", label: "Assigned User ID", expr: "t.assigned_to::text", imports: importOptional},
			{key: "last_message_at", label: "Last Message At", expr: "t.last_message_at"},
			{key: "created_at", label: "Created At", expr: "t.created_at"},
			{key: "updated_at", label: "Updated At", expr: "t.updated_at"},
		},
		unique: "phone_number",
	},
	{
		name: "tags",
		from: "tags t",
		search: func(term string, _ bool) (string, []any) {
			p := paging.Contains(term)
			return "(t.name ILIKE ? OR t.description ILIKE ?)", []any{p, p}
		},
		order: "lower(t.name), t.id",
		columns: []column{
			{key: "name", label: "Name", expr: "t.name", byDefault: true, imports: importRequired},
			{key: "color", label: "Color", expr: "t.color", byDefault: true, imports: importOptional},
			{key: "description", label: "Description", expr: "t.description", byDefault: true, imports: importOptional},
			{key: "created_at", label: "Created At", expr: "t.created_at"},
		},
		unique: "name",
	},
}

func tableOf(name string) (*table, error) {
	for _, t := range tables {
		if t.name == name {
			return t, nil
		}
	}
	return nil, apperr.Invalidf("table must be contacts or tags")
}

// pick answers the columns asked for, in the order asked (the default
// columns when none is asked); an unknown or repeated column is a 400.
func (t *table) pick(keys []string) ([]column, error) {
	if len(keys) == 0 {
		var out []column
		for _, c := range t.columns {
			if c.byDefault {
				out = append(out, c)
			}
		}
		return out, nil
	}
	var out []column
	for _, k := range keys {
		i := slices.IndexFunc(t.columns, func(c column) bool { return c.key == k })
		if i < 0 {
			return nil, apperr.Invalidf("unknown column %q for %s: the columns are %s", k, t.name, strings.Join(keysOf(t.columns), ", "))
		}
		if slices.ContainsFunc(out, func(c column) bool { return c.key == k }) {
			return nil, apperr.Invalidf("column %q is asked for twice", k)
		}
		out = append(out, t.columns[i])
	}
	return out, nil
}

// keysOf answers the keys of columns.
func keysOf(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.key
	}
	return out
}

// ExportConfig answers what a table offers to export.
func ExportConfig(name string) (*Config, error) {
	t, err := tableOf(name)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Table: t.name}
	for _, c := range t.columns {
		cfg.Columns = append(cfg.Columns, Column{Key: c.key, Label: c.label})
		if c.byDefault {
			cfg.DefaultColumns = append(cfg.DefaultColumns, c.key)
		}
	}
	return cfg, nil
}

// ImportConfig is what a table takes in an import.
type ImportConfig struct {
	Table           string
	RequiredColumns []string
	OptionalColumns []string
	UniqueColumn    string
}

// ImportConfigOf answers what a table takes in an import.
func ImportConfigOf(name string) (*ImportConfig, error) {
	t, err := tableOf(name)
	if err != nil {
		return nil, err
	}
	cfg := &ImportConfig{Table: t.name, RequiredColumns: []string{}, OptionalColumns: []string{}, UniqueColumn: t.unique}
	for _, c := range t.columns {
		switch c.imports {
		case importRequired:
			cfg.RequiredColumns = append(cfg.RequiredColumns, c.key)
		case importOptional:
			cfg.OptionalColumns = append(cfg.OptionalColumns, c.key)
		}
	}
	return cfg, nil
}

// importColumns answers the columns an import of t takes.
func (t *table) importColumns() []column {
	var out []column
	for _, c := range t.columns {
		if c.imports != notImported {
			out = append(out, c)
		}
	}
	return out
}
