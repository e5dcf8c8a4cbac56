package campaigns_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type checkOut struct {
	Columns []string `json:"columns"`
	Rows    int      `json:"rows"`
	Preview []struct {
		Row   int      `json:"row"`
		Cells []string `json:"cells"`
	} `json:"preview"`
	Mapping struct {
		PhoneNumber  string                       `json:"phone_number"`
		Name         string                       `json:"name"`
		Placeholders map[string]map[string]string `json:"placeholders"`
	} `json:"mapping"`
	Unmapped    []string `json:"unmapped"`
	Recipients  int      `json:"recipients"`
	Duplicates  int      `json:"duplicates"`
	Invalid     int      `json:"invalid"`
	InvalidRows []struct {
		Row     int    `json:"row"`
		Message string `json:"message"`
	} `json:"invalid_rows"`
}

// csvOf writes a recipients file of n rows: Mobile, Customer, Order, Note.
func csvOf(n int) []byte {
	var b bytes.Buffer
	b.WriteString("Mobile,Customer,Order,Note\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s,Customer %d,A-%05d,unused %d\n", number(i), i, i, i)
	}
	return b.Bytes()
}

const goodMapping = `{"phone_number": "Mobile", "name": "Customer", "placeholders": {"1": {"column": "Order"}, "2": {"value": "SPRING24"}}}`

// A CSV file with a mapping imports its rows as recipients: the mapped
// column and the fixed value stored under the placeholders' keys, the
// variable mapping set to them, the unmapped column not stored; the
// campaign then starts and sends the mapped values.
func TestCSVRecipientsImportWithAMapping(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, nil)
	f.StartWorker()
	a := f.Admin.Auth()
	c := f.campaign(0, map[string]string{"1": "name", "2": "name"})
	path := "/api/campaigns/" + c.ID + "/recipients/import"
	file := append(csvOf(3), []byte(number(1)+",Again,A-9,x\n\n")...) // a duplicate and a blank line
	var imp struct{ Imported, Duplicates, Invalid int }
	f.Upload(path, map[string]string{"mapping": goodMapping}, "file", "r.csv", file, a).Expect(t, 200).Into(t, &imp)
	if imp.Imported != 3 || imp.Duplicates != 1 || imp.Invalid != 0 {
		t.Fatalf("import: %+v", imp)
	}
	var page struct{ Items []recipientOut }
	f.Do("GET", "/api/campaigns/"+c.ID+"/recipients", nil, a).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 3 {
		t.Fatalf("%d recipients", len(page.Items))
	}
	r := page.Items[1]
	if r.Name != "Customer 1" || len(r.Data) != 2 || r.Data["1"] != "A-00001" || r.Data["2"] != "SPRING24" {
		t.Fatalf("recipient: %+v", r)
	}
	var got struct {
		VariableMapping map[string]string `json:"variable_mapping"`
	}
	f.Do("GET", "/api/campaigns/"+c.ID, nil, a).Expect(t, 200).Into(t, &got)
	if got.VariableMapping["1"] != "1" || got.VariableMapping["2"] != "2" || len(got.VariableMapping) != 2 {
		t.Fatalf("variable_mapping: %v", got.VariableMapping)
	}
	// The same file again: every number is already there.
	f.Upload(path, map[string]string{"mapping": goodMapping}, "file", "r.csv", file, a).Expect(t, 200).Into(t, &imp)
	if imp.Imported != 0 || imp.Duplicates != 4 {
		t.Fatalf("again: %+v", imp)
	}
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 30e9)
}

