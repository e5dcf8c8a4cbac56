package inbound

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/platform"
)

// FuzzWebhookDecode feeds provider webhook bodies to the decoding half of
// Intake (everything after the signature check and before the database):
// decodeWebhook, decodeMessages, splitByContact and marshalPayload, in the
// order Intake calls them. Properties:
//
//   - a body that is not JSON is refused as invalid input, and a body that
//     encoding/json reads as a webhook is never refused;
//   - what is decoded re-encodes to a body that decodes to the same webhook;
//   - every incoming message lands in exactly one event, that of its sender,
//     in the order it came; the statuses in one event of their own;
//   - every stored payload and contact key is one PostgreSQL accepts (a
//     refused insert fails the whole webhook, again at each redelivery),
//     and no number in it comes back much longer than it was sent;
//   - the worker reads from a stored payload (process.go, statuses.go) the
//     same messages, raw JSON included, statuses and contacts that intake cut
//     it from.
func FuzzWebhookDecode(f *testing.F) {
	msg := func(from, id, extra string) string {
		return `{"from":"` + from + `","id":"` + id + `","timestamp":"1700000000","type":"text","text":{"body":"hi"}` + extra + `}`
	}
	messages := func(msgs, statuses string) string {
		return `{"object":"whatsapp_business_account","entry":[{"id":"waba-1","changes":[{"field":"messages","value":` +
			`{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100","phone_number_id":"pn-1"},` +
			`"contacts":[{"profile":{"name":"Ann"},"wa_id":"15551111"},{"profile":{"name":"Bob"},"wa_id":"15552222"}],` +
			`"messages":[` + msgs + `],"statuses":[` + statuses + `]}}]}]}`
	}
	for _, body := range []string{
		messages(msg("15551111", "wamid.1", "")+","+msg("15552222", "wamid.2", "")+","+msg("15551111", "wamid.3", ""), ""),
		messages("", `{"id":"wamid.out","status":"failed","timestamp":"1700000001","recipient_id":"15551111",`+
			`"biz_opaque_callback_data":"r:1","errors":[{"code":131026,"title":"undeliverable","error_data":{"details":"x"}}]}`),
		messages(msg("15551111", "wamid.4", `,"image":{"id":"media-1","mime_type":"image/jpeg"},"unknown":[1,2.5,-3e2,{"a":null}]`), ""),
		messages(`{"from":"15551111","id":"wamid.5","type":"interactive","interactive":{"type":"nfm_reply","nfm_reply":`+
			`{"name":"flow","body":"Sent","response_json":"{\"flow_token\":\"t\"}"}}}`, ""),
		// What PostgreSQL refuses: NUL, lone surrogates, bytes that are not
		// UTF-8, numbers numeric cannot hold.
		messages(msg("15551111", "wamid.6", `,"note":"a\u0000b"`), ""),
		messages(`{"from":"1555\u00001111","id":"wamid.7","type":"text","text":{"body":"x\u0000"}}`, ""),
		messages(msg("15551111", "wamid.8", `,"s":"\ud800","t":"\udc00x","u":"\ud83d\ude00","v":"\\ud800"`), ""),
		messages(msg("15551111", "wamid.9", ",\"bytes\":\"\xff\xfe\""), ""),
		messages(msg("15551111", "wamid.10", `,"n":1e999999,"m":0e-99999,"k":1E+21,"j":-12345678901234567890123456789012345678901234567890123456789012345`), ""),
		messages(msg("15551111", "wamid.11", `,"\u0000key":1`), ""),
		`{"object":"whatsapp_business_account","entry":[{"id":"waba-1","changes":[{"field":"message_template_status_update",` +
			`"value":{"event":"APPROVED","message_template_id":123456789012345,"message_template_name":"t","reason":"NONE"}}]}]}`,
		`{"object":"whatsapp_business_account","entry":[{"id":"waba-1","changes":[{"field":"calls","value":{"messaging_product":` +
			`"whatsapp","metadata":{"phone_number_id":"pn-1"},"calls":[{"id":"c1","event":"connect","session":{"sdp":"v=0\r\n"}}]}}]}]}`,
		messages("null", "null"),
		messages(`{}`, `{}`),
		`{"entry":[{"changes":[{"field":"messages","value":"not an object"}]}]}`,
		`{"entry":[{"changes":[{"field":"messages","value":null}]}]}`,
		`{"object":1e99}`,
		`{"entry":{}}`,
		`{}{}`,
		`[]`,
		`null`,
		``,
		`{"object":"x"`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeWebhook(body)
		var plain platform.WebhookPayload
		switch {
		case err != nil && apperr.KindOf(err) != apperr.Invalid:
			t.Fatalf("refused with %v (kind %v), not as invalid input", err, apperr.KindOf(err))
		case err != nil && json.Unmarshal(body, &plain) == nil:
			t.Fatalf("a body encoding/json reads as a webhook is refused: %v", err)
		case err != nil:
			return
		case !json.Valid(body):
			t.Fatalf("a body that is not JSON is accepted: %+v", p)
		}

		// Re-encoding: the same webhook again.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", p, err)
		}
		p2, err := decodeWebhook(again)
		if err != nil {
			t.Fatalf("the re-encoded webhook %s is refused: %v", again, err)
		}
		if !reflect.DeepEqual(compactValues(t, p), compactValues(t, p2)) {
			t.Fatalf("re-encoding changed the webhook:\n%+v\n%+v", p, p2)
		}

		route := accounts.Route{OrganizationID: uuid.New(), AccountID: uuid.New()}
		for _, e := range p.Entry {
			for _, c := range e.Changes {
				if c.Field != platform.FieldMessages {
					// Stored as it is (an event consumer's payload).
					stored, err := marshalPayload(c.Value)
					if err == nil {
						err = pgRefuses(stored)
					}
					if err != nil {
						t.Fatalf("%s change stored as %q: %v", c.Field, stored, err)
					}
					continue
				}
				v, err := decodeMessages(c.Value)
				if err != nil {
					if apperr.KindOf(err) != apperr.Invalid {
						t.Fatalf("messages change refused with %v, not as invalid input", err)
					}
					continue
				}
				checkSplit(t, route, v)
			}
		}
	})
}

