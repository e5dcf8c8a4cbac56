package chatbot

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// The step registry. A step's kind (its message_type) decides how the step
// is checked when a flow is saved, what happens when a contact's walk
// reaches it, and how it takes the contact's answer. Each kind is one file
// (step_<kind>.go) implementing stepKind, with one table-driven test
// (step_<kind>_test.go), and one row of stepKinds below: adding a kind
// touches those three places. What every step shares (a unique step_order,
// input_type, the message's length, store_as) is checked here.

// StepKind is a flow step's kind, message_type on the wire.
type StepKind string

// The step kinds.
const (
	StepText         StepKind = "text"          // a message; waits for an answer when input_type says so
	StepButtons      StepKind = "buttons"       // a message with reply buttons; waits for a choice
	StepAPIFetch     StepKind = "api_fetch"     // calls a URL and maps its JSON answer into variables
	StepPlatformFlow StepKind = "platform_flow" // sends a platform-native flow; waits for its reply
	StepTransfer     StepKind = "transfer"      // hands the contact to a person and ends the walk
)

// stepKinds is the registry, in the order the API names the kinds.
var stepKinds = []struct {
	kind StepKind
	impl stepKind
}{
	{StepText, textStep{}},
	{StepButtons, buttonsStep{}},
	{StepAPIFetch, apiFetchStep{}},
	{StepPlatformFlow, platformFlowStep{}},
	{StepTransfer, transferStep{}},
}

// StepKinds lists the registered kinds.
func StepKinds() []StepKind {
	out := make([]StepKind, len(stepKinds))
	for i, k := range stepKinds {
		out[i] = k.kind
	}
	return out
}

// Enum lists the registered kinds: the enum of message_type in the OpenAPI
// document (swaggest/jsonschema-go reads it), so that the document follows
// the registry.
func (StepKind) Enum() []any {
	out := make([]any, len(stepKinds))
	for i, k := range stepKinds {
		out[i] = string(k.kind)
	}
	return out
}

// lookupStep answers the registered kind k.
func lookupStep(k StepKind) (stepKind, bool) {
	for _, r := range stepKinds {
		if r.kind == k {
			return r.impl, true
		}
	}
	return nil, false
}

// stepOf answers the kind of a stored step. Saved steps always have a
// registered kind; one that does not is walked as a text step.
func stepOf(st models.FlowStep) stepKind {
	if k, ok := lookupStep(StepKind(st.MessageType)); ok {
		return k
	}
	return textStep{}
}

// InputType is what a step waits for, input_type on the wire.
type InputType string

// The input types.
const (
	InputNone   InputType = ""       // waits for nothing (a buttons step still waits for a choice)
	InputText   InputType = "text"   // takes the contact's text as it is
	InputSelect InputType = "select" // takes one of the step's buttons, by id or title
)

// inputNoneAlias is the name a request may give InputNone.
const inputNoneAlias = "none"

// InputTypes are the input types a request may give.
var InputTypes = []InputType{InputNone, inputNoneAlias, InputText, InputSelect}

// Enum lists the stored input types (the OpenAPI document's enum).
func (InputType) Enum() []any {
	return []any{string(InputNone), string(InputText), string(InputSelect)}
}

func inputOf(st models.FlowStep) InputType { return InputType(st.InputType) }

