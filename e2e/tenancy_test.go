package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
)

// Every messaging resource of organization A is a 404 to organization B.
func TestTenantIsolationOfMessagingResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()

	// Organization B with its own admin.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, a).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, a).Expect(t, 200).Into(t, &inB)
	b := f.CreateUser(inB.Auth(), "b-admin@x.com", "Admin")

	var contact, webhook struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550180000", "name": "A's contact"}, a).Expect(t, 201).Into(t, &contact)
	f.Do("POST", "/api/webhooks", map[string]any{"name": "A", "url": "https://a.example.com", "events": []string{"contact.created"}}, a).
		Expect(t, 201).Into(t, &webhook)
	f.Do("POST", "/api/tags", map[string]any{"name": "a-only"}, a).Expect(t, 201)
	tmpl := f.SeedTemplate(f.orgID, f.accountID, "a_template", "Hello {{1}}", false)
	var campaign struct{ ID string }
	f.Do("POST", "/api/campaigns", map[string]any{"name": "A", "account_id": f.accountID, "template_id": tmpl.ID,
		"variable_mapping": map[string]string{"1": "name"}}, a).Expect(t, 201).Into(t, &campaign)
	msg := models.Message{ID: uuid.New(), OrganizationID: uuid.MustParse(f.orgID), ContactID: uuid.MustParse(contact.ID),
		Direction: "incoming", Type: "text", Status: "delivered", OccurredAt: time.Now()}
	wamid := "wamid.a"
	msg.PlatformMessageID = &wamid
	msg.Content.V = map[string]any{"text": "secret"}
	if err := f.DB.Create(&msg).Error; err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/accounts/" + f.accountID},
		{"PUT", "/api/accounts/" + f.accountID},
		{"DELETE", "/api/accounts/" + f.accountID},
		{"POST", "/api/accounts/" + f.accountID + "/test"},
		{"POST", "/api/accounts/" + f.accountID + "/register"},
		{"GET", "/api/contacts/" + contact.ID},
		{"PUT", "/api/contacts/" + contact.ID},
		{"DELETE", "/api/contacts/" + contact.ID},
		{"PUT", "/api/contacts/" + contact.ID + "/assign"},
		{"PUT", "/api/contacts/" + contact.ID + "/tags"},
		{"GET", "/api/contacts/" + contact.ID + "/session-data"},
		{"GET", "/api/contacts/" + contact.ID + "/messages"},
		{"POST", "/api/contacts/" + contact.ID + "/messages"},
		{"PUT", "/api/messages/" + msg.ID.String() + "/read"},
		{"GET", "/api/webhooks/" + webhook.ID},
		{"PUT", "/api/webhooks/" + webhook.ID},
		{"DELETE", "/api/webhooks/" + webhook.ID},
		{"POST", "/api/webhooks/" + webhook.ID + "/test"},
		{"GET", "/api/webhooks/" + webhook.ID + "/deliveries"},
		{"PUT", "/api/tags/a-only"},
		{"DELETE", "/api/tags/a-only"},
		{"GET", "/api/templates/" + tmpl.ID.String()},
		{"PUT", "/api/templates/" + tmpl.ID.String()},
		{"DELETE", "/api/templates/" + tmpl.ID.String()},
		{"POST", "/api/templates/" + tmpl.ID.String() + "/publish"},
		{"GET", "/api/campaigns/" + campaign.ID},
		{"PUT", "/api/campaigns/" + campaign.ID},
		{"DELETE", "/api/campaigns/" + campaign.ID},
		{"POST", "/api/campaigns/" + campaign.ID + "/recipients/import"},
		{"GET", "/api/campaigns/" + campaign.ID + "/recipients"},
		{"POST", "/api/campaigns/" + campaign.ID + "/start"},
		{"POST", "/api/campaigns/" + campaign.ID + "/resume"},
		{"POST", "/api/campaigns/" + campaign.ID + "/pause"},
		{"POST", "/api/campaigns/" + campaign.ID + "/cancel"},
		{"POST", "/api/campaigns/" + campaign.ID + "/resend-unknown"},
		{"GET", "/api/campaigns/" + campaign.ID + "/progress"},
		{"GET", "/api/campaigns/" + campaign.ID + "/progress/stream"},
	} {
		body := map[string]any{"tags": []string{"x"}, "type": "text", "text": "hi", "user_id": nil, "name": "x",
			"recipients": []map[string]any{{"phone_number": "+15550001111"}}, "components": []any{map[string]any{"type": "BODY", "text": "x"}}}
		if r := f.Do(c.method, c.path, body, b.Auth()); r.Status != 404 {
			t.Errorf("B: %s %s = %d, want 404: %s", c.method, c.path, r.Status, r.Body)
		}
	}
	// A template send naming A's contact is a 404 too, and lists are empty.
	f.Do("POST", "/api/messages/template", map[string]any{"contact_id": contact.ID, "template_name": "x"}, b.Auth()).Expect(t, 404)
	// So is a media send, and the contact is checked before the link is:
	// no request reaches the media server on B's behalf.
	var mediaHits atomic.Int64
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mediaHits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", "2048")
	}))
	defer media.Close()
	f.Do("POST", "/api/messages/media", map[string]any{"contact_id": contact.ID, "type": "image", "media_url": media.URL + "/a.png"}, b.Auth()).
		Expect(t, 404)
	if n := mediaHits.Load(); n != 0 {
		t.Errorf("the media link was requested %d times for a send naming another organization's contact", n)
	}
	// A's template id and account cannot be used by B either.
	f.Do("POST", "/api/campaigns", map[string]any{"name": "B", "account_id": f.accountID, "template_id": tmpl.ID}, b.Auth()).Expect(t, 400)
	f.Do("POST", "/api/templates/sync", map[string]any{"account_id": f.accountID}, b.Auth()).Expect(t, 404)
	for _, path := range []string{"/api/accounts", "/api/contacts", "/api/webhooks", "/api/templates", "/api/campaigns"} {
		var out struct {
			Items []any `json:"items"`
		}
		f.Do("GET", path, nil, b.Auth()).Expect(t, 200).Into(t, &out)
		if len(out.Items) != 0 {
			t.Errorf("B lists %d items of A at %s", len(out.Items), path)
		}
	}
	var tags struct {
		Tags []any `json:"tags"`
	}
	f.Do("GET", "/api/tags", nil, b.Auth()).Expect(t, 200).Into(t, &tags)
	if len(tags.Tags) != 0 {
		t.Error("B lists A's tags")
	}
	// B can use the same phone number and tag name without conflict.
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550180000"}, b.Auth()).Expect(t, 201)
	f.Do("POST", "/api/tags", map[string]any{"name": "a-only"}, b.Auth()).Expect(t, 201)
	// Everything of A is intact.
	f.Do("GET", "/api/contacts/"+contact.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/webhooks/"+webhook.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/accounts/"+f.accountID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/campaigns/"+campaign.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/templates/"+tmpl.ID.String(), nil, a).Expect(t, 200)
}
