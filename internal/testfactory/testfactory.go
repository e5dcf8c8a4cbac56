// Package testfactory inserts the rows that domain tests start from:
// organizations with their system roles, users, accounts, contacts,
// templates and campaigns with recipients. Rows are written directly with
// gorm, never through a domain service, so that a domain's tests depend on
// no other domain's behaviour. Only tests import it.
//
// Every row gets usable defaults (an account is verified and active, a
// template approved, a campaign a draft with recipients); a test changes
// what it is about with the optional functions, which edit the row before
// it is inserted:
//
//	f := testfactory.New(t, testenv.DB(t))
//	org := f.Org()
//	acc := f.Account(org.ID, func(a *models.PlatformAccount) { a.Status = models.AccountPending })
package testfactory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/identity"
	"wharf/internal/infra/secrets"
	"wharf/models"
)

// Password is the password of every user the factory creates.
const Password = "password-123"

// Factory inserts rows into one test's database.
type Factory struct {
	t  testing.TB
	DB *gorm.DB
	// Box seals the accounts' tokens; give it to the services under test.
	Box *secrets.Box
	seq atomic.Int64
}

// New returns a factory on db (normally testenv.DB(t)).
func New(t testing.TB, db *gorm.DB) *Factory {
	box, err := secrets.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return &Factory{t: t, DB: db, Box: box}
}

// next numbers the rows of this factory, so that names and numbers differ.
func (f *Factory) next() int64 { return f.seq.Add(1) }

func (f *Factory) insert(row any) {
	f.t.Helper()
	if err := f.DB.WithContext(context.Background()).Create(row).Error; err != nil {
		f.t.Fatalf("testfactory: insert %T: %v", row, err)
	}
}

// Org is an organization with the ids of its system roles by name
// (identity.RoleAdmin, RoleManager, RoleAgent).
type Org struct {
	models.Organization
	Roles map[string]uuid.UUID
}

// Org creates an organization with the system roles and their
// permissions, as identity creates them.
func (f *Factory) Org(opts ...func(*models.Organization)) *Org {
	f.t.Helper()
	n := f.next()
	o := &Org{Organization: models.Organization{ID: uuid.New(), Name: fmt.Sprintf("Org %d", n), Settings: []byte("{}")},
		Roles: map[string]uuid.UUID{}}
	o.Slug = fmt.Sprintf("org-%d-%s", n, o.ID.String()[:8])
	for _, fn := range opts {
		fn(&o.Organization)
	}
	f.insert(&o.Organization)
	for _, name := range []string{identity.RoleAdmin, identity.RoleManager, identity.RoleAgent} {
		role := models.Role{ID: uuid.New(), OrganizationID: o.ID, Name: name, IsSystem: true, IsDefault: name == identity.RoleAgent}
		f.insert(&role)
		o.Roles[name] = role.ID
		q := `INSERT INTO role_permissions (role_id, permission_id) SELECT ?, id FROM permissions`
		args := []any{role.ID}
		if keys := identity.SystemRolePermissions(name); keys != nil {
			q += ` WHERE resource || ':' || action IN ?`
			args = append(args, keys)
		}
		if err := f.DB.Exec(q, args...).Error; err != nil {
			f.t.Fatalf("testfactory: role permissions: %v", err)
		}
	}
	return o
}

// User creates an active user who is a member of org with the named system
// role (identity.RoleAdmin...); the password is Password.
func (f *Factory) User(org *Org, role string, opts ...func(*models.User)) models.User {
	f.t.Helper()
	roleID, ok := org.Roles[role]
	if !ok {
		f.t.Fatalf("testfactory: organization %s has no role %q", org.Name, role)
	}
	hash, err := identity.HashPassword(Password)
	if err != nil {
		f.t.Fatal(err)
	}
	n := f.next()
	u := models.User{ID: uuid.New(), OrganizationID: org.ID, Email: fmt.Sprintf("user%d-%s@example.test", n, org.ID.String()[:8]),
		PasswordHash: hash, FullName: fmt.Sprintf("User %d", n), IsActive: true, IsAvailable: true}
	for _, fn := range opts {
		fn(&u)
	}
	f.insert(&u)
	f.insert(&models.OrganizationMember{ID: uuid.New(), OrganizationID: org.ID, UserID: u.ID, RoleID: roleID, IsDefault: true})
	return u
}

// Token is the access token of every account the factory creates.
const Token = "factory-token"

