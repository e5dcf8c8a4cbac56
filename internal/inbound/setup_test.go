package inbound_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/inbound"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/infra/safehttp"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/platform"
)

// globalSecret signs the webhooks of tests that are not about an
// organization's own app secret.
const globalSecret = "global-app-secret"

// newService builds the inbound domain with the given consumers, a Redis
// database of the test's own (queue and failure limiter), and the accounts,
// contacts and webhooks domains it routes and stores through.
func newService(t *testing.T, f *testfactory.Factory, consumers ...inbound.Consumer) (*inbound.Service, *testenv.Queue) {
	t.Helper()
	q := testenv.NewQueue(t)
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{}, nil, testenv.Quiet())
	accts := accounts.NewService(f.DB, f.Box, nil, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	svc, err := inbound.NewService(inbound.Deps{DB: f.DB, Accounts: accts, Contacts: contacts.NewService(f.DB, wh, nil, nil), Webhooks: wh,
		Enqueuer: q.Enqueuer, Limiter: ratelimit.New(testenv.Redis(t, testenv.RedisURL(t))), Consumers: consumers,
		GlobalSecret: globalSecret, Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return svc, q
}

// message is one incoming text message of a webhook.
type message struct{ id, from, text string }

// status is one status of a webhook.
type status struct{ id, status, callback string }

// webhookBody is a messages webhook for a phone number of a business
// account, as the provider sends it.
func webhookBody(wabaID, phoneID string, msgs []message, sts []status) []byte {
	var m, c, s []string
	seen := map[string]bool{}
	for i, msg := range msgs {
		m = append(m, fmt.Sprintf(`{"from":%q,"id":%q,"timestamp":"%d","type":"text","text":{"body":%q}}`, msg.from, msg.id, 1700000000+i, msg.text))
		if !seen[msg.from] {
			seen[msg.from] = true
			c = append(c, fmt.Sprintf(`{"wa_id":%q,"profile":{"name":"Profile %s"}}`, msg.from, msg.from))
		}
	}
	for i, st := range sts {
		s = append(s, fmt.Sprintf(`{"id":%q,"status":%q,"timestamp":"%d","recipient_id":"15550000000","biz_opaque_callback_data":%q}`,
			st.id, st.status, 1700000000+i, st.callback))
	}
	return []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100000","phone_number_id":%q},
		"contacts":[%s],"messages":[%s],"statuses":[%s]}}]}]}`, wabaID, phoneID, strings.Join(c, ","), strings.Join(m, ","), strings.Join(s, ",")))
}

// intake posts a webhook signed with secret from source.
func intake(svc *inbound.Service, source, secret string, body []byte) (int, error) {
	return svc.Intake(context.Background(), source, platform.Sign(secret, body), strings.NewReader(string(body)))
}

// messages is a MessageConsumer that records the messages it gets; it
// answers Seen for the ids in seen and fails for those in fail.
type messages struct {
	name string
	mu   sync.Mutex
	got  []string
	seen map[string]bool
	fail map[string]bool
}

func (m *messages) ConsumerName() string { return m.name }

func (m *messages) ConsumeMessage(_ context.Context, _ *gorm.DB, in *inbound.Incoming) (inbound.MessageResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail[in.Message.ID] {
		return inbound.MessageResult{}, fmt.Errorf("cannot consume %s", in.Message.ID)
	}
	m.got = append(m.got, in.Message.ID+"/"+in.Contact.PhoneNumber)
	return inbound.MessageResult{Seen: m.seen[in.Message.ID], Stored: uuid.New()}, nil
}

func (m *messages) consumed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.got...)
}
