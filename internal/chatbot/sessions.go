package chatbot

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/models"
)

// SessionView is a session with the contact it belongs to.
type SessionView struct {
	models.ChatbotSession
	ContactName string
	PhoneNumber string
}

const sessionSQL = `SELECT s.*, COALESCE(NULLIF(c.name, ''), c.profile_name) AS contact_name, c.phone_number
FROM chatbot_sessions s JOIN contacts c ON c.id = s.contact_id`

// Sessions answers a page of the organization's active sessions, most
// recently active first. A session past the timeout counts as ended even
// before the sweep has closed it.
func (s *Service) Sessions(ctx context.Context, orgID uuid.UUID, pg paging.Params) ([]SessionView, int64, error) {
	st, err := s.Settings(ctx, orgID)
	if err != nil {
		return nil, 0, err
	}
	since := s.now().Add(-time.Duration(st.SessionTimeoutMinutes) * time.Minute)
	return paging.Raw[SessionView](s.db.WithContext(ctx), sessionSQL+` WHERE s.organization_id = @org AND s.ended_at IS NULL
		AND s.last_activity > @since`, map[string]any{"org": orgID, "since": since}, pg, "s.last_activity DESC, s.id DESC")
}

// Session answers one session of the organization, active or ended.
func (s *Service) Session(ctx context.Context, orgID, id uuid.UUID) (*SessionView, error) {
	var rows []SessionView
	if err := s.db.WithContext(ctx).Raw(sessionSQL+` WHERE s.organization_id = ? AND s.id = ?`, orgID, id).Scan(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf("session not found")
	}
	return &rows[0], nil
}

// ContactSession answers the contact's latest session, also after it
// ended (the agent who picks up a transfer needs what the bot collected),
// or nil when the contact never had one.
func (s *Service) ContactSession(ctx context.Context, orgID, contactID uuid.UUID) (*contacts.SessionData, error) {
	var sess models.ChatbotSession
	err := s.db.WithContext(ctx).Where("organization_id = ? AND contact_id = ?", orgID, contactID).
		Order("started_at DESC, id DESC").Take(&sess).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vars := sess.Variables.V
	if vars == nil {
		vars = map[string]any{}
	}
	var panel any = sess.PanelConfig.V
	if sess.PanelConfig.V == nil {
		panel = map[string]any{}
	}
	return &contacts.SessionData{SessionID: &sess.ID, FlowID: sess.FlowID, FlowName: sess.FlowName, SessionData: vars, PanelConfig: panel}, nil
}
