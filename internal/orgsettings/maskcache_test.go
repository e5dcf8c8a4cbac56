package orgsettings_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// Two services on one database and one Redis are two api replicas: masking
// turned on through one masks at once on the other, although both keep
// maskers in memory.
func TestMaskerCacheHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	replica := func() *orgsettings.Service {
		return orgsettings.NewService(f.DB, f.Box, nil, nil, orgsettings.WithMaskerCache(rdb, time.Hour, testenv.Quiet()))
	}
	a, b := replica(), replica()
	org := f.Org()
	masked := func(svc *orgsettings.Service) bool {
		t.Helper()
		var last bool
		for range 2 { // the second from memory when the version holds
			m, err := svc.Masker(ctx, org.ID)
			if err != nil {
				t.Fatal(err)
			}
			last = m.Phone("+15550100000") != "+15550100000"
		}
		return last
	}
	if masked(b) {
		t.Fatal("masked before the setting")
	}
	if err := a.Apply(ctx, org.ID, orgsettings.Update{MaskPhoneNumbers: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if !masked(b) {
		t.Fatal("the other replica still shows numbers after masking was turned on")
	}
	if err := a.Apply(ctx, org.ID, orgsettings.Update{MaskPhoneNumbers: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if masked(b) {
		t.Fatal("the other replica still masks after masking was turned off")
	}
	// A write behind the service's back is seen once the version is gone.
	f.DB.Model(&models.Organization{}).Where("id = ?", org.ID).Update("settings", `{"mask_phone_numbers": true}`)
	if masked(b) {
		t.Fatal("the cache was not used")
	}
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if !masked(b) {
		t.Fatal("a lost version did not end the cache")
	}
}

// The opt-out keywords are cached the same way (the worker matches every
// short incoming message against them): a change through one replica is
// matched at once by the other.
func TestKeywordCacheHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	replica := func() *orgsettings.Service {
		return orgsettings.NewService(f.DB, f.Box, nil, nil, orgsettings.WithKeywordCache(rdb, time.Hour, testenv.Quiet()))
	}
	a, b := replica(), replica()
	org := f.Org()
	optsOut := func(svc *orgsettings.Service, word string) bool {
		t.Helper()
		var last bool
		for range 2 { // the second from memory when the version holds
			kw, err := svc.Keywords(ctx, f.DB, org.ID)
			if err != nil {
				t.Fatal(err)
			}
			optOut, ok := kw.Match(word)
			last = ok && optOut
		}
		return last
	}
	if !optsOut(b, "stop") || optsOut(b, "QUIT") {
		t.Fatal("want the default keywords before any setting")
	}
	if err := a.Apply(ctx, org.ID, orgsettings.Update{OptOutKeywords: &[]string{"QUIT"}}); err != nil {
		t.Fatal(err)
	}
	if !optsOut(b, "quit") || optsOut(b, "stop") {
		t.Fatal("the other replica still matches the old keywords after the change")
	}
	// A write behind the service's back is seen once the version is gone.
	f.DB.Model(&models.Organization{}).Where("id = ?", org.ID).Update("settings", `{"opt_out_keywords": ["HALT"]}`)
	if optsOut(b, "halt") {
		t.Fatal("the cache was not used")
	}
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if !optsOut(b, "halt") {
		t.Fatal("a lost version did not end the cache")
	}
}

// A keyword cache miss inside the incoming message's transaction loads
// through it, not through a second connection of the pool.
func TestKeywordCacheMissLoadsThroughTheTransaction(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org := f.Org()
	svc := orgsettings.NewService(db, f.Box, nil, nil, orgsettings.WithKeywordCache(testenv.Redis(t, testenv.RedisURL(t)), time.Hour, testenv.Quiet()))
	ctx, tx := testenv.OnlyConnectionTx(t, db)
	for range 2 { // the first creates the version, the second loads and keeps
		if _, err := svc.Keywords(ctx, tx, org.ID); err != nil {
			t.Fatalf("Keywords in a transaction holding the pool's only connection: %v", err)
		}
	}
}