// Every refusal of a CSV import is a 400 naming its cause, and stores
// nothing.
func TestCSVRecipientsImportRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, nil)
	a := f.Admin.Auth()
	c := f.campaign(0, nil)
	path := "/api/campaigns/" + c.ID + "/recipients/import"
	var bad bytes.Buffer
	bad.WriteString("Mobile;Customer;Order\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&bad, "%s;C%d;A-%d\n", number(i), i, i)
	}
	bad.WriteString("12ab;Bad;A-1\n;Nobody;A-2\n") // rows 152 and 153
	for i := 0; i < 103; i++ {
		fmt.Fprintf(&bad, "x%d;Bad;A-1\n", i)
	}
	wide := "Mobile" + strings.Repeat(",c", 200) + "\n"
	long := "Mobile,Note\n" + number(0) + "," + strings.Repeat("x", 64<<10) + "\n"
	var rows bytes.Buffer
	rows.WriteString("Mobile\n")
	for i := 0; i <= 100_000; i++ {
		fmt.Fprintf(&rows, "+1555%07d\n", i)
	}
	for name, tc := range map[string]struct {
		fields map[string]string
		file   []byte
		want   string
	}{
		"no file":    {map[string]string{"mapping": goodMapping}, nil, "file is required"},
		"no mapping": {nil, csvOf(1), "mapping is required"},
		"mapping not JSON": {map[string]string{"mapping": `{"phone_number": `}, csvOf(1),
			`mapping must be a JSON object like {"phone_number": "Mobile"`},
		"unknown key": {map[string]string{"mapping": `{"phone": "Mobile"}`}, csvOf(1), `unknown field "phone"`},
		"no phone column": {map[string]string{"mapping": `{"placeholders": {"1": {"value": "x"}, "2": {"value": "y"}}}`}, csvOf(1),
			"mapping.phone_number is required"},
		"missing column": {map[string]string{"mapping": `{"phone_number": "Phone", "placeholders": {"1": {"value": "x"}, "2": {"value": "y"}}}`},
			csvOf(1), `mapping.phone_number names column "Phone", which the file does not have (columns: Mobile, Customer, Order, Note)`},
		"missing placeholder column": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"column": "Ordr"}, "2": {"value": "y"}}}`},
			csvOf(1), `mapping.placeholders.1 names column "Ordr", which the file does not have`},
		"unmapped placeholder": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"column": "Order"}}}`},
			csvOf(1), "mapping.placeholders leaves placeholders of template order_update without a value: 2 (map each to a column or a fixed value)"},
		"not a placeholder": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"value": "x"}, "2": {"value": "y"}, "3": {"value": "z"}}}`},
			csvOf(1), `mapping.placeholders names "3", which is not a placeholder of template order_update (placeholders: 1, 2)`},
		"column and value": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"column": "Order", "value": "x"}, "2": {"value": "y"}}}`},
			csvOf(1), "mapping.placeholders.1 has both a column and a value: give one"},
		"empty value": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"value": " "}, "2": {"value": "y"}}}`},
			csvOf(1), "mapping.placeholders.1 needs a column or a non-empty value"},
		"invalid numbers": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"column": "Order"}, "2": {"value": "y"}}}`},
			bad.Bytes(), `105 of 255 rows cannot be imported, so nothing was imported: row 152: Mobile: "12ab" is not a phone number; row 153: Mobile: missing; row 154: Mobile: "x0" is not a phone number`},
		"the count of the rest": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"column": "Order"}, "2": {"value": "y"}}}`},
			bad.Bytes(), `row 251: Mobile: "x97" is not a phone number; ... and 5 more`},
		"an empty cell": {map[string]string{"mapping": goodMapping}, []byte("Mobile,Customer,Order\n+15557000001,A,\n"),
			"row 2: Order: empty, and placeholder {{1}} needs a value"},
		"no rows":     {map[string]string{"mapping": goodMapping}, []byte("Mobile,Customer,Order\n"), "the file has no data rows"},
		"empty file":  {map[string]string{"mapping": goodMapping}, []byte(" \n"), "the file is empty: it needs a header row"},
		"201 columns": {map[string]string{"mapping": goodMapping}, []byte(wide), "line 1 has more than 200 columns: a row may have at most 200"},
		"long line":   {map[string]string{"mapping": goodMapping}, []byte(long), "line 2 is longer than 64 KB"},
		"not CSV":     {map[string]string{"mapping": goodMapping}, []byte("Mobile,Order\n\"+1555,x\n"), "the file is not valid CSV"},
		"too many rows": {map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"1": {"value": "x"}, "2": {"value": "y"}}}`},
			rows.Bytes(), "the file has more than 100,000 data rows"},
		"too large": {map[string]string{"mapping": goodMapping}, bytes.Repeat([]byte("a"), 32<<20+1), "the file is larger than 32 MB"},
	} {
		r := f.Upload(path, tc.fields, "file", "r.csv", tc.file, a)
		if tc.file == nil {
			r = f.Upload(path, tc.fields, "", "", nil, a)
		}
		if r.Expect(t, 400); !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want %q", name, r.Message, tc.want)
		}
	}
	if got := f.get(c.ID); got.TotalRecipients != 0 {
		t.Fatalf("%d recipients imported by refused uploads", got.TotalRecipients)
	}
	// A user without campaigns:update is refused; a campaign that left
	// draft takes no more.
	other := f.CreateUser(a, "viewer@example.com", "Agent")
	f.Upload(path, map[string]string{"mapping": goodMapping}, "file", "r.csv", csvOf(1), other.Auth()).Expect(t, 403)
	f.Upload(path, map[string]string{"mapping": goodMapping}, "file", "r.csv", csvOf(1), a).Expect(t, 200)
	f.Do("POST", "/api/campaigns/"+c.ID+"/cancel", nil, a).Expect(t, 200)
	if r := f.Upload(path, map[string]string{"mapping": goodMapping}, "file", "r.csv", csvOf(1), a).Expect(t, 409); !strings.Contains(r.Message, "only be imported into a draft") {
		t.Fatalf("cancelled: %s", r.Message)
	}
}

