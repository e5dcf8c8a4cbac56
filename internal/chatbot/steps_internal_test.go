package chatbot

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/infra/safehttp"
	"wharf/internal/messaging"
	"wharf/internal/teams"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/transfers"
	"wharf/internal/webhooks"
	"wharf/models"
)

// The step kinds' tests (step_<kind>_test.go) share this: a chatbot
// Service over a test database (transfers real), an organization and a
// contact, and tables of checks, entries and answers run the same way.

type stepEnv struct {
	s       *Service
	db      *gorm.DB
	org     uuid.UUID
	contact models.Contact
}

func newStepEnv(t *testing.T) *stepEnv {
	t.Helper()
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org := f.Org()
	c := f.Contact(org.ID, nil, func(c *models.Contact) { c.Name = "Ann" })
	policy := safehttp.Policy{AllowPrivate: true} // the tests' servers listen on loopback
	wh := webhooks.NewService(db, nil, nil, policy, nil, testenv.Quiet())
	ids := identity.NewService(db, nil, nil, testenv.Quiet())
	tm := teams.NewService(db, ids)
	ts := transfers.NewService(transfers.Deps{DB: db, Events: wh, Contacts: contacts.NewService(db, wh, nil, ids), People: ids, Teams: tm})
	s := NewService(Deps{DB: db, Policy: policy, Transfers: ts, Teams: tm, Log: testenv.Quiet()})
	return &stepEnv{s: s, db: db, org: org.ID, contact: c}
}

// session stores a session of the contact (no flow) with vars, ending the
// one before (a contact has one active session).
func (env *stepEnv) session(t *testing.T, vars map[string]any) *models.ChatbotSession {
	t.Helper()
	if err := env.db.Exec(`UPDATE chatbot_sessions SET ended_at = now() WHERE contact_id = ? AND ended_at IS NULL`, env.contact.ID).Error; err != nil {
		t.Fatal(err)
	}
	sess := &models.ChatbotSession{ID: uuid.New(), OrganizationID: env.org, ContactID: env.contact.ID, FlowName: "test",
		StartedAt: env.s.now(), LastActivity: env.s.now()}
	sess.Variables.V = map[string]any{}
	for k, v := range vars {
		sess.Variables.V[k] = v
	}
	sess.PanelConfig.V = map[string]any{}
	if err := env.db.Create(sess).Error; err != nil {
		t.Fatal(err)
	}
	return sess
}

// evaluation is the evaluation of an incoming message of type typ (text,
// interactive, flow) carrying content.
func (env *stepEnv) evaluation(typ string, content map[string]any) *evaluation {
	e := &evaluation{s: env.s, ctx: context.Background(), tx: env.db, orgID: env.org, contact: &env.contact,
		msg: &waiting{Type: typ}, settings: &models.ChatbotSettings{}}
	e.msg.Content.V = content
	str := func(k string) string { v, _ := content[k].(string); return v }
	switch typ {
	case "text":
		e.text = str("text")
	case "interactive":
		e.text, e.choiceID = str("title"), str("id")
	case "flow":
		e.text = str("body")
	}
	return e
}

// checkCase is a step given to validSteps: the error it gives (a part of
// its message; "" for none), and what the stored step must be.
type checkCase struct {
	name string
	step models.FlowStep
	err  string
	want func(t *testing.T, st models.FlowStep)
}

func runChecks(t *testing.T, env *stepEnv, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run("check/"+c.name, func(t *testing.T) {
			out, err := env.s.validSteps(context.Background(), env.org, []models.FlowStep{c.step})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want != nil {
				c.want(t, out[0])
			}
		})
	}
}

// enterCase is a step the walk reaches: where the walk goes and the
// replies it sends.
type enterCase struct {
	name    string
	step    models.FlowStep
	vars    map[string]any
	next    stepNext
	replies []messaging.Reply
	setup   func(t *testing.T, env *stepEnv)                              // before the step, optional
	want    func(t *testing.T, env *stepEnv, sess *models.ChatbotSession) // more to check, optional
}

func runEnters(t *testing.T, env *stepEnv, kind stepKind, cases []enterCase) {
	t.Helper()
	for _, c := range cases {
		t.Run("enter/"+c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t, env)
			}
			sess := env.session(t, c.vars)
			e := env.evaluation("text", map[string]any{"text": "hi"})
			next, err := kind.enter(e, sess, c.step)
			if err != nil {
				t.Fatal(err)
			}
			if next != c.next {
				t.Errorf("next %d, want %d", next, c.next)
			}
			wantReplies(t, e.replies, c.replies, sess)
			if c.want != nil {
				c.want(t, env, sess)
			}
		})
	}
}

