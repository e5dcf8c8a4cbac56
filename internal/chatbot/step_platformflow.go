package chatbot

import (
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/models"
)

// platformFlowStep sends a platform-native flow (flow_config) with its
// message as the body, the session's id as the flow token (echoed in the
// reply), and waits for the flow's reply: stored whole under store_as, or
// else each of its fields that is a variable name as a variable of its own.
// Anything but the flow's reply sends the flow again.
type platformFlowStep struct{}

func (platformFlowStep) check(c *stepCheck, st *models.FlowStep) error {
	if err := c.buttons(st, false); err != nil {
		return err
	}
	if st.FlowConfig == nil || strings.TrimSpace(st.FlowConfig.FlowID) == "" || strings.TrimSpace(st.FlowConfig.FlowCTA) == "" ||
		len([]rune(st.FlowConfig.FlowCTA)) > MaxButtonTitle {
		return apperr.Invalidf("%s: a platform_flow step needs flow_config.flow_id and flow_config.flow_cta (at most %d characters)", c.where, MaxButtonTitle)
	}
	if st.Message == "" {
		return apperr.Invalidf("%s: a platform_flow step needs a message (the flow message's body)", c.where)
	}
	return nil
}

func (platformFlowStep) enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error) {
	sendFlow(e, sess, st)
	return stepWaits, nil
}

func (platformFlowStep) answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	resp, ok := e.msg.Content.V["response"].(map[string]any)
	if e.msg.Type != "flow" || !ok {
		sendFlow(e, sess, st)
		return nil, false
	}
	if st.StoreAs == "" {
		for k, v := range resp {
			if variableName.MatchString(k) {
				sess.Variables.V[k] = v
			}
		}
	}
	return resp, true
}

func sendFlow(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) {
	if st.FlowConfig == nil {
		return
	}
	e.replies = append(e.replies, messaging.Reply{Text: e.fill(st.Message, sess.Variables.V), Flow: &messaging.FlowReply{
		FlowID: st.FlowConfig.FlowID, CTA: st.FlowConfig.FlowCTA, Token: sess.ID.String(), Action: st.FlowConfig.FlowAction,
		Screen: st.FlowConfig.Screen}})
}
