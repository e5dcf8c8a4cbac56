package chatbot

import (
	"context"
	"database/sql"
	"database/sql/driver"
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

// maxBatch bounds the waiting messages of a contact one transaction
// evaluates.
const maxBatch = 20

// Evaluate is the chatbot:evaluate job: it evaluates the contact's waiting
// messages, oldest first, in one transaction that stores the replies and
// marks the messages evaluated (so a retried job never answers twice), and
// sends the replies in order after the commit; then it looks again, in
// case more came meanwhile.
//
// The contact's advisory lock (session-level: it outlives the commit) is
// held from the transaction's first statement until the replies are sent,
// so one contact's replies go out in the order of the messages they answer.
// The lock, the transaction and the unlock share one connection; the
// unlock statement also tells whether more messages wait. A duplicate task
// does not wait for the lock in its worker slot (the holder may wait on a
// slow model server): the holder takes whatever waits, and the duplicate
// looks again a second later (jobs.RateLimited, which is not a failure), in
// case the holder finished just before its message arrived.
func (s *Service) Evaluate(ctx context.Context, orgID, contactID uuid.UUID) error {
	return s.evaluate(ctx, orgID, contactID, false)
}

// errMore is evaluateNow's: messages still wait after one batch (a task
// takes them, so an inbound task evaluates one batch at most).
var errMore = errors.New("chatbot: more messages wait")

// evaluate is Evaluate; once evaluates one batch, and answers errMore when
// more messages wait after it.
func (s *Service) evaluate(ctx context.Context, orgID, contactID uuid.UUID, once bool) error {
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
	// The job holds one connection; the sends after each commit borrow pool
	// connections for moments: the worker's concurrency (WORKER_CONCURRENCY,
	// 10) must stay below the pool's size (25), or lock holders could wait
	// on a pool they exhausted.
	db := s.db.Session(&gorm.Session{NewDB: true, Context: ctx})
	db.Statement.ConnPool = conn
	for {
		b, err := s.evaluateWaiting(ctx, db, orgID, contactID)
		if err == nil && !b.locked {
			return &jobs.RateLimited{RetryAfter: retryBusy, Reason: "another task evaluates the contact"}
		}
		// The replies committed are sent even when a later message of the
		// batch failed (it was rolled back alone and waits).
		for _, fn := range b.after {
			fn(ctx)
		}
		for _, id := range b.ids {
			if err := s.replies.SendQueued(ctx, orgID, id, false); err != nil {
				// Stored and pending: the sweeper sends it.
				s.log.Warn("chatbot reply not sent; the sweeper will retry", "message_id", id, "error", err)
			}
		}
		// Also after an error: the lock may have been taken by a statement
		// whose answer was lost (unlocking a lock not held does nothing).
		more, uerr := unlock(conn, orgID, contactID)
		if err == nil {
			err = uerr
		}
		if err == nil && more {
			if once {
				return errMore
			}
			continue
		}
		if errors.Is(err, errOrgBusy) {
			// Rolled back: the message waits, and the slot goes to others.
			return &jobs.RateLimited{RetryAfter: retryBusy, Reason: errOrgBusy.Error()}
		}
		return err
	}
}

// unlock releases the contact's lock and tells whether messages wait (they
// came while the replies were sent: their tasks may have found the lock
// taken).
func unlock(conn *sql.Conn, orgID, contactID uuid.UUID) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var unlocked, more bool
	err := conn.QueryRowContext(ctx, `SELECT pg_advisory_unlock(hashtext('chatbot'), hashtext($1)),
		EXISTS (SELECT 1 FROM chatbot_inbox WHERE contact_id = $2 AND organization_id = $3 AND evaluated_at IS NULL)`,
		contactID.String(), contactID, orgID).Scan(&unlocked, &more)
	if err != nil {
		// A lock left on a pooled connection would block the contact: the
		// connection is dropped instead of going back to the pool.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return false, err
	}
	return more, nil
}

// waiting is an unevaluated message of a contact (Locked: the contact's
// lock was taken; a row with a nil MessageID when nothing waits).
type waiting struct {
	Locked     bool
	MessageID  uuid.UUID
	AccountID  *uuid.UUID
	Type       string
	Content    models.JSON[map[string]any]
	OccurredAt time.Time
}

// waitingSQL takes the contact's lock and, when it got it, reads and locks
// the waiting messages, oldest first: one round trip.
const waitingSQL = `WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(hashtext('chatbot'), hashtext(?)) AS ok)
SELECT l.ok AS locked, w.* FROM l LEFT JOIN LATERAL (
	SELECT i.message_id, m.account_id, m.type, m.content, m.occurred_at FROM chatbot_inbox i JOIN messages m ON m.id = i.message_id
	WHERE l.ok AND i.contact_id = ? AND i.organization_id = ? AND i.evaluated_at IS NULL
	ORDER BY i.seq LIMIT ? FOR UPDATE OF i) w ON true`

// batch is what one transaction evaluated: whether it took the contact's
// lock (to release after the sends), the replies to send and the work to
// do after the commit, in order.
type batch struct {
	locked bool
	ids    []uuid.UUID
	after  []func(context.Context)
}