// answerCase is the contact's message to a waiting step: the value kept
// (ok false: asked again, with the replies).
type answerCase struct {
	name    string
	step    models.FlowStep
	typ     string
	content map[string]any
	value   any
	ok      bool
	replies []messaging.Reply
	vars    map[string]any // the session's variables after (store_as's is the caller's)
}

func runAnswers(t *testing.T, env *stepEnv, kind stepKind, cases []answerCase) {
	t.Helper()
	for _, c := range cases {
		t.Run("answer/"+c.name, func(t *testing.T) {
			sess := env.session(t, nil)
			e := env.evaluation(c.typ, c.content)
			value, ok := kind.answer(e, sess, c.step)
			if ok != c.ok || !sameJSON(value, c.value) {
				t.Errorf("answer %v, %v; want %v, %v", value, ok, c.value, c.ok)
			}
			wantReplies(t, e.replies, c.replies, sess)
			want := c.vars
			if want == nil {
				want = map[string]any{}
			}
			if !sameJSON(sess.Variables.V, want) {
				t.Errorf("variables %v, want %v", sess.Variables.V, want)
			}
		})
	}
}

// wantReplies compares replies; a flow reply's token must be the session.
func wantReplies(t *testing.T, got, want []messaging.Reply, sess *models.ChatbotSession) {
	t.Helper()
	for i := range want {
		if want[i].Flow != nil {
			f := *want[i].Flow
			f.Token = sess.ID.String()
			want[i].Flow = &f
		}
	}
	if !sameJSON(got, want) {
		t.Errorf("replies\n%s\nwant\n%s", jsonOf(got), jsonOf(want))
	}
}

func buttons(titles ...string) []models.ChatButton {
	out := make([]models.ChatButton, len(titles))
	for i, s := range titles {
		out[i] = models.ChatButton{ID: "b" + s, Title: s}
	}
	return out
}

func replyButtons(titles ...string) []messaging.Button {
	out := make([]messaging.Button, len(titles))
	for i, s := range titles {
		out[i] = messaging.Button{ID: "b" + s, Title: s}
	}
	return out
}

// TestStepRegistry: every kind is registered once, looked up by its name,
// and named in the OpenAPI enum in the registry's order.
func TestStepRegistry(t *testing.T) {
	t.Parallel()
	seen := map[StepKind]bool{}
	for i, k := range StepKinds() {
		if seen[k] {
			t.Errorf("%s registered twice", k)
		}
		seen[k] = true
		if _, ok := lookupStep(k); !ok {
			t.Errorf("%s not found", k)
		}
		if StepKind("").Enum()[i] != string(k) {
			t.Errorf("enum %v, kinds %v", StepKind("").Enum(), StepKinds())
		}
	}
	if len(seen) != 5 {
		t.Errorf("kinds %v", StepKinds())
	}
	if _, ok := lookupStep("video"); ok {
		t.Error("an unknown kind was found")
	}
	if _, ok := stepOf(models.FlowStep{MessageType: "video"}).(textStep); !ok {
		t.Error("a stored step of an unknown kind is not walked as text")
	}
}

// The checks every step shares, whatever its kind.
func TestStepsSharedChecks(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	text := func(order int) models.FlowStep {
		return models.FlowStep{StepOrder: order, MessageType: "text", Message: "m"}
	}
	for _, c := range []struct {
		name  string
		steps []models.FlowStep
		err   string
	}{
		{"none", nil, "steps must have 1 to 50 steps"},
		{"too many", make([]models.FlowStep, 51), "steps must have 1 to 50 steps"},
		{"order twice", []models.FlowStep{text(1), text(1)}, "steps[1]: step_order 1 is used twice"},
		{"unknown kind", []models.FlowStep{{MessageType: "video", Message: "m"}},
			"steps[0]: message_type must be one of text, buttons, api_fetch, platform_flow, transfer"},
		{"unknown input", []models.FlowStep{{MessageType: "text", Message: "m", InputType: "number"}}, "steps[0]: input_type must be text, select or none"},
		{"long message", []models.FlowStep{{MessageType: "text", Message: strings.Repeat("x", maxText+1)}}, "steps[0]: message is longer than 4096 characters"},
		{"store_as", []models.FlowStep{{MessageType: "text", Message: "m", StoreAs: "1x"}}, "steps[0]: store_as must be a variable name"},
	} {
		_, err := env.s.validSteps(context.Background(), env.org, c.steps)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	out, err := env.s.validSteps(context.Background(), env.org, []models.FlowStep{text(3), {StepOrder: 1, MessageType: "text", Message: " m ",
		InputType: "none"}, text(2)})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].StepOrder != 1 || out[1].StepOrder != 2 || out[2].StepOrder != 3 || out[0].InputType != "" || out[0].Message != "m" {
		t.Errorf("steps %+v, want sorted, none as \"\", the message trimmed", out)
	}
}
