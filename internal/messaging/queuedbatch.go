package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgconn"

	"wharf/internal/infra/apperr"
	"wharf/internal/outbound"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// QueuedBatch is how many queued sends one message:send task claims and
// sends at once: its own message and up to QueuedBatch-1 other queued
// template sends of its organization. Like a campaign lane's chunk, the
// batch is claimed in one statement, sent through the Sender concurrently
// and settled in one statement, so a burst of API template sends costs two
// commits per batch instead of two per message; the tasks of the messages
// a batch took find them claimed and do nothing.
const QueuedBatch = 16

// SendQueuedBatch is the worker's message:send job. The rule of the
// package comment holds for every message of the batch: each is claimed
// before its request leaves, and a claimed message whose outcome is not
// known stays claimed (the provider's statuses or the sweeper settle it),
// never resent; a worker that dies mid-batch leaves the batch claimed.
//
// The task's own message is retried as SendQueued's is (a wait for the
// pace or the provider's throttle, a transient error until lastAttempt).
// A message of the batch that must wait is given back (its claim
// released) and gets a task of its own after the wait: its first task may
// well have run already (it found the message claimed). That new task's
// retries start from zero, so the message's tries are counted on its row
// (send_attempts, at each claim; a rate-limit wait gives its claim back): a
// transient error fails any message of the batch that reached
// jobs.MessageSendAttempts, the bound its own task would have set.
func (s *Service) SendQueuedBatch(ctx context.Context, orgID, id uuid.UUID, with []uuid.UUID, lastAttempt bool) error {
	rows, err := s.claimBatch(ctx, orgID, id, with)
	if err != nil || len(rows) == 0 {
		return err
	}
	sends := make([]queuedSend, len(rows))
	results := make([]outbound.Result, len(rows))
	var wg sync.WaitGroup
	for i := range rows {
		sends[i] = s.prepareQueued(&rows[i])
		if sends[i].fail != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Not cancelled with the task: once the request may have left,
			// recording its answer beats guessing later.
			results[i] = s.sender.Send(context.WithoutCancel(ctx), sends[i].out)
		}()
	}
	wg.Wait()

	var own error
	var outcomes []queuedOutcome
	var accepted []acceptedSend // to announce when a webhook listens or a document projects
	var later []laterSend
	var failed []failedSend // projected messages that failed: settled one by one
	for i := range sends {
		q, r := &sends[i], results[i]
		mine := q.m.ID == id
		// fail settles the message failed: with the batch's statement, or,
		// when a framework document projects it, by markFailed, which
		// records message.changed in the same transaction.
		fail := func(pe *platform.Error) {
			if q.m.Projected {
				failed = append(failed, failedSend{q.m.ID, pe})
				return
			}
			outcomes = append(outcomes, failedOutcome(q.m.ID, pe))
		}
		if q.fail != nil {
			fail(q.fail)
			continue
		}
		switch r.Outcome {
		case outbound.Accepted:
			// A projected message is settled as a listened one is: its
			// change records message.changed in its own transaction.
			if rows[i].Listening || q.m.Projected {
				accepted = append(accepted, acceptedSend{q: q, platformID: r.MessageID, listening: rows[i].Listening})
			} else {
				outcomes = append(outcomes, queuedOutcome{ID: q.m.ID, Kind: settleSent, PlatformID: r.MessageID,
					ContactID: q.m.ContactID, Preview: Preview(q.m.Type, q.m.Content.V)})
			}
		case outbound.Failed:
			// The request could not be made; as in SendQueued the message
			// stays claimed and the sweeper settles it.
			s.log.Warn("queued send failed before the provider answered", "message_id", q.m.ID, "error", r.Err)
			if mine {
				own = r.Err
			}
		case outbound.Unknown:
			s.log.Warn("template send outcome unknown", "message_id", q.m.ID, "error", r.Err)
		case outbound.Paced, outbound.Throttled:
			outcomes = append(outcomes, queuedOutcome{ID: q.m.ID, Kind: settleWait})
			if mine {
				reason := "waiting for the account's messaging tier"
				if r.Outcome == outbound.Throttled {
					reason = fmt.Sprintf("provider code %d", r.ProviderError().Code)
				}
				own = &jobs.RateLimited{RetryAfter: r.Wait, Reason: reason}
			} else {
				later = append(later, laterSend{q.m.ID, r.Wait})
			}
		case outbound.Transient:
			if (mine && lastAttempt) || triedEnough(q.m) {
				fail(r.ProviderError())
				break
			}
			outcomes = append(outcomes, queuedOutcome{ID: q.m.ID, Kind: settleRelease})
			if mine {
				own = r.Err
			} else {
				later = append(later, laterSend{q.m.ID, r.Wait})
			}
		case outbound.Refused:
			fail(&platform.Error{Message: r.Err.Error()})
		default: // the account, the template or the recipient refused
			fail(r.ProviderError())
		}
	}
	for _, f := range failed {
		s.markFailed(ctx, f.id, f.err)
	}
	if err := s.settleQueued(ctx, outcomes); err != nil {
		// The batch stays claimed: the provider's statuses or the sweeper
		// settle the sent ones, and the sweeper fails the others as unknown.
		s.log.Error("cannot record a batch of queued sends", "messages", len(outcomes), "error", err)
		return nil
	}
	s.publishSent(ctx, orgID, sends, outcomes)
	for _, a := range accepted {
		m := a.q.m
		if err := s.settleAccepted(ctx, m, a.q.c, a.q.a, a.platformID, Actor{UserID: deref(m.SentBy), APIKeyID: m.APIKeyID}, a.listening); err != nil {
			s.log.Error("cannot record an accepted send", "message_id", m.ID, "error", err)
		}
	}
	for _, l := range later {
		s.sendLater(ctx, orgID, l)
	}
	return own
}

