package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/jobs"
	"wharf/models"
)

// Group commit of queued template sends by phone number (the API's
// POST /api/messages/template). Each such send used to pay its own
// statement, commit and asynq enqueue; the sends that arrive while earlier
// ones are being written now wait for the next group instead, which writes
// them (contacts found or created, messages, contact.created events) in
// one statement and one commit, and enqueues one message:send task for up
// to QueuedBatch of them (jobs.MessageSend.With). No send waits for a
// timer: an idle system writes a lone send at once; a busy one writes what
// gathered meanwhile (docs/MESSAGING.md, "Group commit").
//
// A request is answered only after its group committed and was enqueued,
// as before. A group whose statement fails is written again one send at a
// time, so one bad send fails only its own request.

const (
	// groupMax bounds a group: a statement of 64 rows is still a few
	// milliseconds, and a request never waits behind more than that.
	groupMax = 64
	// groupWriters is how many groups are written at once. One: the next
	// group gathers while one is written, so groups grow with the load
	// (BenchmarkTemplateSendsAPIKey: 5.9 sends a group with two writers, 11.5
	// with one; 540-590 req/s with two, 630-640 with one, and less
	// PostgreSQL CPU a send).
	groupWriters = 1
)

// groupSend is one send waiting for its group.
type groupSend struct {
	ctx     context.Context
	m       models.Message // its id, organization, account and content set
	number  string         // E.164
	done    chan groupDone // buffered: the writer never blocks on it
	contact *models.Contact
}

type groupDone struct {
	contact *models.Contact
	err     error
}

// sendGroups gathers the sends waiting for a group and runs the writers.
type sendGroups struct {
	mu      sync.Mutex
	waiting []*groupSend
	writers int
}

// queueInGroup stores a queued send by phone number in the next group and
// answers its contact once the group committed and its task was enqueued.
func (s *Service) queueInGroup(ctx context.Context, m models.Message, number string) (*models.Contact, error) {
	g := &groupSend{ctx: ctx, m: m, number: number, done: make(chan groupDone, 1)}
	s.groups.mu.Lock()
	s.groups.waiting = append(s.groups.waiting, g)
	start := s.groups.writers < groupWriters
	if start {
		s.groups.writers++
	}
	s.groups.mu.Unlock()
	if start {
		go s.writeGroups()
	}
	// The group is written even if this request goes away meanwhile (the
	// client may see a timeout for a stored send, as with any request cut
	// after its commit); a request already gone when its group starts is
	// left out.
	d := <-g.done
	return d.contact, d.err
}

// writeGroups writes groups until none is waiting, then stops: no
// goroutine outlives the load.
func (s *Service) writeGroups() {
	for {
		s.groups.mu.Lock()
		if len(s.groups.waiting) == 0 {
			s.groups.writers--
			s.groups.mu.Unlock()
			return
		}
		group := nextGroup(&s.groups.waiting)
		s.groups.mu.Unlock()
		s.writeGroup(group)
	}
}

// nextGroup takes from waiting, oldest first, up to groupMax sends of the
// first one's organization with distinct numbers (one statement cannot
// insert the same contact twice); the others keep their place.
func nextGroup(waiting *[]*groupSend) []*groupSend {
	all := *waiting
	org := all[0].m.OrganizationID
	numbers := map[string]bool{}
	var group, rest []*groupSend
	for _, g := range all {
		if len(group) < groupMax && g.m.OrganizationID == org && !numbers[g.number] {
			numbers[g.number] = true
			group = append(group, g)
			continue
		}
		rest = append(rest, g)
	}
	*waiting = rest
	return group
}

// groupMessage is one message of a group's statement (jsonb_to_recordset).
type groupMessage struct {
	ID           uuid.UUID       `json:"id"`
	Number       string          `json:"number"`
	AccountID    *uuid.UUID      `json:"account_id"`
	TemplateName string          `json:"template_name"`
	TemplateID   *uuid.UUID      `json:"template_id"`
	SentBy       *uuid.UUID      `json:"sent_by"`
	APIKeyID     *uuid.UUID      `json:"api_key_id"`
	OccurredAt   time.Time       `json:"occurred_at"`
	Content      json.RawMessage `json:"content"`
}

