package templates_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// What a send may use: an APPROVED template of the sending account, filled
// with a value for every placeholder.
func TestSendable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		org     *testfactory.Org
		account models.PlatformAccount
	}
	setup := func(t *testing.T) (*templates.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		org := f.Org()
		return newService(t, f, p), &testBundle{f: f, org: org, account: f.Account(org.ID)}
	}

	t.Run("OnlyAnApprovedTemplateOfTheAccount", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		approved := bundle.f.Template(bundle.account, "Hello")
		pending := bundle.f.Template(bundle.account, "Hello", func(t *models.Template) { t.Status = models.TemplatePending })
		otherAccount := bundle.f.Account(bundle.org.ID)
		theirs := bundle.f.Template(bundle.f.Account(bundle.f.Org().ID), "Hello")

		if got, err := svc.Sendable(ctx, bundle.org.ID, &bundle.account.ID, &approved.ID, ""); err != nil || got.ID != approved.ID {
			t.Fatalf("approved template: %v, %v", got, err)
		}
		if got, err := svc.Sendable(ctx, bundle.org.ID, nil, &approved.ID, ""); err != nil || got.ID != approved.ID {
			t.Fatalf("by id without an account: %v, %v", got, err)
		}
		_, err := svc.Sendable(ctx, bundle.org.ID, &bundle.account.ID, &pending.ID, "")
		testfactory.WantError(t, err, apperr.Invalid, "is PENDING: only APPROVED templates can be sent")
		_, err = svc.Sendable(ctx, bundle.org.ID, &otherAccount.ID, &approved.ID, "")
		testfactory.WantError(t, err, apperr.Invalid, "belongs to another account")
		_, err = svc.Sendable(ctx, bundle.org.ID, &bundle.account.ID, &theirs.ID, "")
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
		_, err = svc.Sendable(ctx, bundle.org.ID, &bundle.account.ID, ptr(uuid.New()), "")
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
		_, err = svc.Sendable(ctx, bundle.org.ID, nil, nil, approved.Name)
		testfactory.WantError(t, err, apperr.Invalid, "template_name or template_id is required")
	})

	t.Run("ByNameTheApprovedVersionWins", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		named := func(status, language string) models.Template {
			return bundle.f.Template(bundle.account, "Hi", func(t *models.Template) { t.Name, t.Status, t.Language = "promo", status, language })
		}
		named(models.TemplateRejected, "fr")
		approved := named(models.TemplateApproved, "en")
		named(models.TemplatePending, "de")
		got, err := svc.Sendable(ctx, bundle.org.ID, &bundle.account.ID, nil, " promo ")
		if err != nil || got.ID != approved.ID {
			t.Fatalf("by name: %v, %v; want the approved one", got, err)
		}
		_, err = svc.Sendable(ctx, bundle.f.Org().ID, &bundle.account.ID, nil, "promo")
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
	})

	t.Run("BuildNeedsAValueForEveryPlaceholder", func(t *testing.T) {
		t.Parallel()
		_, bundle := setup(t)
		tmpl := bundle.f.Template(bundle.account, "Hi {{1}}, order {{2}}", func(t *models.Template) {
			t.Components.V = append([]map[string]any{{"type": "HEADER", "format": "IMAGE"}}, t.Components.V...)
			t.Components.V = append(t.Components.V, map[string]any{"type": "BUTTONS", "buttons": []any{
				map[string]any{"type": "QUICK_REPLY", "text": "Stop"},
				map[string]any{"type": "URL", "text": "Track", "url": "https://x.test/track/{{1}}"}}})
		})
		if got := templates.Keys(templates.Slots(&tmpl)); strings.Join(got, ",") != "header_media_url,1,2,button_1" {
			t.Fatalf("slots %v", got)
		}
		_, err := templates.Build(&tmpl, map[string]string{"1": "Ada", "2": " "})
		testfactory.WantError(t, err, apperr.Invalid, "missing template parameters: header_media_url, 2, button_1")
		built, err := templates.Build(&tmpl, map[string]string{"1": "Ada", "2": "A-1", "header_media_url": "https://x.test/a.png", "button_1": "A-1"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(built)
		for _, want := range []string{`"type":"header"`, `"image":{"link":"https://x.test/a.png"}`, `"text":"Ada"`, `"sub_type":"url","index":"1"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("built %s: missing %s", b, want)
			}
		}
		if d := templates.Describe(&tmpl, map[string]string{"1": "Ada", "2": "A-1"}); d != "Hi Ada, order A-1" {
			t.Errorf("described as %q", d)
		}
	})

	t.Run("ADocumentHeaderCarriesItsFileName", func(t *testing.T) {
		t.Parallel()
		_, bundle := setup(t)
		tmpl := bundle.f.Template(bundle.account, "Your invoice", func(t *models.Template) {
			t.Components.V = append([]map[string]any{{"type": "HEADER", "format": "DOCUMENT"}}, t.Components.V...)
		})
		built, err := templates.Build(&tmpl, map[string]string{"header_media_url": "https://x.test/f/inv.pdf", "header_media_filename": "INV-7.pdf"})
		b, _ := json.Marshal(built)
		if err != nil || !strings.Contains(string(b), `"document":{"link":"https://x.test/f/inv.pdf","filename":"INV-7.pdf"}`) {
			t.Errorf("built %s, %v", b, err)
		}
		// The file name is optional: not a slot, the send is complete without it.
		if _, err := templates.Build(&tmpl, map[string]string{"header_media_url": "https://x.test/f/inv.pdf"}); err != nil {
			t.Errorf("without a file name: %v", err)
		}
	})

	t.Run("NamedTemplatesTakeTheirParametersByName", func(t *testing.T) {
		t.Parallel()
		_, bundle := setup(t)
		tmpl := bundle.f.Template(bundle.account, "Hi {{first_name}}", func(t *models.Template) { t.ParameterFormat = "named" })
		_, err := templates.Build(&tmpl, map[string]string{"1": "Ada"})
		testfactory.WantError(t, err, apperr.Invalid, "missing template parameters: first_name")
		built, err := templates.Build(&tmpl, map[string]string{"first_name": "Ada"})
		b, _ := json.Marshal(built)
		if err != nil || !strings.Contains(string(b), `"parameter_name":"first_name"`) {
			t.Errorf("built %s, %v", b, err)
		}
	})
}
