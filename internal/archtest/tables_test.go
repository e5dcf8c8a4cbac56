package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownedTables are the tables each domain owns: it creates them (in its
// migrations) and it alone names them in SQL. Another domain reads or
// writes them through the owner's service or a small read interface given
// at construction. Packages that are no domain (app, the shared packages)
// own no table. A new table gets its owner here; docs/ARCHITECTURE.md
// ("Who owns which table") says the same.
var ownedTables = map[string][]string{
	"identity":             {"organizations", "users", "organization_members", "roles", "permissions", "role_permissions", "api_keys", "refresh_tokens"},
	"accounts":             {"platform_accounts"},
	"contacts":             {"contacts", "tags", "contact_tags", "contact_counts", "contact_notes", "segments"},
	"templates":            {"templates"},
	"messaging":            {"messages", "media_uploads"},
	"inbound":              {"inbound_events"},
	"webhooks":             {"webhooks", "webhook_deliveries", "events"},
	"campaigns":            {"campaigns", "campaign_recipients"},
	"teams":                {"teams", "team_members"},
	"canned":               {"canned_responses"},
	"transfers":            {"agent_transfers"},
	"chatbot":              {"chatbot_flows", "chatbot_keyword_rules", "chatbot_ai_contexts", "chatbot_settings", "chatbot_sessions", "chatbot_inbox"},
	"pflows":               {"platform_flows"},
	"dataops":              {"import_jobs"},
	"customactions":        {"custom_actions"},
	"widgets":              {"dashboard_widgets"},
	"catalogs":             {"catalogs", "products"},
	"integration/docframe": {"docframe_doctypes", "docframe_documents", "docframe_series"},
	"calling":              {"call_logs", "call_transfers"},
	"integration/notify":   {"wharfnotify_sends"},
}

// tableException lets one package name another owner's table in SQL, for
// the reason given: each is a debt to pay by moving the query behind the
// owner's service or a read interface, or a deliberate cross-domain
// statement whose reason says why it stays.
type tableException struct{ pkg, table, reason string }

// tableExceptions are today's exceptions, by package. The first kind is a
// join for a listing's names (one statement for a page): to go behind the
// owner's read interface with one batch lookup per page. The second is a
// write of the owner's denormalized columns in the caller's transaction: to
// go behind an owner's method that takes the transaction.
var tableExceptions = []tableException{

	{"internal/accounts", "organizations", "webhook routing reads each account's organization's own app secret in the same statement: to move behind identity (or orgsettings) once the secret has an owner's read"},

	{"internal/campaigns", "contacts", "an audience's recipients are inserted from contacts in one INSERT ... SELECT (100,000 rows), and the replies' report finds a recipient's contact by number: a read interface would cost a round trip per row; contacts' audience conditions are built by contacts (Audiences)"},
	{"internal/campaigns", "messages", "the replies' report reads a recipient's first incoming message by the (contact_id, occurred_at) index in its statement: to move behind messaging's read interface"},
	{"internal/campaigns", "platform_accounts", "a lane reads its campaign's status with its account's status in one statement between chunks: to go behind accounts (the outbound Sender already marks the account)"},

	{"internal/chatbot", "agent_transfers", "an evaluation reads whether the contact is transferred to an agent in the statement that locks its session: to move behind a transfers read interface taking the transaction"},
	{"internal/chatbot", "contacts", "an evaluation reads the contact's name and number with its session, and the sessions' listing joins them: to go behind contacts' read interface"},
	{"internal/chatbot", "messages", "the chatbot reads the stored incoming message and the conversation's recent messages (AI context): to be moved behind messaging's read interface"},
	{"internal/chatbot", "organizations", "an evaluation reads organizations.chatbot_version (the chatbot configuration's version) in its state statement: to move to a chatbot-owned table or behind orgsettings"},

	{"internal/contacts", "agent_transfers", "an agent sees the contacts transferred to them: the visibility condition is a subquery of the contacts' own queries (paging and counts in one statement); transfers is above contacts, so only a condition given at construction could replace it"},

	{"internal/dataops", "contact_tags", "export streams contacts with their tags through one server-side cursor: a read interface per row would not stream"},
	{"internal/dataops", "platform_accounts", "import maps account names to ids, and export writes each contact's account name in the cursor's statement: to go behind accounts' batch lookup for import"},
	{"internal/dataops", "tags", "export streams contacts with their tags' names through one server-side cursor (see contact_tags)"},

	{"internal/messaging", "contacts", "an incoming or sent message updates its contact's conversation columns (last message, unread count) in the message's transaction, and a queued batch's claim joins its contacts' numbers: to move behind a contacts method taking the transaction"},
	{"internal/messaging", "platform_accounts", "a queued batch claims its messages with their account in one statement (the send path's cost): to go behind accounts' cached lookup if it stays as cheap"},
	{"internal/messaging", "templates", "a queued batch claims its messages with their template in one statement (the send path's cost): to go behind templates' cached lookup if it stays as cheap"},
	{"internal/messaging", "webhooks", "a queued batch's claim checks whether a webhook listens to message events in the same statement, so the send writes no outbox row for nobody: to go behind webhooks' read interface"},

	{"internal/widgets", "agent_transfers", "the overview counts unassigned transfers: a widget's figure is one statement over its source's tables by design (docs/ARCHITECTURE.md, internal/widgets)"},
	{"internal/widgets", "campaign_recipients", "the campaigns source filters by recipient status in its one statement: a widget's figure is one statement over its source's tables by design"},
	{"internal/widgets", "campaigns", "the overview counts sending campaigns: a widget's figure is one statement over its source's tables by design"},
	{"internal/widgets", "messages", "the messages source and the overview count messages: a widget's figure is one statement over its source's tables by design"},
	{"internal/widgets", "platform_accounts", "the sources group and filter by account name in their one statement: a widget's figure is one statement over its source's tables by design"},
}

// owner maps each table to its domain.
func owner() map[string]string {
	m := map[string]string{}
	for domain, tables := range ownedTables {
		for _, t := range tables {
			m[t] = domain
		}
	}
	return m
}

// sqlTable finds the table after an SQL keyword that names one: FROM and
// JOIN (reads; DELETE FROM), UPDATE, INTO (INSERT INTO). The code writes
// SQL keywords in capitals and names in lower case, which keeps prose ("an
// audience from contacts needs...") out.
var sqlTable = regexp.MustCompile(`\b(?:FROM|JOIN|UPDATE|INTO)\s+([a-z_][a-z0-9_]*)`)

// sqlTables lists the known tables (keys of owners) that the Go source src
// names in SQL: in string literals after FROM, JOIN, UPDATE or INTO, and as
// the first word of a gorm Table("...") argument. Comments are not read. It
// keeps to raw SQL: a gorm model (models.X) used in another domain is not
// seen.
func sqlTables(name string, src []byte, owners map[string]string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var found []string
	add := func(t string) {
		t = strings.ToLower(t)
		if _, ok := owners[t]; ok && !slices.Contains(found, t) {
			found = append(found, t)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Table" && len(n.Args) > 0 {
				if s, ok := stringLit(n.Args[0]); ok {
					if fields := strings.Fields(s); len(fields) > 0 {
						add(fields[0])
					}
				}
			}
		case *ast.BasicLit:
			if s, ok := stringLit(n); ok {
				for _, m := range sqlTable.FindAllStringSubmatch(s, -1) {
					add(m[1])
				}
			}
		}
		return true
	})
	return found, nil
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// tableViolations lists, one sentence each, the tables that the package
// path (without "wharf/") names in SQL without owning them or an
// exception, and the exceptions nothing needs any more. files maps each of
// the package's Go files (tests excluded) to its source.
func tableViolations(path string, files map[string][]byte, exceptions []tableException) ([]string, error) {
	owners := owner()
	domain, _ := strings.CutPrefix(path, "internal/")
	var out []string
	used := map[string]bool{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		tables, err := sqlTables(name, files[name], owners)
		if err != nil {
			return nil, err
		}
		for _, t := range tables {
			if owners[t] == domain && domain != path {
				continue
			}
			i := slices.IndexFunc(exceptions, func(e tableException) bool { return e.pkg == path && e.table == t })
			if i >= 0 {
				used[t] = true
				continue
			}
			out = append(out, fmt.Sprintf("%s names the table %s (owned by %s) in %s: go through %s's service or a read interface, or add an exception with its reason",
				path, t, owners[t], filepath.Base(name), owners[t]))
		}
	}
	for _, e := range exceptions {
		if e.pkg == path && !used[e.table] {
			out = append(out, fmt.Sprintf("%s no longer names the table %s: remove its exception", path, e.table))
		}
	}
	return out, nil
}

