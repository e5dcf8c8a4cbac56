package canned_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/canned"
	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

func setup(t *testing.T) (*canned.Service, *testfactory.Factory, *testfactory.Org) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	s := canned.NewService(f.DB, contacts.NewService(f.DB, nil, nil, nil), orgsettings.NewService(f.DB, f.Box, nil, nil))
	return s, f, f.Org()
}

func str(s string) *string { return &s }

func TestCreateValidatesAndRefusesDuplicates(t *testing.T) {
	t.Parallel()
	s, _, org := setup(t)
	ctx := context.Background()
	for _, in := range map[string]canned.Input{
		"no name":       {Content: str("Hi")},
		"no content":    {Name: str("Hello")},
		"blank name":    {Name: str("  "), Content: str("Hi")},
		"blank content": {Name: str("Hello"), Content: str(" ")},
	} {
		_, err := s.Create(ctx, org.ID, nil, in)
		testfactory.WantError(t, err, apperr.Invalid, "name and content are required")
	}
	_, err := s.Create(ctx, org.ID, nil, canned.Input{Name: str("Hello"), Content: str("Hi"), Category: str("gossip")})
	testfactory.WantError(t, err, apperr.Invalid, "category must be one of")
	_, err = s.Create(ctx, org.ID, nil, canned.Input{Name: str("Hello"), Content: str("Hi"), Shortcut: str("two words")})
	testfactory.WantError(t, err, apperr.Invalid, "shortcut must be one word")

	r, err := s.Create(ctx, org.ID, nil, canned.Input{Name: str("Hello"), Content: str("Hi {{contact_name}}"), Shortcut: str("/hi")})
	if err != nil || !r.IsActive || r.UsageCount != 0 || r.Category != "general" {
		t.Fatalf("create: %+v, %v", r, err)
	}
	_, err = s.Create(ctx, org.ID, nil, canned.Input{Name: str("HELLO"), Content: str("again")})
	testfactory.WantError(t, err, apperr.Conflict, "Canned response with this name already exists")
	_, err = s.Create(ctx, org.ID, nil, canned.Input{Name: str("Other"), Content: str("again"), Shortcut: str("/HI")})
	testfactory.WantError(t, err, apperr.Conflict, "Canned response with this shortcut already exists")
	other, err := s.Create(ctx, org.ID, nil, canned.Input{Name: str("Other"), Content: str("again")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(ctx, org.ID, other.ID, canned.Input{Name: str("hello")})
	testfactory.WantError(t, err, apperr.Conflict, "Canned response with this name already exists")
	_, err = s.Update(ctx, org.ID, other.ID, canned.Input{Content: str("")})
	testfactory.WantError(t, err, apperr.Invalid, "name and content are required")
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	s, _, org := setup(t)
	ctx := context.Background()
	mk := func(name, content, shortcut, category string, active bool) {
		r, err := s.Create(ctx, org.ID, nil, canned.Input{Name: &name, Content: &content, Shortcut: &shortcut, Category: &category})
		if err != nil {
			t.Fatal(err)
		}
		if !active {
			if _, err := s.Update(ctx, org.ID, r.ID, canned.Input{IsActive: new(bool)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("Welcome", "Hello and welcome", "/w", "greeting", true)
	mk("Refund", "Your refund is on its way", "/refund", "support", true)
	mk("Old offer", "50% off", "/sale", "sales", false)
	names := func(f canned.Filter) []string {
		rows, err := s.List(ctx, org.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Name)
		}
		return out
	}
	for what, c := range map[string]struct {
		f    canned.Filter
		want int
	}{
		"all": {canned.Filter{}, 3}, "category": {canned.Filter{Category: "support"}, 1}, "active": {canned.Filter{ActiveOnly: true}, 2},
		"search content": {canned.Filter{Search: "REFUND IS"}, 1}, "search shortcut": {canned.Filter{Search: "/sa"}, 1},
		"percent is literal": {canned.Filter{Search: "%"}, 1}, "underscore is literal": {canned.Filter{Search: "_"}, 0},
	} {
		if got := names(c.f); len(got) != c.want {
			t.Errorf("%s: %v, want %d", what, got, c.want)
		}
	}
	_, err := s.List(ctx, org.ID, canned.Filter{Category: "x"})
	testfactory.WantError(t, err, apperr.Invalid, "category must be one of")
}

// Uses are counted atomically, fill the contact's name and number (the
// number masked when the organization masks numbers), and an inactive response or another
// organization's is not used.
func TestUseCountsAndFills(t *testing.T) {
	t.Parallel()
	s, f, org := setup(t)
	ctx := context.Background()
	r, err := s.Create(ctx, org.ID, nil, canned.Input{Name: str("Greet"), Content: str("Hi {{contact_name}}, we will call {{phone_number}}.")})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.Use(ctx, org.ID, r.ID, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, _ := s.Get(ctx, org.ID, r.ID); got.UsageCount != n {
		t.Fatalf("usage_count %d after %d concurrent uses", got.UsageCount, n)
	}

	c := f.Contact(org.ID, nil, func(c *models.Contact) { c.Name, c.PhoneNumber = "Ann Lee", "+15551234567" })
	_, content, err := s.Use(ctx, org.ID, r.ID, &c.ID)
	if err != nil || content != "Hi Ann Lee, we will call +15551234567." {
		t.Fatalf("filled %q, %v", content, err)
	}
	if err := f.DB.Exec(`UPDATE organizations SET settings = settings || '{"mask_phone_numbers": true}' WHERE id = ?`, org.ID).Error; err != nil {
		t.Fatal(err)
	}
	_, content, err = s.Use(ctx, org.ID, r.ID, &c.ID)
	if err != nil || !strings.HasPrefix(content, "Hi Ann Lee, we will call +") || strings.Contains(content, "51234") {
		t.Fatalf("masked: %q, %v; want the name and the number masked", content, err)
	}

	otherOrg := f.Org()
	stranger := f.Contact(otherOrg.ID, nil)
	_, _, err = s.Use(ctx, org.ID, r.ID, &stranger.ID)
	testfactory.WantError(t, err, apperr.NotFound, "")
	_, _, err = s.Use(ctx, otherOrg.ID, r.ID, nil)
	testfactory.WantError(t, err, apperr.NotFound, "Canned response not found")
	_, _, err = s.Use(ctx, org.ID, uuid.New(), nil)
	testfactory.WantError(t, err, apperr.NotFound, "Canned response not found")

	if _, err := s.Update(ctx, org.ID, r.ID, canned.Input{IsActive: new(bool)}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Use(ctx, org.ID, r.ID, nil)
	testfactory.WantError(t, err, apperr.Invalid, "inactive")
	if got, _ := s.Get(ctx, org.ID, r.ID); got.UsageCount != n+2 {
		t.Fatalf("usage_count %d, want %d: refused uses must not count", got.UsageCount, n+2)
	}
	testfactory.WantError(t, s.Delete(ctx, otherOrg.ID, r.ID), apperr.NotFound, "Canned response not found")
	if err := s.Delete(ctx, org.ID, r.ID); err != nil {
		t.Fatal(err)
	}
}
