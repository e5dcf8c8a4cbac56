package inbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/inbound"
	"wharf/internal/infra/database"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/infra/secrets"
	"wharf/internal/testenv"
	"wharf/jobs"
	"wharf/platform"
)

// recorder is an EventConsumer that remembers what it got.
type recorder struct {
	typ string
	got []*inbound.Event
}

func (r *recorder) ConsumerName() string { return "recorder of " + r.typ }
func (r *recorder) EventType() string    { return r.typ }
func (r *recorder) ConsumeEvent(_ context.Context, _ *gorm.DB, ev *inbound.Event) (func(context.Context), error) {
	r.got = append(r.got, ev)
	return nil, nil
}

// named is a Consumer that consumes nothing.
type named string

func (n named) ConsumerName() string { return string(n) }

func TestWiringMistakesAreRefused(t *testing.T) {
	for name, list := range map[string][]inbound.Consumer{
		"a consumer of nothing":           {named("idle")},
		"two consumers of one event type": {&recorder{typ: "calls"}, &recorder{typ: "calls"}},
		"an event consumer of statuses":   {&recorder{typ: inbound.EventStatuses}},
		"an event consumer of messages":   {&recorder{typ: inbound.EventMessages}},
	} {
		if _, err := inbound.NewService(inbound.Deps{Consumers: list}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A webhook field with an EventConsumer is stored and handed to it: a
// change naming a number (metadata.phone_number_id, as calls do) for that
// number's account only, a change naming none (a template's review) for
// every account of the business account. A field nobody consumes is not
// stored.
func TestEventFieldsAreRoutedToTheirConsumer(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, testenv.DatabaseURL(t), testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	box, err := secrets.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB})
	t.Cleanup(func() { _ = client.Close() })
	enq := jobs.NewEnqueuer(client, nil)

	token, err := box.SealString("token")
	if err != nil {
		t.Fatal(err)
	}
	org, first, second := uuid.New(), uuid.New(), uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO organizations (id, name, slug) VALUES (?, 'o', ?)`, []any{org, org.String()}},
		{`INSERT INTO platform_accounts (id, organization_id, name, phone_number_id, business_account_id, access_token_enc, status, verified_at)
		  VALUES (?, ?, 'first', '111', 'W1', ?, 'active', now()), (?, ?, 'second', '222', 'W1', ?, 'active', now())`,
			[]any{first, org, token, second, org, token}},
	} {
		if err := db.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	calls, reviews := &recorder{typ: platform.FieldCalls}, &recorder{typ: inbound.EventTemplateStatus}
	svc, err := inbound.NewService(inbound.Deps{DB: db, Accounts: accounts.NewService(db, box, nil, nil, enq, testenv.Quiet()),
		Enqueuer: enq, Limiter: ratelimit.New(rdb), GlobalSecret: "app-secret", Log: testenv.Quiet(),
		Consumers: []inbound.Consumer{calls, reviews}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"W1","changes":[
		{"field":"calls","value":{"metadata":{"phone_number_id":"222"},"calls":[{"id":"c1","event":"connect"}]}},
		{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":1,
		 "message_template_name":"hello","message_template_language":"en","reason":"NONE"}},
		{"field":"account_update","value":{"event":"ACCOUNT_UPDATE"}}]}]}`)
	n, err := svc.Intake(ctx, "203.0.113.1", platform.Sign("app-secret", body), bytes.NewReader(body))
	if err != nil || n != 3 {
		t.Fatalf("intake: %d events, %v; want 3 (one call, two reviews)", n, err)
	}
	for _, acc := range []uuid.UUID{first, second} {
		if err := svc.Process(ctx, org, acc, ""); err != nil {
			t.Fatal(err)
		}
	}
	if len(calls.got) != 1 || calls.got[0].Account.ID != second || !strings.Contains(string(calls.got[0].Payload), `"connect"`) {
		t.Errorf("calls consumer got %+v, want the call on the second account", calls.got)
	}
	if len(reviews.got) != 2 {
		t.Fatalf("template consumer got %d events, want one per account of the business account", len(reviews.got))
	}
	var v platform.TemplateStatusValue
	if err := json.Unmarshal(reviews.got[0].Payload, &v); err != nil || v.MessageTemplateName != "hello" {
		t.Errorf("template payload %s: %v", reviews.got[0].Payload, err)
	}
	var pending int64
	db.Raw(`SELECT count(*) FROM inbound_events WHERE processed_at IS NULL`).Scan(&pending)
	if pending != 0 {
		t.Errorf("%d events left unprocessed", pending)
	}
}