// The dry run reads a file as the import does, before any campaign: the
// columns, the first rows, a proposed mapping when none is given, the
// placeholders left unmapped, and the rows an import would refuse with
// their row numbers.
func TestCSVRecipientsCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, nil)
	a := f.Admin.Auth()
	const path = "/api/campaigns/recipients/check"
	file := append(csvOf(7), []byte("12ab,Bad,A-1,x\n"+number(0)+",Twice,A-2,y\n")...)
	var chk checkOut
	f.Upload(path, map[string]string{"template_id": f.templateID}, "file", "r.csv", file, a).Expect(t, 200).Into(t, &chk)
	if strings.Join(chk.Columns, ",") != "Mobile,Customer,Order,Note" || chk.Rows != 9 || len(chk.Preview) != 5 ||
		chk.Preview[0].Row != 2 || chk.Preview[0].Cells[0] != number(0) {
		t.Fatalf("check: %+v", chk)
	}
	if chk.Mapping.PhoneNumber != "Mobile" || len(chk.Mapping.Placeholders) != 0 || strings.Join(chk.Unmapped, ",") != "1,2" {
		t.Fatalf("proposed mapping: %+v, unmapped %v", chk.Mapping, chk.Unmapped)
	}
	if chk.Invalid != 1 || len(chk.InvalidRows) != 1 || chk.InvalidRows[0].Row != 9 ||
		chk.InvalidRows[0].Message != `Mobile: "12ab" is not a phone number` || chk.Recipients != 7 || chk.Duplicates != 1 {
		t.Fatalf("check: %+v", chk)
	}
	f.Upload(path, map[string]string{"template_id": f.templateID, "mapping": goodMapping}, "file", "r.csv", file, a).Expect(t, 200).Into(t, &chk)
	if len(chk.Unmapped) != 0 || chk.Mapping.Placeholders["2"]["value"] != "SPRING24" || chk.Invalid != 1 {
		t.Fatalf("check with a mapping: %+v", chk)
	}
	// Without a template, no placeholder is required or refused.
	f.Upload(path, map[string]string{"mapping": `{"phone_number": "Mobile", "placeholders": {"7": {"value": "x"}}}`}, "file", "r.csv", file, a).
		Expect(t, 200).Into(t, &chk)
	if len(chk.Unmapped) != 0 || chk.Recipients != 7 {
		t.Fatalf("check without a template: %+v", chk)
	}
	for name, tc := range map[string]struct {
		fields map[string]string
		file   []byte
		want   string
	}{
		"no file":          {map[string]string{}, nil, "file is required"},
		"bad template":     {map[string]string{"template_id": "nope"}, file, "template_id"},
		"unknown template": {map[string]string{"template_id": "00000000-0000-0000-0000-000000000001"}, file, "template_id does not name a template of this organization"},
		"missing column":   {map[string]string{"mapping": `{"phone_number": "Phone"}`}, file, `mapping.phone_number names column "Phone"`},
		"201 columns":      {nil, []byte("Mobile" + strings.Repeat(",c", 200) + "\n"), "line 1 has more than 200 columns"},
	} {
		r := f.Upload(path, tc.fields, "file", "r.csv", tc.file, a)
		if tc.file == nil {
			r = f.Upload(path, tc.fields, "", "", nil, a)
		}
		if r.Expect(t, 400); !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want %q", name, r.Message, tc.want)
		}
	}
	agent := f.CreateUser(a, "agent@example.com", "Agent")
	f.Upload(path, nil, "file", "r.csv", file, agent.Auth()).Expect(t, 403)
}

// A template answers the parameters a send needs, which the console maps.
func TestTemplatesAnswerTheirParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_1K", nil, nil)
	var tmpl struct {
		Parameters []struct{ Key, Component, Name string }
	}
	f.Do("GET", "/api/templates/"+f.templateID, nil, f.Admin.Auth()).Expect(t, 200).Into(t, &tmpl)
	b, _ := json.Marshal(tmpl.Parameters)
	if string(b) != `[{"Key":"1","Component":"body","Name":"1"},{"Key":"2","Component":"body","Name":"2"}]` {
		t.Fatalf("parameters: %s", b)
	}
}
