package e2e_test

import (
	"maps"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/models"
)

// An outbound webhook's custom headers are write-only: the Manager
// (webhooks:read, no webhooks:update) and the Admin read them masked; the
// Admin's round trip keeps them (the delivery carries the original
// Authorization), a new value replaces one, and a mask never follows the
// webhook to another URL.
func TestWebhookHeadersAreWriteOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	rcv := apptest.NewReceiver(t)
	other := apptest.NewReceiver(t)
	admin := f.admin.Auth()
	manager := f.CreateUser(admin, "hooks-manager@example.test", "Manager").Auth()
	const mask = "********"
	var w webhookOut
	f.Do("POST", "/api/webhooks", map[string]any{"name": "CRM", "url": rcv.URL + "/in?token=T-42", "events": []string{"message.incoming"},
		"headers": map[string]string{"Authorization": "Bearer hook-secret", "X-Tenant": "tenant-9"}}, admin).Expect(t, 201).Into(t, &w)
	want := map[string]string{"Authorization": mask, "X-Tenant": mask}
	if !maps.Equal(w.Headers, want) || w.URL != rcv.URL+"/in?token="+mask {
		t.Fatalf("created %+v", w)
	}
	for _, who := range []apptest.Auth{manager, admin} {
		for _, path := range []string{"/api/webhooks", "/api/webhooks/" + w.ID} {
			r := f.Do("GET", path, nil, who).Expect(t, 200)
			for _, s := range []string{"hook-secret", "tenant-9", "T-42"} {
				if strings.Contains(string(r.Body), s) {
					t.Errorf("GET %s shows %q: %s", path, s, r.Body)
				}
			}
		}
	}

	f.Do("PUT", "/api/webhooks/"+w.ID, map[string]any{"name": "CRM 2", "url": w.URL, "headers": w.Headers}, admin).Expect(t, 200)
	f.Do("POST", "/api/webhooks/"+w.ID+"/test", nil, admin).Expect(t, 200)
	got := rcv.Got()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer hook-secret" || got[0].Header.Get("X-Tenant") != "tenant-9" {
		t.Fatalf("after the round trip the delivery carried %v", got)
	}

	stored := func() models.Webhook {
		var row models.Webhook
		if err := f.DB.Take(&row, "id = ?", w.ID).Error; err != nil {
			t.Fatal(err)
		}
		return row
	}
	f.Do("PUT", "/api/webhooks/"+w.ID, map[string]any{"headers": map[string]string{"Authorization": "Bearer rotated"}}, admin).Expect(t, 200)
	if row := stored(); !maps.Equal(row.Headers.V, map[string]string{"Authorization": "Bearer rotated"}) || row.URL != rcv.URL+"/in?token=T-42" {
		t.Fatalf("after the change %+v", row)
	}
	before := stored()
	r := f.Do("PUT", "/api/webhooks/"+w.ID, map[string]any{"url": other.URL, "headers": map[string]string{"Authorization": mask}}, admin).Expect(t, 400)
	if !strings.HasPrefix(r.Message, "headers.Authorization: a masked value (********) is kept only while the URL's scheme, host and port stay the same") {
		t.Errorf("another URL: %q", r.Message)
	}
	if after := stored(); after.URL != before.URL || !maps.Equal(after.Headers.V, before.Headers.V) || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("a refused update changed the webhook: %+v", after)
	}
}
