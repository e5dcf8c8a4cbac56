package inbound

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// pending is one event to store.
type pending struct {
	route      accounts.Route
	contactKey string
	eventType  string
	payload    any
}

// maxBody bounds a provider webhook's body.
const maxBody = 4 << 20

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
	p, err := decodeWebhook(body)
	if err != nil {
		return 0, addr, err
	}
	type change struct {
		entry     platform.WebhookEntry
		change    platform.WebhookChange
		msgs      *platform.MessagesValue
		eventType string // of a field with an EventConsumer
		phoneID   string // the number it names, if any (else it is about the business account)
	}
	var changes []change
	var phoneIDs, wabaIDs []string
	for _, e := range p.Entry {
		wabaIDs = append(wabaIDs, e.ID)
		for _, c := range e.Changes {
			ch := change{entry: e, change: c}
			if c.Field == platform.FieldMessages {
				v, err := decodeMessages(c.Value)
				if err != nil {
					return 0, addr, err
				}
				ch.msgs = v
				phoneIDs = append(phoneIDs, v.Metadata.PhoneNumberID)
			} else if typ := eventTypeOf(c.Field); s.consumers.events[typ] != nil {
				// Changes naming a number (metadata.phone_number_id, as
				// calls do) go to that number's account; the others (a
				// template's review) to every account of the business
				// account.
				var v struct {
					Metadata struct {
						PhoneNumberID string `json:"phone_number_id"`
					} `json:"metadata"`
				}
				_ = json.Unmarshal(c.Value, &v) // not an object: about the business account
				ch.eventType, ch.phoneID = typ, v.Metadata.PhoneNumberID
				if ch.phoneID != "" {
					phoneIDs = append(phoneIDs, ch.phoneID)
				}
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
	// route verifies and splits the changes with routes; it runs again on
	// fresh routes when remembered ones verified nothing (an organization
	// may have just set its app secret: a refusal is never stale).
	var events []pending
	var anyVerified bool
	route := func(routes []accounts.Route) {
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

		events, anyVerified = nil, global
		for _, ch := range changes {
			switch {
			case ch.msgs != nil:
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
			case ch.eventType != "":
				for _, r := range routes {
					about := r.BusinessAccountID == ch.entry.ID
					if ch.phoneID != "" {
						about = r.PhoneNumberID == ch.phoneID
					}
					if about && verified(r) {
						anyVerified = true
						events = append(events, pending{route: r, eventType: ch.eventType, payload: ch.change.Value})
					}
				}
			default:
				s.log.Info("webhook field not handled", "field", ch.change.Field)
			}
		}
	}
	routes, cached, err := s.routes(ctx, phoneIDs, wabaIDs, false)
	if err != nil {
		return 0, "", err
	}
	route(routes)
	if !anyVerified && cached {
		if routes, _, err = s.routes(ctx, phoneIDs, wabaIDs, true); err != nil {
			return 0, "", err
		}
		route(routes)
	}
	if !anyVerified {
		return 0, blame(source, routes, phoneIDs), apperr.Unauthorizedf("invalid webhook signature")
	}
	return len(events), "", s.store(ctx, events)
}

// decodeWebhook reads a webhook body, made storable first (storable.go):
// what it decodes, and every payload cut from it, PostgreSQL accepts.
func decodeWebhook(body []byte) (platform.WebhookPayload, error) {
	var p platform.WebhookPayload
	clean, err := storable(body)
	if err == nil {
		err = json.Unmarshal(clean, &p)
	}
	if err != nil {
		return platform.WebhookPayload{}, apperr.Invalidf("the webhook body is not valid JSON")
	}
	return p, nil
}

// decodeMessages reads the value of a messages change.
func decodeMessages(value json.RawMessage) (*platform.MessagesValue, error) {
	var v platform.MessagesValue
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, apperr.Invalidf("a messages change is not valid JSON")
	}
	return &v, nil
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
			out = append(out, pending{route: r, contactKey: k, eventType: EventMessages, payload: byKey[k]})
		}
	}
	if len(v.Statuses) > 0 {
		out = append(out, pending{route: r, eventType: EventStatuses,
			payload: &platform.MessagesValue{MessagingProduct: v.MessagingProduct, Metadata: v.Metadata, Statuses: v.Statuses}})
	}
	return out
}

// store writes the events (through the group commit: the durable record,
// before the 200); their processing is enqueued after the commit, once per
// batch for each type, account and contact key (enqueueStored).
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
			ContactKey: e.contactKey, EventType: e.eventType, Payload: b, ReceivedAt: s.now()}
	}
	return s.commits.write(rows)
}

// countStored counts a batch's stored events (before their webhooks are
// answered).
func (s *Service) countStored(rows []models.InboundEvent) {
	for _, r := range rows {
		s.metrics.InboundStored(r.EventType)
	}
}

// enqueueStored wakes the worker up for a batch of stored events: one task
// per type, account and contact key, however many webhooks the batch held.
// A failed enqueue loses nothing: the sweeper finds events left pending.
func (s *Service) enqueueStored(ctx context.Context, rows []models.InboundEvent) {
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.EventType + "/" + r.AccountID.String() + "/" + r.ContactKey
		if seen[key] {
			continue
		}
		seen[key] = true
		if err := s.enqueue(ctx, r.EventType, r.OrganizationID, r.AccountID, r.ContactKey); err != nil {
			s.log.Warn("cannot enqueue inbound processing; the sweeper will retry", "account_id", r.AccountID, "error", err)
		}
	}
}

// enqueue wakes the worker up for stored events of the type: status
// batches of the account, or the ordered events of one contact key.
func (s *Service) enqueue(ctx context.Context, eventType string, orgID, accountID uuid.UUID, key string) error {
	var p jobs.Payload = jobs.InboundProcess{OrganizationID: orgID, AccountID: accountID, ContactKey: key}
	if eventType == EventStatuses {
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
