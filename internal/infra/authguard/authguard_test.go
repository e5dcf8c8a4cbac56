package authguard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/authguard"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/testenv"
)

func TestLockoutPerAccountAndAddressEndsWithTheWindow(t *testing.T) {
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	ctx := context.Background()
	g := authguard.New(ratelimit.New(rdb), "test:auth", authguard.Policy{Window: 600 * time.Millisecond, PerAccount: 3, PerAddress: 5})
	locked := func(a authguard.Attempt) bool {
		t.Helper()
		l, retry, err := g.Locked(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if l && (retry < time.Second || retry > 2*time.Second) {
			t.Fatalf("retry after %s", retry)
		}
		return l
	}
	root := authguard.Attempt{Account: "Root@X.com ", Address: "10.0.0.1"}
	for i := 0; i < 3; i++ {
		if locked(root) {
			t.Fatalf("locked after %d failures", i)
		}
		if err := g.Fail(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	// The account is locked from every address, spelled in any case.
	if !locked(root) || !locked(authguard.Attempt{Account: "root@x.com", Address: "10.0.0.9"}) {
		t.Fatal("account not locked after 3 failures")
	}
	// The address is not locked yet for other accounts; two more failures
	// lock it.
	other := authguard.Attempt{Account: "other@x.com", Address: "10.0.0.1"}
	if locked(other) {
		t.Fatal("address locked too early")
	}
	_ = g.Fail(ctx, other)
	_ = g.Fail(ctx, authguard.Attempt{Account: "third@x.com", Address: "10.0.0.1"})
	if !locked(authguard.Attempt{Account: "fourth@x.com", Address: "10.0.0.1"}) {
		t.Fatal("address not locked after 5 failures")
	}
	if locked(authguard.Attempt{Account: "fourth@x.com", Address: "10.0.0.2"}) {
		t.Fatal("another address is locked")
	}
	// Redis holds no email address.
	keys, _ := rdb.Keys(ctx, "test:auth:*").Result()
	for _, k := range keys {
		if strings.Contains(k, "root") || strings.Contains(k, "@") {
			t.Fatalf("key %q reveals the account", k)
		}
	}
	time.Sleep(700 * time.Millisecond)
	if locked(root) || locked(other) {
		t.Fatal("still locked after the window")
	}
}

func TestPairPolicyLocksOnlyThePair(t *testing.T) {
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	ctx := context.Background()
	g := authguard.New(ratelimit.New(rdb), "test:login", authguard.Policy{Window: time.Minute, PerAddress: 4, PerPair: 2})
	a := authguard.Attempt{Account: "a@x.com", Address: "10.0.0.1"}
	_ = g.Fail(ctx, a)
	_ = g.Fail(ctx, a)
	if l, _, _ := g.Locked(ctx, a); !l {
		t.Fatal("pair not locked")
	}
	if l, _, _ := g.Locked(ctx, authguard.Attempt{Account: "a@x.com", Address: "10.0.0.2"}); l {
		t.Fatal("the account is locked from another address")
	}
	if l, _, _ := g.Locked(ctx, authguard.Attempt{Account: "b@x.com", Address: "10.0.0.1"}); l {
		t.Fatal("the address is locked for another account")
	}
}
