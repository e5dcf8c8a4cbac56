package messaging

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/outbound"
	"wharf/internal/templates"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// TemplateInput is the body of POST /api/messages/template.
type TemplateInput struct {
	ContactID    *uuid.UUID
	PhoneNumber  string
	TemplateName string
	TemplateID   *uuid.UUID
	Params       map[string]string
	AccountName  string
}

// Queued is the answer to a template send.
type Queued struct {
	MessageID    uuid.UUID
	PhoneNumber  string
	Status       models.MessageStatus
	TemplateName string
}

// QueueTemplate validates a template send, stores the message as pending
// and leaves the sending to the worker. Nothing is stored (not even a new
// contact) when the request is invalid.
func (s *Service) QueueTemplate(ctx context.Context, orgID uuid.UUID, actor Actor, in TemplateInput) (*Queued, error) {
	if in.ContactID == nil && strings.TrimSpace(in.PhoneNumber) == "" {
		return nil, apperr.Invalidf("contact_id or phone_number is required")
	}
	if in.TemplateID == nil && strings.TrimSpace(in.TemplateName) == "" {
		return nil, apperr.Invalidf("template_name or template_id is required")
	}
	var account *accounts.Account
	var err error
	if strings.TrimSpace(in.AccountName) != "" {
		if account, err = s.accounts.RecentSender(ctx, orgID, in.AccountName, nil); err != nil {
			return nil, err
		}
	}
	var contact *models.Contact
	number := ""
	if in.ContactID != nil {
		if contact, err = s.contacts.Contact(ctx, orgID, *in.ContactID); err != nil {
			return nil, err
		}
		number = contact.PhoneNumber
	} else if number, err = phone.Normalize(in.PhoneNumber); err != nil {
		return nil, apperr.Invalidf("phone_number: %v", err)
	}
	var tmpl *models.Template
	if in.TemplateID != nil {
		if tmpl, err = s.templates.RecentSendable(ctx, orgID, accountID(account), in.TemplateID, ""); err != nil {
			return nil, err
		}
		if account == nil {
			if account, err = s.accounts.RecentSender(ctx, orgID, "", &tmpl.AccountID); err != nil {
				return nil, err
			}
			if account.ID != tmpl.AccountID {
				return nil, apperr.Invalidf("the template's account is not active")
			}
		}
	} else {
		if account == nil {
			var preferred *uuid.UUID
			if contact != nil {
				preferred = contact.AccountID
			}
			if account, err = s.accounts.RecentSender(ctx, orgID, "", preferred); err != nil {
				return nil, err
			}
		}
		if tmpl, err = s.templates.RecentSendable(ctx, orgID, &account.ID, nil, in.TemplateName); err != nil {
			return nil, err
		}
	}
	if _, err := templates.Build(tmpl, in.Params); err != nil {
		return nil, err
	}
	if err := s.checkOptOut(ctx, orgID, tmpl, contact, number); err != nil {
		return nil, err
	}
	params := make(map[string]any, len(in.Params))
	for k, v := range in.Params {
		params[k] = v
	}
	now := s.now()
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, AccountID: &account.ID,
		Direction: models.DirectionOutgoing, Type: "template", Status: models.StatusPending, TemplateName: tmpl.Name,
		TemplateID: &tmpl.ID, SentBy: &actor.UserID, APIKeyID: actor.APIKeyID, OccurredAt: now}
	m.Content.V = map[string]any{"template_id": tmpl.ID, "template_name": tmpl.Name, "language": tmpl.Language,
		"params": params, "text": templates.Describe(tmpl, in.Params)}
	// A contact found or created and its message are written in one
	// statement: one commit per send instead of two, no contact left behind
	// by a send that could not be stored, and the contact-count row a new
	// contact locks is held for no further round trip. Sends by number are
	// written in groups with the concurrent ones (queuegroup.go).
	if contact != nil {
		m.ContactID = contact.ID
		if err := s.db.WithContext(ctx).Create(&m).Error; err != nil {
			return nil, err
		}
		s.enqueueSends(ctx, orgID, []uuid.UUID{m.ID})
	} else if contact, err = s.queueInGroup(ctx, m, number); err != nil {
		return nil, err
	}
	return &Queued{MessageID: m.ID, PhoneNumber: contact.PhoneNumber, Status: models.StatusPending, TemplateName: tmpl.Name}, nil
}

