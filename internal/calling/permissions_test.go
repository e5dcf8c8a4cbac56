package calling_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// A permission request is one interactive call_permission_request message
// through the named account, with a text naming the organization; the
// status is the provider's, read on every request.
func TestCallPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, calling.Config{}, nil)
	c := b.f.Contact(b.org.ID, nil)
	if err := b.f.DB.Model(&models.Contact{}).Where("id = ?", c.ID).Update("last_inbound_at", time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	to := phone.Digits(c.PhoneNumber)
	sent := func() []platformsim.Message { return b.provider.Sim.Messages(platformsim.MessageFilter{To: to}) }
	theirs := b.f.Contact(b.f.Org().ID, nil)

	for _, bad := range []struct {
		contact uuid.UUID
		account string
		kind    apperr.Kind
		msg     string
	}{
		{c.ID, " ", apperr.Invalid, "platform_account is required"},
		{c.ID, "Nope", apperr.Invalid, `no account named "Nope"`},
		{theirs.ID, b.account.Name, apperr.NotFound, "contact not found"},
	} {
		_, err := s.RequestPermission(ctx, b.org.ID, bad.contact, bad.account)
		testfactory.WantError(t, err, bad.kind, bad.msg)
		_, _, err = s.PermissionStatus(ctx, b.org.ID, bad.contact, bad.account)
		testfactory.WantError(t, err, bad.kind, bad.msg)
	}
	if len(sent()) != 0 {
		t.Fatal("a refused request was sent")
	}

	id, err := s.RequestPermission(ctx, b.org.ID, c.ID, b.account.Name)
	if err != nil {
		t.Fatal(err)
	}
	got := sent()
	if len(got) != 1 || got[0].BizOpaqueCallbackData != id.String() {
		t.Fatalf("sent %+v; want one message, id %s", got, id)
	}
	var body struct {
		Interactive struct {
			Type string `json:"type"`
			Body struct {
				Text string `json:"text"`
			} `json:"body"`
		} `json:"interactive"`
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil || body.Interactive.Type != "call_permission_request" ||
		body.Interactive.Body.Text != b.org.Name+" would like to call you on this number. Do you allow calls from us?" {
		t.Fatalf("body %s, %v", got[0].Body, err)
	}

	// The status follows the provider on every read.
	status, exp, err := s.PermissionStatus(ctx, b.org.ID, c.ID, b.account.Name)
	if err != nil || status != calling.PermissionNone || exp != nil {
		t.Fatalf("before any grant: %q %v %v", status, exp, err)
	}
	for _, st := range []string{platformsim.PermissionTemporary, platformsim.PermissionPermanent, platformsim.PermissionNone} {
		if err := b.provider.Sim.SetCallPermission(b.provider.PhoneNumberID(), to, st); err != nil {
			t.Fatal(err)
		}
		status, exp, err := s.PermissionStatus(ctx, b.org.ID, c.ID, b.account.Name)
		if err != nil || status != st {
			t.Fatalf("%s: got %q, %v", st, status, err)
		}
		if (st == platformsim.PermissionTemporary) != (exp != nil) {
			t.Errorf("%s: expiry %v", st, exp)
		}
		if exp != nil && (exp.Before(time.Now().Add(6*24*time.Hour)) || exp.Location() != time.UTC) {
			t.Errorf("temporary permission expires %v", exp)
		}
	}

	// The provider's refusal and its trouble.
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "GET", Path: "/call_permissions", Code: 100, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.PermissionStatus(ctx, b.org.ID, c.ID, b.account.Name)
	testfactory.WantError(t, err, apperr.Invalid, "the provider refused reading the call permission")
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "GET", Path: "/call_permissions", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.PermissionStatus(ctx, b.org.ID, c.ID, b.account.Name)
	testfactory.WantError(t, err, apperr.Upstream, "the provider failed while reading the call permission")
}