// groupInsertSQL inserts a group's messages, each with its contact (the
// CTE contact of contacts.FindOrCreateEachAnd), from the JSON of
// []groupMessage.
const groupInsertSQL = `INSERT INTO messages (id, organization_id, contact_id, account_id, direction, type, status,
	template_name, template_id, sent_by, api_key_id, occurred_at, content)
SELECT m.id, contact.organization_id, contact.id, m.account_id, 'outgoing', 'template', 'pending',
	m.template_name, m.template_id, m.sent_by, m.api_key_id, m.occurred_at, m.content
FROM jsonb_to_recordset(CAST(? AS jsonb)) AS m(id uuid, number text, account_id uuid, template_name text,
	template_id uuid, sent_by uuid, api_key_id uuid, occurred_at timestamptz, content jsonb)
JOIN contact ON contact.phone_number = m.number`

// writeGroup writes one group and answers each of its sends.
func (s *Service) writeGroup(group []*groupSend) {
	live := group[:0:0]
	for _, g := range group {
		if err := g.ctx.Err(); err != nil {
			g.done <- groupDone{err: err}
			continue
		}
		live = append(live, g)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.insertGroup(ctx, live); err != nil {
		// One send may be the cause (or a deadlock, or a timeout): each is
		// written on its own, as if it had come alone.
		s.log.Warn("a group of template sends could not be written together; writing them one by one",
			"sends", len(live), "error", err)
		for _, g := range live {
			c, err := s.insertOne(g.ctx, g.m, g.number)
			if err == nil {
				s.enqueueSends(g.ctx, g.m.OrganizationID, []uuid.UUID{g.m.ID})
			}
			g.done <- groupDone{contact: c, err: err}
		}
		return
	}
	ids := make([]uuid.UUID, len(live))
	for i, g := range live {
		ids[i] = g.m.ID
	}
	s.enqueueSends(ctx, live[0].m.OrganizationID, ids)
	for _, g := range live {
		g.done <- groupDone{contact: g.contact}
	}
}

// insertGroup writes a group's contacts, messages and events in one
// statement and publishes the events.
func (s *Service) insertGroup(ctx context.Context, group []*groupSend) error {
	orgID := group[0].m.OrganizationID
	in := make([]contacts.NewContact, len(group))
	rows := make([]groupMessage, len(group))
	for i, g := range group {
		m := &g.m
		content, err := json.Marshal(m.Content.V)
		if err != nil {
			return err
		}
		in[i] = contacts.NewContact{Number: g.number, AccountID: m.AccountID}
		rows[i] = groupMessage{ID: m.ID, Number: g.number, AccountID: m.AccountID, TemplateName: m.TemplateName,
			TemplateID: m.TemplateID, SentBy: m.SentBy, APIKeyID: m.APIKeyID, OccurredAt: m.OccurredAt, Content: content}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	found, events, err := s.contacts.FindOrCreateEachAnd(ctx, orgID, in, "send", groupInsertSQL, string(b))
	if err != nil {
		return err
	}
	for _, g := range group {
		if g.contact = found[g.number]; g.contact == nil {
			return errors.New("messaging: a group's statement answered no contact for a send")
		}
	}
	s.webhooks.Publish(ctx, orgID, events...)
	return nil
}

// insertOne writes one send by phone number: its contact found or created
// and its message in one statement (FindOrCreateAnd), and publishes the
// contact's event.
func (s *Service) insertOne(ctx context.Context, m models.Message, number string) (*models.Contact, error) {
	contact, created, err := s.contacts.FindOrCreateAnd(ctx, m.OrganizationID, number, m.AccountID, "send",
		`INSERT INTO messages (id, organization_id, contact_id, account_id, direction, type, status, template_name,
			template_id, sent_by, api_key_id, occurred_at, content)
		VALUES (?, ?, (SELECT id FROM contact), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`,
		m.ID, m.OrganizationID, m.AccountID, m.Direction, m.Type, m.Status, m.TemplateName,
		m.TemplateID, m.SentBy, m.APIKeyID, m.OccurredAt, m.Content)
	if err != nil {
		return nil, err
	}
	s.webhooks.Publish(ctx, m.OrganizationID, created)
	return contact, nil
}

// enqueueSends enqueues the message:send tasks of messages stored together:
// one for each QueuedBatch of them, which claims its messages by id. A
// task that cannot be enqueued is left to the sweeper (SweepUnconfirmed
// enqueues each pending message whose task is missing).
func (s *Service) enqueueSends(ctx context.Context, orgID uuid.UUID, ids []uuid.UUID) {
	for len(ids) > 0 {
		n := min(len(ids), QueuedBatch)
		p := jobs.MessageSend{OrganizationID: orgID, MessageID: ids[0], With: ids[1:n]}
		if n == 1 {
			p.With = nil
		}
		if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), p); err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			s.log.Warn("cannot enqueue a template send; the sweeper will retry", "message_id", ids[0], "sends", n, "error", err)
		}
		ids = ids[n:]
	}
}
