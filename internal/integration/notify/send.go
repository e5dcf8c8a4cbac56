package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
)

// plan is a resolved send: the message and the post-send property.
type plan struct {
	Send TemplateSend `json:"send"`
	// Print is the document's print to attach (Attach Document Print),
	// made into a PDF when the send is made.
	Print         *PrintDoc `json:"print,omitempty"`
	PropertyField string    `json:"property_field,omitempty"`
	PropertyValue string    `json:"property_value,omitempty"`
}

// sendRow is a wharfnotify_sends row as the worker reads it.
type sendRow struct {
	ID               uuid.UUID
	OrganizationID   uuid.UUID
	Notification     string
	ReferenceDoctype string
	ReferenceName    string
	Event            string
	Snapshot         []byte
	Request          []byte
	Status           string
	PropertyPending  bool
}

// Deliver is the notify:send job: it decides a DocType event's row
// (the condition over the document as it was), sends it once, and sets
// the property after. Idempotent: a row leaves pending once, by
// compare-and-set, before the Sender is called.
func (s *Service) Deliver(ctx context.Context, orgID, sendID uuid.UUID) error {
	var rows []sendRow
	if err := s.db.WithContext(ctx).Raw(`SELECT id, organization_id, notification, reference_doctype, reference_name, event,
		snapshot, request, status, property_pending FROM wharfnotify_sends WHERE organization_id = ? AND id = ?`, orgID, sendID).
		Scan(&rows).Error; err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil // the organization is gone
	}
	row := rows[0]
	switch {
	case row.Status == "sent" && row.PropertyPending:
		var p plan
		if err := json.Unmarshal(row.Request, &p); err != nil {
			return err
		}
		return s.setProperty(ctx, row, p)
	case row.Status != "pending":
		return nil
	}
	var p plan
	if row.Request == nil {
		var reason string
		var failed bool
		var err error
		p, reason, failed, err = s.decide(ctx, row)
		if err != nil {
			return err
		}
		if reason != "" {
			status := "skipped"
			if failed {
				status = "failed"
				s.log.Warn("notification not sent", "notification", row.Notification, "doctype", row.ReferenceDoctype,
					"name", row.ReferenceName, "event", row.Event, "reason", reason)
			}
			if err := s.settle(ctx, row.ID, "pending", status, "", reason, false); err != nil || !failed {
				return err
			}
			s.noteFailure(ctx, row.OrganizationID, row.Notification, row.ReferenceDoctype+" "+row.ReferenceName+": "+reason)
			return nil
		}
		b, _ := json.Marshal(p)
		if err := s.db.WithContext(ctx).Exec(`UPDATE wharfnotify_sends SET request = ?::jsonb, updated_at = ?
			WHERE id = ? AND status = 'pending' AND request IS NULL`, string(b), s.now().UTC(), row.ID).Error; err != nil {
			return err
		}
	} else if err := json.Unmarshal(row.Request, &p); err != nil {
		return err
	}
	claim := s.db.WithContext(ctx).Exec(`UPDATE wharfnotify_sends SET status = 'sending', updated_at = ?
		WHERE id = ? AND status = 'pending'`, s.now().UTC(), row.ID)
	if claim.Error != nil {
		return claim.Error
	}
	if claim.RowsAffected == 0 {
		return nil // another run has it
	}
	p.Send.IdempotencyKey = row.ID.String()
	if err := s.attachPrint(ctx, row.OrganizationID, row.ID, &p); err != nil {
		return s.sendFailed(ctx, row, err)
	}
	name, err := s.sender.SendTemplate(ctx, row.OrganizationID, p.Send)
	if err != nil {
		return s.sendFailed(ctx, row, err)
	}
	if err := s.settle(context.WithoutCancel(ctx), row.ID, "sending", "sent", name, "", p.PropertyField != ""); err != nil {
		return err
	}
	if p.PropertyField == "" {
		return nil
	}
	row.Status, row.PropertyPending = "sent", true
	return s.setProperty(ctx, row, p)
}

