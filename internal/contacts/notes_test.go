package contacts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

func TestNotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	svc, _ := newService(t, f)
	org := f.Org()
	ann, bob := f.User(org, "Agent"), f.User(org, "Agent")
	c := f.Contact(org.ID, nil)
	pg := paging.Params{Page: 1, Limit: 50}

	for body, msg := range map[string]string{" ": "body is required", strings.Repeat("n", 4001): "at most 4000 characters"} {
		_, err := svc.AddNote(ctx, org.ID, c.ID, ann.ID, body)
		testfactory.WantError(t, err, apperr.Invalid, msg)
	}
	first, err := svc.AddNote(ctx, org.ID, c.ID, ann.ID, "  prefers email  ")
	if err != nil {
		t.Fatal(err)
	}
	if first.Body != "prefers email" || first.AuthorName != ann.FullName || *first.AuthorID != ann.ID {
		t.Errorf("note %+v", first)
	}
	second, err := svc.AddNote(ctx, org.ID, c.ID, bob.ID, "called back")
	if err != nil {
		t.Fatal(err)
	}
	notes, total, err := svc.Notes(ctx, org.ID, c.ID, pg)
	if err != nil || total != 2 || len(notes) != 2 || notes[0].ID != second.ID || notes[1].ID != first.ID {
		t.Fatalf("notes %+v (%d, %v), want the two, newest first", notes, total, err)
	}

	// Another organization sees neither the contact nor the notes.
	other := f.Org()
	_, _, err = svc.Notes(ctx, other.ID, c.ID, pg)
	testfactory.WantError(t, err, apperr.NotFound, "contact not found")
	_, err = svc.AddNote(ctx, other.ID, c.ID, uuid.New(), "x")
	testfactory.WantError(t, err, apperr.NotFound, "contact not found")
	testfactory.WantError(t, svc.DeleteNote(ctx, other.ID, c.ID, first.ID, ann.ID), apperr.NotFound, "note not found")

	// Only the author deletes a note, and only through its contact.
	testfactory.WantError(t, svc.DeleteNote(ctx, org.ID, c.ID, first.ID, bob.ID), apperr.Forbidden, "only your own notes")
	c2 := f.Contact(org.ID, nil)
	testfactory.WantError(t, svc.DeleteNote(ctx, org.ID, c2.ID, first.ID, ann.ID), apperr.NotFound, "note not found")
	if err := svc.DeleteNote(ctx, org.ID, c.ID, first.ID, ann.ID); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("contact_notes", ""); n != 1 {
		t.Errorf("%d notes left, want 1", n)
	}
	if n := f.Count("messages", ""); n != 0 {
		t.Errorf("notes made %d messages", n)
	}
}
