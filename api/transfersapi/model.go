package transfersapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/orgsettings"
	"wharf/internal/transfers"
)

type listQuery struct {
	web.PageQuery
	Status string `query:"status" description:"active or resumed (default: both)."`
	TeamID string `query:"team_id" description:"A team's id, or general for the general queue."`
}

type pickupQuery struct {
	TeamID string `query:"team_id" description:"A team's id, or general; default: the general queue and the caller's teams."`
}

type createRequest struct {
	ContactID *string `json:"contact_id"`
	TeamID    *string `json:"team_id"`
	Notes     string  `json:"notes"`
}

type assignRequest struct {
	AgentID *string `json:"agent_id"`
}

type transferResp struct {
	ID            uuid.UUID  `json:"id"`
	ContactID     uuid.UUID  `json:"contact_id"`
	ContactName   string     `json:"contact_name"`
	PhoneNumber   string     `json:"phone_number"`
	Status        string     `json:"status"`
	Source        string     `json:"source"`
	AgentID       *uuid.UUID `json:"agent_id"`
	AgentName     string     `json:"agent_name"`
	TeamID        *uuid.UUID `json:"team_id"`
	TeamName      string     `json:"team_name"`
	Notes         string     `json:"notes"`
	TransferredAt time.Time  `json:"transferred_at"`
	AssignedAt    *time.Time `json:"assigned_at"`
	ResumedAt     *time.Time `json:"resumed_at"`
}

type listResp struct {
	Transfers         []transferResp      `json:"transfers"`
	GeneralQueueCount int64               `json:"general_queue_count"`
	TeamQueueCounts   map[uuid.UUID]int64 `json:"team_queue_counts"`
	Total             int64               `json:"total"`
	Page              int                 `json:"page"`
	Limit             int                 `json:"limit"`
}

func toTransferResp(m orgsettings.Masker, v transfers.View) transferResp {
	return transferResp{ID: v.ID, ContactID: v.ContactID, ContactName: m.Name(v.ContactName), PhoneNumber: m.Phone(v.PhoneNumber),
		Status: v.Status, Source: v.Source, AgentID: v.AgentID, AgentName: v.AgentName, TeamID: v.TeamID, TeamName: v.TeamName,
		Notes: v.Notes, TransferredAt: web.UTC(v.TransferredAt), AssignedAt: web.UTCPtr(v.AssignedAt), ResumedAt: web.UTCPtr(v.ResumedAt)}
}