// sendFailed settles a row whose send failed (not retried: a provider
// refusal is never sent again).
func (s *Service) sendFailed(ctx context.Context, row sendRow, err error) error {
	s.log.Warn("notification send failed", "notification", row.Notification, "doctype", row.ReferenceDoctype,
		"name", row.ReferenceName, "error", err)
	ctx = context.WithoutCancel(ctx)
	if err := s.settle(ctx, row.ID, "sending", "failed", "", err.Error(), false); err != nil {
		return err
	}
	s.noteFailure(ctx, row.OrganizationID, row.Notification, row.ReferenceDoctype+" "+row.ReferenceName+": "+err.Error())
	return nil
}

// noteFailure records why a notification failed where its Admin sees it,
// the notification's last_error and last_error_at, set as Frappe's
// db.set_value sets a field (no hooks, no events). The ledger row has the
// reason too; the caller has logged it.
func (s *Service) noteFailure(ctx context.Context, orgID uuid.UUID, notification, reason string) {
	err := s.fw().SetValues(context.WithoutCancel(ctx), nil, orgID, NotificationDoctype, notification,
		map[string]any{"last_error": clip(reason, 1000), "last_error_at": s.now().UTC().Format(time.DateTime)})
	if err != nil {
		s.log.Warn("notifications: cannot record a failure on the notification", "notification", notification, "error", err)
	}
}

// settle moves a row from one status to its outcome.
func (s *Service) settle(ctx context.Context, id uuid.UUID, from, to, message, reason string, property bool) error {
	return s.db.WithContext(ctx).Exec(`UPDATE wharfnotify_sends SET status = ?, message_name = ?, error = ?, property_pending = ?,
		updated_at = ? WHERE id = ? AND status = ?`, to, message, reason, property, s.now().UTC(), id, from).Error
}

// decide runs a DocType event row's notification over the document as it
// was: a reason when nothing is to be sent (failed: a reason to log).
func (s *Service) decide(ctx context.Context, row sendRow) (p plan, reason string, failed bool, err error) {
	n, err := s.fw().Get(ctx, admin, row.OrganizationID, NotificationDoctype, row.Notification)
	if err != nil {
		var de *docframe.Error
		if errors.As(err, &de) {
			return p, "notification " + row.Notification + " no longer exists", false, nil
		}
		return p, "", false, err
	}
	if on(n["disabled"]) {
		return p, "notification is disabled", false, nil
	}
	values := decodeMap(row.Snapshot)
	prog, err := compile(str(n["condition"]), false)
	if err != nil {
		return p, "condition: " + err.Error(), true, nil
	}
	v, err := s.run(ctx, prog, values)
	if errors.Is(err, errEvaluator) {
		return p, "", false, err // retried: the condition did not run
	}
	if err != nil {
		return p, "condition: " + err.Error(), true, nil
	}
	if !v.send {
		return p, "condition is false", false, nil
	}
	p, err = buildPlan(n, values, str(n["field_name"]), row.ReferenceDoctype, row.ReferenceName)
	if err != nil {
		return p, err.Error(), true, nil
	}
	return p, "", false, nil
}