// checkSplit cuts a messages change as Intake does and reads each stored
// payload back as the worker does.
func checkSplit(t *testing.T, route accounts.Route, v *platform.MessagesValue) {
	events := splitByContact(route, v)
	byKey := map[string][]platform.IncomingMessage{}
	statusEvents := 0
	for _, e := range events {
		if e.route != route {
			t.Fatalf("event routed to %+v", e.route)
		}
		if !utf8.ValidString(e.contactKey) || strings.ContainsRune(e.contactKey, 0) {
			t.Fatalf("contact key %q: PostgreSQL's text refuses it", e.contactKey)
		}
		stored, err := marshalPayload(e.payload)
		if err != nil {
			t.Fatalf("marshal %+v: %v", e.payload, err)
		}
		if err := pgRefuses(stored); err != nil {
			t.Fatalf("stored payload %q: %v", stored, err)
		}
		var read platform.MessagesValue // as process.go and statuses.go read it
		if err := json.Unmarshal(stored, &read); err != nil {
			t.Fatalf("the worker cannot read the stored payload %q: %v", stored, err)
		}
		cut := e.payload.(*platform.MessagesValue)
		if read.MessagingProduct != v.MessagingProduct || read.Metadata != v.Metadata {
			t.Fatalf("stored %q lost the change's metadata %+v", stored, v.Metadata)
		}
		switch e.eventType {
		case EventMessages:
			if len(cut.Messages) == 0 {
				t.Fatalf("a messages event without messages for %q", e.contactKey)
			}
			if _, dup := byKey[e.contactKey]; dup {
				t.Fatalf("two events for contact %q", e.contactKey)
			}
			byKey[e.contactKey] = cut.Messages
			if len(read.Messages) != len(cut.Messages) {
				t.Fatalf("stored %d messages of %d", len(read.Messages), len(cut.Messages))
			}
			for i, m := range cut.Messages {
				if m.From != e.contactKey {
					t.Fatalf("message from %q in the event of %q", m.From, e.contactKey)
				}
				if !bytes.Equal(compact(t, read.Messages[i].Raw), compact(t, m.Raw)) || !reflect.DeepEqual(withoutRaw(read.Messages[i]), withoutRaw(m)) {
					t.Fatalf("message %d read back as %s, stored from %s", i, read.Messages[i].Raw, m.Raw)
				}
			}
			if !reflect.DeepEqual(nilIfEmpty(read.Contacts), nilIfEmpty(cut.Contacts)) {
				t.Fatalf("contacts read back as %+v, cut %+v", read.Contacts, cut.Contacts)
			}
			for _, c := range cut.Contacts {
				if c.WaID != e.contactKey {
					t.Fatalf("contact %q in the event of %q", c.WaID, e.contactKey)
				}
			}
		case EventStatuses:
			statusEvents++
			if !reflect.DeepEqual(read.Statuses, v.Statuses) || len(read.Messages) != 0 {
				t.Fatalf("statuses read back as %+v (messages %d), want %+v", read.Statuses, len(read.Messages), v.Statuses)
			}
		default:
			t.Fatalf("event type %q", e.eventType)
		}
	}
	if want := min(len(v.Statuses), 1); statusEvents != want {
		t.Fatalf("%d status events for %d statuses", statusEvents, len(v.Statuses))
	}
	// Every message once, with its sender's, in the order it came.
	want := map[string][]platform.IncomingMessage{}
	for _, m := range v.Messages {
		want[m.From] = append(want[m.From], m)
	}
	if len(want) != len(byKey) {
		t.Fatalf("events for %d senders, messages from %d", len(byKey), len(want))
	}
	for k, ms := range want {
		if !slices.EqualFunc(ms, byKey[k], func(a, b platform.IncomingMessage) bool { return bytes.Equal(a.Raw, b.Raw) }) {
			t.Fatalf("the messages of %q were cut into %d, from %d", k, len(byKey[k]), len(ms))
		}
	}
}

