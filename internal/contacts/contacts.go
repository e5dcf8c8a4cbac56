// Package contacts owns contacts and their tags: the people an organization
// talks to, created by hand, by a send to a new number, or by an incoming
// message.
package contacts

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/infra/phone"
	"wharf/internal/infra/tenant"
	"wharf/internal/webhooks"
	"wharf/models"
)

// Service manages contacts and tags.
type Service struct {
	db        *gorm.DB
	webhooks  *webhooks.Service
	live      live.Publisher
	users     Users
	now       func() time.Time
	positions *positions
}

// Users reads the organization's users (identity): the notes' authors'
// names.
type Users interface {
	Users(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.User, error)
}

// NewService wires the contacts domain; pub (nil: none) publishes the
// event stream's contact events; users (nil: notes show no author's name,
// for processes that read no notes) names the notes' authors.
func NewService(db *gorm.DB, wh *webhooks.Service, pub live.Publisher, users Users) *Service {
	return &Service{db: db, webhooks: wh, live: live.Or(pub), users: users, now: func() time.Time { return time.Now().UTC() }, positions: newPositions()}
}

// View is a contact with its tag names.
type View struct {
	models.Contact
	Tags []string
}

func (s *Service) withTags(ctx context.Context, rows []models.Contact) ([]View, error) {
	out := make([]View, len(rows))
	ids := make([]uuid.UUID, len(rows))
	idx := map[uuid.UUID]int{}
	for i, c := range rows {
		out[i] = View{Contact: c, Tags: []string{}}
		ids[i] = c.ID
		idx[c.ID] = i
	}
	if len(ids) == 0 {
		return out, nil
	}
	var pairs []struct {
		ContactID uuid.UUID
		Name      string
	}
	err := s.db.WithContext(ctx).Table("contact_tags ct").Select("ct.contact_id, t.name").
		Joins("JOIN tags t ON t.id = ct.tag_id").Where("ct.contact_id IN ?", ids).Order("t.name").Scan(&pairs).Error
	for _, p := range pairs {
		i := idx[p.ContactID]
		out[i].Tags = append(out[i].Tags, p.Name)
	}
	return out, err
}

// Get returns one contact with its tags.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*View, error) {
	c, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	v, err := s.withTags(ctx, []models.Contact{*c})
	if err != nil {
		return nil, err
	}
	return &v[0], nil
}

func (s *Service) get(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (*models.Contact, error) {
	return tenant.Get[models.Contact](ctx, db, orgID, id, "contact not found")
}

// Input creates or changes a contact; nil fields are unchanged.
type Input struct {
	PhoneNumber *string
	Name        *string
	AccountID   *uuid.UUID
	Metadata    *map[string]any
}

// Create adds a contact by hand.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*View, error) {
	if in.PhoneNumber == nil {
		return nil, apperr.Invalidf("phone_number is required")
	}
	number, err := phone.Normalize(*in.PhoneNumber)
	if err != nil {
		return nil, apperr.Invalidf("phone_number: %v", err)
	}
	c := models.Contact{OrganizationID: orgID, PhoneNumber: number}
	if err := s.applyInput(ctx, orgID, &c, in); err != nil {
		return nil, err
	}
	var eventID uuid.UUID
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&c).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return apperr.Conflictf("a contact with this phone number already exists")
			}
			return err
		}
		eventID, err = s.emitCreated(ctx, tx, &c, "api")
		return err
	})
	if err != nil {
		return nil, err
	}
	s.webhooks.Publish(ctx, orgID, eventID)
	return s.Get(ctx, orgID, c.ID)
}

// maxMetadata bounds the JSON size of a contact's metadata.
const maxMetadata = 64 << 10

func (s *Service) applyInput(ctx context.Context, orgID uuid.UUID, c *models.Contact, in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if len([]rune(name)) > 200 {
			return apperr.Invalidf("name must be at most 200 characters")
		}
		c.Name = name
	}
	if in.AccountID != nil {
		var n int64
		if err := s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Scopes(tenant.Scope(orgID)).
			Where("id = ?", *in.AccountID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return apperr.Invalidf("account_id does not name an account of this organization")
		}
		c.AccountID = in.AccountID
	}
	if in.Metadata != nil {
		b, err := json.Marshal(*in.Metadata)
		if err != nil || len(b) > maxMetadata {
			return apperr.Invalidf("metadata must be a JSON object of at most 64 KB")
		}
		c.Metadata.V = *in.Metadata
	}
	if c.Metadata.V == nil {
		c.Metadata.V = map[string]any{}
	}
	return nil
}

// Update changes a contact's name and metadata.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*View, error) {
	if in.PhoneNumber != nil {
		return nil, apperr.Invalidf("phone_number cannot change")
	}
	c, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := s.applyInput(ctx, orgID, c, in); err != nil {
		return nil, err
	}
	err = s.db.WithContext(ctx).Model(c).Updates(map[string]any{"name": c.Name, "metadata": c.Metadata,
		"account_id": c.AccountID, "updated_at": s.now()}).Error
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, id)
}

// Delete removes a contact with its messages, tags and other data (the
// foreign keys cascade).
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.Contact{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("contact not found")
	}
	return nil
}

// Assign gives the contact to a member of the organization, or unassigns it
// (nil).
func (s *Service) Assign(ctx context.Context, orgID, id uuid.UUID, userID *uuid.UUID) (*models.Contact, error) {
	c, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	if userID != nil {
		var n int64
		if err := s.db.WithContext(ctx).Model(&models.OrganizationMember{}).Scopes(tenant.Scope(orgID)).
			Where("user_id = ?", *userID).Count(&n).Error; err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, apperr.Invalidf("user_id is not a member of this organization")
		}
	}
	before := c.AssignedTo
	c.AssignedTo, c.UpdatedAt = userID, s.now()
	if err := s.db.WithContext(ctx).Model(c).Updates(map[string]any{"assigned_to": userID, "updated_at": c.UpdatedAt}).Error; err != nil {
		return nil, err
	}
	s.live.Publish(ctx, orgID, assignedEvent(c, before))
	return c, nil
}

// SessionData is the contact's chatbot session, if any.
type SessionData struct {
	SessionID   *uuid.UUID
	FlowID      *uuid.UUID
	FlowName    string
	SessionData map[string]any
	PanelConfig any
}

// SessionData checks that the contact exists and answers "no session";
// the chatbot domain owns sessions (the api asks it for the contact's
// latest one).
func (s *Service) SessionData(ctx context.Context, orgID, id uuid.UUID) (*SessionData, error) {
	if _, err := s.get(ctx, s.db, orgID, id); err != nil {
		return nil, err
	}
	return &SessionData{SessionData: map[string]any{}}, nil
}

// CreatedEvent is the data of contact.created.
type CreatedEvent struct {
	ContactID   uuid.UUID  `json:"contact_id"`
	PhoneNumber string     `json:"phone_number"`
	Name        string     `json:"name"`
	ProfileName string     `json:"profile_name"`
	AccountID   *uuid.UUID `json:"account_id"`
	Source      string     `json:"source"` // api, incoming, send
}

func (s *Service) emitCreated(ctx context.Context, tx *gorm.DB, c *models.Contact, source string) (uuid.UUID, error) {
	return s.webhooks.Emit(ctx, tx, c.OrganizationID, webhooks.EventContactCreated, CreatedEvent{ContactID: c.ID,
		PhoneNumber: c.PhoneNumber, Name: c.Name, ProfileName: c.ProfileName, AccountID: c.AccountID, Source: source})
}
