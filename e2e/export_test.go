package e2e_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// readCSV parses an export's body.
func readCSV(t *testing.T, body []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, body)
	}
	return rows
}

// Contacts export as CSV: the header of labels, default columns, tags
// joined by commas, formula cells defused, filters, masking, the file's
// name, and the refusals (unknown table or column, no permission).
func TestExportContactsAndTags(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	var c struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550201001", "name": "=HYPERLINK(\"http://x\")"}, a).Expect(t, 201).Into(t, &c)
	f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{"tags": []string{"vip", "lead"}}, a).Expect(t, 200)
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550201002", "name": "Bob"}, a).Expect(t, 201)

	r := f.Do("POST", "/api/export", map[string]any{"table": "contacts"}, a).Expect(t, 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !regexp.MustCompile(`^attachment; filename="contacts_export_\d{8}T\d{6}Z\.csv"$`).MatchString(cd) {
		t.Fatalf("Content-Disposition %q", cd)
	}
	rows := readCSV(t, r.Body)
	if strings.Join(rows[0], "|") != "Phone Number|Name|Tags" || len(rows) != 3 {
		t.Fatalf("export %v", rows)
	}
	if rows[1][0] != "'+15550201001" || rows[1][1] != `'=HYPERLINK("http://x")` || rows[1][2] != "lead,vip" {
		t.Fatalf("first row %q: formula cells must start with a quote, tags joined by commas", rows[1])
	}

	r = f.Do("POST", "/api/export", map[string]any{"table": "contacts", "columns": []string{"profile_name", "created_at"},
		"filters": map[string]string{"tags": "VIP, other"}}, a).Expect(t, 200)
	rows = readCSV(t, r.Body)
	if len(rows) != 2 || strings.Join(rows[0], "|") != "Name|Created At" || !strings.HasSuffix(rows[1][1], "Z") {
		t.Fatalf("tag-filtered export %v", rows)
	}
	rows = readCSV(t, f.Do("POST", "/api/export", map[string]any{"table": "contacts", "filters": map[string]string{"search": "bob"}}, a).Expect(t, 200).Body)
	if len(rows) != 2 || rows[1][1] != "Bob" {
		t.Fatalf("searched export %v", rows)
	}

	f.Do("PUT", "/api/org/settings", map[string]any{"mask_phone_numbers": true}, a).Expect(t, 200)
	rows = readCSV(t, f.Do("POST", "/api/export", map[string]any{"table": "contacts", "columns": []string{"phone_number"}}, a).Expect(t, 200).Body)
	for _, row := range rows[1:] {
		if row[0] == "" || strings.Contains(row[0], "0201001") || strings.Contains(row[0], "0201002") {
			t.Fatalf("masked export shows %q", row[0])
		}
	}

	for body, want := range map[string]string{
		`{"table": "users"}`:                           "table must be contacts or tags",
		`{"table": "contacts", "columns": ["secret"]}`: `unknown column "secret"`,
		`{"table": "tags", "filters": {"tags": "x"}}`:  "contacts only",
	} {
		var v map[string]any
		_ = json.Unmarshal([]byte(body), &v)
		if r := f.Do("POST", "/api/export", v, a).Expect(t, 400); !strings.Contains(r.Message, want) {
			t.Fatalf("%s: %q", body, r.Message)
		}
	}
	agent := f.CreateUser(a, "exporter@example.test", "Agent")
	if r := f.Do("POST", "/api/export", map[string]any{"table": "contacts"}, agent.Auth()).Expect(t, 403); !strings.Contains(r.Message, "contacts:export") {
		t.Fatalf("agent: %q", r.Message)
	}
	f.Do("GET", "/api/export/contacts/config", nil, agent.Auth()).Expect(t, 403)

	var cfg struct {
		Table          string `json:"table"`
		Columns        []struct{ Key, Label string }
		DefaultColumns []string `json:"default_columns"`
	}
	f.Do("GET", "/api/export/contacts/config", nil, a).Expect(t, 200).Into(t, &cfg)
	if cfg.Table != "contacts" || len(cfg.Columns) != 8 || strings.Join(cfg.DefaultColumns, ",") != "phone_number,profile_name,tags" {
		t.Fatalf("config %+v", cfg)
	}

	f.Do("POST", "/api/tags", map[string]any{"name": "-minus", "description": "starts with a minus"}, a).Expect(t, 201)
	rows = readCSV(t, f.Do("POST", "/api/export", map[string]any{"table": "tags"}, a).Expect(t, 200).Body)
	if strings.Join(rows[0], "|") != "Name|Color|Description" || len(rows) != 4 || rows[1][0] != "'-minus" {
		t.Fatalf("tags export %v", rows)
	}
}
