package chatbot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/messaging"
	"wharf/internal/transfers"
	"wharf/jobs"
	"wharf/models"
)

// retryBusy is when a task that found its contact's lock taken, or its
// organization at its share of the worker (slots.go), runs again.
const retryBusy = time.Second

// Evaluate is the chatbot:evaluate job: it evaluates the contact's waiting
// messages one at a time, oldest first, each in a transaction that stores
// the replies and marks the message evaluated (so a retried job never
// answers twice), and sends each message's replies before evaluating the
// next. The whole walk holds the contact's advisory lock on a connection of
// its own (the evaluations' transactions use it too), so one contact's
// replies go out in the order of the messages they answer. A duplicate task
// does not wait for the lock in its worker slot (the holder may wait on a
// slow model server): the holder takes whatever waits, and the duplicate
// looks again a second later (jobs.RateLimited, which is not a failure), in
// case the holder finished just before its message arrived.
func (s *Service) Evaluate(ctx context.Context, orgID, contactID uuid.UUID) error {
	if s.slots.full(orgID) {
		return &jobs.RateLimited{RetryAfter: retryBusy, Reason: errOrgBusy.Error()}
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var locked bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext('chatbot'), hashtext($1))`, contactID.String()).
		Scan(&locked); err != nil {
		return err
	}
	if !locked {
		return &jobs.RateLimited{RetryAfter: retryBusy, Reason: "another task evaluates the contact"}
	}
	defer unlock(conn, contactID)
	// The evaluations' transactions run on the lock's connection too, so a
	// job holds one connection, not two. It still borrows pool connections
	// for moments (the contact, the timezone, the sends after each commit):
	// the worker's concurrency (WORKER_CONCURRENCY, 10) must stay below the
	// pool's size (25), or lock holders could wait on a pool they exhausted.
	db := s.db.Session(&gorm.Session{NewDB: true, Context: ctx})
	db.Statement.ConnPool = conn
	for {
		ids, after, found, err := s.evaluateNext(ctx, db, orgID, contactID)
		if errors.Is(err, errOrgBusy) {
			// Rolled back: the message waits, and the slot goes to others.
			return &jobs.RateLimited{RetryAfter: retryBusy, Reason: errOrgBusy.Error()}
		}
		if err != nil || !found {
			return err
		}
		for _, fn := range after {
			fn(ctx)
		}
		for _, id := range ids {
			if err := s.replies.SendQueued(ctx, orgID, id, false); err != nil {
				// Stored and pending: the sweeper sends it.
				s.log.Warn("chatbot reply not sent; the sweeper will retry", "message_id", id, "error", err)
			}
		}
	}
}

func unlock(conn *sql.Conn, contactID uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtext('chatbot'), hashtext($1))`, contactID.String())
}

// waiting is the oldest unevaluated message of a contact.
type waiting struct {
	MessageID  uuid.UUID
	AccountID  *uuid.UUID
	Type       string
	Content    models.JSON[map[string]any]
	OccurredAt time.Time
}

