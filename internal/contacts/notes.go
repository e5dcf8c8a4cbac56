package contacts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// MaxNoteLength is the longest note body, in characters.
const MaxNoteLength = 4000

// Note is a private note with its author's name ("" once the author's
// account is gone).
type Note struct {
	models.ContactNote
	AuthorName string
}

// AddNote writes a private note on a contact of the organization. Notes
// are for the organization's users only: nothing here sends anything.
func (s *Service) AddNote(ctx context.Context, orgID, contactID, authorID uuid.UUID, body string) (*Note, error) {
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, apperr.Invalidf("body is required")
	}
	if n := utf8.RuneCountInString(body); n > MaxNoteLength {
		return nil, apperr.Invalidf("body must be at most %d characters, not %d", MaxNoteLength, n)
	}
	if _, err := s.Contact(ctx, orgID, contactID); err != nil {
		return nil, err
	}
	n := models.ContactNote{ID: uuid.New(), OrganizationID: orgID, ContactID: contactID, Body: body, CreatedAt: s.now()}
	if authorID != uuid.Nil {
		n.AuthorID = &authorID
	}
	if err := s.db.WithContext(ctx).Create(&n).Error; err != nil {
		return nil, err
	}
	return s.note(ctx, orgID, n.ID)
}

// Notes lists a contact's notes, newest first.
func (s *Service) Notes(ctx context.Context, orgID, contactID uuid.UUID, pg paging.Params) ([]Note, int64, error) {
	if _, err := s.Contact(ctx, orgID, contactID); err != nil {
		return nil, 0, err
	}
	q := s.notes(ctx, orgID).Where("contact_id = ?", contactID)
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var rows []models.ContactNote
	if err := q.Order("created_at DESC, id DESC").Limit(pg.Limit).Offset(pg.Offset()).Find(&rows).Error; err != nil {
		return nil, 0, err
	}
	out, err := s.withAuthors(ctx, orgID, rows)
	return out, total, err
}

// DeleteNote deletes a note of the contact; only its author may.
func (s *Service) DeleteNote(ctx context.Context, orgID, contactID, noteID, userID uuid.UUID) error {
	n, err := s.note(ctx, orgID, noteID)
	if err != nil {
		return err
	}
	if n.ContactID != contactID {
		return apperr.NotFoundf("note not found")
	}
	if n.AuthorID == nil || *n.AuthorID != userID {
		return apperr.Forbiddenf("you can delete only your own notes")
	}
	return s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.ContactNote{}, "id = ?", noteID).Error
}

func (s *Service) notes(ctx context.Context, orgID uuid.UUID) *gorm.DB {
	return s.db.WithContext(ctx).Model(&models.ContactNote{}).Scopes(tenant.Scope(orgID))
}

func (s *Service) note(ctx context.Context, orgID, id uuid.UUID) (*Note, error) {
	var n models.ContactNote
	err := s.notes(ctx, orgID).Where("id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("note not found")
	}
	if err != nil {
		return nil, err
	}
	out, err := s.withAuthors(ctx, orgID, []models.ContactNote{n})
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// withAuthors names the notes' authors with one lookup of identity's
// users ("" for a note without an author, or whose author is gone).
func (s *Service) withAuthors(ctx context.Context, orgID uuid.UUID, rows []models.ContactNote) ([]Note, error) {
	out := make([]Note, len(rows))
	var ids []uuid.UUID
	for i, n := range rows {
		out[i].ContactNote = n
		if n.AuthorID != nil && !slices.Contains(ids, *n.AuthorID) {
			ids = append(ids, *n.AuthorID)
		}
	}
	if s.users == nil || len(ids) == 0 {
		return out, nil
	}
	users, err := s.users.Users(ctx, s.db, orgID, ids)
	if err != nil {
		return nil, err
	}
	for i, n := range out {
		if n.AuthorID != nil {
			out[i].AuthorName = users[*n.AuthorID].FullName
		}
	}
	return out, nil
}
