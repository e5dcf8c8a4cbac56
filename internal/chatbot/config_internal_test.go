package chatbot

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// Every change of an organization's settings, rules or flows gives it a new
// configuration version (migration 00030's triggers), and configAt loads
// again exactly when the version differs: the same version answers the
// same configuration from memory.
func TestConfigVersionChangesWithEveryChange(t *testing.T) {
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org, other := f.Org().ID, f.Org().ID
	s := NewService(Deps{DB: db, Policy: safehttp.Policy{AllowPrivate: true}, Log: testenv.Quiet()})
	ctx := context.Background()
	version := func(org uuid.UUID) int64 {
		t.Helper()
		var v int64
		if err := db.Raw(`SELECT chatbot_version FROM organizations WHERE id = ?`, org).Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	last := version(org)
	otherVersion := version(other)
	changed := func(what string) *config {
		t.Helper()
		v := version(org)
		if v == last {
			t.Fatalf("%s did not change the version (%d)", what, v)
		}
		last = v
		cf, err := s.configAt(ctx, db, org, v)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := s.configAt(ctx, db, org, v); again != cf {
			t.Fatalf("%s: the same version was loaded twice", what)
		}
		return cf
	}
	str := func(v string) *string { return &v }
	on := true
	if _, err := s.UpdateSettings(ctx, org, SettingsInput{ChatbotEnabled: &on, FallbackMessage: str("one")}); err != nil {
		t.Fatal(err)
	}
	if cf := changed("saving the settings"); cf.settings.FallbackMessage != "one" || !cf.settings.ChatbotEnabled {
		t.Fatalf("settings %+v", cf.settings)
	}
	r, err := s.CreateRule(ctx, org, RuleInput{Name: str("hi"), Keywords: &[]string{"hi"}, MatchType: str("exact"), Response: str("Hello.")})
	if err != nil {
		t.Fatal(err)
	}
	if cf := changed("a new rule"); len(cf.rules) != 1 || cf.rules[0].Response != "Hello." {
		t.Fatalf("rules %+v", cf.rules)
	}
	off := false
	if _, err := s.UpdateRule(ctx, org, r.ID, RuleInput{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	if cf := changed("disabling the rule"); len(cf.rules) != 0 {
		t.Fatalf("a disabled rule is matched: %+v", cf.rules)
	}
	fl, err := s.CreateFlow(ctx, org, FlowInput{Name: str("Menu"), TriggerKeywords: &[]string{"menu"},
		Steps: &[]models.FlowStep{{StepOrder: 1, MessageType: "text", Message: "Pick one."}}})
	if err != nil {
		t.Fatal(err)
	}
	if cf := changed("a new flow"); len(cf.triggers) != 1 || cf.flows[fl.ID] == nil {
		t.Fatalf("flows %+v", cf.flows)
	}
	if _, err := s.UpdateFlow(ctx, org, fl.ID, FlowInput{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	// A disabled flow triggers nothing, but a session in it continues.
	if cf := changed("disabling the flow"); len(cf.triggers) != 0 || cf.flows[fl.ID] == nil {
		t.Fatalf("flows %+v, triggers %+v", cf.flows, cf.triggers)
	}
	if err := s.DeleteFlow(ctx, org, fl.ID); err != nil {
		t.Fatal(err)
	}
	if cf := changed("deleting the flow"); len(cf.flows) != 0 {
		t.Fatalf("flows %+v", cf.flows)
	}
	if err := s.DeleteRule(ctx, org, r.ID); err != nil {
		t.Fatal(err)
	}
	changed("deleting the rule")
	if err := db.Exec(`UPDATE chatbot_settings SET greeting_message = 'hey' WHERE organization_id = ?`, org).Error; err != nil {
		t.Fatal(err)
	}
	if cf := changed("a change straight in the database"); cf.settings.GreetingMessage != "hey" {
		t.Fatalf("settings %+v", cf.settings)
	}
	if v := version(other); v != otherVersion {
		t.Fatalf("another organization's version moved: %d, was %d", v, otherVersion)
	}
	// Deleting an organization takes its configuration along (the trigger
	// finds no organization to bump).
	if err := db.Transaction(func(tx *gorm.DB) error {
		return tx.Exec(`DELETE FROM organizations WHERE id = ?`, org).Error
	}); err != nil {
		t.Fatal(err)
	}
}
