package campaigns_test

import (
	"fmt"
	"strings"
	"testing"
)

// A recipients upload is bounded in width like an import file: a recipient
// of more than 200 fields or 64 KB of JSON is a 400 naming it and the limit,
// answered as soon as it is read (the invalid JSON after it is never
// parsed), and nothing is imported.
func TestRecipientUploadsAreBoundedInWidth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, nil)
	a := f.Admin.Auth()
	c := f.campaign(0, nil)
	path := "/api/campaigns/" + c.ID + "/recipients/import"
	fields := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"phone_number": "+15557010001"`)
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, `, "f%d": %d`, i, i)
		}
		return b.String() + "}"
	}
	for name, tc := range map[string]struct{ body, want string }{
		"201 fields": {`{"recipients": [{"phone_number": "+15557010000"}, ` + fields(201) + `]}`,
			"recipients[1] has more than 200 fields: a recipient may have at most 200"},
		"over 64 KB": {`{"recipients": [{"phone_number": "+15557010000", "note": "` + strings.Repeat("x", 64<<10) + `"}]}`,
			"recipients[0] is larger than 64 KB: a recipient may have at most 65536 bytes"},
		"refused before the rest": {`{"recipients": [` + fields(300) + `, this is not JSON`,
			"recipients[0] has more than 200 fields"},
		"not an object": {`{"recipients": [{"phone_number": "+15557010000"}, 7]}`, "recipients[1] must be of type object"},
		"not an array":  {`{"recipients": {"phone_number": "+15557010000"}}`, "recipients must be of type array"},
		"not JSON":      {`{"recipients": [{"phone_number": "+1555`, "request body is not valid JSON"},
	} {
		if r := f.Do("POST", path, tc.body, a).Expect(t, 400); !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want %q", name, r.Message, tc.want)
		}
	}
	if got := f.get(c.ID); got.TotalRecipients != 0 {
		t.Fatalf("%d recipients imported by refused uploads", got.TotalRecipients)
	}
	var imp struct{ Imported int }
	f.Do("POST", path, `{"recipients": [`+fields(200)+`]}`, a).Expect(t, 200).Into(t, &imp)
	if imp.Imported != 1 {
		t.Fatalf("a recipient of 200 fields: %+v", imp)
	}
}
