// Package inbound receives the provider's webhooks. The api only verifies
// and stores them (inbound_events) and enqueues their processing, so it
// answers in milliseconds; the worker applies them: contacts, incoming
// messages, statuses, template status changes.
//
// One contact's events are applied one at a time in arrival order, under a
// transaction-level advisory lock keyed by account and contact; duplicates
// change nothing (messages are unique by account and provider id, statuses
// only move forward).
package inbound

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/apperr"
	"wharf/internal/contacts"
	"wharf/internal/messaging"
	"wharf/internal/phone"
	"wharf/internal/ratelimit"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Event kinds stored in inbound_events.
const (
	KindMessages       = "messages"        // one contact's incoming messages: applied in order
	KindStatuses       = "statuses"        // statuses of our messages: applied in bulk, in any order
	KindTemplateStatus = "template_status" // a template's review outcome
)

// Service receives and applies provider webhooks.
type Service struct {
	db           *gorm.DB
	accounts     *accounts.Service
	contacts     *contacts.Service
	messaging    *messaging.Service
	webhooks     *webhooks.Service
	enq          *jobs.Enqueuer
	limiter      *ratelimit.Limiter
	failures     ratelimit.FailureLimit
	globalSecret string
	verifyToken  string
	log          *slog.Logger
	now          func() time.Time
	// StatusFallback gets the statuses of messages the messaging domain does
	// not know (campaign sends), inside the transaction; it returns those it
	// does not know either, and a function to call after the commit. nil
	// means they are only logged.
	StatusFallback func(ctx context.Context, tx *gorm.DB, orgID, accountID uuid.UUID, unknown []*messaging.Outcome) ([]*messaging.Outcome, func(context.Context), error)
}

// Deps are the collaborators of the inbound domain.
type Deps struct {
	DB           *gorm.DB
	Accounts     *accounts.Service
	Contacts     *contacts.Service
	Messaging    *messaging.Service
	Webhooks     *webhooks.Service
	Enqueuer     *jobs.Enqueuer
	Limiter      *ratelimit.Limiter // counts refused webhooks per client address
	GlobalSecret string             // PLATFORM_APP_SECRET
	Log          *slog.Logger
}

// SetVerifyToken sets the global verify token (PLATFORM_WEBHOOK_VERIFY_TOKEN)
// accepted by the handshake besides the accounts' own tokens.
func (s *Service) SetVerifyToken(token string) { s.verifyToken = token }

// NewService wires the inbound domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, accounts: d.Accounts, contacts: d.Contacts, messaging: d.Messaging, webhooks: d.Webhooks,
		enq: d.Enqueuer, limiter: d.Limiter, failures: ratelimit.FailureLimit{Max: maxSourceFailures, Window: sourceFailureWindow},
		globalSecret: d.GlobalSecret, log: d.Log,
		now: func() time.Time { return time.Now().UTC() }}
}

// Verify answers the provider's subscription handshake: the challenge when
// the mode is subscribe and the token belongs to an account (or is the
// global verify token).
func (s *Service) Verify(ctx context.Context, mode, token, challenge string) (string, error) {
	if mode != "subscribe" || token == "" || challenge == "" {
		return "", apperr.Forbiddenf("verification failed")
	}
	if s.verifyToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.verifyToken)) == 1 {
		return challenge, nil
	}
	ok, err := s.accounts.HasVerifyToken(ctx, token)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apperr.Forbiddenf("verification failed")
	}
	return challenge, nil
}

// pending is one event to store.
type pending struct {
	route      accounts.Route
	contactKey string
	kind       string
	payload    any
}

// maxBody bounds a provider webhook's body.
const maxBody = 4 << 20

// The webhooks refused per client address are limited: past 30 a minute
// the address is answered 429 before its body is read, so a flood of forged
// webhooks costs neither database work nor HMACs.
const (
	maxSourceFailures   = 30
	sourceFailureWindow = time.Minute
)

