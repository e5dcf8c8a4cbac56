package api_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"wharf/app"
	"wharf/internal/identity"
	"wharf/internal/infra/database"
	"wharf/internal/testenv"
)

// TestAPIDocIsCurrent keeps docs/API.md's route table and role matrix equal
// to the router table and the system roles. Regenerate with
// UPDATE_DOCS=1 go test ./api -run TestAPIDocIsCurrent.
func TestAPIDocIsCurrent(t *testing.T) {
	const path = "../docs/API.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	text = replaceSection(t, text, "routes", routesTable())
	text = replaceSection(t, text, "roles", rolesMatrix(t))
	text = replaceSection(t, text, "session-only", sessionOnlyList())
	if text == string(doc) {
		return
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("docs/API.md is out of date with the router table: run UPDATE_DOCS=1 go test ./api -run TestAPIDocIsCurrent")
}

func replaceSection(t *testing.T, text, name, body string) string {
	begin, end := "<!-- BEGIN GENERATED: "+name+" -->\n", "<!-- END GENERATED: "+name+" -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("docs/API.md lacks the %s markers", name)
	}
	return text[:i+len(begin)] + body + text[j:]
}

func routesTable() string {
	var b strings.Builder
	b.WriteString("| Method | Path | Access | Notes |\n|---|---|---|---|\n")
	for _, r := range app.APIDescription().Routes() {
		var notes []string
		if r.Bulk {
			notes = append(notes, "bulk rate limit")
		}
		if r.SessionOnly {
			notes = append(notes, "session only (no API keys)")
		}
		if r.Unlimited {
			notes = append(notes, "not rate limited")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.Method, r.Path, r.Access, strings.Join(notes, "; "))
	}
	return b.String()
}

// sessionOnlyList lists the routes API keys can never use.
func sessionOnlyList() string {
	var b strings.Builder
	for _, r := range app.APIDescription().Routes() {
		if r.SessionOnly {
			fmt.Fprintf(&b, "- `%s %s`\n", r.Method, r.Path)
		}
	}
	return b.String()
}

func rolesMatrix(t *testing.T) string {
	db, err := database.Open(context.Background(), testenv.DatabaseURL(t), testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	var keys []string
	if err := db.Raw("SELECT resource || ':' || action FROM permissions ORDER BY resource, action").Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	manager, agent := identity.SystemRolePermissions(identity.RoleManager), identity.SystemRolePermissions(identity.RoleAgent)
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return ""
	}
	var b strings.Builder
	b.WriteString("| Permission | Admin | Manager | Agent |\n|---|---|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | yes | %s | %s |\n", k, mark(slices.Contains(manager, k)), mark(slices.Contains(agent, k)))
	}
	return b.String()
}
