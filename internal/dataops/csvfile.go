package dataops

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"wharf/internal/infra/apperr"
)

// The limits of an import file: its size and data rows (the spec's), and
// its width: the columns of a row and the bytes of a line. Width is checked
// before the file is parsed, because the CSV reader builds every cell of a
// record first: one 10 MB line of commas would be ten million cells, about
// a gigabyte of the api's memory.
const (
	MaxImportBytes   = 10 << 20
	MaxImportRows    = 10000
	MaxImportColumns = 200
	MaxImportLine    = 64 << 10
)

// record is a data row of an import file. row is its number as a
// spreadsheet shows it: the header is row 1, and every record (a quoted
// field's line breaks included) and every blank line is one row.
type record struct {
	row   int
	cells []string
}

// csvFile is a parsed import file.
type csvFile struct {
	header  []string
	records []record
}

// parseCSV reads an import file: UTF-8 with or without a byte order mark,
// the separator (";" or ",") detected from the header line, quoted fields
// with line breaks, rows of any length. Blank lines and rows whose cells
// are all empty are no data rows. Any breach of the limits or of CSV is an
// error for the whole file.
func parseCSV(data []byte) (*csvFile, error) {
	return parseCSVWithin(data, CSVLimits{MaxBytes: MaxImportBytes, MaxRows: MaxImportRows})
}

// CSVLimits are the bounds of a file other than its width, which is always
// MaxImportColumns cells a row and MaxImportLine bytes a line.
type CSVLimits struct {
	MaxBytes int // the file's size
	MaxRows  int // its data rows
}

// CSVTable is a CSV file as read by ParseCSV.
type CSVTable struct {
	Header []string // trimmed
	Rows   []CSVRow // the data rows, blank ones left out
}

// CSVRow is a data row: its number as a spreadsheet shows it (the header
// is row 1; /api/import's messages use the same numbers) and its cells.
type CSVRow struct {
	Row   int
	Cells []string
}

// ParseCSV reads a CSV file exactly as /api/import reads one (encoding,
// separator, quoting, width limits, row numbers, the same error messages),
// within other limits of size and rows: campaign recipients come from
// files of this kind too, so that a file /api/import reads is read the
// same way there.
func ParseCSV(data []byte, lim CSVLimits) (*CSVTable, error) {
	f, err := parseCSVWithin(data, lim)
	if err != nil {
		return nil, err
	}
	out := &CSVTable{Header: f.header, Rows: make([]CSVRow, len(f.records))}
	for i, r := range f.records {
		out.Rows[i] = CSVRow{Row: r.row, Cells: r.cells}
	}
	return out, nil
}

// SizeText says n bytes the way the limits' messages do ("10 MB").
func SizeText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

func parseCSVWithin(data []byte, lim CSVLimits) (*csvFile, error) {
	if len(data) > lim.MaxBytes {
		return nil, apperr.Invalidf("the file is larger than %s", SizeText(lim.MaxBytes))
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(data) {
		return nil, apperr.Invalidf("the file is not UTF-8 text")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, apperr.Invalidf("the file is empty: it needs a header row")
	}
	sep := separator(data)
	if err := checkWidth(data, byte(sep)); err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = sep
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err)
	}
	if len(header) > MaxImportColumns { // checkWidth's count, should the reader ever count otherwise
		return nil, tooWide(1)
	}
	// A spreadsheet shows a record as one row however many lines its quoted
	// fields span: the row of a record is its first line less the line
	// breaks inside the records before it.
	inside := newlines(header)
	f := &csvFile{header: make([]string, len(header))}
	for i, h := range header {
		f.header[i] = strings.TrimSpace(h)
	}
	for {
		cells, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := r.FieldPos(0)
		if len(cells) > MaxImportColumns {
			return nil, tooWide(line)
		}
		row := line - inside
		inside += newlines(cells)
		if blank(cells) {
			continue
		}
		if len(f.records) == lim.MaxRows {
			return nil, apperr.Invalidf("the file has more than %s data rows", thousands(lim.MaxRows))
		}
		f.records = append(f.records, record{row: row, cells: cells})
	}
	return f, nil
}

// checkWidth refuses a file with a line longer than MaxImportLine bytes
// (its line break not counted) or a row of more than MaxImportColumns
// cells, in one pass over the bytes that allocates nothing, before the CSV
// reader sees them. Quotes are followed as the reader follows them in a
// valid file (a quote opens or closes a quoted field, "" inside one toggles
// twice), so a separator or a line break inside quotes makes no cell and
// no row; in an invalid file the reader stops at the first stray quote,
// before the two could disagree. Lines are the file's lines, 1 the header.
func checkWidth(data []byte, sep byte) error {
	line, start, cells, quoted := 1, 0, 1, false
	long := func(end int) bool {
		n := end - start
		if n > 0 && data[end-1] == '\r' {
			n--
		}
		return n > MaxImportLine
	}
	for i, b := range data {
		switch b {
		case '"':
			quoted = !quoted
		case sep:
			if quoted {
				continue
			}
			if cells++; cells > MaxImportColumns {
				return tooWide(line)
			}
		case '\n':
			if long(i) {
				return tooLong(line)
			}
			line, start = line+1, i+1
			if !quoted {
				cells = 1
			}
		}
	}
	if long(len(data)) {
		return tooLong(line)
	}
	return nil
}

// thousands writes n with thousands separators (10,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func tooWide(line int) error {
	return apperr.Invalidf("line %d has more than %d columns: a row may have at most %d", line, MaxImportColumns, MaxImportColumns)
}

func tooLong(line int) error {
	return apperr.Invalidf("line %d is longer than 64 KB: a line may have at most %d bytes", line, MaxImportLine)
}

// separator is ";" when the header line (up to its first line break
// outside quotes) has more semicolons than commas outside quotes, else ",".
func separator(data []byte) rune {
	quoted := false
	var semis, commas int
	for _, b := range data {
		switch {
		case b == '"':
			quoted = !quoted
		case quoted:
		case b == '\n' || b == '\r':
			if semis > commas {
				return ';'
			}
			return ','
		case b == ';':
			semis++
		case b == ',':
			commas++
		}
	}
	if semis > commas {
		return ';'
	}
	return ','
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return apperr.Invalidf("the file is not valid CSV: line %d: %v", pe.StartLine, pe.Err)
	}
	return apperr.Invalidf("the file is not valid CSV: %v", err)
}

func newlines(cells []string) int {
	n := 0
	for _, c := range cells {
		n += strings.Count(c, "\n")
	}
	return n
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
