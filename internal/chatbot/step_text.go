package chatbot

import "wharf/models"

// textStep sends its message (with buttons when it selects) and waits when
// it has an input type.
type textStep struct{}

func (textStep) check(c *stepCheck, st *models.FlowStep) error {
	if err := c.needMessage(st, StepText); err != nil {
		return err
	}
	return c.buttons(st, false)
}

func (textStep) enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error) {
	e.ask(sess, st, inputOf(st) == InputSelect)
	return waitsFor(st), nil
}

func (textStep) answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	return e.inputAnswer(sess, st)
}