// buildPlan maps values (a document's, or an object of _data_list) to a
// send: the phone from phoneKey, parameters from the mapping rows in
// order, the button's URL parameter, the attachment.
func buildPlan(n map[string]any, values map[string]any, phoneKey, doctype, docname string) (plan, error) {
	to := strings.TrimSpace(paramText(values[phoneKey]))
	if to == "" {
		return plan{}, fmt.Errorf("no phone number in %s", phoneKey)
	}
	p := plan{Send: TemplateSend{Account: str(n["platform_account"]), To: to, Template: str(n["template"]),
		Parameters: []string{}, ReferenceDoctype: doctype, ReferenceName: docname}}
	for _, r := range rowsOf(n["fields"]) {
		p.Send.Parameters = append(p.Send.Parameters, paramText(values[str(r["field_name"])]))
	}
	if bf := str(n["button_fields"]); bf != "" {
		v := paramText(values[bf])
		if t := str(n["button_url_template"]); t != "" {
			v = strings.ReplaceAll(t, "{{1}}", v)
		}
		p.Send.ButtonURLParam = v
	}
	if a := str(n["attach"]); a != "" {
		p.Send.Attachment = &Attachment{URL: a, Filename: path.Base(strings.SplitN(a, "?", 2)[0])}
	} else if on(n["attach_document_print"]) {
		p.Print = printOf(doctype, docname, values)
	}
	if f := str(n["set_property_after_alert"]); f != "" {
		p.PropertyField, p.PropertyValue = f, paramText(n["property_value"])
	}
	return p, nil
}

func decodeMap(b []byte) map[string]any {
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

// setProperty is Set Property After Alert: a save of the document
// through the framework (validation, coercion to the field's type, hooks,
// events), marked so that it does not fire this notification again. A
// refusal (the document is gone, submitted, the value invalid) is
// recorded and logged, not retried.
func (s *Service) setProperty(ctx context.Context, row sendRow, p plan) error {
	gctx := context.WithValue(ctx, guardKey{}, guard{org: row.OrganizationID, doctype: row.ReferenceDoctype,
		name: row.ReferenceName, notification: row.Notification})
	_, err := s.fw().Update(gctx, admin, row.OrganizationID, row.ReferenceDoctype, row.ReferenceName,
		map[string]any{p.PropertyField: p.PropertyValue})
	reason := ""
	if err != nil {
		var de *docframe.Error
		if !errors.As(err, &de) {
			return err // the database: retried
		}
		reason = "set property after alert: " + err.Error()
		s.log.Warn("notification sent, property not set", "notification", row.Notification, "doctype", row.ReferenceDoctype,
			"name", row.ReferenceName, "error", err)
		s.noteFailure(ctx, row.OrganizationID, row.Notification, row.ReferenceDoctype+" "+row.ReferenceName+": "+reason)
	}
	return s.db.WithContext(context.WithoutCancel(ctx)).Exec(`UPDATE wharfnotify_sends SET property_pending = false, error = ?, updated_at = ?
		WHERE id = ? AND property_pending`, reason, s.now().UTC(), row.ID).Error
}

// Sweep timings: a pending row older than sweepAge lost its task; a row
// sending for longer than sendingTimeout lost its worker.
const (
	sweepAge       = 30 * time.Second
	sendingTimeout = 5 * time.Minute
)

// Sweep enqueues again the rows whose task was lost (pending, or sent
// with the property still to set) and turns rows left sending by a dead
// worker into unknown: their message may or may not have gone, and is
// never sent again.
func (s *Service) Sweep(ctx context.Context) (requeued, unknown int64, err error) {
	now := s.now().UTC()
	res := s.db.WithContext(ctx).Exec(`UPDATE wharfnotify_sends SET status = 'unknown', error = 'the worker stopped during the send', updated_at = ?
		WHERE status = 'sending' AND updated_at < ?`, now, now.Add(-sendingTimeout))
	if res.Error != nil {
		return 0, 0, res.Error
	}
	unknown = res.RowsAffected
	var lost []struct {
		ID             uuid.UUID
		OrganizationID uuid.UUID
	}
	if err := s.db.WithContext(ctx).Raw(`SELECT id, organization_id FROM wharfnotify_sends
		WHERE ((status = 'pending' AND created_at < ?) OR (status = 'sent' AND property_pending AND updated_at < ?))
		ORDER BY created_at LIMIT 1000`, now.Add(-sweepAge), now.Add(-sweepAge)).Scan(&lost).Error; err != nil {
		return 0, unknown, err
	}
	for _, l := range lost {
		s.enqueueSends(ctx, l.OrganizationID, []uuid.UUID{l.ID})
	}
	return int64(len(lost)), unknown, nil
}
