package dataops

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/infra/phone"
)

// maxMessages bounds the messages of a result, so that a file of 10,000
// bad rows answers a small result; errors and skipped still count them all.
const maxMessages = 1000

// messages collects a result's per-row messages, in row order, up to
// maxMessages, then counts the rest. Each message is kept twice: as the
// uploader reads it, with the cell's value, and redacted, without any
// value of the file, for the organization's other importers (the file may
// hold numbers and names they do not see otherwise).
type messages struct {
	list, redacted []string
	more           int
}

func (m *messages) add(row int, p problems) {
	if len(m.list) < maxMessages {
		full, redacted := p.texts()
		m.list = append(m.list, fmt.Sprintf("row %d: %s", row, full))
		m.redacted = append(m.redacted, fmt.Sprintf("row %d: %s", row, redacted))
		return
	}
	m.more++
}

func (m *messages) final() (list, redacted []string) {
	list, redacted = append([]string{}, m.list...), append([]string{}, m.redacted...)
	if m.more > 0 {
		more := fmt.Sprintf("... and %d more", m.more)
		list, redacted = append(list, more), append(redacted, more)
	}
	return list, redacted
}

// checked is a file's rows as they will be written: the good rows (one per
// unique value), and what was refused or skipped on the way.
type checked struct {
	contacts   []contacts.ImportRow
	tags       []contacts.TagImportRow
	errors     int // rows refused
	duplicates int // rows whose unique value an earlier row has
	msgs       messages
}

// directory is what a contacts row is checked against: the organization's
// accounts by lower-cased name and its members.
type directory struct {
	accounts map[string]uuid.UUID
	members  map[uuid.UUID]bool
}

func (s *Service) directory(ctx context.Context, orgID uuid.UUID) (*directory, error) {
	d := &directory{accounts: map[string]uuid.UUID{}, members: map[uuid.UUID]bool{}}
	var accs []struct {
		ID   uuid.UUID
		Name string
	}
	db := s.db.WithContext(ctx)
	if err := db.Raw(`SELECT id, name FROM platform_accounts WHERE organization_id = ?`, orgID).Scan(&accs).Error; err != nil {
		return nil, err
	}
	for _, a := range accs {
		d.accounts[strings.ToLower(a.Name)] = a.ID
	}
	users, err := s.members.MemberIDs(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		d.members[u] = true
	}
	return d, nil
}

// problems are a row's problems, joined into one message: a row is written
// whole or not at all. Each names its column and says what is wrong twice:
// with the cell's value, and without it.
type problems []problem

type problem struct{ col, full, redacted string }

// add records a problem whose text names no value of the file.
func (p *problems) add(col, text string) { *p = append(*p, problem{col, text, text}) }

// addValue records a problem about value: text is the message without it,
// format (with args) the message with it.
func (p *problems) addValue(col, text, format string, args ...any) {
	*p = append(*p, problem{col, fmt.Sprintf(format, args...), text})
}

func (p problems) texts() (full, redacted string) {
	f, r := make([]string, len(p)), make([]string, len(p))
	for i, x := range p {
		f[i], r[i] = x.col+": "+x.full, x.col+": "+x.redacted
	}
	return strings.Join(f, "; "), strings.Join(r, "; ")
}