// Intake verifies a webhook from the client address source and stores its
// events. The signature must match the global PLATFORM_APP_SECRET, checked
// first and without database work, or the app secret of the organization
// owning the account an entry is about; entries that fail are dropped, and
// a webhook with no verified entry is refused: nothing unsigned is stored.
//
// Every refused webhook counts a failure for source (maxSourceFailures a
// minute, then 429 until the minute has passed), with one exception: a
// signature that fails only the own app secret of the organization the
// webhook names counts for source and that phone number (or business
// account) together. The provider sends every app's webhooks from the same
// addresses, so a tenant whose configured secret is wrong must not get the
// provider's addresses blocked for every other tenant.
func (s *Service) Intake(ctx context.Context, source, signature string, body io.Reader) (int, error) {
	if wait := s.blocked(ctx, failureKey(source, "")); wait > 0 {
		return 0, tooManyFailures(wait)
	}
	n, blame, err := s.intake(ctx, source, signature, body)
	if err != nil && blame != "" {
		s.countFailure(ctx, blame)
	}
	return n, err
}

func failureKey(source, subject string) string {
	if subject == "" {
		return "wharf:webhook-failures:" + source
	}
	return "wharf:webhook-failures:" + source + ":" + subject
}

func tooManyFailures(wait time.Duration) error {
	return apperr.TooManyAfter(wait, "too many refused webhooks from this address; retry in %d seconds", int(wait.Seconds()+0.999))
}

// blocked reports how long the keys are blocked. Without Redis the limiter
// is skipped: refusing the provider's webhooks would lose messages.
func (s *Service) blocked(ctx context.Context, keys ...string) time.Duration {
	wait, err := s.limiter.Blocked(ctx, s.failures, keys...)
	if err != nil {
		s.log.Warn("webhook failure limiter unavailable; webhook allowed", "error", err)
		return 0
	}
	return wait
}

func (s *Service) countFailure(ctx context.Context, key string) {
	n, err := s.limiter.Fail(context.WithoutCancel(ctx), s.failures, key)
	switch {
	case err != nil:
		s.log.Warn("webhook failure limiter unavailable", "error", err)
	case n == s.failures.Max:
		s.log.Warn("refused webhooks: source blocked for the rest of the window", "key", key,
			"failures", n, "window", s.failures.Window)
	}
}

