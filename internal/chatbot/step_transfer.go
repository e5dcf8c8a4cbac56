package chatbot

import (
	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/transfers"
	"wharf/models"
)

// transferStep hands the contact to a person (transfer_config's team, or
// the general queue, with its notes), sends its message (or the default
// one) and ends the walk. It waits for nothing.
type transferStep struct{}

func (transferStep) check(c *stepCheck, st *models.FlowStep) error {
	if err := c.buttons(st, false); err != nil {
		return err
	}
	st.InputType = string(InputNone)
	if st.TransferConfig == nil {
		st.TransferConfig = &models.TransferConfig{}
	}
	if id := st.TransferConfig.TeamID; id != nil {
		names, err := c.s.teams.Names(c.ctx, c.s.db, c.orgID, []uuid.UUID{*id})
		if err != nil {
			return err
		}
		if _, ok := names[*id]; !ok {
			return apperr.Invalidf("%s: transfer_config.team_id is not a team of this organization", c.where)
		}
	}
	return nil
}

func (transferStep) enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error) {
	cfg := st.TransferConfig
	if cfg == nil {
		cfg = &models.TransferConfig{}
	}
	if _, err := e.transfer(cfg.TeamID, e.fill(cfg.Notes, sess.Variables.V), transfers.SourceFlow, e.fill(st.Message, sess.Variables.V)); err != nil {
		return 0, err
	}
	return stepEnded, e.endSession(sess, "transfer")
}

// answer is reached only by a session saved at a transfer step by an older
// flow: the step never waits.
func (transferStep) answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	return e.inputAnswer(sess, st)
}