// evaluateWaiting evaluates the contact's waiting messages in one
// transaction. A message after the first that fails (or finds its
// organization busy) is rolled back alone, to a savepoint, and the ones
// before it commit: it waits for the next task, which the error asks for.
// A message whose evaluation called a server of the organization's (the
// model, an api_fetch step) ends the batch: a transaction waits on one such
// call at most, as when each message had its own.
func (s *Service) evaluateWaiting(ctx context.Context, db *gorm.DB, orgID, contactID uuid.UUID) (batch, error) {
	var b batch
	var stop error
	err := db.Transaction(func(tx *gorm.DB) error {
		b.ids, b.after, stop = nil, nil, nil
		var rows []waiting
		if err := tx.Raw(waitingSQL, contactID.String(), contactID, orgID, maxBatch).Scan(&rows).Error; err != nil {
			return err
		}
		b.locked = len(rows) > 0 && rows[0].Locked
		if !b.locked || rows[0].MessageID == uuid.Nil {
			return nil
		}
		for i := range rows {
			if i > 0 {
				if err := tx.SavePoint("msg").Error; err != nil {
					return err
				}
			}
			ids, after, calledOut, err := s.evaluateOne(ctx, tx, orgID, contactID, &rows[i])
			if err != nil && i == 0 {
				return err
			}
			if err != nil {
				if rerr := tx.RollbackTo("msg").Error; rerr != nil {
					return rerr
				}
				stop = err
				return nil
			}
			b.ids = append(b.ids, ids...)
			b.after = append(b.after, after...)
			if calledOut {
				break
			}
		}
		return nil
	})
	if err != nil {
		b.ids, b.after = nil, nil
		return b, err
	}
	return b, stop
}

// evaluateOne evaluates one waiting message inside tx: it reads the
// contact's state, decides, stores the replies and marks the message
// evaluated. It answers the replies to send, the work to do after the
// commit, and whether it called a server of the organization's.
func (s *Service) evaluateOne(ctx context.Context, tx *gorm.DB, orgID, contactID uuid.UUID, w *waiting) (
	ids []uuid.UUID, after []func(context.Context), calledOut bool, err error) {
	st, err := readState(ctx, tx, orgID, contactID)
	if err != nil {
		return nil, nil, false, err
	}
	cf, err := s.configAt(ctx, tx, orgID, st.Version)
	if err != nil {
		return nil, nil, false, err
	}
	e := s.newEvaluation(ctx, tx, orgID, contactID, w, st, cf)
	defer func() {
		if e.slot {
			s.slots.release(orgID)
		}
	}()
	outcome, err := e.run()
	if err != nil {
		return nil, nil, false, err
	}
	if w.AccountID != nil {
		for _, r := range e.replies {
			id, err := s.replies.QueueReply(ctx, tx, orgID, contactID, *w.AccountID, r)
			if err != nil {
				return nil, nil, false, err
			}
			ids = append(ids, id)
		}
	}
	if err := tx.Exec(`UPDATE chatbot_inbox SET evaluated_at = ?, outcome = ? WHERE message_id = ?`, s.now(), outcome, w.MessageID).Error; err != nil {
		return nil, nil, false, err
	}
	return ids, e.after, e.slot, nil
}

// evaluation is the evaluation of one incoming message.
type evaluation struct {
	s        *Service
	ctx      context.Context
	tx       *gorm.DB
	orgID    uuid.UUID
	contact  *models.Contact
	msg      *waiting
	state    *contactState
	config   *config
	settings *models.ChatbotSettings
	text     string // what the contact wrote, or the title of the button they chose
	choiceID string // the id of the button or list row chosen, if any
	replies  []messaging.Reply
	after    []func(context.Context)
	slot     bool // holds one of the organization's slots (slots.go)
}

// outbound takes one of the organization's slots before the evaluation's
// first call to a server the organization chose; errOrgBusy when none is
// free. The slot is given back when the message's evaluation ends.
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

func (s *Service) newEvaluation(ctx context.Context, tx *gorm.DB, orgID, contactID uuid.UUID, w *waiting, st *contactState, cf *config) *evaluation {
	c := &models.Contact{ID: contactID, OrganizationID: orgID, Name: st.ContactName, ProfileName: st.ContactProfileName,
		PhoneNumber: st.ContactPhoneNumber}
	e := &evaluation{s: s, ctx: ctx, tx: tx, orgID: orgID, contact: c, msg: w, state: st, config: cf, settings: cf.settings}
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
	return e
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
	if e.state.Transferred {
		return "silent: an agent has the conversation", nil
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
	if f := e.triggeredFlow(); f != nil {
		return e.startFlow(f)
	}
	if r := e.matchingRule(); r != nil {
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
func (e *evaluation) matchingRule() *models.KeywordRule {
	if e.text == "" {
		return nil
	}
	rules := e.config.rules
	for i := range rules {
		if matches(rules[i].MatchType, rules[i].Keywords.V, e.text) {
			return &rules[i]
		}
	}
	return nil
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
