package inbound_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
)

// Intake stores a provider webhook only once verified, for the verified
// owner of the number it names, split per contact.
func TestIntake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		org     *testfactory.Org
		account models.PlatformAccount
		queue   *testenv.Queue
	}
	setup := func(t *testing.T) (*inbound.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, &messages{name: "messages"})
		org := f.Org()
		return svc, &testBundle{f: f, org: org, account: f.Account(org.ID), queue: q}
	}
	sample := func(acc models.PlatformAccount) []byte {
		return webhookBody(acc.BusinessAccountID, acc.PhoneNumberID,
			[]message{{"wamid.1", "15550001111", "hi"}, {"wamid.2", "15550002222", "hello"}, {"wamid.3", "15550001111", "again"}},
			[]status{{"wamid.out", "delivered", ""}})
	}

	t.Run("UnsignedOrForgedWebhooksStoreNothing", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		body := sample(bundle.account)
		for _, sig := range []string{"", "sha256=xyz", "sha1=" + strings.Repeat("a", 40)} {
			_, err := svc.Intake(ctx, "203.0.113.1", sig, strings.NewReader(string(body)))
			testfactory.WantError(t, err, apperr.Unauthorized, "missing or malformed")
		}
		_, err := intake(svc, "203.0.113.1", "wrong-secret", body)
		testfactory.WantError(t, err, apperr.Unauthorized, "invalid webhook signature")
		if n := bundle.f.Count("inbound_events", ""); n != 0 {
			t.Errorf("%d events stored", n)
		}
		if got := bundle.queue.TaskTypes(t); len(got) != 0 {
			t.Errorf("queued %v", got)
		}
	})

	t.Run("AVerifiedWebhookIsStoredPerContactWithItsStatusesApart", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		n, err := intake(svc, "203.0.113.1", globalSecret, sample(bundle.account))
		if err != nil || n != 3 {
			t.Fatalf("intake: %d events, %v; want two contacts and the statuses", n, err)
		}
		for key, want := range map[string]int64{"15550001111": 1, "15550002222": 1} {
			if got := bundle.f.Count("inbound_events", "contact_key = ? AND kind = ? AND account_id = ? AND organization_id = ?",
				key, inbound.EventMessages, bundle.account.ID, bundle.org.ID); got != want {
				t.Errorf("contact %s: %d events", key, got)
			}
		}
		if got := bundle.f.Count("inbound_events", "kind = ? AND contact_key = ''", inbound.EventStatuses); got != 1 {
			t.Errorf("%d status events", got)
		}
		// Processing is enqueued just after the answer (groupcommit.go).
		var got map[string]int
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if got = bundle.queue.TaskTypes(t); got[jobs.TypeInboundProcess] == 2 && got[jobs.TypeInboundStatuses] == 1 {
				break
			}
		}
		if got[jobs.TypeInboundProcess] != 2 || got[jobs.TypeInboundStatuses] != 1 {
			t.Errorf("queued %v: want one process task per contact and one for the statuses", got)
		}
	})

	t.Run("OnlyTheVerifiedOwnerOfTheNumberReceivesIt", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		claim := bundle.f.Account(bundle.f.Org().ID, func(a *models.PlatformAccount) { a.VerifiedAt, a.Status = nil, models.AccountPending })
		for name, acc := range map[string]models.PlatformAccount{"an unverified claim": claim,
			"an unknown number": {PhoneNumberID: "999", BusinessAccountID: "998"}} {
			if n, err := intake(svc, "203.0.113.1", globalSecret, sample(acc)); err != nil || n != 0 {
				t.Errorf("%s: %d events, %v; want none stored", name, n, err)
			}
		}
		if n := bundle.f.Count("inbound_events", ""); n != 0 {
			t.Errorf("%d events stored", n)
		}
	})

	// Routes are remembered for a moment (routecache.go), but only complete
	// answers: a number verified just after a webhook found no route gets
	// its next webhook.
	t.Run("ANumberVerifiedAMomentAgoReceivesItsNextWebhook", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		claim := bundle.f.Account(bundle.org.ID, func(a *models.PlatformAccount) { a.VerifiedAt, a.Status = nil, models.AccountPending })
		if n, err := intake(svc, "203.0.113.1", globalSecret, sample(claim)); err != nil || n != 0 {
			t.Fatalf("before verification: %d events, %v", n, err)
		}
		if err := bundle.f.DB.Exec("UPDATE platform_accounts SET verified_at = now(), status = 'active' WHERE id = ?", claim.ID).Error; err != nil {
			t.Fatal(err)
		}
		if n, err := intake(svc, "203.0.113.1", globalSecret, sample(claim)); err != nil || n != 3 {
			t.Fatalf("right after verification: %d events, %v; want 3", n, err)
		}
	})

	t.Run("AnOrganizationsOwnAppSecretVerifiesOnlyItsOwnNumbers", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		enc, err := bundle.f.Box.SealString("org-secret")
		if err != nil {
			t.Fatal(err)
		}
		withSecret := bundle.f.Org(func(o *models.Organization) { o.ProviderAppSecretEnc = enc })
		own := bundle.f.Account(withSecret.ID)
		if n, err := intake(svc, "203.0.113.1", "org-secret", sample(own)); err != nil || n != 3 {
			t.Fatalf("own secret, own number: %d, %v", n, err)
		}
		_, err = intake(svc, "203.0.113.1", "org-secret", sample(bundle.account))
		testfactory.WantError(t, err, apperr.Unauthorized, "invalid webhook signature")
		if n := bundle.f.Count("inbound_events", "account_id = ?", bundle.account.ID); n != 0 {
			t.Errorf("%d events stored for a number the secret does not belong to", n)
		}
	})

	// PostgreSQL's jsonb refuses some valid JSON (storable.go). Such a
	// character in one message must not fail the webhook's insert (a 500
	// the provider repeats, every other event of the webhook waiting): the
	// webhook is stored with U+FFFD in their place, numbers numeric cannot
	// hold as strings.
	t.Run("WhatPostgreSQLRefusesIsStoredReplaced", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		acc := bundle.account
		body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"` + acc.BusinessAccountID + `","changes":[{"field":"messages",
			"value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"` + acc.PhoneNumberID + `"},
			"contacts":[{"wa_id":"15550003333","profile":{"name":"Nul\u0000l"}}],
			"messages":[{"from":"15550003333","id":"wamid.nul","timestamp":"1700000000","type":"text","text":{"body":"a\u0000b \ud800 \ud83d\ude00 \\u0000"},
			"x":1e999999}]}}]}]}`)
		if n, err := intake(svc, "203.0.113.1", globalSecret, body); err != nil || n != 1 {
			t.Fatalf("intake: %d events, %v; want the message stored", n, err)
		}
		var stored struct {
			Text string
			X    string
			Name string
		}
		if err := bundle.f.DB.Raw(`SELECT payload #>> '{messages,0,text,body}' AS text, payload #>> '{messages,0,x}' AS x,
			payload #>> '{contacts,0,profile,name}' AS name FROM inbound_events WHERE contact_key = '15550003333'`).Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if want := "a\uFFFDb \uFFFD \U0001F600 \\u0000"; stored.Text != want || stored.X != "1e999999" || stored.Name != "Nul\uFFFDl" {
			t.Errorf("stored %+v; want text %q, x 1e999999, name %q", stored, want, "Nul\uFFFDl")
		}
	})

	t.Run("RefusalsFromOneAddressAreLimited", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		body := sample(bundle.account)
		for range 30 {
			_, err := intake(svc, "203.0.113.7", "wrong-secret", body)
			testfactory.WantError(t, err, apperr.Unauthorized, "invalid webhook signature")
		}
		_, err := intake(svc, "203.0.113.7", globalSecret, body)
		testfactory.WantError(t, err, apperr.TooMany, "too many refused webhooks from this address")
		if n, err := intake(svc, "203.0.113.8", globalSecret, body); err != nil || n != 3 {
			t.Errorf("another address: %d, %v", n, err)
		}
	})
}