// Account creates a platform account of the organization that is verified
// (it owns its number) and active, with a phone number id of its own and
// the access token Token sealed by f.Box.
func (f *Factory) Account(orgID uuid.UUID, opts ...func(*models.PlatformAccount)) models.PlatformAccount {
	f.t.Helper()
	n := f.next()
	enc, err := f.Box.SealString(Token)
	if err != nil {
		f.t.Fatal(err)
	}
	now := time.Now().UTC()
	a := models.PlatformAccount{ID: uuid.New(), OrganizationID: orgID, Name: fmt.Sprintf("Account %d", n),
		PhoneNumber: fmt.Sprintf("+1 555-010-%04d", n), PhoneNumberID: fmt.Sprintf("10%08d", n), BusinessAccountID: fmt.Sprintf("20%08d", n),
		AccessTokenEnc: enc, WebhookVerifyToken: fmt.Sprintf("verify-%d-%s", n, orgID.String()[:8]), Status: models.AccountActive,
		MessagingLimit: "TIER_1K", PlatformType: "CLOUD_API", VerifiedAt: &now}
	for _, fn := range opts {
		fn(&a)
	}
	f.insert(&a)
	return a
}

// Contact creates a contact of the organization with a phone number of its
// own; accountID may be nil.
func (f *Factory) Contact(orgID uuid.UUID, accountID *uuid.UUID, opts ...func(*models.Contact)) models.Contact {
	f.t.Helper()
	n := f.next()
	c := models.Contact{ID: uuid.New(), OrganizationID: orgID, AccountID: accountID, PhoneNumber: fmt.Sprintf("+1555020%04d", n),
		Name: fmt.Sprintf("Contact %d", n)}
	c.Metadata.V = map[string]any{}
	for _, fn := range opts {
		fn(&c)
	}
	f.insert(&c)
	return c
}

// Template creates an APPROVED template of the account whose BODY is body,
// with positional placeholders ({{1}}...) unless an option says otherwise.
func (f *Factory) Template(acc models.PlatformAccount, body string, opts ...func(*models.Template)) models.Template {
	f.t.Helper()
	n := f.next()
	t := models.Template{ID: uuid.New(), OrganizationID: acc.OrganizationID, AccountID: acc.ID, ProviderTemplateID: fmt.Sprintf("30%08d", n),
		Name: fmt.Sprintf("template_%d", n), Language: "en_US", Category: "UTILITY", Status: models.TemplateApproved,
		ParameterFormat: "positional"}
	t.Components.V = []map[string]any{{"type": "BODY", "text": body}}
	t.SampleValues.V = []map[string]any{}
	for _, fn := range opts {
		fn(&t)
	}
	f.insert(&t)
	return t
}

// Campaign creates a draft campaign sending tmpl from its account to n
// recipients (+1555030xxxx, named "Recipient i", with an order_id field),
// with {{1}} mapped to the recipient's name. The counters match the
// recipients.
func (f *Factory) Campaign(tmpl models.Template, n int, opts ...func(*models.Campaign)) (models.Campaign, []models.CampaignRecipient) {
	f.t.Helper()
	c := models.Campaign{ID: uuid.New(), OrganizationID: tmpl.OrganizationID, AccountID: &tmpl.AccountID, TemplateID: &tmpl.ID,
		TemplateName: tmpl.Name, Name: fmt.Sprintf("Campaign %d", f.next()), Status: models.CampaignDraft,
		TotalRecipients: n, PendingCount: n}
	c.VariableMapping.V = map[string]string{"1": "name"}
	for _, fn := range opts {
		fn(&c)
	}
	f.insert(&c)
	recs := make([]models.CampaignRecipient, n)
	for i := range recs {
		recs[i] = models.CampaignRecipient{ID: uuid.New(), CampaignID: c.ID, OrganizationID: c.OrganizationID,
			PhoneNumber: fmt.Sprintf("+1555030%04d", i), Name: fmt.Sprintf("Recipient %d", i), Status: models.RecipientPending}
		recs[i].Data.V = map[string]any{"order_id": fmt.Sprintf("A-%d", i)}
	}
	if n > 0 {
		if err := f.DB.CreateInBatches(recs, 500).Error; err != nil {
			f.t.Fatalf("testfactory: recipients: %v", err)
		}
	}
	return c, recs
}

// Count returns the number of rows of table matching where (SQL with ?).
func (f *Factory) Count(table, where string, args ...any) int64 {
	f.t.Helper()
	var n int64
	q := "SELECT count(*) FROM " + table
	if strings.TrimSpace(where) != "" {
		q += " WHERE " + where
	}
	if err := f.DB.Raw(q, args...).Scan(&n).Error; err != nil {
		f.t.Fatalf("testfactory: count %s: %v", table, err)
	}
	return n
}
