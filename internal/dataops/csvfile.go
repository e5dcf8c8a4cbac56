package dataops

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"wharf/internal/apperr"
)

// The limits of an import file (the spec's).
const (
	MaxImportBytes = 10 << 20
	MaxImportRows  = 10000
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
	if len(data) > MaxImportBytes {
		return nil, apperr.Invalidf("the file is larger than 10 MB")
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(data) {
		return nil, apperr.Invalidf("the file is not UTF-8 text")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, apperr.Invalidf("the file is empty: it needs a header row")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = separator(data)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err)
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
		row := line - inside
		inside += newlines(cells)
		if blank(cells) {
			continue
		}
		if len(f.records) == MaxImportRows {
			return nil, apperr.Invalidf("the file has more than 10,000 data rows")
		}
		f.records = append(f.records, record{row: row, cells: cells})
	}
	return f, nil
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
