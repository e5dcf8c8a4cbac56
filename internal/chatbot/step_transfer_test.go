package chatbot

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/messaging"
	"wharf/internal/testfactory"
	"wharf/models"
)

func TestTransferStep(t *testing.T) {
	t.Parallel()
	env := newStepEnv(t)
	team := models.Team{ID: uuid.New(), OrganizationID: env.org, Name: "Sales", AssignmentStrategy: "manual", IsActive: true}
	other := models.Team{ID: uuid.New(), OrganizationID: testfactory.New(t, env.db).Org().ID, Name: "Theirs", AssignmentStrategy: "manual",
		IsActive: true}
	for _, tm := range []*models.Team{&team, &other} {
		if err := env.db.Create(tm).Error; err != nil {
			t.Fatal(err)
		}
	}
	step := func(msg string, cfg *models.TransferConfig) models.FlowStep {
		return models.FlowStep{StepOrder: 1, MessageType: "transfer", Message: msg, TransferConfig: cfg}
	}
	runChecks(t, env, []checkCase{
		{name: "a team of another organization", step: step("", &models.TransferConfig{TeamID: &other.ID}),
			err: "steps[0]: transfer_config.team_id is not a team of this organization"},
		{name: "a team of the organization", step: step("", &models.TransferConfig{TeamID: &team.ID, Notes: "n"}),
			want: func(t *testing.T, st models.FlowStep) {
				if st.TransferConfig == nil || *st.TransferConfig.TeamID != team.ID || st.TransferConfig.Notes != "n" {
					t.Errorf("%+v", st.TransferConfig)
				}
			}},
		{name: "waits for nothing, config given", step: models.FlowStep{MessageType: "transfer", InputType: "text"},
			want: func(t *testing.T, st models.FlowStep) {
				if st.InputType != "" || st.TransferConfig == nil {
					t.Errorf("%+v", st)
				}
			}},
	})
	fresh := func(t *testing.T, env *stepEnv) {
		env.contact = testfactory.New(t, env.db).Contact(env.org, nil, func(c *models.Contact) {
			c.Name, c.PhoneNumber = "Ann", fmt.Sprintf("+1555%07d", time.Now().UnixNano()%1e7)
		})
	}
	transferred := func(team *uuid.UUID, notes string) func(*testing.T, *stepEnv, *models.ChatbotSession) {
		return func(t *testing.T, env *stepEnv, sess *models.ChatbotSession) {
			var tr models.AgentTransfer
			if err := env.db.Take(&tr, "contact_id = ?", env.contact.ID).Error; err != nil {
				t.Fatal(err)
			}
			if tr.Status != models.TransferActive || tr.Source != "flow" || tr.Notes != notes || (team == nil) != (tr.TeamID == nil) ||
				(team != nil && *tr.TeamID != *team) {
				t.Errorf("transfer %+v", tr)
			}
			var stored models.ChatbotSession
			if err := env.db.Take(&stored, "id = ?", sess.ID).Error; err != nil {
				t.Fatal(err)
			}
			if stored.EndedAt == nil || stored.EndReason != "transfer" {
				t.Errorf("session ended %v (%q)", stored.EndedAt, stored.EndReason)
			}
		}
	}
	runEnters(t, env, transferStep{}, []enterCase{
		{name: "the general queue, the default message", setup: fresh, step: step("", nil), next: stepEnded,
			replies: []messaging.Reply{{Text: "Thank you. An agent will be with you shortly."}}, want: transferred(nil, "")},
		{name: "a team, notes and message filled", setup: fresh, vars: map[string]any{"topic": "billing"},
			step: step("{{contact_name}}, Sales will answer", &models.TransferConfig{TeamID: &team.ID, Notes: "about {{topic}}"}),
			next: stepEnded, replies: []messaging.Reply{{Text: "Ann, Sales will answer"}}, want: transferred(&team.ID, "about billing")},
	})
	runAnswers(t, env, transferStep{}, []answerCase{
		{name: "a session saved at a transfer takes the text", step: step("", nil), typ: "text", content: map[string]any{"text": "x"},
			value: "x", ok: true},
	})
}