// checkOptOut refuses a marketing template to a contact who opted out of
// marketing, before anything is stored (the Sender's rule refuses it again
// should the contact opt out before the worker sends it). number is the
// contact's when contact is nil (a send by phone number).
func (s *Service) checkOptOut(ctx context.Context, orgID uuid.UUID, tmpl *models.Template, contact *models.Contact, number string) error {
	if !templates.IsMarketing(tmpl) {
		return nil
	}
	out := false
	if contact != nil {
		out = contact.MarketingOptOut
	} else {
		var err error
		if out, err = s.contacts.MarketingOptedOut(ctx, orgID, phone.Digits(number)); err != nil {
			return err
		}
	}
	if out {
		return apperr.Invalidf("the contact opted out of marketing messages: template %q is a MARKETING template "+
			"(utility and authentication templates can still be sent)", tmpl.Name)
	}
	return nil
}

func accountID(a *accounts.Account) *uuid.UUID {
	if a == nil {
		return nil
	}
	return &a.ID
}

// SendQueued sends one queued message (template sends, and the chatbot's
// replies: replies.go, which calls it in order per contact). It claims the
// message first, so a duplicate task, or a retry after a crash that
// happened after the provider call, never sends twice. lastAttempt tells it
// to give up on transient errors. The worker's message:send job sends in
// batches instead (SendQueuedBatch, queuedbatch.go).
func (s *Service) SendQueued(ctx context.Context, orgID, id uuid.UUID, lastAttempt bool) error {
	row, err := s.claim(ctx, orgID, id)
	if err != nil {
		return err
	}
	if row.Message.ID == uuid.Nil {
		return nil // sent, failed, or in the hands of an earlier attempt
	}
	q := s.prepareQueued(row)
	if q.fail != nil {
		s.markFailed(ctx, q.m.ID, q.fail)
		return nil
	}
	m := q.m
	r := s.sender.Send(ctx, q.out)
	switch r.Outcome {
	case outbound.Accepted:
		return s.settleAccepted(ctx, m, q.c, q.a, r.MessageID, Actor{UserID: deref(m.SentBy), APIKeyID: m.APIKeyID}, row.Listening)
	case outbound.Failed:
		return r.Err
	case outbound.Unknown:
		// The provider may have the message: leave it claimed; its statuses
		// or the sweeper settle it.
		s.log.Warn("template send outcome unknown", "message_id", m.ID, "error", r.Err)
		return nil
	case outbound.Paced:
		s.release(ctx, m.ID, false)
		return &jobs.RateLimited{RetryAfter: r.Wait, Reason: "waiting for the account's messaging tier"}
	case outbound.Throttled:
		s.release(ctx, m.ID, false)
		return &jobs.RateLimited{RetryAfter: r.Wait, Reason: fmt.Sprintf("provider code %d", r.ProviderError().Code)}
	case outbound.Transient:
		if !lastAttempt && !triedEnough(m) {
			s.release(ctx, m.ID, true)
			return r.Err
		}
	case outbound.Refused:
		s.markFailed(ctx, m.ID, &platform.Error{Message: r.Err.Error()})
		return nil
	}
	s.markFailed(ctx, m.ID, r.ProviderError())
	return nil
}

// queuedSend is a claimed queued message made ready to send: the request
// for the Sender, or why it cannot be sent.
type queuedSend struct {
	m   *models.Message
	c   *models.Contact
	a   *accounts.Account
	out outbound.Message
	// fail, when set, is why the message cannot be sent (it fails without
	// a request to the provider).
	fail *platform.Error
}

// prepareQueued checks a claimed message against its contact, account and
// template as the claim read them, and builds its request.
func (s *Service) prepareQueued(row *claimed) queuedSend {
	m := &row.Message
	q := queuedSend{m: m}
	fail := func(title, detail string) queuedSend {
		q.fail = &platform.Error{Message: title, Details: detail}
		return q
	}
	if !row.ContactFound {
		return fail("contact no longer exists", "")
	}
	q.c = &models.Contact{ID: m.ContactID, OrganizationID: m.OrganizationID, PhoneNumber: row.ContactPhoneNumber,
		Name: row.ContactName, ProfileName: row.ContactProfileName}
	if m.AccountID == nil {
		return fail("the account was disconnected", "")
	}
	if !row.AccountFound || row.Account.Status != models.AccountActive {
		return fail("the account is not active", "")
	}
	a, err := s.accounts.Open(row.Account)
	if err != nil {
		return fail("the account is not active", "")
	}
	q.a = a
	var msg platform.Message
	if m.Type == "template" {
		if m.TemplateID == nil || !row.TemplateFound {
			return fail("the template can no longer be sent", "template not found")
		}
		tmpl := &row.Template
		if err := templates.CheckSendable(tmpl, &a.ID); err != nil {
			return fail("the template can no longer be sent", err.Error())
		}
		values := map[string]string{}
		if p, ok := m.Content.V["params"].(map[string]any); ok {
			for k, v := range p {
				values[k] = fmt.Sprint(v)
			}
		}
		t, err := templates.Build(tmpl, values)
		if err != nil {
			return fail("the template's parameters no longer match", err.Error())
		}
		msg = platform.NewMessage(phone.Digits(q.c.PhoneNumber), "template")
		msg.Template = &t
	} else if msg, err = storedMessage(m, phone.Digits(q.c.PhoneNumber)); err != nil { // a bot reply (replies.go)
		return fail("the message cannot be sent", err.Error())
	}
	msg.BizOpaqueCallbackData = m.ID.String()
	q.out = outbound.Message{Account: a, Priority: queuedPriority(m), Message: msg,
		Marketing: m.Type == "template" && templates.IsMarketing(&row.Template)}
	return q
}

