package campaigns

import (
	"encoding/json"
	"testing"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// Whether a campaign has recipients is answered from the first one: the
// readiness check runs whenever a lane loads its run, and a count read all
// 20,000 of them (364 pages) every time.
func TestReadinessReadsOneRecipient(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	tmpl := f.Template(f.Account(org.ID), "Hi {{1}}")
	c, _ := f.Campaign(tmpl, 0)
	empty, _ := f.Campaign(tmpl, 0)
	manyRecipients(t, f, c, "+1555032", 20000)
	for _, tc := range []struct {
		name string
		id   any
		want bool
	}{{"with recipients", c.ID, true}, {"without", empty.ID, false}} {
		var has bool
		if err := f.DB.Raw(hasRecipientsSQL, tc.id).Scan(&has).Error; err != nil || has != tc.want {
			t.Errorf("%s: has recipients %v (%v), want %v", tc.name, has, err, tc.want)
		}
	}
	var raw string
	if err := f.DB.Raw("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+hasRecipientsSQL, c.ID).Row().Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var plan []struct{ Plan map[string]any }
	if err := json.Unmarshal([]byte(raw), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan %s: %v", raw, err)
	}
	if pages := mostPages(plan[0].Plan); pages > 10 {
		t.Errorf("the readiness check read %d pages for one recipient:\n%s", pages, raw)
	}
}

// mostPages is the largest number of shared pages (hit or read) any node
// of an EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) plan took.
func mostPages(node map[string]any) int {
	hit, _ := node["Shared Hit Blocks"].(float64)
	read, _ := node["Shared Read Blocks"].(float64)
	most := int(hit + read)
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		if m, ok := c.(map[string]any); ok {
			most = max(most, mostPages(m))
		}
	}
	return most
}
