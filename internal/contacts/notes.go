package contacts

import (
	"context"
	"errors"
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
	q := s.notes(ctx, orgID).Where("n.contact_id = ?", contactID)
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []Note
	err := q.Order("n.created_at DESC, n.id DESC").Limit(pg.Limit).Offset(pg.Offset()).Scan(&out).Error
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
	return s.db.WithContext(ctx).Table("contact_notes AS n").
		Select("n.*, COALESCE(u.full_name, '') AS author_name").
		Joins("LEFT JOIN users u ON u.id = n.author_id").Where("n.organization_id = ?", orgID)
}

func (s *Service) note(ctx context.Context, orgID, id uuid.UUID) (*Note, error) {
	var n Note
	err := s.notes(ctx, orgID).Where("n.id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("note not found")
	}
	return &n, err
}
