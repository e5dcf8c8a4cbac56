package contacts_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// A user's change of a contact's opt-out is recorded with the user and
// announced once; setting the state the contact is in changes nothing; a
// contact of another organization is not found. OptedOutAmong and
// MarketingOptedOut read the state by number; OptOutNumber creates the
// contact of an unknown number, opted out by the provider.
func TestMarketingOptOutState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	svc, _ := newService(t, f)
	org := f.Org()
	user := f.User(org, "Agent")
	c := f.Contact(org.ID, nil)
	w := models.Webhook{OrganizationID: org.ID, Name: "hook", URL: "http://127.0.0.1:1/hook", IsActive: true}
	w.Events.V, w.Headers.V = []string{"contact.opted_out", "contact.opted_in"}, map[string]string{}
	if err := f.DB.Create(&w).Error; err != nil {
		t.Fatal(err)
	}

	v, err := svc.SetOptOut(ctx, org.ID, c.ID, user.ID, true)
	if err != nil || !v.MarketingOptOut || v.OptedOutAt == nil || v.OptOutSource != models.OptOutUser || v.OptOutChangedBy == nil ||
		*v.OptOutChangedBy != user.ID {
		t.Fatalf("opted out: %+v, %v", v, err)
	}
	if _, err := svc.SetOptOut(ctx, org.ID, c.ID, user.ID, true); err != nil || f.Count("events", "event = 'contact.opted_out'") != 1 {
		t.Fatalf("a second opt-out: %v, %d events", err, f.Count("events", "event = 'contact.opted_out'"))
	}
	if f.Count("events", "event = 'contact.opted_out' AND data->>'source' = 'user' AND data->>'user_id' = ?", user.ID.String()) != 1 {
		t.Fatal("the event names the user")
	}
	out, err := svc.MarketingOptedOut(ctx, org.ID, c.PhoneNumber[1:])
	among, err2 := svc.OptedOutAmong(ctx, org.ID, []string{c.PhoneNumber, "+15550009876"})
	if err != nil || err2 != nil || !out || !among[c.PhoneNumber] || len(among) != 1 {
		t.Fatalf("read by number: %v %v (%v %v)", out, among, err, err2)
	}
	v, err = svc.SetOptOut(ctx, org.ID, c.ID, user.ID, false)
	if err != nil || v.MarketingOptOut || v.OptedOutAt != nil || f.Count("events", "event = 'contact.opted_in'") != 1 {
		t.Fatalf("opted in: %+v, %v", v, err)
	}
	_, err = svc.SetOptOut(ctx, f.Org().ID, c.ID, user.ID, true)
	testfactory.WantError(t, err, apperr.NotFound, "contact not found")
	_, err = svc.SetOptOut(ctx, org.ID, uuid.New(), user.ID, true)
	testfactory.WantError(t, err, apperr.NotFound, "contact not found")

	if err := svc.OptOutNumber(ctx, org.ID, "15550009876", nil); err != nil {
		t.Fatal(err)
	}
	if out, _ := svc.MarketingOptedOut(ctx, org.ID, "15550009876"); !out ||
		f.Count("contacts", "phone_number = '+15550009876' AND opt_out_source = 'provider' AND opt_out_changed_by IS NULL") != 1 {
		t.Fatal("OptOutNumber opts the new contact out, by the provider")
	}
}
