package templates_test

import (
	"context"
	"encoding/json"
	"testing"

	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/inbound"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
)

// The provider's review outcomes reach the account's template, and only it.
func TestReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		account models.PlatformAccount
	}
	setup := func(t *testing.T) (*templates.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		return newService(t, f, f.Provider(nil)), &testBundle{f: f, account: f.Account(f.Org().ID)}
	}
	review := func(t *testing.T, svc *templates.Service, bundle *testBundle, acc models.PlatformAccount, v platform.TemplateStatusValue) {
		t.Helper()
		payload, _ := json.Marshal(v)
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			_, err := svc.ConsumeEvent(ctx, tx, &inbound.Event{Type: inbound.EventTemplateStatus,
				Account: &accounts.Account{PlatformAccount: acc}, Payload: payload})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	status := func(t *testing.T, bundle *testBundle, tmpl models.Template) (string, string) {
		t.Helper()
		var got models.Template
		bundle.f.DB.Take(&got, "id = ?", tmpl.ID)
		return got.Status, got.RejectedReason
	}

	t.Run("AReviewSetsStatusAndReasonByProviderIDOrNameAndLanguage", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		byID := bundle.f.Template(bundle.account, "a", func(t *models.Template) { t.Status = models.TemplatePending })
		byName := bundle.f.Template(bundle.account, "b", func(t *models.Template) { t.Status, t.ProviderTemplateID = models.TemplatePending, "" })
		review(t, svc, bundle, bundle.account, platform.TemplateStatusValue{Event: "REJECTED", MessageTemplateID: json.Number(byID.ProviderTemplateID),
			MessageTemplateName: "renamed_meanwhile", MessageTemplateLanguage: "en_US", Reason: "INVALID_FORMAT"})
		if st, reason := status(t, bundle, byID); st != "REJECTED" || reason != "INVALID_FORMAT" {
			t.Errorf("by id: %s %q", st, reason)
		}
		review(t, svc, bundle, bundle.account, platform.TemplateStatusValue{Event: "APPROVED", MessageTemplateID: "1",
			MessageTemplateName: byName.Name, MessageTemplateLanguage: byName.Language, Reason: "NONE"})
		if st, reason := status(t, bundle, byName); st != "APPROVED" || reason != "" {
			t.Errorf("by name: %s %q; want APPROVED without the reason NONE", st, reason)
		}
	})

	t.Run("AnotherAccountsTemplateOfTheSameNameIsUntouched", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs := bundle.f.Template(bundle.f.Account(bundle.f.Org().ID), "a", func(t *models.Template) { t.Status = models.TemplatePending })
		review(t, svc, bundle, bundle.account, platform.TemplateStatusValue{Event: "APPROVED", MessageTemplateID: json.Number(theirs.ProviderTemplateID),
			MessageTemplateName: theirs.Name, MessageTemplateLanguage: theirs.Language, Reason: "NONE"})
		if st, _ := status(t, bundle, theirs); st != models.TemplatePending {
			t.Errorf("another account's template became %s", st)
		}
	})
}