// scanned reports whether the table rule applies to the package: every
// package of the module but tests, the test support and the simulator.
func scanned(path string) bool {
	layer := layerOf(path)
	return layer != "" && layer != layerTests && layer != layerTestSupport && layer != layerSimulator && path != "migrations"
}

// Every package names in SQL only the tables its domain owns, or those of
// an exception.
func TestTablesHaveOneOwner(t *testing.T) {
	t.Parallel()
	owners := owner()
	for domain, tables := range ownedTables {
		if _, ok := domainRank[domain]; !ok {
			t.Errorf("ownedTables names %s, which is no domain", domain)
		}
		for _, tb := range tables {
			if owners[tb] != domain {
				t.Errorf("the table %s has two owners: %s and %s", tb, domain, owners[tb])
			}
		}
	}
	for _, e := range tableExceptions {
		if e.reason == "" {
			t.Errorf("the exception %s → %s has no reason", e.pkg, e.table)
		}
		if _, ok := owners[e.table]; !ok {
			t.Errorf("the exception %s → %s names no owned table", e.pkg, e.table)
		}
	}
	seen := map[string]bool{}
	for _, p := range list(t) {
		path, ours := strings.CutPrefix(p.ImportPath, module)
		if !ours || !scanned(path) {
			continue
		}
		seen[path] = true
		files := map[string][]byte{}
		for _, name := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = src
		}
		got, err := tableViolations(path, files, tableExceptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got {
			t.Error(v)
		}
	}
	for _, e := range tableExceptions {
		if !seen[e.pkg] {
			t.Errorf("the exception %s → %s names no package the rule reads", e.pkg, e.table)
		}
	}
}

