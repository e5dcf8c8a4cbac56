package dataops

import (
	"bytes"
	"encoding/csv"
	"io"
	"slices"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
)

// FuzzParseCSV checks the import file's parser on any bytes: it never
// panics; a refusal is a 400 (apperr.Invalid), never an internal error; an
// accepted file keeps every limit (10 MB, 10,000 data rows, 200 cells a
// row, 64 KB a line), numbers its rows as a spreadsheet does (from 2,
// increasing) and has no blank row; and what it read, written out again as
// CSV with the same separator, reads back the same (header and cells).
func FuzzParseCSV(f *testing.F) {
	for _, seed := range []string{
		"phone_number\n+15550100001\n",
		"\xEF\xBB\xBFPhone Number;Name;Notes\r\n+15550100001;\"Ann; the first\";x\r\n\r\n+15550100002;\"Bob\nover lines\"\r\n",
		"name,color\n\"a \"\"quoted\"\" tag\",red\n,,\n  ,  \n",
		"a;b,c\n1;2;3;4\n",
		"phone_number\n\"open\n",
		"phone_number\n" + strings.Repeat("a,", 200) + "\n",
		"x\n\"" + strings.Repeat(",", 300) + "\"\n",
		"h\r\n\"a\rb\"\r\n",
		"\"\"\n\"\"\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parsed, err := parseCSV(data)
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("refused with a %v error, not a 400: %v", apperr.KindOf(err), err)
			}
			checkWidthRefusal(t, data, err)
			return
		}
		checkParsed(t, data, parsed)
		sep := separator(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF")))
		again := writeCSV(t, parsed, sep)
		if fitsLimits(again) {
			reread, err := parseCSV(again)
			if err != nil {
				t.Fatalf("the file written again is refused: %v\nwritten: %q", err, again)
			}
			if !slices.Equal(reread.header, parsed.header) {
				t.Fatalf("header %q read back as %q", parsed.header, reread.header)
			}
			if len(reread.records) != len(parsed.records) {
				t.Fatalf("%d records read back as %d", len(parsed.records), len(reread.records))
			}
			for i := range parsed.records {
				if !slices.Equal(reread.records[i].cells, parsed.records[i].cells) {
					t.Fatalf("record %d %q read back as %q", i, parsed.records[i].cells, reread.records[i].cells)
				}
			}
		}
	})
}

// checkWidthRefusal checks a refusal for width against encoding/csv: a
// file refused for a long line has one; a file refused for too many
// columns is one that encoding/csv refuses too, or reads with a record of
// more than MaxImportColumns cells.
func checkWidthRefusal(t *testing.T, data []byte, err error) {
	t.Helper()
	body := bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	switch {
	case strings.Contains(err.Error(), "longer than 64 KB"):
		if fitsLimits(body) {
			t.Fatalf("refused for a long line, but no line is over 64 KB: %v", err)
		}
	case strings.Contains(err.Error(), "columns"):
		r := csv.NewReader(bytes.NewReader(body))
		r.Comma = separator(body)
		r.FieldsPerRecord = -1
		for {
			rec, rerr := r.Read()
			if rerr == io.EOF {
				t.Fatalf("refused for its columns, but encoding/csv reads no row of more than %d: %v", MaxImportColumns, err)
			}
			if rerr != nil || len(rec) > MaxImportColumns {
				return // encoding/csv refuses the file too, or sees the wide row
			}
		}
	}
}

// checkParsed checks the invariants of an accepted file.
func checkParsed(t *testing.T, data []byte, parsed *csvFile) {
	t.Helper()
	if len(data) > MaxImportBytes {
		t.Fatalf("accepted %d bytes", len(data))
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSuffix(line, []byte("\r"))) > MaxImportLine {
			t.Fatalf("accepted line %d of %d bytes", i+1, len(line))
		}
	}
	if len(parsed.header) > MaxImportColumns || len(parsed.records) > MaxImportRows {
		t.Fatalf("accepted %d header cells, %d records", len(parsed.header), len(parsed.records))
	}
	last := 1
	for _, r := range parsed.records {
		if len(r.cells) > MaxImportColumns {
			t.Fatalf("row %d has %d cells", r.row, len(r.cells))
		}
		if r.row <= last {
			t.Fatalf("row %d after row %d", r.row, last)
		}
		if blank(r.cells) {
			t.Fatalf("blank row %d is a data row", r.row)
		}
		last = r.row
	}
	for _, h := range parsed.header {
		if h != strings.TrimSpace(h) {
			t.Fatalf("header %q not trimmed", h)
		}
	}
}

// writeCSV writes a parsed file out again: the header's cells always
// quoted (so that the separator found in it is sep again), the records
// as encoding/csv writes them.
func writeCSV(t *testing.T, parsed *csvFile, sep rune) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, h := range parsed.header {
		if i > 0 {
			b.WriteRune(sep)
		}
		b.WriteString(`"` + strings.ReplaceAll(h, `"`, `""`) + `"`)
	}
	b.WriteByte('\n')
	w := csv.NewWriter(&b)
	w.Comma = sep
	for _, r := range parsed.records {
		if err := w.Write(r.cells); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fitsLimits reports whether a written file is within the size and line
// limits (quoting can lengthen a line past 64 KB; such a file is refused,
// rightly, and says nothing about the parser).
func fitsLimits(data []byte) bool {
	if len(data) > MaxImportBytes {
		return false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSuffix(line, []byte("\r"))) > MaxImportLine {
			return false
		}
	}
	return true
}