// intake does the work of Intake; on a refusal it also returns the failure
// key to count ("" for failures that are not the caller's: a lost
// connection, the database).
func (s *Service) intake(ctx context.Context, source, signature string, r io.Reader) (int, string, error) {
	addr := failureKey(source, "")
	if !validSignatureHeader(signature) {
		return 0, addr, apperr.Unauthorizedf("missing or malformed %s: want sha256=<hex HMAC-SHA256 of the body>", platform.SignatureHeader)
	}
	body, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return 0, "", err
	}
	if len(body) > maxBody {
		return 0, addr, apperr.TooLargef("the webhook body is larger than %d MB", maxBody>>20)
	}
	global := platform.VerifySignature(s.globalSecret, body, signature)
	var p platform.WebhookPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return 0, addr, apperr.Invalidf("the webhook body is not valid JSON")
	}
	type change struct {
		entry  platform.WebhookEntry
		change platform.WebhookChange
		msgs   *platform.MessagesValue
	}
	var changes []change
	var phoneIDs, wabaIDs []string
	for _, e := range p.Entry {
		wabaIDs = append(wabaIDs, e.ID)
		for _, c := range e.Changes {
			ch := change{entry: e, change: c}
			if c.Field == platform.FieldMessages {
				var v platform.MessagesValue
				if err := json.Unmarshal(c.Value, &v); err != nil {
					return 0, addr, apperr.Invalidf("a messages change is not valid JSON")
				}
				ch.msgs = &v
				phoneIDs = append(phoneIDs, v.Metadata.PhoneNumberID)
			}
			changes = append(changes, ch)
		}
	}
	if !global {
		// Only an organization's own app secret can still verify it: look
		// the named numbers up, unless this address already failed too
		// often for one of them.
		if len(phoneIDs)+len(wabaIDs) == 0 {
			return 0, addr, apperr.Unauthorizedf("invalid webhook signature")
		}
		var keys []string
		for _, id := range append(append([]string{}, phoneIDs...), wabaIDs...) {
			keys = append(keys, failureKey(source, id))
		}
		if wait := s.blocked(ctx, keys...); wait > 0 {
			return 0, "", tooManyFailures(wait)
		}
	}
	routes, err := s.accounts.Routes(ctx, phoneIDs, wabaIDs)
	if err != nil {
		return 0, "", err
	}
	checked := map[string]bool{}
	verified := func(r accounts.Route) bool {
		if global {
			return true
		}
		if r.AppSecret == "" {
			return false
		}
		ok, seen := checked[r.AppSecret]
		if !seen {
			ok = platform.VerifySignature(r.AppSecret, body, signature)
			checked[r.AppSecret] = ok
		}
		return ok
	}

	var events []pending
	anyVerified := global
	for _, ch := range changes {
		switch ch.change.Field {
		case platform.FieldMessages:
			var route *accounts.Route
			for i := range routes {
				if routes[i].PhoneNumberID == ch.msgs.Metadata.PhoneNumberID {
					route = &routes[i]
				}
			}
			if route == nil {
				if global { // a forged webhook's numbers are not worth a log line
					s.log.Warn("webhook for an unknown phone number id", "phone_number_id", ch.msgs.Metadata.PhoneNumberID)
				}
				continue
			}
			if !verified(*route) {
				continue
			}
			anyVerified = true
			events = append(events, splitByContact(*route, ch.msgs)...)
		case platform.FieldTemplateStatus:
			for _, r := range routes {
				if r.BusinessAccountID == ch.entry.ID && verified(r) {
					anyVerified = true
					events = append(events, pending{route: r, kind: KindTemplateStatus, payload: ch.change.Value})
				}
			}
		default:
			s.log.Info("webhook field not handled", "field", ch.change.Field)
		}
	}
	if !anyVerified {
		return 0, blame(source, routes, phoneIDs), apperr.Unauthorizedf("invalid webhook signature")
	}
	return len(events), "", s.store(ctx, events)
}

// blame picks the failure key of a webhook nothing verified: the source and
// the number of an organization with its own app secret when the webhook
// names one (that secret may be misconfigured, and the provider's shared
// addresses must stay usable for everyone else), else the source alone.
func blame(source string, routes []accounts.Route, phoneIDs []string) string {
	for _, r := range routes {
		if r.AppSecret == "" {
			continue
		}
		if slices.Contains(phoneIDs, r.PhoneNumberID) {
			return failureKey(source, r.PhoneNumberID)
		}
		return failureKey(source, r.BusinessAccountID)
	}
	return failureKey(source, "")
}

// validSignatureHeader accepts sha256= and 64 hex digits, the only form the
// provider sends, so a malformed header costs no reading of the body.
func validSignatureHeader(h string) bool {
	hexSum, ok := strings.CutPrefix(h, "sha256=")
	if !ok || len(hexSum) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexSum)
	return err == nil
}