// stepKind is what a kind of step does.
type stepKind interface {
	// check validates and normalises a step of the kind, after the checks
	// every step shares (and before store_as's); c.where names the step in
	// errors.
	check(c *stepCheck, st *models.FlowStep) error
	// enter runs the step when the walk reaches it: the walk goes on to the
	// next step, waits for the contact's answer, or has ended.
	enter(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (stepNext, error)
	// answer takes the contact's answer to the step waiting for it: the
	// value store_as keeps, or ok false when the answer does not fit and
	// the step was asked again.
	answer(e *evaluation, sess *models.ChatbotSession, st models.FlowStep) (value any, ok bool)
}

// stepNext is where a walk goes after a step was entered.
type stepNext int

const (
	stepGoesOn stepNext = iota // to the next step
	stepWaits                  // for the contact's answer (the session is saved)
	stepEnded                  // the step ended the session (a transfer)
)

// stepCheck is the context of a step's check.
type stepCheck struct {
	s     *Service
	ctx   context.Context
	orgID uuid.UUID
	where string // "steps[i]"
}

// needMessage refuses a step of kind k without a message.
func (c *stepCheck) needMessage(st *models.FlowStep, k StepKind) error {
	if st.Message == "" {
		return apperr.Invalidf("%s: a %s step needs a message", c.where, k)
	}
	return nil
}

// buttons checks the buttons of a step offering them (always, or when it
// selects), and drops them from a step that does not.
func (c *stepCheck) buttons(st *models.FlowStep, always bool) error {
	if !always && inputOf(*st) != InputSelect {
		st.Buttons = nil
		return nil
	}
	buttons, err := Buttons(c.where+".buttons", st.Buttons, 1)
	if err != nil {
		return err
	}
	st.Buttons = buttons
	return nil
}

// validSteps checks the steps and sorts them by step_order: 1 to 50 steps,
// unique orders, registered kinds, known input types, messages of at most
// maxText characters, store_as a variable name, and each kind's own rules.
func (s *Service) validSteps(ctx context.Context, orgID uuid.UUID, in []models.FlowStep) ([]models.FlowStep, error) {
	if len(in) == 0 || len(in) > 50 {
		return nil, apperr.Invalidf("steps must have 1 to 50 steps")
	}
	out := make([]models.FlowStep, len(in))
	orders := map[int]bool{}
	for i, st := range in {
		c := &stepCheck{s: s, ctx: ctx, orgID: orgID, where: "steps[" + strconv.Itoa(i) + "]"}
		if orders[st.StepOrder] {
			return nil, apperr.Invalidf("%s: step_order %d is used twice", c.where, st.StepOrder)
		}
		orders[st.StepOrder] = true
		kind, ok := lookupStep(StepKind(st.MessageType))
		if !ok {
			names := make([]string, len(stepKinds))
			for i, k := range stepKinds {
				names[i] = string(k.kind)
			}
			return nil, apperr.Invalidf("%s: message_type must be one of %s", c.where, strings.Join(names, ", "))
		}
		if st.InputType == inputNoneAlias {
			st.InputType = string(InputNone)
		}
		if t := inputOf(st); t != InputNone && t != InputText && t != InputSelect {
			return nil, apperr.Invalidf("%s: input_type must be text, select or none", c.where)
		}
		st.Message = strings.TrimSpace(st.Message)
		if len([]rune(st.Message)) > maxText {
			return nil, apperr.Invalidf("%s: message is longer than %d characters", c.where, maxText)
		}
		if err := kind.check(c, &st); err != nil {
			return nil, err
		}
		if st.StoreAs != "" && !variableName.MatchString(st.StoreAs) {
			return nil, apperr.Invalidf("%s: store_as must be a variable name (letters, digits, _)", c.where)
		}
		out[i] = st
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].StepOrder < out[b].StepOrder })
	return out, nil
}

// ask sends a step's message with its buttons (placeholders filled).
func (e *evaluation) ask(sess *models.ChatbotSession, st models.FlowStep, buttons bool) {
	var b []models.ChatButton
	if buttons {
		b = st.Buttons
	}
	e.reply(st.Message, b, "", sess.Variables.V)
}

// inputAnswer takes the answer of a step by its input type: a select step
// accepts a button's id or title (anything else asks again), any other
// the text as it is.
func (e *evaluation) inputAnswer(sess *models.ChatbotSession, st models.FlowStep) (any, bool) {
	if inputOf(st) != InputSelect {
		return e.text, true
	}
	title, ok := choose(st.Buttons, e.choiceID, e.text)
	if !ok {
		e.ask(sess, st, true)
		return nil, false
	}
	return title, true
}

// waitsFor is stepWaits when the step waits for an input, else stepGoesOn.
func waitsFor(st models.FlowStep) stepNext {
	if inputOf(st) != InputNone {
		return stepWaits
	}
	return stepGoesOn
}
