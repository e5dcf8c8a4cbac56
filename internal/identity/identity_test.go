package identity_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/database"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/migrations"
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

// The router keeps API keys off these operations; the domain refuses them
// too, whoever calls it.
func TestAPIKeyPrincipalsCannotManageIdentities(t *testing.T) {
	s, _ := service(t)
	ctx := context.Background()
	if _, err := s.Bootstrap(ctx, identity.BootstrapInput{Email: "root@x.com", Password: "password-123", OrgName: "First"}); err != nil {
		t.Fatal(err)
	}
	sess, err := s.Login(ctx, "root@x.com", "password-123")
	if err != nil {
		t.Fatal(err)
	}
	key := *sess.Principal
	keyID := uuid.New()
	key.APIKeyID = &keyID
	p, id, pw := &key, uuid.New(), "password-123"
	for name, call := range map[string]func() error{
		"create user": func() error {
			_, err := s.CreateUser(ctx, p, identity.CreateUserInput{Email: "u@x.com", Password: pw, FullName: "U"})
			return err
		},
		"update user": func() error {
			_, err := s.UpdateUser(ctx, p, id, identity.UpdateUserInput{Password: &pw})
			return err
		},
		"delete user": func() error { return s.DeleteUser(ctx, p, id) },
		"add member":  func() error { return s.AddMember(ctx, p, identity.AddMemberInput{UserID: &id}) },
		"change member role": func() error {
			return s.UpdateMemberRole(ctx, p, id, &id)
		},
		"remove member": func() error { return s.RemoveMember(ctx, p, id) },
		"create role": func() error {
			name, perms := "R", []string{}
			_, err := s.CreateRole(ctx, p, identity.RoleInput{Name: &name, Permissions: &perms})
			return err
		},
		"update role": func() error {
			_, err := s.UpdateRole(ctx, p, id, identity.RoleInput{})
			return err
		},
		"delete role": func() error { return s.DeleteRole(ctx, p, id) },
		"create API key": func() error {
			_, err := s.CreateAPIKey(ctx, p, "k", nil)
			return err
		},
		"switch organization": func() error {
			_, err := s.SwitchOrg(ctx, p, p.OrgID.String())
			return err
		},
		"change password": func() error { return s.ChangePassword(ctx, p, pw, "new-password-1") },
		"create organization": func() error {
			_, err := s.CreateOrganization(ctx, p, "Minted")
			return err
		},
	} {
		err := call()
		if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), "API keys cannot") {
			t.Errorf("%s with an API-key principal: %v", name, err)
		}
	}
	if _, err := s.Login(ctx, "root@x.com", "password-123"); err != nil {
		t.Fatalf("password changed: %v", err)
	}
}

// Migration 00008 closes self-registration in the oldest organization of a
// database that predates the setting, and leaves the others and any explicit
// choice alone.
func TestMigrationClosesAnExistingBootstrapOrganization(t *testing.T) {
	dsn := testenv.DatabaseURL(t)
	db, err := database.Open(context.Background(), dsn, testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	s := identity.NewService(db, identity.NewTokens(testenv.RandomKey(), time.Hour, 7*24*time.Hour), nil, testenv.Quiet())
	ctx := context.Background()
	if _, err := s.Bootstrap(ctx, identity.BootstrapInput{Email: "root@x.com", Password: "password-123", OrgName: "First"}); err != nil {
		t.Fatal(err)
	}
	sess, _ := s.Login(ctx, "root@x.com", "password-123")
	second, err := s.CreateOrganization(ctx, sess.Principal, "Second")
	if err != nil {
		t.Fatal(err)
	}
	open := func(orgID uuid.UUID) bool {
		t.Helper()
		ok, err := orgsettings.SelfRegistrationOpen(ctx, db, orgID)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if open(sess.Principal.OrgID) || !open(second.ID) {
		t.Fatal("new installs: bootstrap organization must be closed, others open")
	}
	// The state before this change: no setting stored anywhere, and the
	// migration not applied yet.
	rewind := func() {
		t.Helper()
		for _, q := range []string{`UPDATE organizations SET settings = settings - 'self_registration_enabled'`,
			`DELETE FROM goose_db_version WHERE version_id = 8`} {
			if err := db.Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	rewind()
	if !open(sess.Principal.OrgID) {
		t.Fatal("unset must read as open")
	}
	// Migration 8 alone: the later ones are applied, and goose's Up refuses
	// a missing migration below the database's version.
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	goo, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	migrate8 := func() {
		t.Helper()
		if _, err := goo.ApplyVersion(ctx, 8, true); err != nil {
			t.Fatal(err)
		}
	}
	migrate8()
	if open(sess.Principal.OrgID) || !open(second.ID) {
		t.Fatal("after the migration: the oldest organization must be closed, the others open")
	}
	// An explicit choice survives the migration.
	rewind()
	if err := db.Exec(`UPDATE organizations SET settings = settings || '{"self_registration_enabled": true}' WHERE id = ?`, sess.Principal.OrgID).Error; err != nil {
		t.Fatal(err)
	}
	migrate8()
	if !open(sess.Principal.OrgID) {
		t.Fatal("the migration overrode an explicit choice")
	}
}
