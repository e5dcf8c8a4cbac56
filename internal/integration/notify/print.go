package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Attach Document Print: the framework has no print formats, so a
// notification that asks for the document's print sends Frappe's
// "Standard" one: a PDF listing the document's fields, label and value,
// as the template's document header. The lines are taken when the send
// is planned (the document as it was at the event), the PDF is made and
// stored when the send is made, and the provider fetches it through a
// signed link.

// Files stores the prints and signs the links the provider fetches.
type Files interface {
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	SignedURL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
}

// printTTL is how long the provider may fetch a print: it fetches media
// when it sends, but a send can wait for a retry.
const printTTL = 7 * 24 * time.Hour

// PrintDoc is a document's print: its title and its fields in order.
type PrintDoc struct {
	Title string      `json:"title"`
	Lines []PrintLine `json:"lines"`
}

// PrintLine is one field of a print.
type PrintLine struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// hiddenKeys are the values not printed (framework bookkeeping).
var hiddenKeys = []string{"doctype", "owner", "modified_by", "docstatus", "idx", "creation", "modified", "name", "id"}

// printOf lists the document's fields by name (the field labels of the
// DocType are not at hand where the send is planned): underscores become
// spaces and the first letter a capital, as Frappe derives labels.
func printOf(doctype, name string, values map[string]any) *PrintDoc {
	p := &PrintDoc{Title: doctype + " " + name}
	keys := make([]string, 0, len(values))
	for k := range values {
		// An empty key (a doc._data_list object may have one) has no name
		// to print a label from.
		if k != "" && !strings.HasPrefix(k, "_") && !slices.Contains(hiddenKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := values[k]
		if _, table := v.([]any); table || v == nil {
			continue // child tables are not printed in this plain format
		}
		label := strings.ReplaceAll(k, "_", " ")
		first, size := utf8.DecodeRuneInString(label)
		p.Lines = append(p.Lines, PrintLine{Label: string(unicode.ToUpper(first)) + label[size:], Value: paramText(v)})
	}
	return p
}

// attachPrint renders and stores the print of a planned send and makes it
// the send's attachment.
func (s *Service) attachPrint(ctx context.Context, orgID, sendID uuid.UUID, p *plan) error {
	if p.Print == nil || p.Send.Attachment != nil {
		return nil
	}
	if s.files == nil {
		return fmt.Errorf("Attach Document Print needs file storage that signs links")
	}
	key := fmt.Sprintf("orgs/%s/prints/%s.pdf", orgID, sendID)
	if _, err := s.files.Put(ctx, key, bytes.NewReader(renderPDF(p.Print))); err != nil {
		return fmt.Errorf("storing the document's print: %w", err)
	}
	u, _, err := s.files.SignedURL(ctx, key, printTTL)
	if err != nil {
		return fmt.Errorf("linking the document's print: %w", err)
	}
	p.Send.Attachment = &Attachment{URL: u, Filename: p.Send.ReferenceName + ".pdf"}
	return nil
}

// renderPDF writes a one-column text PDF (Helvetica, A4, as many pages as
// the lines need). Characters outside Latin-1 print as "?": the standard
// fonts carry no others.
func renderPDF(doc *PrintDoc) []byte {
	const perPage = 46
	type line struct {
		size int
		text string
	}
	lines := []line{{16, doc.Title}, {11, ""}}
	for _, l := range doc.Lines {
		lines = append(lines, line{11, l.Label + ": " + l.Value})
	}
	var pages [][]line
	for len(lines) > 0 {
		n := min(perPage, len(lines))
		pages = append(pages, lines[:n])
		lines = lines[n:]
	}
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	// 1: catalog, 2: pages, 3: font, then a page and its content per page.
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, page := range pages {
		var c bytes.Buffer
		c.WriteString("BT\n")
		y := 800
		for _, l := range page {
			fmt.Fprintf(&c, "/F1 %d Tf 1 0 0 1 50 %d Tm (%s) Tj\n", l.size, y, pdfText(l.text))
			y -= 16
		}
		c.WriteString("ET")
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", c.Len(), c.String()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// pdfText escapes a string for a PDF literal in WinAnsi (Latin-1 here),
// cut to what fits a line.
func pdfText(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == 90 {
			b.WriteString("...")
			break
		}
		n++
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 32 || r > 255:
			b.WriteByte('?')
		case r > 127:
			fmt.Fprintf(&b, "\\%03o", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