// splitByContact cuts a messages change into one event per contact with
// incoming messages, so that each contact's messages are applied in order
// independently of others, plus one event with all the statuses, which are
// applied in bulk.
func splitByContact(r accounts.Route, v *platform.MessagesValue) []pending {
	byKey := map[string]*platform.MessagesValue{}
	var order []string
	get := func(key string) *platform.MessagesValue {
		if e, ok := byKey[key]; ok {
			return e
		}
		e := &platform.MessagesValue{MessagingProduct: v.MessagingProduct, Metadata: v.Metadata}
		byKey[key] = e
		order = append(order, key)
		return e
	}
	for _, c := range v.Contacts {
		get(c.WaID).Contacts = append(get(c.WaID).Contacts, c)
	}
	for _, m := range v.Messages {
		e := get(m.From)
		e.Messages = append(e.Messages, m)
	}
	out := make([]pending, 0, len(order)+1)
	for _, k := range order {
		if len(byKey[k].Messages) > 0 {
			out = append(out, pending{route: r, contactKey: k, kind: KindMessages, payload: byKey[k]})
		}
	}
	if len(v.Statuses) > 0 {
		out = append(out, pending{route: r, kind: KindStatuses,
			payload: &platform.MessagesValue{MessagingProduct: v.MessagingProduct, Metadata: v.Metadata, Statuses: v.Statuses}})
	}
	return out
}

func (s *Service) store(ctx context.Context, events []pending) error {
	if len(events) == 0 {
		return nil
	}
	rows := make([]models.InboundEvent, len(events))
	for i, e := range events {
		b, err := marshalPayload(e.payload)
		if err != nil {
			return err
		}
		rows[i] = models.InboundEvent{OrganizationID: e.route.OrganizationID, AccountID: e.route.AccountID,
			ContactKey: e.contactKey, Kind: e.kind, Payload: b, ReceivedAt: s.now()}
	}
	if err := s.db.WithContext(ctx).Create(&rows).Error; err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.Kind + "/" + r.AccountID.String() + "/" + r.ContactKey
		if seen[key] {
			continue
		}
		seen[key] = true
		if err := s.enqueue(ctx, r.Kind, r.OrganizationID, r.AccountID, r.ContactKey); err != nil {
			s.log.Warn("cannot enqueue inbound processing; the sweeper will retry", "account_id", r.AccountID, "error", err)
		}
	}
	return nil
}

func (s *Service) enqueue(ctx context.Context, kind string, orgID, accountID uuid.UUID, key string) error {
	var p jobs.Payload = jobs.InboundProcess{OrganizationID: orgID, AccountID: accountID, ContactKey: key}
	if kind == KindStatuses {
		p = jobs.InboundStatuses{OrganizationID: orgID, AccountID: accountID}
	}
	_, err := s.enq.Enqueue(context.WithoutCancel(ctx), p)
	return err
}

// marshalPayload keeps the raw incoming messages intact (IncomingMessage
// carries its raw JSON, which json.Marshal of the struct would drop).
func marshalPayload(p any) ([]byte, error) {
	v, ok := p.(*platform.MessagesValue)
	if !ok {
		return json.Marshal(p)
	}
	raw := make([]json.RawMessage, len(v.Messages))
	for i, m := range v.Messages {
		raw[i] = m.Raw
	}
	return json.Marshal(struct {
		MessagingProduct string                    `json:"messaging_product"`
		Metadata         any                       `json:"metadata"`
		Contacts         []platform.WebhookContact `json:"contacts,omitempty"`
		Messages         []json.RawMessage         `json:"messages,omitempty"`
		Statuses         []platform.Status         `json:"statuses,omitempty"`
	}{v.MessagingProduct, v.Metadata, v.Contacts, raw, v.Statuses})
}

// maxAttempts is how often a failing event is retried before it is set
// aside (processed, with its error) so it cannot block the contact forever.
const maxAttempts = 5

// batchSize is how many events of one contact one transaction applies.
const batchSize = 100

// Process is the inbound:process job: apply every pending event of one
// contact of one account, oldest first.
func (s *Service) Process(ctx context.Context, orgID, accountID uuid.UUID, contactKey string) error {
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if apperr.Is(err, apperr.NotFound) {
		return nil // the account was deleted with its events
	}
	if err != nil {
		return err
	}
	for {
		n, err := s.processBatch(ctx, a, contactKey)
		if err != nil || n < batchSize {
			return err
		}
	}
}

