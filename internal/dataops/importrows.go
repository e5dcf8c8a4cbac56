package dataops

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/phone"
)

// maxMessages bounds the messages of a result, so that a file of 10,000
// bad rows answers a small result; errors and skipped still count them all.
const maxMessages = 1000

// messages collects a result's per-row messages, in row order, up to
// maxMessages, then counts the rest.
type messages struct {
	list []string
	more int
}

func (m *messages) add(row int, text string) {
	if len(m.list) < maxMessages {
		m.list = append(m.list, fmt.Sprintf("row %d: %s", row, text))
		return
	}
	m.more++
}

func (m *messages) final() []string {
	out := append([]string{}, m.list...)
	if m.more > 0 {
		out = append(out, fmt.Sprintf("... and %d more", m.more))
	}
	return out
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
	var users []uuid.UUID
	if err := db.Raw(`SELECT user_id FROM organization_members WHERE organization_id = ?`, orgID).Scan(&users).Error; err != nil {
		return nil, err
	}
	for _, u := range users {
		d.members[u] = true
	}
	return d, nil
}

// problems joins a row's problems into one message: a row is written whole
// or not at all.
type problems []string

func (p *problems) add(col, format string, args ...any) {
	*p = append(*p, col+": "+fmt.Sprintf(format, args...))
}

// checkContacts checks every row of a contacts file; progress is called
// every progressEvery rows.
func checkContacts(f *csvFile, p plan, d *directory, progress func(done int)) *checked {
	out := &checked{}
	seen := map[string]int{} // number -> the row that has it
	for i, r := range f.records {
		if i > 0 && i%progressEvery == 0 {
			progress(i)
		}
		var bad problems
		row := contacts.ImportRow{Row: r.row}
		raw := p.cell(r, "phone_number")
		if raw == "" {
			bad.add("phone_number", "missing")
		} else if n, err := phone.Normalize(raw); err != nil {
			bad.add("phone_number", "%q is not a phone number", raw)
		} else {
			row.Phone = n
		}
		row.Name = p.cell(r, "profile_name")
		if len([]rune(row.Name)) > 200 {
			bad.add("profile_name", "longer than 200 characters")
		}
		if name := p.cell(r, "platform_account"); name != "" {
			if id, ok := d.accounts[strings.ToLower(name)]; ok {
				row.AccountID = &id
			} else {
				bad.add("platform_account", "%q is not an account of this organization", name)
			}
		}
		if raw := p.cell(r, "assigned_user_id"); raw != "" {
			if id, err := uuid.Parse(raw); err != nil {
				bad.add("assigned_user_id", "%q is not a UUID", raw)
			} else if !d.members[id] {
				bad.add("assigned_user_id", "%s is not a member of this organization", raw)
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
					bad.add("tags", "%q is longer than %d characters", strings.TrimSpace(t), contacts.MaxTagName)
					continue
				}
				row.Tags = append(row.Tags, name)
			}
		}
		if len(bad) > 0 {
			out.errors++
			out.msgs.add(r.row, strings.Join(bad, "; "))
			continue
		}
		if first, ok := seen[row.Phone]; ok {
			out.duplicates++
			out.msgs.add(r.row, fmt.Sprintf("phone_number: %s repeats row %d; skipped", row.Phone, first))
			continue
		}
		seen[row.Phone] = r.row
		out.contacts = append(out.contacts, row)
	}
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
			bad.add("name", "%q is longer than %d characters", raw, contacts.MaxTagName)
		} else {
			row.Name = name
		}
		if raw := p.cell(r, "color"); raw != "" {
			if c, err := contacts.TagColor(raw); err != nil {
				bad.add("color", "%q is not one of %s", raw, strings.Join(contacts.TagColors, ", "))
			} else {
				row.Color = c
			}
		}
		if len(bad) > 0 {
			out.errors++
			out.msgs.add(r.row, strings.Join(bad, "; "))
			continue
		}
		k := strings.ToLower(row.Name)
		if first, ok := seen[k]; ok {
			out.duplicates++
			out.msgs.add(r.row, fmt.Sprintf("name: %q repeats row %d; skipped", row.Name, first))
			continue
		}
		seen[k] = r.row
		out.tags = append(out.tags, row)
	}
	return out
}

// write stores the checked rows inside tx and answers the counts.
func (s *Service) write(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, table string, c *checked, update bool) (contacts.ImportCounts, []uuid.UUID, error) {
	if table == "contacts" {
		return s.contacts.Import(ctx, tx, orgID, c.contacts, update)
	}
	n, err := s.contacts.ImportTags(ctx, tx, orgID, c.tags, update)
	return n, nil, err
}