// The rule catches a domain's SQL on another domain's table, in each form
// it reads, and lets an exception or the owner through, so that a passing
// TestTablesHaveOneOwner means something.
func TestTheTableRuleCatchesForeignTables(t *testing.T) {
	t.Parallel()
	src := func(body string) map[string][]byte {
		return map[string][]byte{"x.go": []byte("package x\n\n// a comment naming FROM messages is not read\n" + body)}
	}
	for _, c := range []struct{ name, path, body, table string }{
		{"select", "internal/chatbot", "const q = `SELECT id FROM messages WHERE contact_id = ?`\n", "messages"},
		{"join", "internal/calling", "const q = `SELECT c.id FROM call_logs c\n\tJOIN contacts k ON k.id = c.contact_id`\n", "contacts"},
		{"update", "internal/widgets", "var q = \"UPDATE campaigns SET name = ?\"\n", "campaigns"},
		{"insert", "internal/canned", "var q = \"INSERT INTO tags (name) VALUES (?)\"\n", "tags"},
		{"delete", "internal/teams", "var q = \"DELETE FROM users WHERE id = ?\"\n", "users"},
		{"gorm Table", "internal/catalogs", "func f(db interface{ Table(string) any }) { db.Table(\"platform_accounts a\") }\n", "platform_accounts"},
		{"not a domain", "app", "const q = `SELECT 1 FROM docframe_doctypes`\n", "docframe_doctypes"},
	} {
		got, err := tableViolations(c.path, src(c.body), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !strings.Contains(got[0], c.path+" names the table "+c.table) {
			t.Errorf("%s: %q, want one violation naming %s", c.name, got, c.table)
		}
		// The same source with an exception for the pair passes.
		got, err = tableViolations(c.path, src(c.body), []tableException{{c.path, c.table, "a test"}})
		if err != nil || len(got) != 0 {
			t.Errorf("%s with its exception: %q, %v", c.name, got, err)
		}
	}
	// The owner itself, a CTE's name, a function after FROM, ON CONFLICT
	// ... DO UPDATE SET and prose are no violation.
	for _, c := range []struct{ path, body string }{
		{"api/campaignsapi", "var msg = \"an audience from contacts needs the contacts:read permission too\"\n"},
		{"internal/messaging", "const q = `UPDATE messages SET status = ? FROM (SELECT 1) v`\n"},
		{"internal/campaigns", "const q = `WITH done AS (SELECT 1 FROM campaign_recipients) SELECT extract(epoch FROM now()) FROM done`\n"},
		{"internal/contacts", "const q = `INSERT INTO tags (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name`\n"},
	} {
		if got, err := tableViolations(c.path, src(c.body), nil); err != nil || len(got) != 0 {
			t.Errorf("%s: %q, %v, want none", c.body, got, err)
		}
	}
	// An exception nothing needs is reported, so the list only shrinks.
	got, err := tableViolations("internal/chatbot", src("const q = `SELECT 1`\n"), []tableException{{"internal/chatbot", "messages", "old"}})
	if err != nil || len(got) != 1 || !strings.Contains(got[0], "no longer names the table messages") {
		t.Errorf("a stale exception: %q, %v", got, err)
	}
}