// acceptedSend is a send the provider accepted whose announcement a webhook
// takes (listening), or that a framework document projects: it is settled
// with its events (settleAccepted).
type acceptedSend struct {
	q          *queuedSend
	platformID string
	listening  bool
}

// failedSend is a projected message of a batch that failed (markFailed).
type failedSend struct {
	id  uuid.UUID
	err *platform.Error
}

// laterSend is a message of a batch given back to wait.
type laterSend struct {
	id   uuid.UUID
	wait time.Duration
}

// sendLater gives a message of a batch that had to wait a task of its own,
// after the wait. The task id is new: the message's first task may have
// completed (it found the message claimed), and a completed task keeps its
// id for an hour. A duplicate task is harmless: the claim sends once.
func (s *Service) sendLater(ctx context.Context, orgID uuid.UUID, l laterSend) {
	_, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.MessageSend{OrganizationID: orgID, MessageID: l.id},
		asynq.TaskID("message-send:"+l.id.String()+":"+uuid.NewString()), asynq.ProcessIn(max(l.wait, time.Second)))
	if err != nil {
		s.log.Warn("cannot enqueue a queued send that waits; the sweeper will retry", "message_id", l.id, "error", err)
	}
}

// claimBatch claims the message id and up to n other queued template
// sends of the organization (claimBatchSQL).
func (s *Service) claimBatch(ctx context.Context, orgID, id uuid.UUID, with []uuid.UUID) ([]claimed, error) {
	if err := s.claimStatements(); err != nil {
		return nil, err
	}
	with = dedupeWith(id, with)
	var rows []claimed
	err := s.db.WithContext(ctx).Raw(s.claimBatchSQL, map[string]any{"org": orgID, "id": id, "with": uuidArray(with),
		"n": max(0, QueuedBatch-1-len(with)), "outgoing": webhooks.EventMessageOutgoing, "sent": webhooks.EventMessageSent}).Scan(&rows).Error
	return rows, err
}

// Kinds of queuedOutcome.
const (
	settleSent    = "sent"
	settleFailed  = "failed"
	settleRelease = "release"
	settleWait    = "wait"
)

// queuedOutcome is how one message of a batch is settled.
type queuedOutcome struct {
	ID          uuid.UUID `json:"id"`
	Kind        string    `json:"kind"`
	PlatformID  string    `json:"platform_message_id,omitempty"`
	ContactID   uuid.UUID `json:"contact_id"`
	Preview     string    `json:"preview,omitempty"`
	ErrorCode   int       `json:"error_code"`
	ErrorTitle  string    `json:"error_title,omitempty"`
	ErrorDetail string    `json:"error_detail,omitempty"`
}

func failedOutcome(id uuid.UUID, pe *platform.Error) queuedOutcome {
	if pe == nil {
		pe = &platform.Error{Message: "the send failed"}
	}
	return queuedOutcome{ID: id, Kind: settleFailed, ErrorCode: pe.Code, ErrorTitle: apperr.Clip(pe.Message, 300),
		ErrorDetail: apperr.Clip(pe.Details, 1000)}
}

