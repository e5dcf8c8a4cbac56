package outbound_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/orgsettings"
	"wharf/internal/outbound"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// The pacer's priority: while a campaign and API sends (50 a second)
// draw from the same TIER_1K account (10 a second), every reply finds its
// token at once or within one token interval, API sends go before the
// campaign, and together they stay within the tier.
func TestRepliesThenAPISendsThenCampaigns(t *testing.T) {
	s := outbound.New(outbound.Deps{Limiter: ratelimit.New(testenv.Redis(t, testenv.RedisURL(t))), Log: testenv.Quiet()})
	a := &models.PlatformAccount{ID: uuid.New(), MessagingTierOverride: "TIER_1K"}
	const rate, interval = 10, 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var campaign, api atomic.Int64
	var wg sync.WaitGroup
	draw := func(p outbound.Priority, n int, every time.Duration, count *atomic.Int64) {
		defer wg.Done()
		for ctx.Err() == nil {
			got, _, err := s.Take(ctx, a, p, n)
			if err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
			count.Add(int64(got))
			time.Sleep(every)
		}
	}
	start := time.Now()
	wg.Add(2)
	go draw(outbound.Campaign, 100, 10*time.Millisecond, &campaign)
	go draw(outbound.API, 1, 20*time.Millisecond, &api)
	replies := 0
	for range 10 {
		time.Sleep(300 * time.Millisecond)
		got, wait, err := s.Take(context.Background(), a, outbound.Reply, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			if wait > interval {
				t.Fatalf("a reply behind the campaign and API sends must wait at most %s, told %s", interval, wait)
			}
			time.Sleep(wait)
			if got, _, _ = s.Take(context.Background(), a, outbound.Reply, 1); got == 0 {
				t.Fatalf("no token for a reply after its wait of %s", wait)
			}
		}
		replies++
	}
	cancel()
	wg.Wait()
	took := time.Since(start)
	total := campaign.Load() + api.Load() + int64(replies)
	t.Logf("in %s: %d replies, %d API sends, %d campaign sends", took.Round(time.Millisecond), replies, api.Load(), campaign.Load())
	if limit := int64(rate * (took.Seconds() + 1)); total > limit {
		t.Fatalf("%d sends in %s at %d/s: more than the rate plus one second's worth (%d)", total, took, rate, limit)
	}
	if campaign.Load()*2 > api.Load() {
		t.Fatalf("the campaign took %d tokens beside %d of API sends: API sends go first", campaign.Load(), api.Load())
	}
}

// An account without a rate of ours (TIER_UNLIMITED) is not paced.
func TestUnlimitedTierIsNotPaced(t *testing.T) {
	s := outbound.New(outbound.Deps{Limiter: ratelimit.New(testenv.Redis(t, testenv.RedisURL(t))), Log: testenv.Quiet()})
	a := &models.PlatformAccount{ID: uuid.New(), MessagingTierOverride: "TIER_UNLIMITED"}
	for range 5 {
		if got, _, err := s.Take(context.Background(), a, outbound.Campaign, 500); err != nil || got != 500 {
			t.Fatalf("took %d (%v), want all 500", got, err)
		}
	}
}

type refuseAll struct{ calls atomic.Int64 }

func (r *refuseAll) Check(context.Context, *outbound.Message) error {
	r.calls.Add(1)
	return errors.New("the number opted out")
}

// The provider's answers are classified once; an account fault marks the
// account disconnected with the provider's reason; a rule refuses a send
// before it leaves.
func TestSendClassifiesAndMarksTheAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	a := &accounts.Account{PlatformAccount: acc, AccessToken: testfactory.Token}
	s := outbound.New(outbound.Deps{Provider: p.Client, Limiter: ratelimit.New(testenv.Redis(t, testenv.RedisURL(t))),
		Accounts: accts, Log: testenv.Quiet()})
	text := func(to string) platform.Message {
		m := platform.NewMessage(to, "text")
		m.Text = &platform.Text{Body: "hi"}
		return m
	}
	if r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.Reply, Message: text("15550001111")}); r.Outcome != outbound.Accepted ||
		r.MessageID == "" {
		t.Fatalf("send: %+v", r)
	}

	rule := &refuseAll{}
	ruled := outbound.New(outbound.Deps{Provider: p.Client, Accounts: accts, Rules: []outbound.Rule{rule}, Log: testenv.Quiet()})
	before := p.Sim.MessageCount(platformsim.MessageFilter{})
	if r := ruled.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: text("15550002222")}); r.Outcome != outbound.Refused ||
		r.Err == nil || r.Err.Error() != "the number opted out" {
		t.Fatalf("refused send: %+v", r)
	}
	if rule.calls.Load() != 1 || p.Sim.MessageCount(platformsim.MessageFilter{}) != before {
		t.Fatal("a refused send reached the provider")
	}

	p.Sim.RevokeToken(testfactory.Token)
	time.Sleep(300 * time.Millisecond) // the budget's next tokens (an API send leaves the last one to replies)
	r := s.Send(ctx, outbound.Message{Account: a, Priority: outbound.API, Message: text("15550003333")})
	if r.Outcome != outbound.AccountFault || r.ProviderError() == nil || r.ProviderError().Code != 190 {
		t.Fatalf("revoked token: %+v", r)
	}
	var row models.PlatformAccount
	if err := f.DB.Take(&row, "id = ?", acc.ID).Error; err != nil {
		t.Fatal(err)
	}
	if row.Status != models.AccountDisconnected || row.LastError == "" {
		t.Fatalf("account after the fault: %s %q", row.Status, row.LastError)
	}
}

// Classify maps each kind of provider answer to one outcome.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want outbound.Outcome
	}{
		{errors.New("marshal"), outbound.Failed},
		{&platform.Error{Class: platform.Transient, Message: "connection reset"}, outbound.Unknown},
		{&platform.Error{Code: 190, Class: platform.Permanent}, outbound.AccountFault},
		{&platform.Error{Code: 132015, Class: platform.Permanent}, outbound.TemplateFault},
		{&platform.Error{Code: 130429, Class: platform.Throttled}, outbound.Throttled},
		{&platform.Error{Code: 131000, Class: platform.Transient}, outbound.Transient},
		{&platform.Error{Code: 131026, Class: platform.Permanent}, outbound.Rejected},
	} {
		if got := outbound.Classify(tc.err); got.Outcome != tc.want || got.Err != tc.err {
			t.Errorf("%v: %s, want %s", tc.err, got.Outcome, tc.want)
		}
	}
	if r := outbound.Classify(&platform.Error{Code: 130429, Class: platform.Throttled}); r.Wait < time.Second {
		t.Errorf("a throttle without retry-after waits %s", r.Wait)
	}
}
