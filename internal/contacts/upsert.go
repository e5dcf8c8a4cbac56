package contacts

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/infra/tenant"
	"wharf/internal/webhooks"
	"wharf/models"
)

// Upsert finds the contact with this number or creates it, inside tx, and
// reports whether it was created (with the id of its contact.created event).
// A profile name, when given, is kept up to date; the account is set when the
// contact has none.
//
// A known contact whose profile name and account need no change (most
// incoming messages) is read and locked, not written: the upsert's update
// was a new row version of contacts in every case (its eight indexes, one a
// trigram GIN, and the insert statement's count trigger): the statement with
// the longest execution time of an incoming message in pg_stat_statements,
// though the CPU a message did not move measurably without it
// (docs/BENCHMARKS.md, "Chatbot replies, round 3"). The lock is the one the
// update took: a contact's writers in other transactions still wait for this
// one's commit.
func (s *Service) Upsert(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, number string, accountID *uuid.UUID, profileName, source string) (*models.Contact, uuid.UUID, error) {
	var found []models.Contact
	if err := tx.WithContext(ctx).Raw(`SELECT * FROM contacts WHERE organization_id = ? AND phone_number = ? FOR NO KEY UPDATE`,
		orgID, number).Scan(&found).Error; err != nil {
		return nil, uuid.Nil, err
	}
	if len(found) == 1 && !upsertChanges(&found[0], accountID, profileName) {
		return &found[0], uuid.Nil, nil
	}
	var row struct {
		models.Contact
		Inserted bool
	}
	err := tx.WithContext(ctx).Raw(`
INSERT INTO contacts (organization_id, phone_number, account_id, profile_name, metadata)
VALUES (?, ?, ?, ?, '{}'::jsonb)
ON CONFLICT (organization_id, phone_number) DO UPDATE SET
    profile_name = CASE WHEN EXCLUDED.profile_name <> '' THEN EXCLUDED.profile_name ELSE contacts.profile_name END,
    account_id   = COALESCE(contacts.account_id, EXCLUDED.account_id),
    updated_at   = CASE WHEN EXCLUDED.profile_name <> '' AND EXCLUDED.profile_name <> contacts.profile_name
                        THEN now() ELSE contacts.updated_at END
RETURNING *, (xmax = 0) AS inserted`, orgID, number, accountID, profileName).Scan(&row).Error
	if err != nil {
		return nil, uuid.Nil, err
	}
	c := row.Contact
	if !row.Inserted {
		return &c, uuid.Nil, nil
	}
	eventID, err := s.emitCreated(ctx, tx, &c, source)
	return &c, eventID, err
}

// upsertChanges reports whether Upsert's update would change the contact c:
// a new profile name, or an account for a contact without one.
func upsertChanges(c *models.Contact, accountID *uuid.UUID, profileName string) bool {
	return (profileName != "" && profileName != c.ProfileName) || (c.AccountID == nil && accountID != nil)
}

// FindOrCreateAnd finds or creates the contact with this number and runs
// and, a data-modifying statement of the caller's (with its args) that reads
// the contact's id as (SELECT id FROM contact), in the same statement, which
// also records contact.created when the contact is new and a webhook takes
// it (webhooks.EmitStatement): one round trip, committed on its own. A
// created contact locks a contact_counts row (a trigger) until its commit;
// holding it across no further round trip keeps concurrent sends from
// queueing behind one another. The created event's id, if any, is to be
// published after the commit (webhooks.Publish).
func (s *Service) FindOrCreateAnd(ctx context.Context, orgID uuid.UUID, number string, accountID *uuid.UUID, source, and string, args ...any) (*models.Contact, uuid.UUID, error) {
	// The event of a new contact is known before the statement: its id is
	// chosen here (used only if the row is inserted), and a new contact has
	// no name or profile name yet and takes this account.
	id := uuid.New()
	ev, evArgs, err := s.webhooks.EmitStatement(orgID, webhooks.EventContactCreated,
		CreatedEvent{ContactID: id, PhoneNumber: number, AccountID: accountID, Source: source},
		"EXISTS (SELECT 1 FROM contact WHERE inserted)")
	if err != nil {
		return nil, uuid.Nil, err
	}
	var row struct {
		models.Contact
		EventID *uuid.UUID
	}
	q := `WITH contact AS (
INSERT INTO contacts (id, organization_id, phone_number, account_id, profile_name, metadata)
VALUES (?, ?, ?, ?, '', '{}'::jsonb)
ON CONFLICT (organization_id, phone_number) DO UPDATE SET
    account_id = COALESCE(contacts.account_id, EXCLUDED.account_id)
RETURNING *, (xmax = 0) AS inserted),
chained AS (` + and + `),
event AS (` + ev + `)
SELECT contact.*, (SELECT id FROM event) AS event_id FROM contact`
	all := append(append([]any{id, orgID, number, accountID}, args...), evArgs...)
	if err := s.db.WithContext(ctx).Raw(q, all...).Scan(&row).Error; err != nil {
		return nil, uuid.Nil, err
	}
	if row.EventID == nil {
		return &row.Contact, uuid.Nil, nil
	}
	return &row.Contact, *row.EventID, nil
}