// checkContacts checks every row of a contacts file; progress is called
// every progressEvery rows.
func checkContacts(f *csvFile, p plan, d *directory, progress func(done int)) *checked {
	out := &checked{}
	seen := map[string]int{} // number -> the row that has it
	var numbers []number
	for i, r := range f.records {
		if i%progressEvery == 0 {
			if i > 0 {
				progress(i)
			}
			numbers = normalizeNumbers(f.records[i:min(i+progressEvery, len(f.records))], p)
		}
		var bad problems
		row := contacts.ImportRow{Row: r.row}
		switch n := numbers[i%progressEvery]; {
		case n.raw == "":
			bad.add("phone_number", "missing")
		case n.err != nil:
			bad.addValue("phone_number", "not a phone number", "%q is not a phone number", n.raw)
		default:
			row.Phone = n.e164
		}
		row.Name = p.cell(r, "profile_name")
		if len([]rune(row.Name)) > 200 {
			bad.add("profile_name", "longer than 200 characters")
		}
		if name := p.cell(r, "platform_account"); name != "" {
			if id, ok := d.accounts[strings.ToLower(name)]; ok {
				row.AccountID = &id
			} else {
				bad.addValue("platform_account", "not an account of this organization", "%q is not an account of this organization", name)
			}
		}
		if raw := p.cell(r, "assigned_user_id"); raw != "" {
			if id, err := uuid.Parse(raw); err != nil {
				bad.addValue("assigned_user_id", "not a UUID", "%q is not a UUID", raw)
			} else if !d.members[id] {
				bad.addValue("assigned_user_id", "not a member of this organization", "%s is not a member of this organization", raw)
			} else {
				row.AssignedTo = &id
			}
		}
		if cell := p.cell(r, "tags"); cell != "" {
			for _, t := range strings.Split(cell, ",") {
				if strings.TrimSpace(t) == "" {
					continue
				}
				name, err := contacts.TagName(t)
				if err != nil {
					bad.addValue("tags", fmt.Sprintf("a tag is longer than %d characters", contacts.MaxTagName),
						"%q is longer than %d characters", strings.TrimSpace(t), contacts.MaxTagName)
					continue
				}
				row.Tags = append(row.Tags, name)
			}
		}
		if len(bad) > 0 {
			out.errors++
			out.msgs.add(r.row, bad)
			continue
		}
		if first, ok := seen[row.Phone]; ok {
			out.duplicates++
			var dup problems
			dup.addValue("phone_number", fmt.Sprintf("repeats row %d; skipped", first), "%s repeats row %d; skipped", row.Phone, first)
			out.msgs.add(r.row, dup)
			continue
		}
		seen[row.Phone] = r.row
		out.contacts = append(out.contacts, row)
	}
	return out
}

// number is a row's phone_number cell and what phone.Normalize made of it.
type number struct {
	raw, e164 string
	err       error
}

// normalizeNumbers normalizes the phone_number cells of records on every
// core, each goroutine a contiguous stretch: parsing the numbers is most
// of a contacts file's check (85% of it, phonenumbers.Parse), the check
// runs before the import's transaction while PostgreSQL waits, and each
// number is parsed on its own. The rest of the check stays in row order.
func normalizeNumbers(records []record, p plan) []number {
	out := make([]number, len(records))
	parts := min(runtime.GOMAXPROCS(0), max(len(records)/256, 1))
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() {
			for i := k * len(records) / parts; i < (k+1)*len(records)/parts; i++ {
				n := &out[i]
				if n.raw = p.cell(records[i], "phone_number"); n.raw != "" {
					n.e164, n.err = phone.Normalize(n.raw)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// checkTags checks every row of a tags file.
func checkTags(f *csvFile, p plan, progress func(done int)) *checked {
	out := &checked{}
	seen := map[string]int{} // lower-cased name -> the row that has it
	for i, r := range f.records {
		if i > 0 && i%progressEvery == 0 {
			progress(i)
		}
		var bad problems
		row := contacts.TagImportRow{Row: r.row, Description: p.cell(r, "description")}
		raw := p.cell(r, "name")
		if name, err := contacts.TagName(raw); raw == "" {
			bad.add("name", "missing")
		} else if err != nil {
			bad.addValue("name", fmt.Sprintf("longer than %d characters", contacts.MaxTagName), "%q is longer than %d characters", raw, contacts.MaxTagName)
		} else {
			row.Name = name
		}
		if raw := p.cell(r, "color"); raw != "" {
			if c, err := contacts.TagColor(raw); err != nil {
				bad.addValue("color", "not one of "+strings.Join(contacts.TagColors, ", "), "%q is not one of %s", raw, strings.Join(contacts.TagColors, ", "))
			} else {
				row.Color = c
			}
		}
		if len(bad) > 0 {
			out.errors++
			out.msgs.add(r.row, bad)
			continue
		}
		k := strings.ToLower(row.Name)
		if first, ok := seen[k]; ok {
			out.duplicates++
			var dup problems
			dup.addValue("name", fmt.Sprintf("repeats row %d; skipped", first), "%q repeats row %d; skipped", row.Name, first)
			out.msgs.add(r.row, dup)
			continue
		}
		seen[k] = r.row
		out.tags = append(out.tags, row)
	}
	return out
}

// write stores the checked rows inside tx, which copyRows copies into
// with COPY, and answers the counts.
func (s *Service) write(ctx context.Context, tx *gorm.DB, copyRows contacts.CopyFunc, orgID uuid.UUID, table string, c *checked, update bool) (contacts.ImportCounts, []uuid.UUID, error) {
	if table == "contacts" {
		return s.contacts.Import(ctx, tx, copyRows, orgID, c.contacts, update)
	}
	n, err := s.contacts.ImportTags(ctx, tx, orgID, c.tags, update)
	return n, nil, err
}
