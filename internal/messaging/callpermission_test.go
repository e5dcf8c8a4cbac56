package messaging_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// A call permission request is one interactive call_permission_request
// message from the given account, stored like every send (without a
// sending user) and refused outside the service window, before the
// provider hears of it.
func TestSendCallPermissionRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	c := f.Contact(org.ID, nil)
	sends := func() []platformsim.Message {
		return p.Sim.Messages(platformsim.MessageFilter{To: phone.Digits(c.PhoneNumber)})
	}

	_, err := svc.SendCallPermissionRequest(ctx, org.ID, c.ID, acc.ID, "May we call you?")
	testfactory.WantError(t, err, apperr.Invalid, "outside the customer-service window")
	_, err = svc.SendCallPermissionRequest(ctx, org.ID, c.ID, acc.ID, "  ")
	testfactory.WantError(t, err, apperr.Invalid, "text is required")
	_, err = svc.SendCallPermissionRequest(ctx, org.ID, uuid.New(), acc.ID, "May we call you?")
	testfactory.WantError(t, err, apperr.NotFound, "")
	if len(sends()) != 0 || f.Count("messages", "") != 0 {
		t.Fatal("a refused request reached the provider or was stored")
	}

	wrote(t, f, c, time.Hour)
	// Another organization's account is not found.
	other := f.Org()
	_, err = svc.SendCallPermissionRequest(ctx, org.ID, c.ID, f.Account(other.ID).ID, "May we call you?")
	testfactory.WantError(t, err, apperr.NotFound, "account not found")

	id, err := svc.SendCallPermissionRequest(ctx, org.ID, c.ID, acc.ID, "May we call you?")
	if err != nil {
		t.Fatal(err)
	}
	got := sends()
	if len(got) != 1 || got[0].Type != "interactive" || got[0].PhoneNumberID != acc.PhoneNumberID || got[0].BizOpaqueCallbackData != id.String() {
		t.Fatalf("sent %+v", got)
	}
	var body struct {
		Interactive struct {
			Type string `json:"type"`
			Body struct {
				Text string `json:"text"`
			} `json:"body"`
			Action struct {
				Name string `json:"name"`
			} `json:"action"`
		} `json:"interactive"`
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Interactive.Type != "call_permission_request" || body.Interactive.Body.Text != "May we call you?" ||
		body.Interactive.Action.Name != "call_permission_request" {
		t.Fatalf("interactive %+v", body.Interactive)
	}
	m := reload(t, f.DB, id)
	if m.Type != "interactive" || m.Content.V["type"] != "call_permission_request" || m.Content.V["body"] != "May we call you?" ||
		m.SentBy != nil || m.AccountID == nil || *m.AccountID != acc.ID || m.Status != models.StatusSent || m.PlatformMessageID == nil {
		t.Fatalf("stored %+v", m)
	}
}