// processBatch applies up to batchSize pending events of the contact in one
// transaction, each under a savepoint. A failing event is rolled back alone
// and counted; the events after it wait (order matters) unless it has now
// failed maxAttempts times and is set aside. It returns how many events it
// looked at.
func (s *Service) processBatch(ctx context.Context, a *accounts.Account, key string) (int, error) {
	var events []models.InboundEvent
	var published []uuid.UUID
	var failure error
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, a.ID.String()+"/"+key).Error; err != nil {
			return err
		}
		if err := tx.Raw(`SELECT * FROM inbound_events WHERE account_id = ? AND contact_key = ? AND processed_at IS NULL
			AND kind <> ? ORDER BY id LIMIT ?`, a.ID, key, KindStatuses, batchSize).Scan(&events).Error; err != nil {
			return err
		}
		var done []int64
		for i := range events {
			ev := &events[i]
			if err := tx.SavePoint("ev").Error; err != nil {
				return err
			}
			ids, err := s.apply(ctx, tx, a, ev)
			if err == nil {
				published = append(published, ids...)
				done = append(done, ev.ID)
				continue
			}
			if err := tx.RollbackTo("ev").Error; err != nil {
				return err
			}
			s.log.Error("inbound event failed", "event_id", ev.ID, "attempt", ev.Attempts+1, "error", err)
			giveUp := ev.Attempts+1 >= maxAttempts
			if err := tx.Exec(`UPDATE inbound_events SET attempts = attempts + 1, last_error = ?,
				processed_at = CASE WHEN ? THEN now() ELSE NULL END WHERE id = ?`, apperr.Clip(err.Error(), 1000), giveUp, ev.ID).Error; err != nil {
				return err
			}
			if !giveUp {
				failure = err // later events of this contact wait for this one
				break
			}
		}
		if len(done) == 0 {
			return nil
		}
		return tx.Exec(`UPDATE inbound_events SET processed_at = now() WHERE id IN ?`, done).Error
	})
	if err != nil {
		return 0, err
	}
	s.webhooks.Publish(ctx, a.OrganizationID, published...)
	if failure != nil {
		return 0, failure
	}
	return len(events), nil
}

func (s *Service) apply(ctx context.Context, tx *gorm.DB, a *accounts.Account, ev *models.InboundEvent) ([]uuid.UUID, error) {
	switch ev.Kind {
	case KindMessages:
		var v platform.MessagesValue
		if err := json.Unmarshal(ev.Payload, &v); err != nil {
			return nil, err
		}
		return s.applyMessages(ctx, tx, a, ev.ContactKey, &v)
	case KindTemplateStatus:
		var v platform.TemplateStatusValue
		if err := json.Unmarshal(ev.Payload, &v); err != nil {
			return nil, err
		}
		return nil, s.applyTemplateStatus(ctx, tx, a, &v)
	}
	s.log.Warn("unknown inbound event kind", "kind", ev.Kind, "event_id", ev.ID)
	return nil, nil
}

func (s *Service) applyMessages(ctx context.Context, tx *gorm.DB, a *accounts.Account, key string, v *platform.MessagesValue) ([]uuid.UUID, error) {
	var published []uuid.UUID
	if len(v.Messages) > 0 {
		profile := ""
		for _, c := range v.Contacts {
			if c.WaID == key {
				profile = c.Profile.Name
			}
		}
		c, created, err := s.contacts.Upsert(ctx, tx, a.OrganizationID, phone.FromWaID(key), &a.ID, profile, "incoming")
		if err != nil {
			return nil, err
		}
		published = append(published, created)
		for _, m := range v.Messages {
			id, err := s.messaging.StoreIncoming(ctx, tx, c, a.ID, a.Name, m)
			if err != nil {
				return nil, err
			}
			published = append(published, id)
		}
	}
	return published, nil
}

