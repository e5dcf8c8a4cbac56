package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
	"wharf/jobs"
)

// Tick is the scheduler's minute (notify:tick): it sweeps the ledger
// and enqueues one run per Scheduler Event notification due at tick, with a
// task id of the notification and tick, so a tick fired twice runs each
// once. It reads the notifications of every organization: each run then
// works inside its own organization.
func (s *Service) Tick(ctx context.Context, tick time.Time) (runs int, err error) {
	tick = tick.UTC().Truncate(time.Minute)
	if requeued, unknown, err := s.Sweep(ctx); err != nil {
		s.log.Warn("notifications: sweep failed", "error", err)
	} else if requeued+unknown > 0 {
		s.log.Warn("notifications: sweep", "requeued", requeued, "unknown", unknown)
	}
	// Every organization's enabled Scheduler Event notifications, with
	// their event_frequency and cron_format.
	found, err := s.fw().Find(ctx, nil, docframe.Filter{Doctype: NotificationDoctype,
		Equal:     map[string][]string{"notification_type": {TypeSchedulerEvent}},
		Unchecked: []string{"disabled"}, Values: []string{"event_frequency", "cron_format"}})
	if err != nil {
		return 0, err
	}
	for _, n := range found {
		ok, err := due(n.Values[0], n.Values[1], tick)
		if err != nil {
			s.log.Warn("notifications: cannot schedule", "organization_id", n.OrganizationID, "notification", n.Name, "error", err)
			continue
		}
		if !ok {
			continue
		}
		_, err = s.enq.Enqueue(ctx, jobs.NotifyRun{OrganizationID: n.OrganizationID, Notification: n.Name, Tick: tick})
		if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			return runs, err
		}
		runs++
	}
	if tick.Minute() == 0 {
		n, err := s.tickDays(ctx, tick)
		runs += n
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// tickDays enqueues the day's run of every Days Before / Days After
// notification. It is tried every hour with the day as the run's tick: the
// first hour of the day runs it (the task id is the notification's and the
// day's), a later hour finds it done or runs it if the scheduler was down
// at midnight, and the ledger's key (notification, day, document) never
// lets a document get the day's message twice.
func (s *Service) tickDays(ctx context.Context, tick time.Time) (int, error) {
	found, err := s.fw().Find(ctx, nil, docframe.Filter{Doctype: NotificationDoctype,
		Equal:     map[string][]string{"notification_type": {TypeDocTypeEvent}, "doctype_event": {eventDaysBefore, eventDaysAfter}},
		Unchecked: []string{"disabled"}})
	if err != nil {
		return 0, err
	}
	day := tick.UTC().Truncate(24 * time.Hour)
	runs := 0
	for _, n := range found {
		_, err := s.enq.Enqueue(ctx, jobs.NotifyRun{OrganizationID: n.OrganizationID, Notification: n.Name, Tick: day})
		if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			return runs, err
		}
		runs++
	}
	return runs, nil
}

// daysFilter selects the documents whose date field falls on the day a
// Days Before (the date is days_in_advance after the run's day) or Days
// After (before it) notification is about, in UTC.
func (s *Service) daysFilter(ctx context.Context, orgID uuid.UUID, n map[string]any, day time.Time) ([]any, error) {
	ref, field := str(n["reference_doctype"]), str(n["date_changed"])
	days, _ := intOf(n["days_in_advance"])
	if str(n["doctype_event"]) == eventDaysAfter {
		days = -days
	}
	target := day.UTC().Truncate(24*time.Hour).AddDate(0, 0, days)
	fields, err := s.refFields(ctx, orgID, ref)
	if err != nil {
		return nil, err
	}
	if fields[field] == "Date" {
		return []any{[]any{field, "=", target.Format(time.DateOnly)}}, nil
	}
	return []any{[]any{field, ">=", target.Format(time.DateTime)}, []any{field, "<", target.AddDate(0, 0, 1).Format(time.DateTime)}}, nil
}

