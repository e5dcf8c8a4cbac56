package contacts

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"

	"wharf/internal/webhooks"
)

// ImportRow is one checked row of a contacts import (internal/dataops):
// the number is E.164, the tags are valid names, the account and the user
// belong to the organization. Empty fields (and nil Tags) were not given.
type ImportRow struct {
	Row        int        `json:"n"` // the row of the file, for a stable order
	Phone      string     `json:"phone"`
	Name       string     `json:"name"`
	AccountID  *uuid.UUID `json:"account_id"`
	AssignedTo *uuid.UUID `json:"assigned_to"`
	Tags       []string   `json:"tags"`
}

// TagImportRow is one checked row of a tags import: a valid name, a color
// from TagColors or "" (not given), a description or "".
type TagImportRow struct {
	Row         int    `json:"n"`
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
}

// ImportCounts is what an import wrote; the rest of its rows were skipped.
type ImportCounts struct {
	Created, Updated int
}

// CopyFunc copies rows into a table of tx's session with COPY FROM STDIN
// (internal/dataops runs pgx's CopyFrom on the transaction's connection):
// one round trip and no encoding to JSON and back for a file's rows.
type CopyFunc func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)

// Import writes checked contacts rows inside tx, set-based: the rows are
// copied into a temporary staging table (copyRows, COPY), then one INSERT
// creates the new contacts (the contact_counts trigger counts them like any
// other insert), one UPDATE changes the existing ones when update is true
// (only the non-empty fields; a row with nothing to change is skipped), and
// two statements create the unknown tags (gray) and link the tags. A tags
// cell replaces an updated contact's tags. Rows must have distinct numbers.
// Created contacts get a contact.created event (source "import") when a
// webhook listens; publish the returned ids after the commit.
func (s *Service) Import(ctx context.Context, tx *gorm.DB, copyRows CopyFunc, orgID uuid.UUID, rows []ImportRow, update bool) (ImportCounts, []uuid.UUID, error) {
	var res ImportCounts
	if len(rows) == 0 {
		return res, nil, nil
	}
	db := tx.WithContext(ctx)
	if err := db.Exec(`CREATE TEMP TABLE import_contacts (n int, phone text, name text, account_id uuid, assigned_to uuid,
		tags text[], id uuid, created boolean NOT NULL DEFAULT false) ON COMMIT DROP`).Error; err != nil {
		return res, nil, err
	}
	staged := make([][]any, len(rows))
	for i, r := range rows {
		staged[i] = []any{int32(r.Row), r.Phone, r.Name, optionalUUID(r.AccountID), optionalUUID(r.AssignedTo), r.Tags}
	}
	if _, err := copyRows(ctx, "import_contacts", []string{"n", "phone", "name", "account_id", "assigned_to", "tags"}, staged); err != nil {
		return res, nil, fmt.Errorf("stage the import's rows: %w", err)
	}
	var created []struct {
		ID        uuid.UUID
		Phone     string
		Name      string
		AccountID *uuid.UUID
	}
	if err := db.Raw(`WITH ins AS (
		INSERT INTO contacts (organization_id, phone_number, name, account_id, assigned_to, metadata)
		SELECT ?, phone, name, account_id, assigned_to, '{}'::jsonb FROM import_contacts ORDER BY n
		ON CONFLICT (organization_id, phone_number) DO NOTHING
		RETURNING id, phone_number)
	UPDATE import_contacts i SET id = ins.id, created = true FROM ins WHERE i.phone = ins.phone_number
	RETURNING i.id, i.phone, i.name, i.account_id`, orgID).Scan(&created).Error; err != nil {
		return res, nil, err
	}
	res.Created = len(created)
	if update {
		up := db.Exec(`WITH up AS (
			UPDATE contacts c SET name = CASE WHEN i.name <> '' THEN i.name ELSE c.name END,
				account_id = COALESCE(i.account_id, c.account_id), assigned_to = COALESCE(i.assigned_to, c.assigned_to),
				updated_at = now()
			FROM import_contacts i
			WHERE c.organization_id = ? AND c.phone_number = i.phone AND NOT i.created
			  AND (i.name <> '' OR i.account_id IS NOT NULL OR i.assigned_to IS NOT NULL OR i.tags IS NOT NULL)
			RETURNING c.id, c.phone_number)
		UPDATE import_contacts i SET id = up.id FROM up WHERE i.phone = up.phone_number`, orgID)
		if up.Error != nil {
			return res, nil, up.Error
		}
		res.Updated = int(up.RowsAffected)
	}
	// A new tag takes its first spelling among the rows: each spelling's
	// first place (row, then rank in the cell: a cell has fewer than
	// 100,000 tags) is found by hashing the spellings, so that only the few
	// distinct spellings are sorted by their lower-cased name, not every
	// tag of every row (a 10k-row file's 20k tags: 3.5x less time).
	if err := db.Exec(`INSERT INTO tags (organization_id, name, color)
		SELECT DISTINCT ON (lower(name)) ?, name, 'gray'
		FROM (SELECT t.name, min(i.n::bigint * 100000 + t.k) AS first
			FROM import_contacts i CROSS JOIN unnest(i.tags) WITH ORDINALITY AS t (name, k)
			WHERE i.id IS NOT NULL AND i.tags IS NOT NULL
			GROUP BY t.name) s
		ORDER BY lower(name), first
		ON CONFLICT (organization_id, lower(name)) DO NOTHING`, orgID).Error; err != nil {
		return res, nil, err
	}
	if err := db.Exec(`DELETE FROM contact_tags ct USING import_contacts i
		WHERE ct.contact_id = i.id AND NOT i.created AND i.tags IS NOT NULL`).Error; err != nil {
		return res, nil, err
	}
	if err := db.Exec(`INSERT INTO contact_tags (contact_id, tag_id)
		SELECT DISTINCT i.id, g.id
		FROM import_contacts i CROSS JOIN unnest(i.tags) AS t (name)
		JOIN tags g ON g.organization_id = ? AND lower(g.name) = lower(t.name)
		WHERE i.id IS NOT NULL AND i.tags IS NOT NULL
		ON CONFLICT DO NOTHING`, orgID).Error; err != nil {
		return res, nil, err
	}
	events := make([]any, len(created))
	for i, c := range created {
		events[i] = CreatedEvent{ContactID: c.ID, PhoneNumber: c.Phone, Name: c.Name, AccountID: c.AccountID, Source: "import"}
	}
	ids, err := s.webhooks.EmitMany(ctx, tx, orgID, webhooks.EventContactCreated, events)
	return res, ids, err
}

