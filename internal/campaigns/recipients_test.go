package campaigns_test

import (
	"context"
	"fmt"
	"testing"

	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// Imports add each valid number once, in E.164, to a draft campaign, and
// explain every refused row.
func TestImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		org      *testfactory.Org
		template models.Template
	}
	setup := func(t *testing.T) (*campaigns.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f, f.Provider(nil))
		org := f.Org()
		return svc, &testBundle{f: f, org: org, template: f.Template(f.Account(org.ID), "Hi {{1}}")}
	}

	t.Run("NumbersAreNormalizedAndCountedOnce", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c, _ := bundle.f.Campaign(bundle.template, 1) // +15550300000
		res, err := svc.Import(ctx, bundle.org.ID, c.ID, []campaigns.RecipientInput{
			{"phone_number": "+1 555 010 7000", "name": " Ada ", "order_id": "A-1", "vip": true},
			{"phone_number": "15550107000", "name": "again"},
			{"phone_number": "+1 555 030 0000"},
			{"phone_number": "nope"},
			{"name": "no number"},
			{"phone_number": "+44 20 7946 0958"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Imported != 2 || res.Duplicates != 2 || res.Invalid != 2 || len(res.InvalidRows) != 2 ||
			res.InvalidRows[0] != (campaigns.InvalidRow{Index: 3, PhoneNumber: "nope", Reason: "not a valid phone number in international format"}) ||
			res.InvalidRows[1] != (campaigns.InvalidRow{Index: 4, Reason: "phone_number is missing"}) {
			t.Fatalf("import %+v", res)
		}
		recs, total, err := svc.Recipients(ctx, bundle.org.ID, c.ID, "", paging.Params{Page: 1, Limit: 10})
		if err != nil || total != 3 || recs[1].PhoneNumber != "+15550107000" || recs[1].Name != "Ada" ||
			recs[1].Data.V["order_id"] != "A-1" || recs[1].Data.V["vip"] != true || recs[1].Data.V["name"] != nil {
			t.Fatalf("recipients %+v, %v: want them in import order, extra fields kept as data", recs, err)
		}
		if got := load(t, bundle.f, c.ID); got.TotalRecipients != 3 || got.PendingCount != 3 {
			t.Errorf("counters %d total, %d pending; want 3 and 3", got.TotalRecipients, got.PendingCount)
		}
	})

	t.Run("OnlyANonEmptyListIntoADraft", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c, _ := bundle.f.Campaign(bundle.template, 0)
		_, err := svc.Import(ctx, bundle.org.ID, c.ID, nil)
		testfactory.WantError(t, err, apperr.Invalid, "recipients must be a non-empty array")
		big := make([]campaigns.RecipientInput, campaigns.MaxImport+1)
		_, err = svc.Import(ctx, bundle.org.ID, c.ID, big)
		testfactory.WantError(t, err, apperr.Invalid, "at most 100000 recipients per import")
		wide := campaigns.RecipientInput{"phone_number": "+15550107001"}
		for i := len(wide); i <= campaigns.MaxRecipientFields; i++ {
			wide[fmt.Sprintf("f%d", i)] = i
		}
		_, err = svc.Import(ctx, bundle.org.ID, c.ID, []campaigns.RecipientInput{{"phone_number": "+15550107000"}, wide})
		testfactory.WantError(t, err, apperr.Invalid, "recipients[1] has more than 200 fields: a recipient may have at most 200")
		for _, status := range []models.CampaignStatus{models.CampaignScheduled, models.CampaignPaused, models.CampaignCompleted, models.CampaignCancelled} {
			bundle.f.DB.Model(&models.Campaign{}).Where("id = ?", c.ID).Update("status", status)
			_, err = svc.Import(ctx, bundle.org.ID, c.ID, []campaigns.RecipientInput{{"phone_number": "+15550107000"}})
			testfactory.WantError(t, err, apperr.Conflict, "recipients can only be imported into a draft campaign; this one is "+string(status))
		}
		if n := bundle.f.Count("campaign_recipients", ""); n != 0 {
			t.Errorf("%d recipients stored by refused imports", n)
		}
	})
}