// queuedPriority is the pace priority of a queued send: a bot reply (any
// free-form message) goes with people's replies, a template send (API,
// console, notifications, the framework) after them.
func queuedPriority(m *models.Message) outbound.Priority {
	if m.Type == "template" {
		return outbound.API
	}
	return outbound.Reply
}

// release undoes a claim when the provider certainly did not take the
// message. A try that failed (counted) keeps its count; a rate-limit wait
// gives it back, as it uses up no retry of a task (worker.IsFailure).
func (s *Service) release(ctx context.Context, id uuid.UUID, counted bool) {
	change := map[string]any{"send_started_at": nil}
	if !counted {
		change["send_attempts"] = gorm.Expr("GREATEST(send_attempts - 1, 0)")
	}
	s.db.WithContext(context.WithoutCancel(ctx)).Model(&models.Message{}).Where("id = ? AND status = 'pending' AND platform_message_id IS NULL", id).
		Updates(change)
}

// triedEnough reports whether a claimed message used up its tries
// (jobs.MessageSendAttempts): a transient error then fails it, whichever
// task claimed it. The task's own retries bound its own message too
// (lastAttempt); the count bounds a message that other tasks' batches
// claimed and gave back, each time with a new task of its own (sendLater).
func triedEnough(m *models.Message) bool { return m.SendAttempts >= jobs.MessageSendAttempts }

func deref(p *uuid.UUID) uuid.UUID {
	if p == nil {
		return uuid.Nil
	}
	return *p
}

// claimed is a claimed message with what its send needs, read in the
// claiming statement.
type claimed struct {
	models.Message
	ContactFound       bool
	ContactPhoneNumber string
	ContactName        string
	ContactProfileName string
	AccountFound       bool
	Account            models.PlatformAccount `gorm:"embedded;embeddedPrefix:acc_"`
	TemplateFound      bool
	Template           models.Template `gorm:"embedded;embeddedPrefix:tmpl_"`
	// Listening: some active webhook of the organization takes
	// message.outgoing or message.sent.
	Listening bool
}

// claim marks the message started (the rule of the package comment) and
// returns it, in the same statement, with its contact, account and template
// as they are now, and whether a webhook listens: one round trip instead of
// five, and the checks that follow are as exact as separate reads. The
// account's and the template's rules stay theirs (accounts.Open,
// templates.CheckSendable). A zero ID means nothing was claimed.
func (s *Service) claim(ctx context.Context, orgID, id uuid.UUID) (*claimed, error) {
	if err := s.claimStatements(); err != nil {
		return nil, err
	}
	var row claimed
	err := s.db.WithContext(ctx).Raw(s.claimSQL, id, orgID, webhooks.EventMessageOutgoing, webhooks.EventMessageSent).Scan(&row).Error
	return &row, err
}