// evaluateNext evaluates the contact's oldest waiting message in one
// transaction and answers the replies to send, the work to do after the
// commit, and whether there was a message.
func (s *Service) evaluateNext(ctx context.Context, db *gorm.DB, orgID, contactID uuid.UUID) ([]uuid.UUID, []func(context.Context), bool, error) {
	var ids []uuid.UUID
	var after []func(context.Context)
	found := false
	var e *evaluation
	defer func() {
		if e != nil && e.slot {
			s.slots.release(orgID)
		}
	}()
	err := db.Transaction(func(tx *gorm.DB) error {
		ids, after = nil, nil
		var w waiting
		err := tx.Raw(`SELECT i.message_id, m.account_id, m.type, m.content, m.occurred_at FROM chatbot_inbox i
			JOIN messages m ON m.id = i.message_id
			WHERE i.contact_id = ? AND i.organization_id = ? AND i.evaluated_at IS NULL
			ORDER BY i.seq LIMIT 1 FOR UPDATE OF i`, contactID, orgID).Scan(&w).Error
		if err != nil || w.MessageID == uuid.Nil {
			return err
		}
		found = true
		if e, err = s.newEvaluation(ctx, tx, orgID, contactID, &w); err != nil {
			return err
		}
		outcome, err := e.run()
		if err != nil {
			return err
		}
		if w.AccountID != nil {
			for _, r := range e.replies {
				id, err := s.replies.QueueReply(ctx, tx, orgID, contactID, *w.AccountID, r)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
		}
		after = e.after
		return tx.Exec(`UPDATE chatbot_inbox SET evaluated_at = ?, outcome = ? WHERE message_id = ?`, s.now(), outcome, w.MessageID).Error
	})
	return ids, after, found, err
}

// evaluation is the evaluation of one incoming message.
type evaluation struct {
	s        *Service
	ctx      context.Context
	tx       *gorm.DB
	orgID    uuid.UUID
	contact  *models.Contact
	msg      *waiting
	settings *models.ChatbotSettings
	text     string // what the contact wrote, or the title of the button they chose
	choiceID string // the id of the button or list row chosen, if any
	replies  []messaging.Reply
	after    []func(context.Context)
	slot     bool // holds one of the organization's slots (slots.go)
}

// outbound takes one of the organization's slots before the evaluation's
// first call to a server the organization chose; errOrgBusy when none is
// free. The slot is given back when the evaluation's transaction ends.
func (e *evaluation) outbound() error {
	if e.slot {
		return nil
	}
	if !e.s.slots.acquire(e.orgID) {
		return errOrgBusy
	}
	e.slot = true
	return nil
}

func (s *Service) newEvaluation(ctx context.Context, tx *gorm.DB, orgID, contactID uuid.UUID, w *waiting) (*evaluation, error) {
	st, err := s.settingsIn(ctx, tx, orgID)
	if err != nil {
		return nil, err
	}
	c, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	e := &evaluation{s: s, ctx: ctx, tx: tx, orgID: orgID, contact: c, msg: w, settings: st}
	str := func(k string) string { v, _ := w.Content.V[k].(string); return v }
	switch w.Type {
	case "text":
		e.text = str("text")
	case "interactive":
		e.text, e.choiceID = str("title"), str("id")
	case "flow":
		e.text = str("body")
	}
	e.text = strings.TrimSpace(e.text)
	return e, nil
}

// reply adds a reply, its placeholders filled from vars.
func (e *evaluation) reply(text string, buttons []models.ChatButton, listButton string, vars map[string]any) {
	text = e.fill(text, vars)
	if strings.TrimSpace(text) == "" {
		return
	}
	r := messaging.Reply{Text: text}
	for _, b := range buttons {
		r.Buttons = append(r.Buttons, messaging.Button{ID: b.ID, Title: b.Title})
	}
	if len(buttons) > MaxQuickReplies {
		r.ListButton = listButton
		if r.ListButton == "" {
			r.ListButton = defaultListButton
		}
	}
	e.replies = append(e.replies, r)
}

// run evaluates the message in the documented order and answers what it
// did (stored in the inbox as the outcome).
func (e *evaluation) run() (string, error) {
	st := e.settings
	if !st.ChatbotEnabled {
		return "chatbot off", nil
	}
	if active, err := e.s.transfers.HasActive(e.ctx, e.tx, e.orgID, e.contact.ID); err != nil || active {
		return "silent: an agent has the conversation", err
	}
	if st.BusinessHoursEnabled {
		open, err := e.open()
		if err != nil {
			return "", err
		}
		if !open {
			e.reply(st.OutOfHoursMessage, nil, "", nil)
			return "out of hours", nil
		}
	}
	sess, err := e.activeSession()
	if err != nil {
		return "", err
	}
	if sess != nil {
		return e.continueFlow(sess)
	}
	if e.text != "" && matches("exact", st.TransferKeywords.V, e.text) {
		return e.transfer(nil, "", transfers.SourceKeyword, st.TransferMessage)
	}
	if f, err := e.triggeredFlow(); err != nil || f != nil {
		if err != nil {
			return "", err
		}
		return e.startFlow(f)
	}
	if r, err := e.matchingRule(); err != nil || r != nil {
		if err != nil {
			return "", err
		}
		e.reply(r.Response, nil, "", nil)
		return "keyword rule " + r.Name, nil
	}
	if st.GreetingMessage != "" {
		first, err := e.firstMessage()
		if err != nil {
			return "", err
		}
		if first {
			e.reply(st.GreetingMessage, st.GreetingButtons.V, st.GreetingListButton, nil)
			return "greeting", nil
		}
	}
	if st.AIEnabled {
		text, err := e.aiReply()
		if errors.Is(err, errOrgBusy) {
			return "", err
		}
		if err == nil && strings.TrimSpace(text) != "" {
			e.replies = append(e.replies, messaging.Reply{Text: text})
			return "ai", nil
		}
		e.s.log.Warn("AI reply failed; sending the fallback", "organization_id", e.orgID, "error", err)
	}
	if st.FallbackMessage != "" {
		e.reply(st.FallbackMessage, st.FallbackButtons.V, st.FallbackListButton, nil)
		return "fallback", nil
	}
	return "silent: nothing matched", nil
}

// transfer hands the contact to a person (team nil: the general queue) and
// answers message.
func (e *evaluation) transfer(team *uuid.UUID, notes, source, message string) (string, error) {
	_, _, publish, err := e.s.transfers.CreateIn(e.ctx, e.tx, e.orgID, transfers.CreateInput{ContactID: e.contact.ID, TeamID: team,
		Notes: notes, Source: source})
	if err != nil {
		return "", err
	}
	e.after = append(e.after, publish)
	if message == "" {
		message = "Thank you. An agent will be with you shortly."
	}
	e.reply(message, nil, "", nil)
	return "transfer", nil
}

// firstMessage reports whether this is the contact's first message: no
// other message, in either direction, exists for it.
func (e *evaluation) firstMessage() (bool, error) {
	var other bool
	err := e.tx.Raw(`SELECT EXISTS (SELECT 1 FROM messages WHERE contact_id = ? AND id <> ?)`, e.contact.ID, e.msg.MessageID).Scan(&other).Error
	return !other, err
}

// matchingRule answers the enabled keyword rule of the highest priority
// that matches, or nil.
func (e *evaluation) matchingRule() (*models.KeywordRule, error) {
	if e.text == "" {
		return nil, nil
	}
	var rules []models.KeywordRule
	if err := e.tx.Where("organization_id = ? AND enabled", e.orgID).Order("priority DESC, created_at, id").Find(&rules).Error; err != nil {
		return nil, err
	}
	for i := range rules {
		if matches(rules[i].MatchType, rules[i].Keywords.V, e.text) {
			return &rules[i], nil
		}
	}
	return nil, nil
}

// open reports whether now is within the organization's business hours
// (in its timezone).
func (e *evaluation) open() (bool, error) {
	tz, err := e.s.timezones.Timezone(e.ctx, e.orgID)
	if err != nil {
		return false, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	return isOpen(e.settings.BusinessHours.V, e.s.now().In(loc)), nil
}

// isOpen reports whether t (in the organization's timezone) falls within
// the hours of its weekday.
func isOpen(hours []models.BusinessHours, t time.Time) bool {
	hm := fmt.Sprintf("%02d:%02d", t.Hour(), t.Minute())
	for _, h := range hours {
		if h.Day == int(t.Weekday()) && hm >= h.Open && hm < h.Close {
			return true
		}
	}
	return false
}
