package transfers

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
)

// Filter narrows the list.
type Filter struct {
	Status string     // active, resumed, or "" for both
	Queue  string     // "general", a team id, or "" for every queue
	TeamID *uuid.UUID // parsed from Queue when it is a team id
}

// Page is a page of transfers with the queues' lengths (waiting, i.e.
// active and unassigned).
type Page struct {
	Items             []View
	Total             int64
	GeneralQueueCount int64
	TeamQueueCounts   map[uuid.UUID]int64
}

// visible is the condition on t (agent_transfers) for what a caller
// without transfers:assign sees: the general queue, their teams' transfers
// and those assigned to them. Its arguments are visibleArgs'.
const visible = `(t.team_id IS NULL OR t.agent_id = @user OR t.team_id IN @teams)`

// visibleArgs are the arguments of visible (and the organization): the
// caller, and the teams they are a member of (teams.TeamsOf), read first
// when the caller is limited to them.
func (s *Service) visibleArgs(ctx context.Context, orgID uuid.UUID, c Caller) (map[string]any, error) {
	args := map[string]any{"org": orgID, "user": c.UserID}
	if !c.CanAssign {
		mine, err := s.teams.TeamsOf(ctx, orgID, c.UserID)
		if err != nil {
			return nil, err
		}
		args["teams"] = mine
	}
	return args, nil
}

// List answers a page of the transfers the caller may see, newest first.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, c Caller, f Filter, pg paging.Params) (*Page, error) {
	args, err := s.visibleArgs(ctx, orgID, c)
	if err != nil {
		return nil, err
	}
	where := ` WHERE t.organization_id = @org`
	if !c.CanAssign {
		where += ` AND ` + visible
	}
	switch f.Status {
	case "":
	case "active", "resumed":
		where += ` AND t.status = @status`
		args["status"] = f.Status
	default:
		return nil, apperr.Invalidf("status must be active or resumed")
	}
	switch {
	case f.Queue == "general":
		where += ` AND t.team_id IS NULL`
	case f.Queue != "":
		id, err := uuid.Parse(f.Queue)
		if err != nil {
			return nil, apperr.Invalidf("team_id must be a UUID or general")
		}
		where += ` AND t.team_id = @team`
		args["team"] = id
	}
	items, total, err := paging.Raw[View](s.db.WithContext(ctx), viewSQL+where, args, pg, "t.transferred_at DESC, t.id DESC")
	if err != nil {
		return nil, err
	}
	if items, err = s.withNames(ctx, s.db, orgID, items); err != nil {
		return nil, err
	}
	out := &Page{Items: items, Total: total, TeamQueueCounts: map[uuid.UUID]int64{}}
	queues := `SELECT t.team_id, count(*) AS n FROM agent_transfers t
		WHERE t.organization_id = @org AND t.status = 'active' AND t.agent_id IS NULL`
	if !c.CanAssign {
		queues += ` AND ` + visible
	}
	var counts []struct {
		TeamID *uuid.UUID
		N      int64
	}
	if err := s.db.WithContext(ctx).Raw(queues+` GROUP BY t.team_id`, args).Scan(&counts).Error; err != nil {
		return nil, err
	}
	for _, q := range counts {
		if q.TeamID == nil {
			out.GeneralQueueCount = q.N
		} else {
			out.TeamQueueCounts[*q.TeamID] = q.N
		}
	}
	return out, nil
}

// GetFor answers a transfer the caller may see (404 otherwise).
func (s *Service) GetFor(ctx context.Context, orgID uuid.UUID, c Caller, id uuid.UUID) (*View, error) {
	args, err := s.visibleArgs(ctx, orgID, c)
	if err != nil {
		return nil, err
	}
	args["id"] = id
	q := viewSQL + ` WHERE t.organization_id = @org AND t.id = @id`
	if !c.CanAssign {
		q += ` AND ` + visible
	}
	var rows []View
	if err := s.db.WithContext(ctx).Raw(q, args).Scan(&rows).Error; err != nil {
		return nil, err
	}
	if rows, err = s.withNames(ctx, s.db, orgID, rows); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf("transfer not found")
	}
	return &rows[0], nil
}

// Holders answers the agent of each of the contacts' active transfer
// (contacts without one, or whose transfer waits unassigned, are absent):
// the event stream shows a contact's messages to the agent who holds its
// transfer. db is the caller's transaction or the pool.
func (s *Service) Holders(ctx context.Context, db *gorm.DB, orgID uuid.UUID, contactIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := map[uuid.UUID]uuid.UUID{}
	if len(contactIDs) == 0 {
		return out, nil
	}
	var rows []struct{ ContactID, AgentID uuid.UUID }
	err := db.WithContext(ctx).Raw(`SELECT contact_id, agent_id FROM agent_transfers
		WHERE organization_id = ? AND contact_id IN ? AND status = 'active' AND agent_id IS NOT NULL`, orgID, contactIDs).Scan(&rows).Error
	for _, r := range rows {
		out[r.ContactID] = r.AgentID
	}
	return out, err
}
