package dataops

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
)

// The file's format: a BOM and ";" separators, quoted fields over several
// lines, blank lines and ragged rows; row numbers are a spreadsheet's.
func TestParseCSVFormatAndRowNumbers(t *testing.T) {
	t.Parallel()
	data := "\xEF\xBB\xBFPhone Number;Name;Notes\r\n" + // row 1
		"+15550100001;\"Ann; the first\";x\r\n" + // row 2
		"+15550100002;\"Bob\nover\nthree lines\"\r\n" + // row 3 (ragged: 2 cells)
		"\r\n" + // row 4: blank
		"+15550100003;Cy;a;b;c\r\n" + // row 5 (ragged: 5 cells)
		";;\r\n" + // row 6: all empty, no data row
		"+15550100004;Di\r\n" // row 7
	f, err := parseCSV([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.header, "|") != "Phone Number|Name|Notes" {
		t.Fatalf("header %q (the BOM must go, the separator is ;)", f.header)
	}
	var rows []string
	for _, r := range f.records {
		rows = append(rows, fmt.Sprintf("%d:%s", r.row, r.cells[1]))
	}
	want := "2:Ann; the first|3:Bob\nover\nthree lines|5:Cy|7:Di"
	if got := strings.Join(rows, "|"); got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if separator([]byte(`"a;b;c",d`+"\n1;2;3;4;5")) != ',' {
		t.Fatal("separators inside quotes and after the header line must not count")
	}
}

func TestParseCSVRefusesWholeFiles(t *testing.T) {
	t.Parallel()
	var big bytes.Buffer
	big.WriteString("phone_number\n")
	for i := 0; i < MaxImportRows+1; i++ {
		fmt.Fprintf(&big, "+1555%07d\n", i)
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"10,001 rows":  {big.Bytes(), "more than 10,000 data rows"},
		"over 10 MB":   {bytes.Repeat([]byte("a"), MaxImportBytes+1), "larger than 10 MB"},
		"not UTF-8":    {[]byte("name\n\xff\xfe\n"), "not UTF-8"},
		"empty":        {[]byte("\xEF\xBB\xBF \n"), "empty"},
		"broken quote": {[]byte("name\n\"abc\n"), "not valid CSV: line 2"},
	} {
		_, err := parseCSV(tc.data)
		if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	exact := bytes.NewBufferString("phone_number\n")
	for i := 0; i < MaxImportRows; i++ {
		fmt.Fprintf(exact, "+1555%07d\n\n", i) // blank lines are not data rows
	}
	if f, err := parseCSV(exact.Bytes()); err != nil || len(f.records) != MaxImportRows {
		t.Fatalf("10,000 rows: %v", err)
	}
}

// Headers: column_mapping first, then lower-cased key or label; unknown
// headers ignored; errors name what is wrong.
func TestPlanImportMatchesHeaders(t *testing.T) {
	t.Parallel()
	contacts, _ := tableOf("contacts")
	p, err := contacts.planImport([]string{"Mobile", "name", "TAGS", "Platform Account", "Shoe size"}, map[string]string{"mobile": "phone_number"})
	if err != nil {
		t.Fatal(err)
	}
	if p["phone_number"] != 0 || p["profile_name"] != 1 || p["tags"] != 2 || p["platform_account"] != 3 || len(p) != 4 {
		t.Fatalf("plan %v", p)
	}
	// The mapping wins over a header that would match by itself.
	p, err = contacts.planImport([]string{"phone_number", "Cell"}, map[string]string{"Cell": "phone_number"})
	if err != nil || p["phone_number"] != 1 {
		t.Fatalf("plan %v, %v", p, err)
	}
	for name, tc := range map[string]struct {
		header  []string
		mapping map[string]string
		want    string
	}{
		"unknown header":   {[]string{"phone_number"}, map[string]string{"Phone": "phone_number"}, `"Phone" is not a header of the file`},
		"unknown column":   {[]string{"phone_number", "x"}, map[string]string{"x": "email"}, `"email", which is not a column of contacts`},
		"required missing": {[]string{"Name", "Tags"}, nil, "no column for the required phone_number"},
		"two headers":      {[]string{"Phone Number", "phone_number"}, nil, "both match column phone_number"},
		"two mappings":     {[]string{"a", "b"}, map[string]string{"a": "phone_number", "b": "phone_number"}, "both map to phone_number"},
	} {
		_, err := contacts.planImport(tc.header, tc.mapping)
		if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// Width: at most 200 cells a row and 64 KB a line, refused with the line's
// number before the CSV reader builds a cell; separators and line breaks
// inside quotes make no cell and no line of a row.
func TestParseCSVRefusesWideFiles(t *testing.T) {
	t.Parallel()
	cols := func(n int) string { return strings.Repeat("a,", n-1) + "a" }
	for name, tc := range map[string]struct {
		data string
		want string // "" accepts
	}{
		"200 columns":               {"phone_number\n" + cols(200) + "\n", ""},
		"201 columns in the header": {cols(201) + "\n+15550100001\n", "line 1 has more than 200 columns: a row may have at most 200"},
		"201 columns on line 3":     {"phone_number\n+15550100001\n" + cols(201) + "\n", "line 3 has more than 200 columns"},
		"201 columns with ;":        {"phone_number;name\n" + strings.Repeat("a;", 200) + "a\n", "line 2 has more than 200 columns"},
		"separators inside quotes":  {"phone_number\n\"" + strings.Repeat(",", 500) + "\"\n", ""},
		"a quoted row over lines":   {"phone_number,notes\n1,\"" + strings.Repeat(",\n", 300) + "\",x\n", ""},
		"a line of 64 KB":           {"phone_number\n" + strings.Repeat("a", MaxImportLine) + "\r\n", ""},
		"a line over 64 KB":         {"phone_number\n1\n" + strings.Repeat("a", MaxImportLine+1) + "\n", "line 3 is longer than 64 KB: a line may have at most 65536 bytes"},
		"the last line over 64 KB":  {"phone_number\n" + strings.Repeat("a", MaxImportLine+1), "line 2 is longer than 64 KB"},
		"a quoted line over 64 KB":  {"phone_number\n\"a\n" + strings.Repeat("b", MaxImportLine+1) + "\"\n", "line 3 is longer than 64 KB"},
		"64 KB lines of one quoted": {"phone_number\n\"" + strings.Repeat(strings.Repeat("b", MaxImportLine-1)+"\n", 3) + "\"\n", ""},
		"a header line over 64 KB":  {strings.Repeat("h", MaxImportLine+1) + "\n1\n", "line 1 is longer than 64 KB"},
		"the limit counts no CR/LF": {"phone_number\r\n" + strings.Repeat("a", MaxImportLine) + "\r\n1\r\n", ""},
	} {
		_, err := parseCSV([]byte(tc.data))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case tc.want != "" && (!apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// A 10 MB line of commas is refused before it is parsed: the refusal
// allocates next to nothing, where the CSV reader would build ten million
// cells (hundreds of MB). Not parallel: it measures the process's
// allocations.
func TestParseCSVRefusesAWideLineBeforeParsingIt(t *testing.T) {
	data := append([]byte("phone_number\n"), bytes.Repeat([]byte(","), MaxImportBytes-20)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := parseCSV(data)
	runtime.ReadMemStats(&after)
	if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), "line 2 has more than 200 columns") {
		t.Fatalf("%v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("%d bytes allocated to refuse the file: it was parsed", n)
	}
}
