package transfers

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/teams"
	"wharf/models"
)

// loads counts the organization's agents' active transfers: the measure
// of a load_balanced team (teams.NextAgentIn picks among its members in
// the transfer's transaction, which holds the team's lock, so the previous
// assignment is committed and counted).
func (s *Service) loads(orgID uuid.UUID) teams.Loads {
	return func(ctx context.Context, tx *gorm.DB, agents []uuid.UUID) (map[uuid.UUID]int64, error) {
		var rows []struct {
			AgentID uuid.UUID
			N       int64
		}
		err := tx.WithContext(ctx).Raw(`SELECT agent_id, count(*) AS n FROM agent_transfers
			WHERE organization_id = ? AND status = 'active' AND agent_id IN ? GROUP BY agent_id`, orgID, agents).Scan(&rows).Error
		out := make(map[uuid.UUID]int64, len(rows))
		for _, r := range rows {
			out[r.AgentID] = r.N
		}
		return out, err
	}
}

// setAgent assigns the transfer and moves the agent's turn in its team
// (teams.AssignedIn: nothing when the agent is no member of it).
func (s *Service) setAgent(ctx context.Context, tx *gorm.DB, orgID, id, agent uuid.UUID) error {
	now := s.now()
	var rows []struct{ TeamID *uuid.UUID }
	if err := tx.WithContext(ctx).Raw(`UPDATE agent_transfers SET agent_id = ?, assigned_at = ?, updated_at = ? WHERE id = ? AND organization_id = ?
		RETURNING team_id`, agent, now, now, id, orgID).Scan(&rows).Error; err != nil {
		return err
	}
	if len(rows) == 0 || rows[0].TeamID == nil {
		return nil
	}
	return s.teams.AssignedIn(ctx, tx, orgID, *rows[0].TeamID, agent, now)
}

// Pickup gives the caller the oldest waiting transfer of a queue: queue
// "general" is the general queue, a team id that team's (the caller must
// be a member, unless they hold transfers:assign), "" the general queue and
// the caller's teams. Two agents picking up at once never get the same
// transfer (SKIP LOCKED).
func (s *Service) Pickup(ctx context.Context, orgID uuid.UUID, c Caller, queue string) (*View, error) {
	args := map[string]any{"org": orgID, "user": c.UserID}
	cond := ""
	switch queue {
	case "general":
		cond = `t.team_id IS NULL`
	case "":
		mine, err := s.teams.TeamsOf(ctx, orgID, c.UserID)
		if err != nil {
			return nil, err
		}
		cond, args["teams"] = `(t.team_id IS NULL OR t.team_id IN @teams)`, mine
	default:
		team, err := uuid.Parse(queue)
		if err != nil {
			return nil, apperr.Invalidf("team_id must be a UUID or general")
		}
		member, err := s.teams.IsTeamMember(ctx, orgID, team, c.UserID)
		if err != nil {
			return nil, err
		}
		if !member && !c.CanAssign {
			return nil, apperr.Forbiddenf("you are not a member of this team")
		}
		cond, args["team"] = `t.team_id = @team`, team
	}
	var id uuid.UUID
	events := &outbox{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		id, err = scanID(tx.Raw(`SELECT t.id FROM agent_transfers t WHERE t.organization_id = @org AND t.status = 'active' AND t.agent_id IS NULL
			AND `+cond+` ORDER BY t.transferred_at, t.id LIMIT 1 FOR UPDATE SKIP LOCKED`, args))
		if err != nil {
			return err
		}
		if id == uuid.Nil {
			return apperr.NotFoundf("no transfer is waiting in this queue")
		}
		if err := s.setAgent(ctx, tx, orgID, id, c.UserID); err != nil {
			return err
		}
		return s.emit(ctx, tx, orgID, id, eventAssigned, events)
	})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, orgID, events)
	return s.Get(ctx, orgID, id)
}

// Assign gives an active transfer to an agent: an active member of the
// organization (transfers:assign, checked by the route).
func (s *Service) Assign(ctx context.Context, orgID, id, agent uuid.UUID) (*View, error) {
	ok, err := s.people.IsActiveMember(ctx, orgID, agent)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.Invalidf("agent_id is not an active member of this organization")
	}
	events := &outbox{}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockActive(ctx, tx, orgID, id); err != nil {
			return err
		}
		if err := s.setAgent(ctx, tx, orgID, id, agent); err != nil {
			return err
		}
		return s.emit(ctx, tx, orgID, id, eventAssigned, events)
	})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, orgID, events)
	return s.Get(ctx, orgID, id)
}

// Resume ends a transfer: the bot speaks to the contact again. Without
// transfers:assign a caller resumes only what they may see (as in List: the
// general queue, their teams' transfers, those assigned to them; a 404
// otherwise, as for GET, so another team's transfer is not revealed), and
// of those not one assigned to someone else (403).
func (s *Service) Resume(ctx context.Context, orgID uuid.UUID, c Caller, id uuid.UUID) (*View, error) {
	args, err := s.visibleArgs(ctx, orgID, c)
	if err != nil {
		return nil, err
	}
	args["id"] = id
	events := &outbox{}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if !c.CanAssign {
			var ok bool
			if err := tx.Raw(`SELECT EXISTS (SELECT 1 FROM agent_transfers t WHERE t.organization_id = @org AND t.id = @id AND `+visible+`)`,
				args).Scan(&ok).Error; err != nil {
				return err
			}
			if !ok {
				return apperr.NotFoundf("transfer not found")
			}
		}
		t, err := s.lockedActive(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if t.AgentID != nil && *t.AgentID != c.UserID && !c.CanAssign {
			return apperr.Forbiddenf("only the assigned agent or a manager can resume this transfer")
		}
		now := s.now()
		if err := tx.Exec(`UPDATE agent_transfers SET status = 'resumed', resumed_at = ?, resumed_by = ?, updated_at = ? WHERE id = ?`,
			now, c.UserID, now, id).Error; err != nil {
			return err
		}
		return s.emit(ctx, tx, orgID, id, eventResumed, events)
	})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, orgID, events)
	return s.Get(ctx, orgID, id)
}

func (s *Service) lockActive(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) error {
	_, err := s.lockedActive(ctx, tx, orgID, id)
	return err
}

// lockedActive locks the transfer; 404 when the organization has none with
// that id, 409 when it is no longer active.
func (s *Service) lockedActive(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) (*models.AgentTransfer, error) {
	var t models.AgentTransfer
	if err := tx.WithContext(ctx).Raw(`SELECT * FROM agent_transfers WHERE id = ? AND organization_id = ? FOR UPDATE`, id, orgID).Scan(&t).Error; err != nil {
		return nil, err
	}
	if t.ID == uuid.Nil {
		return nil, apperr.NotFoundf("transfer not found")
	}
	if t.Status != models.TransferActive {
		return nil, apperr.Conflictf("the transfer is not active (it was resumed)")
	}
	return &t, nil
}
