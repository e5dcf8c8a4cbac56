package teamsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/teams"
)

// teamRequest converts to teams.Input field for field; nil fields are
// unchanged.
type teamRequest struct {
	Name               *string `json:"name"`
	Description        *string `json:"description"`
	AssignmentStrategy *string `json:"assignment_strategy"`
	IsActive           *bool   `json:"is_active"`
}

type teamResp struct {
	ID                 uuid.UUID `json:"id"`
	Name               string    `json:"name"`
	Description        string    `json:"description"`
	AssignmentStrategy string    `json:"assignment_strategy"`
	IsActive           bool      `json:"is_active"`
	MemberCount        int64     `json:"member_count"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

func toTeamResp(v teams.View) teamResp {
	return teamResp{ID: v.ID, Name: v.Name, Description: v.Description, AssignmentStrategy: v.AssignmentStrategy, IsActive: v.IsActive,
		MemberCount: v.MemberCount, CreatedAt: web.UTC(v.CreatedAt), UpdatedAt: web.UTC(v.UpdatedAt)}
}

type teamsResp struct {
	Teams []teamResp `json:"teams"`
}

type memberRequest struct {
	UserID string `json:"user_id"`
	Role   string `json:"role"`
}

type memberResp struct {
	ID             uuid.UUID  `json:"id"`
	UserID         uuid.UUID  `json:"user_id"`
	FullName       string     `json:"full_name"`
	Email          string     `json:"email"`
	Role           string     `json:"role"`
	IsAvailable    bool       `json:"is_available"`
	LastAssignedAt *time.Time `json:"last_assigned_at"`
}

func toMemberResp(m teams.Member) memberResp {
	return memberResp{ID: m.ID, UserID: m.UserID, FullName: m.FullName, Email: m.Email, Role: m.Role, IsAvailable: m.IsAvailable,
		LastAssignedAt: web.UTCPtr(m.LastAssignedAt)}
}

type membersResp struct {
	Members []memberResp `json:"members"`
}
