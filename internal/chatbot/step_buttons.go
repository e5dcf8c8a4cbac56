package chatbot

import "wharf/models"

// buttonsStep sends its message with 1 to 10 reply buttons (a list past
// three) and waits for the contact's choice: its input type is select
// unless the flow says text.
type buttonsStep struct{}

func (buttonsStep) check(c *stepCheck, st *models.FlowStep) error {
	if err := c.needMessage(st, StepButtons); err != nil {
		return err
	}
	if err := c.buttons(st, true); err != nil {
		return err
	}
	if inputOf(*st) == InputNone {
		st.InputType = string(InputSelect)
	}
	return nil
}

func (buttonsStep) enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error) {
	e.ask(sess, st, true)
	return stepWaits, nil
}

func (buttonsStep) answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	return e.inputAnswer(sess, st)
}