// optionalUUID is a staged row's optional id: NULL when not given.
func optionalUUID(id *uuid.UUID) pgtype.UUID {
	if id == nil {
		return pgtype.UUID{}
	}
	return pgtype.UUID{Bytes: *id, Valid: true}
}

// PublishCreated enqueues the dispatch of the contact.created events an
// import committed.
func (s *Service) PublishCreated(ctx context.Context, orgID uuid.UUID, eventIDs []uuid.UUID) {
	s.webhooks.Publish(ctx, orgID, eventIDs...)
}

// ImportTags writes checked tags rows inside tx, set-based like Import: one
// INSERT creates the new tags (an empty color is gray); when update is true
// one UPDATE sets the non-empty color and description of the existing ones
// (matched by lower-cased name; a row with neither is skipped). Rows must
// have distinct lower-cased names.
func (s *Service) ImportTags(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, rows []TagImportRow, update bool) (ImportCounts, error) {
	var res ImportCounts
	if len(rows) == 0 {
		return res, nil
	}
	doc, err := json.Marshal(rows)
	if err != nil {
		return res, err
	}
	db := tx.WithContext(ctx)
	if err := db.Exec(`CREATE TEMP TABLE import_tags (n int, name text, color text, description text,
		created boolean NOT NULL DEFAULT false) ON COMMIT DROP`).Error; err != nil {
		return res, err
	}
	if err := db.Exec(`INSERT INTO import_tags (n, name, color, description)
		SELECT n, name, COALESCE(color, ''), COALESCE(description, '')
		FROM jsonb_to_recordset(?::jsonb) AS r (n int, name text, color text, description text)`, string(doc)).Error; err != nil {
		return res, err
	}
	ins := db.Exec(`WITH ins AS (
		INSERT INTO tags (organization_id, name, color, description)
		SELECT ?, name, COALESCE(NULLIF(color, ''), 'gray'), description FROM import_tags ORDER BY n
		ON CONFLICT (organization_id, lower(name)) DO NOTHING
		RETURNING lower(name) AS k)
	UPDATE import_tags i SET created = true FROM ins WHERE lower(i.name) = ins.k`, orgID)
	if ins.Error != nil {
		return res, ins.Error
	}
	res.Created = int(ins.RowsAffected)
	if update {
		up := db.Exec(`UPDATE tags g SET color = CASE WHEN i.color <> '' THEN i.color ELSE g.color END,
			description = CASE WHEN i.description <> '' THEN i.description ELSE g.description END, updated_at = now()
			FROM import_tags i
			WHERE g.organization_id = ? AND lower(g.name) = lower(i.name) AND NOT i.created
			  AND (i.color <> '' OR i.description <> '')`, orgID)
		if up.Error != nil {
			return res, up.Error
		}
		res.Updated = int(up.RowsAffected)
	}
	return res, nil
}

// TagName checks and trims a tag name (at most MaxTagName characters).
func TagName(name string) (string, error) { return normalizeTag(name) }

// TagColor checks a tag color ("" is gray).
func TagColor(color string) (string, error) { return normalizeColor(color) }
