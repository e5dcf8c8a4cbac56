package e2e_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of the test's own connection

	"wharf/internal/apptest"
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

// stalledExport sends POST /api/export on a raw connection with a small
// receive buffer and never reads, like a client that stopped reading: once
// the socket buffers are full, the api's writes block.
func stalledExport(t *testing.T, addr, token, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "POST /api/export HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n%s", addr, token, len(body), body)
	return conn
}

// Exports cannot take the api down: 30 clients that send an export of
// 20,000 contacts and never read get at most EXPORT_CONCURRENCY_PER_ORG
// exports (the others a 429 at once); while those stall, the contacts list
// and /readyz answer within a second; after EXPORT_STALL_TIMEOUT without
// progress each stalled export is cut off, its transaction ends and its
// connection returns to the pool. (The stall timeout is 10 s, not 30 s, so
// that the test waits less, but long enough for the checks made while the
// exports stall on a busy machine.)
func TestStalledExportsHoldNoConnection(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, map[string]string{"EXPORT_STALL_TIMEOUT": "10s", "EXPORT_CONCURRENCY": "8", "EXPORT_CONCURRENCY_PER_ORG": "3"})
	admin := e.Admin()
	var orgID string
	if err := e.DB.Raw(`SELECT id FROM organizations WHERE name = 'Bootstrap Org'`).Scan(&orgID).Error; err != nil || orgID == "" {
		t.Fatalf("organization: %v", err)
	}
	// Long names: each export is about 6 MB, more than the kernel's socket
	// buffers of a connection take (up to 4 MB on the sending side), so
	// that a client that does not read stalls the api's writes.
	if err := e.DB.Exec(`INSERT INTO contacts (organization_id, phone_number, name, created_at)
		SELECT ?, '+1555' || lpad(i::text, 7, '0'), 'Contact number ' || i || ' ' || repeat('x', 250), now() + i * interval '1 ms'
		FROM generate_series(0, 19999) AS i`, orgID).Error; err != nil {
		t.Fatal(err)
	}
	// The test watches the database on a connection of its own: the api's
	// pool is what is at stake.
	watch, err := sql.Open("pgx", e.Environ["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watch.Close() })
	inTransaction := func() int64 {
		var n int64
		if err := watch.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL
			AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	addr := strings.TrimPrefix(e.Server.URL, "http://")
	body := `{"table": "contacts", "columns": ["phone_number", "profile_name", "tags", "platform_account", "assigned_user_id", "last_message_at", "created_at", "updated_at"]}`
	conns := make([]net.Conn, 30)
	for i := range conns {
		conns[i] = stalledExport(t, addr, admin.AccessToken, body)
	}
	// The exports start, then stall: the number of transactions rises, then
	// holds (a second apart, twice the same).
	last := int64(-1)
	apptest.Eventually(t, 60*time.Second, "exports stalled in their transactions", func() bool {
		n := inTransaction()
		steady := n > 0 && n == last
		last = n
		if !steady {
			time.Sleep(time.Second)
		}
		return steady
	})

	// While they stall, the api answers everyone else.
	client := &http.Client{Timeout: time.Second}
	answers := func(path string) bool {
		for range 3 { // a busy test machine may be slow once
			req, _ := http.NewRequest("GET", e.Server.URL+path, nil)
			admin.Auth()(req)
			res, err := client.Do(req)
			if err != nil {
				t.Logf("%s: %v", path, err)
				continue
			}
			_ = res.Body.Close()
			if res.StatusCode == 200 {
				return true
			}
			t.Logf("%s: %d", path, res.StatusCode)
		}
		return false
	}
	for _, path := range []string{"/api/contacts?limit=20", "/readyz", "/api/contacts?search=Contact%20number%2019999"} {
		if !answers(path) {
			t.Fatalf("%s did not answer 200 within a second while exports stalled", path)
		}
	}
	if n := inTransaction(); n != 3 || last != 3 {
		t.Fatalf("%d then %d connections in a transaction, want the 3 exports an organization may run at once", last, n)
	}

	// Cut off after the stall timeout: the transactions end.
	stalled := time.Now()
	apptest.Eventually(t, 60*time.Second, "stalled exports cut off", func() bool { return inTransaction() == 0 })
	t.Logf("the stalled exports' transactions ended %s after the checks", time.Since(stalled).Round(time.Second))

	// 3 were answered 200 (their files cut short; the kernel still holds
	// their ends, which drain slowly to a client that stopped reading, so
	// the test reads their status only); 27 were refused with a 429.
	codes := map[string]int{}
	for _, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		rd := bufio.NewReader(conn)
		status, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		status = strings.TrimSpace(status)
		codes[status]++
		if strings.HasPrefix(status, "HTTP/1.1 429") {
			rest, _ := io.ReadAll(rd) // Connection: close
			if !strings.Contains(string(rest), "at most 3 at a time") || !strings.Contains(string(rest), "Retry-After: 5") {
				t.Fatalf("429 without the limit: %q", rest)
			}
		}
	}
	if codes["HTTP/1.1 200 OK"] != 3 || codes["HTTP/1.1 429 Too Many Requests"] != 27 {
		t.Fatalf("answers %v, want 3 exports and 27 refusals", codes)
	}

	// The slots are free again: an export that is read goes through.
	r := e.Do("POST", "/api/export", map[string]any{"table": "contacts", "columns": []string{"phone_number"}}, admin.Auth()).Expect(t, 200)
	if rows := readCSV(t, r.Body); len(rows) != 20001 {
		t.Fatalf("export after the cut-off: %d rows", len(rows))
	}
}