func withoutRaw(m platform.IncomingMessage) platform.IncomingMessage {
	m.Raw = nil
	return m
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// compact is raw JSON as json.Marshal writes it: compacted, with <, > and &
// escaped.
func compact(t *testing.T, b []byte) []byte {
	var c, out bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatalf("compact %q: %v", b, err)
	}
	json.HTMLEscape(&out, c.Bytes())
	return out.Bytes()
}

// compactValues is p with its raw change values as json.Marshal writes
// them (compact), and a missing value as the null it writes.
func compactValues(t *testing.T, p platform.WebhookPayload) platform.WebhookPayload {
	out := platform.WebhookPayload{Object: p.Object}
	for _, e := range p.Entry {
		ne := platform.WebhookEntry{ID: e.ID}
		for _, c := range e.Changes {
			if c.Value == nil {
				c.Value = json.RawMessage("null")
			}
			c.Value = compact(t, c.Value)
			ne.Changes = append(ne.Changes, c)
		}
		out.Entry = append(out.Entry, ne)
	}
	return out
}

// escape is a \u escape: an odd run of backslashes, then u and four hex
// digits (an even run is escaped backslashes followed by the letter u).
var escape = regexp.MustCompile(`(\\+)u([0-9a-fA-F]{4})`)

// pgRefuses says why PostgreSQL's jsonb would refuse b, or why it would
// store it much larger than it is, written from PostgreSQL's rules (its
// jsonb parser and numeric's limits), not from the code under test.
func pgRefuses(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("not UTF-8")
	}
	type esc struct {
		start, end int
		r          uint64
	}
	var escs []esc
	for _, m := range escape.FindAllSubmatchIndex(b, -1) {
		if (m[3]-m[2])%2 == 0 {
			continue
		}
		r, _ := strconv.ParseUint(string(b[m[4]:m[5]]), 16, 32)
		escs = append(escs, esc{m[3] - 1, m[1], r})
	}
	for i, e := range escs {
		switch {
		case e.r == 0:
			return fmt.Errorf(`\u0000 at %d`, e.start)
		case e.r >= 0xD800 && e.r < 0xDC00:
			if i+1 == len(escs) || escs[i+1].start != e.end || escs[i+1].r < 0xDC00 || escs[i+1].r > 0xDFFF {
				return fmt.Errorf("a high surrogate without a low one at %d", e.start)
			}
		case e.r >= 0xDC00 && e.r <= 0xDFFF:
			if i == 0 || escs[i-1].end != e.start || escs[i-1].r < 0xD800 || escs[i-1].r >= 0xDC00 {
				return fmt.Errorf("a low surrogate without a high one at %d", e.start)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		n, ok := tok.(json.Number)
		if !ok {
			continue
		}
		intDigits, fracDigits := digits(string(n))
		switch {
		case intDigits > 131072 || fracDigits > 16383:
			return fmt.Errorf("numeric cannot hold %s", n)
		case max(intDigits, 1)+max(fracDigits, 0) > 100:
			return fmt.Errorf("%s comes back as %d digits", n, max(intDigits, 1)+max(fracDigits, 0))
		}
	}
	return nil
}

// digits counts a JSON number's digits before and after the decimal point
// once its exponent is applied.
func digits(n string) (intDigits, fracDigits int) {
	mant, exp := strings.TrimPrefix(n, "-"), 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		var err error
		if exp, err = strconv.Atoi(mant[i+1:]); err != nil {
			exp = 1 << 30
			if strings.HasPrefix(mant[i+1:], "-") {
				exp = -exp
			}
		}
		mant = mant[:i]
	}
	ip, fp, _ := strings.Cut(mant, ".")
	return len(ip) + exp, len(fp) - exp
}
