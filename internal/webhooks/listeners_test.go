package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
)

// Two services on one database and one Redis are two processes (the api
// that changes webhooks, the worker that emits events): a webhook created,
// switched off, on or deleted through one decides the other's very next
// event, although both keep the organization's subscriptions in memory.
func TestListenerCacheHoldsAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	q := testenv.NewQueue(t)
	replica := func() *webhooks.Service {
		return webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{}, nil, testenv.Quiet(),
			webhooks.WithListenerCache(rdb, time.Hour, testenv.Quiet()))
	}
	api, worker := replica(), replica()
	org := f.Org()
	emits := func() bool {
		t.Helper()
		var last bool
		for range 2 { // the second from memory when the version holds
			id, err := worker.Emit(ctx, f.DB, org.ID, webhooks.EventMessageIncoming, map[string]string{"k": "v"})
			if err != nil {
				t.Fatal(err)
			}
			last = id != uuid.Nil
		}
		return last
	}
	if emits() {
		t.Fatal("an event recorded before any webhook")
	}
	v, err := api.Create(ctx, org.ID, webhooks.Input{Name: ptr("CRM"), URL: ptr("https://crm.example.com/hook"),
		Events: &[]string{webhooks.EventMessageIncoming}})
	if err != nil {
		t.Fatal(err)
	}
	if !emits() {
		t.Fatal("the other process recorded no event right after the webhook's creation")
	}
	if _, err := api.Update(ctx, org.ID, v.ID, webhooks.Input{IsActive: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if emits() {
		t.Fatal("the other process still records events for a webhook switched off")
	}
	if _, err := api.Update(ctx, org.ID, v.ID, webhooks.Input{IsActive: ptr(true), Events: &[]string{webhooks.EventContactCreated}}); err != nil {
		t.Fatal(err)
	}
	if emits() {
		t.Fatal("the other process still records an event the webhook no longer subscribes to")
	}
	if ok, err := worker.Listens(ctx, f.DB, org.ID, webhooks.EventMessageIncoming, webhooks.EventContactCreated); err != nil || !ok {
		t.Fatalf("Listens for either event: %v %v, want true", ok, err)
	}
	if err := api.Delete(ctx, org.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := worker.Listens(ctx, f.DB, org.ID, webhooks.EventContactCreated); err != nil || ok {
		t.Fatalf("Listens after the webhook's deletion: %v %v, want false", ok, err)
	}
	// Another organization's webhook is not this one's.
	other := f.Org()
	if _, err := api.Create(ctx, other.ID, webhooks.Input{Name: ptr("CRM"), URL: ptr("https://crm.example.com/hook"),
		Events: &[]string{webhooks.EventMessageIncoming}}); err != nil {
		t.Fatal(err)
	}
	if emits() {
		t.Fatal("another organization's webhook made this one record events")
	}
}

// A cache miss inside a caller's transaction loads through that
// transaction: a pool whose only connection the transaction holds (as
// fifty transfers waiting on their team's lock once held every connection
// but the lock holder's) still answers.
func TestListenerCacheMissLoadsThroughTheTransaction(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org := f.Org()
	q := testenv.NewQueue(t)
	svc := webhooks.NewService(db, f.Box, q.Enqueuer, safehttp.Policy{}, nil, testenv.Quiet(),
		webhooks.WithListenerCache(testenv.Redis(t, testenv.RedisURL(t)), time.Hour, testenv.Quiet()))
	ctx, tx := testenv.OnlyConnectionTx(t, db)
	for range 2 { // the first creates the version, the second loads and keeps
		if _, err := svc.Emit(ctx, tx, org.ID, webhooks.EventMessageIncoming, map[string]string{"k": "v"}); err != nil {
			t.Fatalf("Emit in a transaction holding the pool's only connection: %v", err)
		}
	}
}
