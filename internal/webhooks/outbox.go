package webhooks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/jobs"
	"wharf/models"
)

// Listens reports whether an active webhook of the organization subscribes
// to any of events. A hot path that learns that nobody does writes its change
// without an outbox row, as one statement without a transaction of its own
// (a webhook created meanwhile is as if it had been created just after the
// change); one that learns that someone does calls Emit in its change's
// transaction, which checks again.
func (s *Service) Listens(ctx context.Context, db *gorm.DB, orgID uuid.UUID, events ...string) (bool, error) {
	if len(events) == 0 {
		return false, nil
	}
	set, err := s.subscribed(ctx, db, orgID)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if set[e] {
			return true, nil
		}
	}
	return false, nil
}

// EmitStatement is Emit as a data-modifying statement for the caller to run
// inside a statement of its own (as a CTE), so that the change, the check
// and the event are one round trip and one snapshot: it records the event
// when cond (SQL over the caller's CTEs) holds and an active webhook of the
// organization subscribes to it, and returns its id (RETURNING id): publish
// that after the commit, when the statement returned one.
func (s *Service) EmitStatement(orgID uuid.UUID, event string, data any, cond string) (stmt string, args []any, err error) {
	b, err := json.Marshal(data)
	if err != nil {
		return "", nil, err
	}
	id := uuid.New()
	stmt = `INSERT INTO events (id, organization_id, event, data, created_at)
		SELECT ?, ?, ?, ?::jsonb, ?
		WHERE (` + cond + `) AND EXISTS (SELECT 1 FROM webhooks
			WHERE organization_id = ? AND is_active AND events @> jsonb_build_array(?::text))
		RETURNING id`
	return stmt, []any{id, orgID, event, string(b), s.now(), orgID, event}, nil
}

// EmitEachStatement is EmitStatement for several rows of one statement: it
// records one event per row of source (SQL over the caller's CTEs, without
// placeholders, giving a jsonb column named data) when an active webhook of
// the organization subscribes to event, and returns each event's id and
// data (RETURNING id, data): publish the ids after the commit.
func (s *Service) EmitEachStatement(orgID uuid.UUID, event, source string) (stmt string, args []any) {
	stmt = `INSERT INTO events (id, organization_id, event, data, created_at)
		SELECT gen_random_uuid(), ?, ?, src.data, ? FROM (` + source + `) src
		WHERE EXISTS (SELECT 1 FROM webhooks
			WHERE organization_id = ? AND is_active AND events @> jsonb_build_array(?::text))
		RETURNING id, data`
	return stmt, []any{orgID, event, s.now(), orgID, event}
}

// Emit records an event in the outbox inside tx, when at least one active
// webhook of the organization subscribes to it; it returns the event id to
// Publish after the commit (uuid.Nil when nobody listens).
func (s *Service) Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data any) (uuid.UUID, error) {
	listening, err := s.Listens(ctx, tx, orgID, event)
	if err != nil || !listening {
		return uuid.Nil, err
	}
	b, err := json.Marshal(data)
	if err != nil {
		return uuid.Nil, err
	}
	ev := models.Event{ID: uuid.New(), OrganizationID: orgID, Event: event, Data: b, CreatedAt: s.now()}
	return ev.ID, tx.WithContext(ctx).Create(&ev).Error
}

// Record records an internal event (one no webhook subscribes to, such as
// EventMessageChanged) in the outbox inside tx, whether or not a webhook
// listens: its Subscribers consume it when it is dispatched, at least once
// (a lost dispatch task is enqueued again by SweepUndispatched). It returns
// the event id to Publish after the commit.
func (s *Service) Record(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data any) (uuid.UUID, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return uuid.Nil, err
	}
	ev := models.Event{ID: uuid.New(), OrganizationID: orgID, Event: event, Data: b, CreatedAt: s.now()}
	return ev.ID, tx.WithContext(ctx).Create(&ev).Error
}

// EmitMany records one event per element of data inside tx, with one
// statement, when at least one active webhook of the organization subscribes
// to event (bulk changes: an import's created contacts). It returns the
// events' ids to Publish after the commit (none when nobody listens).
func (s *Service) EmitMany(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data []any) ([]uuid.UUID, error) {
	if len(data) == 0 {
		return nil, nil
	}
	listening, err := s.Listens(ctx, tx, orgID, event)
	if err != nil || !listening {
		return nil, err
	}
	return s.RecordMany(ctx, tx, orgID, event, data)
}

// RecordMany records one internal event per element of data inside tx, with
// one statement, whether or not a webhook listens (Record for many: the
// statuses of a batch that changed projected messages). It returns the
// events' ids to Publish after the commit.
func (s *Service) RecordMany(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data []any) ([]uuid.UUID, error) {
	if len(data) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	err = tx.WithContext(ctx).Raw(`INSERT INTO events (organization_id, event, data, created_at)
		SELECT ?, ?, d.data, ? FROM jsonb_array_elements(?::jsonb) WITH ORDINALITY AS d (data, n) ORDER BY d.n
		RETURNING id`, orgID, event, s.now(), string(b)).Scan(&ids).Error
	return ids, err
}

// Publish enqueues the dispatch of committed events. A failure is only
// logged: the sweeper enqueues undispatched events again.
func (s *Service) Publish(ctx context.Context, orgID uuid.UUID, ids ...uuid.UUID) {
	for _, id := range ids {
		if id == uuid.Nil {
			continue
		}
		if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.WebhookDispatch{OrganizationID: orgID, EventID: id}); err != nil && err != jobs.ErrDuplicate {
			s.log.Warn("cannot enqueue webhook dispatch; the sweeper will retry", "event_id", id, "error", err)
		}
	}
}

// sweepAge is how long an event may wait undispatched before the sweeper
// assumes its task was lost.
const sweepAge = 30 * time.Second

// SweepUndispatched re-enqueues events whose dispatch task was lost.
func (s *Service) SweepUndispatched(ctx context.Context) (int, error) {
	var rows []models.Event
	err := s.db.WithContext(ctx).Select("id", "organization_id").
		Where("dispatched_at IS NULL AND created_at < ?", s.now().Add(-sweepAge)).Order("created_at").Limit(1000).Find(&rows).Error
	if err != nil {
		return 0, err
	}
	for _, ev := range rows {
		s.Publish(ctx, ev.OrganizationID, ev.ID)
	}
	// Keep a week of dispatched events (index events_dispatched). A failed
	// cleanup is retried by the next sweep.
	if err := s.db.WithContext(ctx).Where("dispatched_at < ?", s.now().AddDate(0, 0, -7)).Delete(&models.Event{}).Error; err != nil {
		s.log.Warn("cannot delete old webhook events", "error", err)
	}
	return len(rows), nil
}