// NewContact is one number of FindOrCreateEachAnd: the account a new
// contact takes (also set on an existing contact that has none).
type NewContact struct {
	Number    string // E.164
	AccountID *uuid.UUID
}

// FindOrCreateEachAnd is FindOrCreateAnd for several distinct numbers of
// one organization in one statement (a group commit of concurrent sends):
// and reads the contacts as the CTE contact (its phone_number and id), and
// each new contact's contact.created event is recorded when a webhook
// takes it. It answers the contacts by number, and the created events' ids
// to publish after the commit. Rows are inserted in number order, so that
// two such statements lock the same contacts in the same order.
func (s *Service) FindOrCreateEachAnd(ctx context.Context, orgID uuid.UUID, in []NewContact, source, and string, args ...any) (map[string]*models.Contact, []uuid.UUID, error) {
	type input struct {
		ID        uuid.UUID       `json:"id"`
		Number    string          `json:"number"`
		AccountID *uuid.UUID      `json:"account_id"`
		Event     json.RawMessage `json:"event"`
	}
	rows := make([]input, len(in))
	for i, c := range in {
		// A new contact's id is chosen here (used only if the row is
		// inserted), so its event is known before the statement.
		id := uuid.New()
		ev, err := json.Marshal(CreatedEvent{ContactID: id, PhoneNumber: c.Number, AccountID: c.AccountID, Source: source})
		if err != nil {
			return nil, nil, err
		}
		rows[i] = input{ID: id, Number: c.Number, AccountID: c.AccountID, Event: ev}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, nil, err
	}
	ev, evArgs := s.webhooks.EmitEachStatement(orgID, webhooks.EventContactCreated,
		`SELECT input.event AS data FROM input JOIN contact ON contact.id = input.id WHERE contact.inserted`)
	q := `WITH input AS (
SELECT * FROM jsonb_to_recordset(CAST(? AS jsonb)) AS x(id uuid, number text, account_id uuid, event jsonb)),
contact AS (
INSERT INTO contacts (id, organization_id, phone_number, account_id, profile_name, metadata)
SELECT id, ?, number, account_id, '', '{}'::jsonb FROM input ORDER BY number
ON CONFLICT (organization_id, phone_number) DO UPDATE SET
    account_id = COALESCE(contacts.account_id, EXCLUDED.account_id)
RETURNING *, (xmax = 0) AS inserted),
chained AS (` + and + `),
event AS (` + ev + `)
SELECT contact.*, event.id AS event_id FROM contact
LEFT JOIN event ON contact.inserted AND event.data ->> 'contact_id' = contact.id::text`
	all := append(append([]any{string(b), orgID}, args...), evArgs...)
	var found []struct {
		models.Contact
		EventID *uuid.UUID
	}
	if err := s.db.WithContext(ctx).Raw(q, all...).Scan(&found).Error; err != nil {
		return nil, nil, err
	}
	out := make(map[string]*models.Contact, len(found))
	var events []uuid.UUID
	for i := range found {
		out[found[i].PhoneNumber] = &found[i].Contact
		if found[i].EventID != nil {
			events = append(events, *found[i].EventID)
		}
	}
	return out, events, nil
}

// FindOrCreate returns the contact with this phone number, creating it (and
// announcing it) when it does not exist.
func (s *Service) FindOrCreate(ctx context.Context, orgID uuid.UUID, rawNumber string, accountID *uuid.UUID) (*models.Contact, error) {
	number, err := phone.Normalize(rawNumber)
	if err != nil {
		return nil, apperr.Invalidf("phone_number: %v", err)
	}
	var c *models.Contact
	var eventID uuid.UUID
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c, eventID, err = s.Upsert(ctx, tx, orgID, number, accountID, "", "send")
		return err
	})
	if err != nil {
		return nil, err
	}
	s.webhooks.Publish(ctx, orgID, eventID)
	return c, nil
}

// Contact returns the row of one contact (for other domains).
func (s *Service) Contact(ctx context.Context, orgID, id uuid.UUID) (*models.Contact, error) {
	return s.get(ctx, s.db, orgID, id)
}

// ContactsIn answers the organization's contacts among ids, by id (an id of
// no contact of the organization is absent), read in db, the caller's
// transaction or pool: other domains' listings show their rows' contacts
// with one lookup per page. Only the id, organization, names, number,
// account and assignee are read.
func (s *Service) ContactsIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.Contact, error) {
	out := make(map[uuid.UUID]models.Contact, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []models.Contact
	err := db.WithContext(ctx).Model(&models.Contact{}).Scopes(tenant.Scope(orgID)).
		Select("id, organization_id, name, profile_name, phone_number, account_id, assigned_to").Where("id IN ?", ids).Find(&rows).Error
	for _, c := range rows {
		out[c.ID] = c
	}
	return out, err
}
