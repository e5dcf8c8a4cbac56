package transfers

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// pickAgent chooses an available, active member of the team by its
// strategy, or uuid.Nil when none is available. The caller holds the team
// row's lock, so the previous assignment is committed and visible.
//
//   - round_robin: the member whose last assignment is the oldest (never
//     assigned first), i.e. the next one after the last assigned;
//   - load_balanced: the member with the fewest active transfers, the
//     oldest last assignment breaking ties.
func (s *Service) pickAgent(ctx context.Context, tx *gorm.DB, team *models.Team) (uuid.UUID, error) {
	order := `m.last_assigned_at ASC NULLS FIRST, m.created_at, m.user_id`
	if team.AssignmentStrategy == "load_balanced" {
		order = `(SELECT count(*) FROM agent_transfers a WHERE a.agent_id = m.user_id AND a.organization_id = m.organization_id
			AND a.status = 'active'), ` + order
	}
	return scanID(tx.WithContext(ctx).Raw(`SELECT m.user_id FROM team_members m JOIN users u ON u.id = m.user_id
		WHERE m.team_id = ? AND u.is_active AND u.is_available ORDER BY `+order+` LIMIT 1`, team.ID))
}

// setAgent assigns the transfer and moves the agent's turn in its team.
func (s *Service) setAgent(ctx context.Context, tx *gorm.DB, orgID, id, agent uuid.UUID) error {
	now := s.now()
	if err := tx.WithContext(ctx).Exec(`UPDATE agent_transfers SET agent_id = ?, assigned_at = ?, updated_at = ? WHERE id = ? AND organization_id = ?`,
		agent, now, now, id, orgID).Error; err != nil {
		return err
	}
	return tx.WithContext(ctx).Exec(`UPDATE team_members m SET last_assigned_at = ? FROM agent_transfers t
		WHERE t.id = ? AND m.team_id = t.team_id AND m.user_id = ?`, now, id, agent).Error
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
		cond = `(t.team_id IS NULL OR t.team_id IN (SELECT team_id FROM team_members WHERE organization_id = @org AND user_id = @user))`
	default:
		team, err := uuid.Parse(queue)
		if err != nil {
			return nil, apperr.Invalidf("team_id must be a UUID or general")
		}
		var member, exists bool
		if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM teams WHERE id = @team AND organization_id = @org),
			EXISTS (SELECT 1 FROM team_members WHERE team_id = @team AND organization_id = @org AND user_id = @user)`,
			map[string]any{"team": team, "org": orgID, "user": c.UserID}).Row().Scan(&exists, &member); err != nil {
			return nil, err
		}
		if !exists {
			return nil, apperr.NotFoundf("team not found")
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
	var ok bool
	if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM organization_members m JOIN users u ON u.id = m.user_id
		WHERE m.organization_id = ? AND m.user_id = ? AND u.is_active)`, orgID, agent).Scan(&ok).Error; err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.Invalidf("agent_id is not an active member of this organization")
	}
	events := &outbox{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	events := &outbox{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if !c.CanAssign {
			var ok bool
			if err := tx.Raw(`SELECT EXISTS (SELECT 1 FROM agent_transfers t WHERE t.organization_id = @org AND t.id = @id AND `+visible+`)`,
				map[string]any{"org": orgID, "id": id, "user": c.UserID}).Scan(&ok).Error; err != nil {
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
