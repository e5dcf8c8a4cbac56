package e2e_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// With mask_phone_numbers on, a phone search matches only a whole number:
// a fragment of a masked number (or of a name that looks like one) finds
// nothing in the contacts list, the export's search and the call logs'
// phone filter, so that which contacts or calls a fragment matches never
// reveals masked digits; the whole number, written any way, finds its
// contact or call, and names are still searched by their text.
func TestMaskedNumbersAreFoundOnlyWhole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	for _, c := range []map[string]any{
		{"phone_number": "+15550180001", "name": "Ann"},
		{"phone_number": "+15550180002", "name": "+1 555 099 7777"}, // a name that looks like a number: masked too
		{"phone_number": "+15550180003", "name": "Bob"},
	} {
		f.Do("POST", "/api/contacts", c, a).Expect(t, 201)
	}
	rows := callRows{t, f}
	day := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ann := rows.call(uuid.MustParse(f.orgID), day, func(l *models.CallLog) { l.CallerPhone = "+15550180001" })
	uk := rows.call(uuid.MustParse(f.orgID), day.Add(time.Hour), func(l *models.CallLog) { l.CallerPhone = "+44 7700 900456" })

	contacts := func(search string) string {
		t.Helper()
		var page struct {
			Items []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"items"`
		}
		f.Do("GET", "/api/contacts?search="+url.QueryEscape(search), nil, a).Expect(t, 200).Into(t, &page)
		var names []string
		for _, c := range page.Items {
			names = append(names, c.Name)
		}
		return strings.Join(names, ",")
	}
	exported := func(search string) int {
		t.Helper()
		r := f.Do("POST", "/api/export", map[string]any{"table": "contacts", "filters": map[string]string{"search": search}}, a).Expect(t, 200)
		return len(readCSV(t, r.Body)) - 1
	}
	calls := func(phone string) []string {
		t.Helper()
		var out callLogsOut
		f.Do("GET", "/api/call-logs?phone="+url.QueryEscape(phone), nil, a).Expect(t, 200).Into(t, &out)
		return callIDs(out)
	}

	// Unmasked, fragments find.
	if got := contacts("0180001"); got != "Ann" {
		t.Fatalf("unmasked fragment: %q", got)
	}
	if n := exported("0180001"); n != 1 {
		t.Fatalf("unmasked export of a fragment: %d rows", n)
	}
	if got := calls("0180001"); len(got) != 1 || got[0] != ann.ID.String() {
		t.Fatalf("unmasked call-log fragment: %v", got)
	}

	f.Do("PUT", "/api/org/settings", map[string]any{"mask_phone_numbers": true}, a).Expect(t, 200)
	for _, fragment := range []string{"0180001", "555", "+1555018", "099 77", "1"} {
		if got := contacts(fragment); got != "" {
			t.Errorf("masked: the fragment %q finds contacts %q", fragment, got)
		}
		if n := exported(fragment); n != 0 {
			t.Errorf("masked: the fragment %q exports %d rows", fragment, n)
		}
	}
	for _, fragment := range []string{"0180001", "555", "7700", "900456"} {
		if got := calls(fragment); len(got) != 0 {
			t.Errorf("masked: the fragment %q finds calls %v", fragment, got)
		}
	}
	for _, whole := range []string{"+15550180001", "+1 555 018 0001", "15550180001", "+1 (555) 018-0001"} {
		if got := contacts(whole); got != "Ann" {
			t.Errorf("masked: the whole number %q finds %q, want Ann", whole, got)
		}
		if n := exported(whole); n != 1 {
			t.Errorf("masked: the whole number %q exports %d rows", whole, n)
		}
		if got := calls(whole); len(got) != 1 || got[0] != ann.ID.String() {
			t.Errorf("masked: the whole number %q finds calls %v", whole, got)
		}
	}
	if got := calls("+44 7700 900456"); len(got) != 1 || got[0] != uk.ID.String() {
		t.Errorf("masked: the UK caller's whole number finds %v", got)
	}
	if got := contacts("Bob"); got != "Bob" {
		t.Errorf("masked: a name search finds %q", got)
	}
	if n := exported("an"); n != 1 {
		t.Errorf("masked: the export's name search finds %d rows", n)
	}
}
