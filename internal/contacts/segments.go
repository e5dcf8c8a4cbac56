package contacts

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Segment is a named, reusable audience: "customers in Lisbon who bought
// in the last 90 days". Its filter is kept, not its contacts, so a segment
// means its contacts of the moment wherever it is used.
type Segment struct {
	ID             uuid.UUID             `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID             `gorm:"type:uuid"`
	Name           string                `gorm:"column:name"`
	Description    string                `gorm:"column:description"`
	Filter         models.JSON[Audience] `gorm:"type:jsonb"`
	CreatedBy      *uuid.UUID            `gorm:"type:uuid"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TableName: segments belong to the contacts domain.
func (Segment) TableName() string { return "segments" }

// MaxSegments bounds an organization's segments.
const MaxSegments = 200

// SegmentInput creates or changes a segment; nil fields are unchanged.
type SegmentInput struct {
	Name        *string
	Description *string
	Filter      *Audience
}

func (s *Service) applySegment(ctx context.Context, orgID uuid.UUID, seg *Segment, in SegmentInput) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > 100 {
			return apperr.Invalidf("name is required (at most 100 characters)")
		}
		seg.Name = name
	}
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		if utf8.RuneCountInString(d) > 1000 {
			return apperr.Invalidf("description must be at most 1000 characters")
		}
		seg.Description = d
	}
	if in.Filter != nil {
		if err := s.checkAudience(ctx, orgID, in.Filter, true); err != nil {
			return err
		}
		seg.Filter.V = *in.Filter
	}
	return nil
}

// CreateSegment saves a named filter.
func (s *Service) CreateSegment(ctx context.Context, orgID, createdBy uuid.UUID, in SegmentInput) (*Segment, error) {
	if in.Name == nil || in.Filter == nil {
		return nil, apperr.Invalidf("name and filter are required")
	}
	seg := Segment{OrganizationID: orgID}
	if createdBy != uuid.Nil {
		seg.CreatedBy = &createdBy
	}
	if err := s.applySegment(ctx, orgID, &seg, in); err != nil {
		return nil, err
	}
	var n int64
	if err := s.db.WithContext(ctx).Model(&Segment{}).Scopes(tenant.Scope(orgID)).Count(&n).Error; err != nil {
		return nil, err
	}
	if n >= MaxSegments {
		return nil, apperr.Invalidf("an organization may keep at most %d segments: delete one first", MaxSegments)
	}
	if err := s.db.WithContext(ctx).Create(&seg).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, apperr.Conflictf("a segment with this name already exists")
		}
		return nil, err
	}
	return &seg, nil
}

// GetSegment returns one of the organization's segments.
func (s *Service) GetSegment(ctx context.Context, orgID, id uuid.UUID) (*Segment, error) {
	return tenant.Get[Segment](ctx, s.db, orgID, id, "segment not found")
}

// Segments lists the organization's segments by name.
func (s *Service) Segments(ctx context.Context, orgID uuid.UUID, pg paging.Params) ([]Segment, int64, error) {
	q := s.db.WithContext(ctx).Model(&Segment{}).Scopes(tenant.Scope(orgID))
	return paging.Find[Segment](q, pg, "lower(name), id")
}

// UpdateSegment changes a segment; campaigns that name it and have not
// started use the new filter.
func (s *Service) UpdateSegment(ctx context.Context, orgID, id uuid.UUID, in SegmentInput) (*Segment, error) {
	seg, err := s.GetSegment(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := s.applySegment(ctx, orgID, seg, in); err != nil {
		return nil, err
	}
	seg.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Save(seg).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, apperr.Conflictf("a segment with this name already exists")
		}
		return nil, err
	}
	return seg, nil
}

// DeleteSegment removes a segment. A campaign that has not started and
// names it is refused at its start (it says the segment is gone); one that
// started already has its recipients.
func (s *Service) DeleteSegment(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&Segment{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("segment not found")
	}
	return nil
}