// Run is one Scheduler Event notification at one tick (notify:run),
// or one day of a Days Before / Days After notification (its tick is the
// day; only documents whose date field falls on the day it is about): the
// condition runs over each document of the reference DocType that is not
// cancelled (at most Limits.Documents, by name), and each send it asks
// for becomes a ledger row keyed by (notification, tick, document, object),
// so a retried run adds none twice.
func (s *Service) Run(ctx context.Context, orgID uuid.UUID, notification string, tick time.Time) error {
	tick = tick.UTC().Truncate(time.Minute)
	n, err := s.fw().Get(ctx, admin, orgID, NotificationDoctype, notification)
	if err != nil {
		var de *docframe.Error
		if errors.As(err, &de) {
			return nil // deleted since the tick
		}
		return err
	}
	days := str(n["notification_type"]) == TypeDocTypeEvent && daysEvent(str(n["doctype_event"]))
	if on(n["disabled"]) || (str(n["notification_type"]) != TypeSchedulerEvent && !days) {
		return nil
	}
	filters := []any{[]any{"docstatus", "!=", 2}}
	event := TypeSchedulerEvent
	if days {
		event = str(n["doctype_event"])
		more, err := s.daysFilter(ctx, orgID, n, tick)
		if err != nil {
			s.log.Warn("notification cannot select its documents", "notification", notification, "error", err)
			return nil
		}
		filters = append(filters, more...)
	}
	filterJSON, err := json.Marshal(filters)
	if err != nil {
		return err
	}
	prog, err := compile(str(n["condition"]), true)
	if err != nil {
		s.log.Warn("notification condition does not compile", "notification", notification, "error", err)
		s.noteFailure(ctx, orgID, notification, "condition: "+err.Error())
		return nil
	}
	ref := str(n["reference_doctype"])
	list, err := s.fw().List(ctx, admin, orgID, ref, docframe.ListArgs{Fields: `["*"]`, Filters: string(filterJSON),
		OrderBy: "name asc", Limit: s.limits.Documents})
	if err != nil {
		var de *docframe.Error
		if errors.As(err, &de) {
			s.log.Warn("notification cannot list its documents", "notification", notification, "doctype", ref, "error", err)
			return nil
		}
		return err
	}
	var condErrs, sends int
	var firstErr, stoppedBy error
	for _, r := range list {
		doc, _ := r.(map[string]any)
		name := str(doc["name"])
		v, err := s.run(ctx, prog, doc)
		if errors.Is(err, errEvaluator) {
			return err // retried: what was planned is in the ledger once
		}
		if err != nil {
			if condErrs++; firstErr == nil {
				firstErr = fmt.Errorf("%s %s: condition: %w", ref, name, err)
			}
			// A budget exceeded is costly (a process killed, a second
			// spent): the other documents would most likely cost as much.
			if errors.Is(err, errBudget) || errors.Is(err, errMemory) {
				stoppedBy = fmt.Errorf("%s %s: condition: %w", ref, name, err)
				break
			}
			continue
		}
		switch {
		case v.hasList:
			if sends += len(v.dataList); sends > s.limits.Sends {
				stoppedBy = fmt.Errorf("%s %s: the run would plan more than %d sends", ref, name, s.limits.Sends)
				break
			}
			for i, obj := range v.dataList {
				if err := s.plan(ctx, orgID, n, notification, event, tick, ref, name, fmt.Sprint(i), obj, "phone"); err != nil {
					return err
				}
			}
		case v.send:
			if sends++; sends > s.limits.Sends {
				stoppedBy = fmt.Errorf("%s %s: the run would plan more than %d sends", ref, name, s.limits.Sends)
				break
			}
			if err := s.plan(ctx, orgID, n, notification, event, tick, ref, name, "doc", doc, str(n["field_name"])); err != nil {
				return err
			}
		}
		if stoppedBy != nil {
			break
		}
	}
	switch {
	case stoppedBy != nil:
		s.log.Warn("notification run stopped", "notification", notification, "reason", stoppedBy)
		s.noteFailure(ctx, orgID, notification, stoppedBy.Error()+" (the run stopped there)")
	case condErrs > 0:
		s.log.Warn("notification condition failed", "notification", notification, "documents", condErrs, "first", firstErr)
		msg := firstErr.Error()
		if condErrs > 1 {
			msg += fmt.Sprintf(" (and %d more documents)", condErrs-1)
		}
		s.noteFailure(ctx, orgID, notification, msg)
	}
	var ids []uuid.UUID
	if err := s.db.WithContext(ctx).Raw(`SELECT id FROM wharfnotify_sends WHERE organization_id = ? AND notification = ? AND tick = ?
		AND status = 'pending'`, orgID, notification, tick).Scan(&ids).Error; err != nil {
		return err
	}
	s.enqueueSends(ctx, orgID, ids)
	return nil
}

// plan records one scheduled send (or, when the values hold no phone, a
// failed row saying so).
func (s *Service) plan(ctx context.Context, orgID uuid.UUID, n map[string]any, notification, event string, tick time.Time,
	doctype, docname, object string, values map[string]any, phoneKey string) error {
	p, perr := buildPlan(n, values, phoneKey, doctype, docname)
	status, reason, req := "pending", "", []byte(nil)
	if perr != nil {
		status, reason = "failed", perr.Error()
	} else {
		req, _ = json.Marshal(p)
	}
	key := fmt.Sprintf("tick\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", notification, tick.Format(time.RFC3339), doctype, docname, object)
	now := s.now().UTC()
	var reqArg any
	if req != nil {
		reqArg = string(req)
	}
	return s.db.WithContext(ctx).Exec(`INSERT INTO wharfnotify_sends (id, organization_id, dedupe_key, notification, reference_doctype,
		reference_name, event, tick, request, status, error, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?) ON CONFLICT (organization_id, dedupe_key) DO NOTHING`,
		uuid.New(), orgID, key, notification, doctype, docname, event, tick, reqArg, status, reason, now, now).Error
}