// claimStatements builds the claim statements once.
func (s *Service) claimStatements() error {
	s.claimSQLOnce.Do(func() {
		acc, err1 := prefixedColumns(s.db, &models.PlatformAccount{}, "a", "acc_")
		tmpl, err2 := prefixedColumns(s.db, &models.Template{}, "t", "tmpl_")
		if s.claimErr = errors.Join(err1, err2); s.claimErr != nil {
			return
		}
		// The organization is compared with IS NOT DISTINCT FROM, which no
		// index serves, so that the primary key is the only way to the row:
		// with "organization_id = ?" a planner whose statistics predate the
		// organization's messages (a new system, a new tenant's first
		// minute) rated messages_org_created as cheap as the primary key
		// and read every message of the organization to claim one
		// (BenchmarkChatbotReplies: 1,248 pages a claim, growing with each
		// message; TestClaimsReadOnlyTheirRows).
		s.claimSQL = `WITH claimed AS (
		UPDATE messages SET send_started_at = now(), send_attempts = send_attempts + 1, updated_at = now()
		WHERE id = ? AND organization_id IS NOT DISTINCT FROM ? AND status = 'pending' AND send_started_at IS NULL
		  AND platform_message_id IS NULL
		RETURNING *)` + claimedSelect(acc, tmpl, "?", "?")
		// The batch claim (queuedbatch.go): the task's own message and up to
		// n other queued template sends of the organization, oldest first,
		// skipping rows another claim holds. The mates' scan reads the
		// partial index messages_queued_org (the organization's pending
		// outgoing sends not started, oldest first). The update joins the
		// ids on the primary key: written as id = ANY(array), the planner,
		// guessing a handful of rows for the organization, read every
		// message of the organization through messages_org_created
		// (docs/BENCHMARKS.md, "API template sends").
		// @with are the messages queued with the task's own (its payload's
		// With): taken by id like the own message, the mates fill the rest.
		// Every row is locked with SKIP LOCKED, the task's own too: a row
		// another claim holds is that claim's to send, and a claim that
		// waited for one while holding others could deadlock with it (two
		// groups' tasks each taking the other's messages as mates waited
		// for deadlock_timeout, a second, in BenchmarkTemplateSendsAPIKey).
		s.claimBatchSQL = `WITH mine AS (
		SELECT id FROM messages
		WHERE id IN (SELECT CAST(@id AS uuid) UNION ALL SELECT unnest(CAST(@with AS uuid[])))
		  AND organization_id IS NOT DISTINCT FROM @org AND status = 'pending' AND send_started_at IS NULL
		  AND platform_message_id IS NULL
		FOR UPDATE SKIP LOCKED),
		mates AS (
		SELECT id FROM messages
		WHERE status = 'pending' AND direction = 'outgoing' AND send_started_at IS NULL
		  AND organization_id = @org AND type = 'template' AND platform_message_id IS NULL AND id <> @id
		  AND id <> ALL (CAST(@with AS uuid[]))
		ORDER BY created_at LIMIT @n FOR UPDATE SKIP LOCKED),
		ids AS (SELECT id FROM mates UNION ALL SELECT id FROM mine),
		claimed AS (
		UPDATE messages SET send_started_at = now(), send_attempts = send_attempts + 1, updated_at = now()
		FROM ids
		WHERE messages.id = ids.id AND messages.organization_id IS NOT DISTINCT FROM @org
		  AND messages.status = 'pending' AND messages.send_started_at IS NULL AND messages.platform_message_id IS NULL
		RETURNING messages.*)` + claimedSelect(acc, tmpl, "@outgoing", "@sent")
	})
	return s.claimErr
}

// claimedSelect reads the claimed rows of a claim statement with their
// contact, account and template, and whether a webhook listens; outgoing
// and sent are the placeholders of the two events' names. Each row is
// joined by its primary key, the organization compared in a way no index
// serves (see claimSQL).
func claimedSelect(acc, tmpl, outgoing, sent string) string {
	return `
		SELECT claimed.*,
		       c.id IS NOT NULL AS contact_found, c.phone_number AS contact_phone_number,
		       c.name AS contact_name, c.profile_name AS contact_profile_name,
		       a.id IS NOT NULL AS account_found, ` + acc + `,
		       t.id IS NOT NULL AS template_found, ` + tmpl + `,
		       EXISTS (SELECT 1 FROM webhooks w WHERE w.organization_id = claimed.organization_id AND w.is_active
		               AND (w.events @> jsonb_build_array(CAST(` + outgoing + ` AS text))
		                    OR w.events @> jsonb_build_array(CAST(` + sent + ` AS text)))) AS listening
		FROM claimed
		LEFT JOIN contacts c ON c.id = claimed.contact_id AND c.organization_id IS NOT DISTINCT FROM claimed.organization_id
		LEFT JOIN platform_accounts a ON a.id = claimed.account_id AND a.organization_id IS NOT DISTINCT FROM claimed.organization_id
		LEFT JOIN templates t ON t.id = claimed.template_id AND t.organization_id IS NOT DISTINCT FROM claimed.organization_id`
}

// prefixedColumns lists the columns of model's table as "alias.col AS
// prefixcol", for a row read beside another in one statement.
func prefixedColumns(db *gorm.DB, model any, alias, prefix string) (string, error) {
	stmt := &gorm.Statement{DB: db}
	if err := stmt.Parse(model); err != nil {
		return "", err
	}
	cols := make([]string, len(stmt.Schema.DBNames))
	for i, name := range stmt.Schema.DBNames {
		cols[i] = alias + "." + name + " AS " + prefix + name
	}
	return strings.Join(cols, ", "), nil
}
