package identity_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/database"
	"wharf/internal/identity"
	"wharf/internal/testenv"
	"wharf/models"
)

func service(t *testing.T) (*identity.Service, func() int64) {
	dsn := testenv.DatabaseURL(t)
	db, err := database.Open(context.Background(), dsn, testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	s := identity.NewService(db, identity.NewTokens(testenv.RandomKey(), time.Hour, 7*24*time.Hour), nil, testenv.Quiet())
	count := func() int64 {
		var n int64
		db.Model(&models.User{}).Count(&n)
		return n
	}
	return s, count
}

func TestBootstrapCreatesTheFirstAdminOnceEvenConcurrently(t *testing.T) {
	s, users := service(t)
	ctx := context.Background()
	in := identity.BootstrapInput{Email: "root@x.com", Password: "password-123", OrgName: "First"}
	var wg sync.WaitGroup
	created := make([]bool, 4)
	for i := range created {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.Bootstrap(ctx, in)
			if err != nil {
				t.Error(err)
			}
			created[i] = c
		}()
	}
	wg.Wait()
	n := 0
	for _, c := range created {
		if c {
			n++
		}
	}
	if n != 1 || users() != 1 {
		t.Fatalf("bootstrap created %d times, %d users", n, users())
	}
	sess, err := s.Login(ctx, "root@x.com", "password-123")
	if err != nil {
		t.Fatal(err)
	}
	if !sess.Principal.IsSuperAdmin || sess.Principal.RoleName != identity.RoleAdmin {
		t.Fatalf("bootstrap admin %+v", sess.Principal)
	}
	// Once a user exists the password is no longer needed.
	if _, err := s.Bootstrap(ctx, identity.BootstrapInput{Email: "x@x.com", OrgName: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestBootstrapWithoutPasswordSaysWhatToSet(t *testing.T) {
	s, _ := service(t)
	_, err := s.Bootstrap(context.Background(), identity.BootstrapInput{Email: "root@x.com", OrgName: "First"})
	if !errors.Is(err, identity.ErrBootstrapPasswordMissing) {
		t.Fatalf("error %v", err)
	}
	_, err = s.Bootstrap(context.Background(), identity.BootstrapInput{Email: "root@x.com", Password: "short", OrgName: "First"})
	if err == nil || !containsAll(err.Error(), "BOOTSTRAP_ADMIN_PASSWORD", "8") {
		t.Fatalf("short password error %v", err)
	}
}

func TestPurgeRefreshTokensKeepsUsableOnes(t *testing.T) {
	s, _ := service(t)
	ctx := context.Background()
	if _, err := s.Bootstrap(ctx, identity.BootstrapInput{Email: "root@x.com", Password: "password-123", OrgName: "First"}); err != nil {
		t.Fatal(err)
	}
	live, _ := s.Login(ctx, "root@x.com", "password-123")
	spent, _ := s.Login(ctx, "root@x.com", "password-123")
	if _, err := s.Refresh(ctx, spent.RefreshToken); err != nil {
		t.Fatal(err)
	}
	// Nothing is old enough yet: a replayed token must still be recognised.
	if n, err := s.PurgeRefreshTokens(ctx); err != nil || n != 0 {
		t.Fatalf("purged %d (%v), want 0", n, err)
	}
	if _, err := s.Refresh(ctx, live.RefreshToken); err != nil {
		t.Fatalf("live token purged: %v", err)
	}
}

func TestPasswordHashing(t *testing.T) {
	h, err := identity.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := identity.HashPassword("correct horse")
	if h == h2 {
		t.Fatal("hashes are not salted")
	}
	if !identity.VerifyPassword(h, "correct horse") || identity.VerifyPassword(h, "correct horsE") || identity.VerifyPassword("garbage", "x") {
		t.Fatal("verify")
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