// settleQueuedSQL records a batch's outcomes in one statement (the JSON of
// []queuedOutcome sorted by id, @outcomes; @now the time of the batch),
// with the same rules as one message's statements:
//
//   - sent (settleAccepted): a status webhook may have matched the message
//     already through its callback data; then only the id is left to set.
//     The contact's last activity and the inbox's preview move in the same
//     statement (one update per contact: its newest message of the batch);
//   - failed (markFailed): only a message still pending fails;
//   - release (release): a pending message the provider certainly does not
//     have is given back (its claim cleared);
//   - wait (release of a rate-limit wait): given back as release is, and
//     its claim uncounted (send_attempts).
//
// Rows are locked in id order (the outcomes come sorted and drive a nested
// loop over the primary key; LIMIT @n, their number, keeps the planner from
// guessing 100 and reading the whole table instead, as it did for the
// campaigns' settle); a deadlock all the same is retried, the statement
// being a compare-and-set.
const settleQueuedSQL = `
WITH v AS (
    SELECT * FROM jsonb_to_recordset(CAST(@outcomes AS jsonb)) AS x(id uuid, kind text, platform_message_id text,
        contact_id uuid, preview text, error_code int, error_title text, error_detail text)
    LIMIT @n
), done AS (
    UPDATE messages m SET
        platform_message_id = CASE WHEN v.kind = 'sent' THEN COALESCE(m.platform_message_id, v.platform_message_id)
                                   ELSE m.platform_message_id END,
        status = CASE WHEN v.kind = 'sent' AND m.status = 'pending' THEN 'sent'
                      WHEN v.kind = 'failed' THEN 'failed' ELSE m.status END,
        sent_at = CASE WHEN v.kind = 'sent' THEN COALESCE(m.sent_at, CAST(@now AS timestamptz)) ELSE m.sent_at END,
        failed_at = CASE WHEN v.kind = 'failed' THEN CAST(@now AS timestamptz) ELSE m.failed_at END,
        error_code = CASE WHEN v.kind = 'failed' THEN v.error_code ELSE m.error_code END,
        error_title = CASE WHEN v.kind = 'failed' THEN COALESCE(v.error_title, '') ELSE m.error_title END,
        error_detail = CASE WHEN v.kind = 'failed' THEN COALESCE(v.error_detail, '') ELSE m.error_detail END,
        send_started_at = CASE WHEN v.kind IN ('release', 'wait') THEN NULL ELSE m.send_started_at END,
        send_attempts = CASE WHEN v.kind = 'wait' THEN GREATEST(m.send_attempts - 1, 0) ELSE m.send_attempts END,
        updated_at = now()
    FROM v
    WHERE m.id = v.id AND (v.kind = 'sent' OR (m.status = 'pending' AND (v.kind = 'failed' OR m.platform_message_id IS NULL)))
    RETURNING m.id
), newest AS (
    SELECT DISTINCT ON (contact_id) contact_id, preview FROM v WHERE kind = 'sent' ORDER BY contact_id, id
)
UPDATE contacts c SET
    last_message_preview = CASE WHEN CAST(@now AS timestamptz) >= COALESCE(c.last_message_at, '-infinity') THEN newest.preview
                                ELSE c.last_message_preview END,
    last_message_direction = CASE WHEN CAST(@now AS timestamptz) >= COALESCE(c.last_message_at, '-infinity') THEN 'outgoing'
                                  ELSE c.last_message_direction END,
    last_message_at = GREATEST(COALESCE(c.last_message_at, CAST(@now AS timestamptz)), CAST(@now AS timestamptz)),
    updated_at = now()
FROM newest
WHERE c.id = newest.contact_id`

// settleQueued runs settleQueuedSQL.
func (s *Service) settleQueued(ctx context.Context, outcomes []queuedOutcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	slices.SortFunc(outcomes, func(a, b queuedOutcome) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	body, err := json.Marshal(outcomes)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	for attempt := 1; ; attempt++ {
		err = s.db.WithContext(ctx).Exec(settleQueuedSQL, map[string]any{"outcomes": string(body), "n": len(outcomes), "now": s.now()}).Error
		var pe *pgconn.PgError
		if err == nil || attempt == 3 || !errors.As(err, &pe) || pe.Code != "40P01" {
			return err
		}
	}
}

// publishSent publishes the live events of the batch's sends that were
// recorded sent, reading who holds their contacts' transfers at once.
func (s *Service) publishSent(ctx context.Context, orgID uuid.UUID, sends []queuedSend, outcomes []queuedOutcome) {
	sent := map[uuid.UUID]string{}
	var contacts []uuid.UUID
	for _, o := range outcomes {
		if o.Kind == settleSent {
			sent[o.ID] = o.PlatformID
			contacts = append(contacts, o.ContactID)
		}
	}
	if len(sent) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	holders := s.holdersOf(ctx, s.db, orgID, contacts...)
	now := s.now()
	for i := range sends {
		q := &sends[i]
		pid, ok := sent[q.m.ID]
		if !ok {
			continue
		}
		q.m.PlatformMessageID, q.m.Status, q.m.SentAt = &pid, models.StatusSent, &now
		s.live.Publish(ctx, orgID, messageEvent(q.m, q.c, holders[q.c.ID]))
	}
}

// dedupeWith drops from with the task's own id and repeated ids, and keeps
// at most QueuedBatch-1 of them (a payload is not trusted to be well
// formed: a message claimed twice in one statement would be an error).
func dedupeWith(id uuid.UUID, with []uuid.UUID) []uuid.UUID {
	seen := map[uuid.UUID]bool{id: true}
	out := make([]uuid.UUID, 0, len(with))
	for _, w := range with {
		if !seen[w] && len(out) < QueuedBatch-1 {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// uuidArray is ids as a PostgreSQL array literal ({a,b}), for CAST(? AS
// uuid[]): a Go slice would be expanded into a list by gorm.
func uuidArray(ids []uuid.UUID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return "{" + strings.Join(parts, ",") + "}"
}
