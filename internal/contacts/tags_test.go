package contacts_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

func TestTags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f   *testfactory.Factory
		org *testfactory.Org
	}
	setup := func(t *testing.T) (*contacts.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f)
		return svc, &testBundle{f: f, org: f.Org()}
	}

	t.Run("CreateValidatesTheNameAndColor", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, c := range []struct {
			in  contacts.TagInput
			msg string
		}{
			{contacts.TagInput{}, "name is required"},
			{contacts.TagInput{Name: ptr("  ")}, "tag name is required"},
			{contacts.TagInput{Name: ptr(strings.Repeat("t", contacts.MaxTagName+1))}, fmt.Sprintf("at most %d characters", contacts.MaxTagName)},
			{contacts.TagInput{Name: ptr("vip"), Color: ptr("pink")}, "color must be one of blue, red"},
		} {
			_, err := svc.CreateTag(ctx, bundle.org.ID, c.in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		tag, err := svc.CreateTag(ctx, bundle.org.ID, contacts.TagInput{Name: ptr(" VIP ")})
		if err != nil || tag.Name != "VIP" || tag.Color != "gray" {
			t.Fatalf("created %+v, %v; want the trimmed name in gray", tag, err)
		}
		_, err = svc.CreateTag(ctx, bundle.org.ID, contacts.TagInput{Name: ptr("vip"), Color: ptr("RED")})
		testfactory.WantError(t, err, apperr.Conflict, "a tag with this name already exists")
		// Another organization has tags of its own.
		if _, err := svc.CreateTag(ctx, bundle.f.Org().ID, contacts.TagInput{Name: ptr("vip")}); err != nil {
			t.Fatalf("the same name in another organization: %v", err)
		}
	})

	t.Run("AnotherOrganizationsTagIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if _, err := svc.CreateTag(ctx, bundle.f.Org().ID, contacts.TagInput{Name: ptr("theirs")}); err != nil {
			t.Fatal(err)
		}
		_, err := svc.UpdateTag(ctx, bundle.org.ID, "theirs", contacts.TagInput{Color: ptr("red")})
		testfactory.WantError(t, err, apperr.NotFound, "tag not found")
		testfactory.WantError(t, svc.DeleteTag(ctx, bundle.org.ID, "theirs"), apperr.NotFound, "tag not found")
		if bundle.f.Count("tags", "name = 'theirs' AND color = 'gray'") != 1 {
			t.Error("another organization's tag changed")
		}
	})

	t.Run("SetTagsReplacesCreatesMissingTagsAndIgnoresCase", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if _, err := svc.CreateTag(ctx, bundle.org.ID, contacts.TagInput{Name: ptr("VIP"), Color: ptr("red")}); err != nil {
			t.Fatal(err)
		}
		c := bundle.f.Contact(bundle.org.ID, nil)
		v, err := svc.SetTags(ctx, bundle.org.ID, c.ID, []string{"vip", "new", "NEW", " vip "})
		if err != nil || fmt.Sprint(v.Tags) != "[VIP new]" {
			t.Fatalf("tags %v, %v; want the existing VIP and one new tag", v, err)
		}
		if bundle.f.Count("tags", "name = 'new' AND color = 'gray'") != 1 || bundle.f.Count("tags", "") != 2 {
			t.Error("want exactly one new gray tag")
		}
		if v, err = svc.SetTags(ctx, bundle.org.ID, c.ID, []string{"new"}); err != nil || fmt.Sprint(v.Tags) != "[new]" {
			t.Fatalf("replaced tags %v, %v", v, err)
		}
		_, err = svc.SetTags(ctx, bundle.org.ID, c.ID, []string{"ok", ""})
		testfactory.WantError(t, err, apperr.Invalid, "tag name is required")
		// Renaming or deleting a tag shows on the contact at once.
		if _, err := svc.UpdateTag(ctx, bundle.org.ID, "NEW", contacts.TagInput{Name: ptr("renamed")}); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.Get(ctx, bundle.org.ID, c.ID); fmt.Sprint(got.Tags) != "[renamed]" {
			t.Errorf("after the rename the contact has %v", got.Tags)
		}
		if err := svc.DeleteTag(ctx, bundle.org.ID, "renamed"); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.Get(ctx, bundle.org.ID, c.ID); len(got.Tags) != 0 {
			t.Errorf("after the delete the contact has %v", got.Tags)
		}
	})
}