func (s *Service) applyTemplateStatus(ctx context.Context, tx *gorm.DB, a *accounts.Account, v *platform.TemplateStatusValue) error {
	reason := v.Reason
	if reason == "NONE" {
		reason = ""
	}
	res := tx.WithContext(ctx).Model(&models.Template{}).
		Where("account_id = ? AND (provider_template_id = ? OR (name = ? AND language = ?))",
			a.ID, v.MessageTemplateID.String(), v.MessageTemplateName, v.MessageTemplateLanguage).
		Updates(map[string]any{"status": v.Event, "rejected_reason": reason, "updated_at": s.now()})
	if res.RowsAffected == 0 {
		s.log.Info("status for an unknown template ignored", "template", v.MessageTemplateName, "event", v.Event)
	}
	return res.Error
}

// statusBatch is how many status events one transaction claims.
const statusBatch = 200

// ProcessStatuses is the inbound:statuses job: it claims pending status
// events of the account in batches (SKIP LOCKED, so parallel tasks share
// the work instead of waiting) and applies them with a few set-based
// statements per batch, until none is left.
func (s *Service) ProcessStatuses(ctx context.Context, orgID, accountID uuid.UUID) error {
	for {
		n, err := s.statusBatch(ctx, orgID, accountID)
		if err != nil || n < statusBatch {
			return err
		}
	}
}

func (s *Service) statusBatch(ctx context.Context, orgID, accountID uuid.UUID) (int, error) {
	var events []models.InboundEvent
	var after func(context.Context)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT * FROM inbound_events WHERE account_id = ? AND kind = ? AND processed_at IS NULL
			ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`, accountID, KindStatuses, statusBatch).Scan(&events).Error; err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		var statuses []platform.Status
		ids := make([]int64, len(events))
		for i, ev := range events {
			ids[i] = ev.ID
			var v platform.MessagesValue
			if err := json.Unmarshal(ev.Payload, &v); err != nil {
				s.log.Error("unreadable status event set aside", "event_id", ev.ID, "error", err)
				continue
			}
			statuses = append(statuses, v.Statuses...)
		}
		unknown, err := s.messaging.ApplyStatuses(ctx, tx, orgID, accountID, messaging.Reduce(statuses, s.now()))
		if err != nil {
			return err
		}
		if len(unknown) > 0 && s.StatusFallback != nil {
			if unknown, after, err = s.StatusFallback(ctx, tx, orgID, accountID, unknown); err != nil {
				return err
			}
		}
		for _, o := range unknown {
			s.log.Info("status for an unknown message ignored", "platform_message_id", o.PlatformID, "status", o.Final)
		}
		return tx.Exec(`UPDATE inbound_events SET processed_at = now() WHERE id IN ?`, ids).Error
	})
	if err == nil && after != nil {
		after(ctx)
	}
	return len(events), err
}

// sweepAge is how long an event may wait before the sweeper assumes its task
// was lost.
const sweepAge = 30 * time.Second

// Sweep enqueues processing for events left pending (a lost task), and
// deletes processed events older than three days.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	var keys []struct {
		OrganizationID, AccountID uuid.UUID
		Kind, ContactKey          string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT organization_id, account_id, kind, contact_key FROM inbound_events
		WHERE processed_at IS NULL AND received_at < ? LIMIT 1000`, s.now().Add(-sweepAge)).Scan(&keys).Error
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := s.enqueue(ctx, k.Kind, k.OrganizationID, k.AccountID, k.ContactKey); err != nil {
			return 0, err
		}
	}
	// Keep three days of processed events (index inbound_events_processed).
	// A failed cleanup is retried by the next sweep.
	if err := s.db.WithContext(ctx).Where("processed_at < ?", s.now().Add(-72*time.Hour)).Delete(&models.InboundEvent{}).Error; err != nil {
		s.log.Warn("cannot delete processed inbound events", "error", err)
	}
	return len(keys), nil
}
