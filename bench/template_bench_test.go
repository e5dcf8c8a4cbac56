package bench_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
)

// BenchmarkTemplateEnqueueAPIKey measures POST /api/messages/template with
// API-key authentication at several numbers of concurrent clients: key
// lookup, permission
// load, Redis rate limit, validation, message insert and enqueue. The worker
// is not running, so only the api's share is measured.
func BenchmarkTemplateEnqueueAPIKey(b *testing.B) {
	e := apptest.NewWithSim(b, map[string]string{"LOG_LEVEL": "error", "RATE_LIMIT_PER_MINUTE": "100000000"}, nil)
	admin := e.Admin()
	accountID := e.ConnectAccount(admin.Auth(), "Bench")
	orgID := uuid.MustParse(admin.User.OrganizationID)
	tmpl := models.Template{ID: uuid.New(), OrganizationID: orgID, AccountID: uuid.MustParse(accountID), Name: "order_update",
		Language: "en_US", Category: "UTILITY", Status: models.TemplateApproved, ParameterFormat: "positional"}
	tmpl.Components.V = []map[string]any{{"type": "BODY", "text": "Hi {{1}}, your order {{2}} shipped"}}
	if err := e.DB.Create(&tmpl).Error; err != nil {
		b.Fatal(err)
	}
	contacts := make([]models.Contact, 500)
	for i := range contacts {
		contacts[i] = models.Contact{ID: uuid.New(), OrganizationID: orgID, PhoneNumber: fmt.Sprintf("+1557%07d", i)}
		contacts[i].Metadata.V = map[string]any{}
	}
	if err := e.DB.Create(&contacts).Error; err != nil {
		b.Fatal(err)
	}
	var key struct{ Key string }
	e.Do("POST", "/api/api-keys", map[string]any{"name": "bench"}, admin.Auth()).Expect(b, 201).Into(b, &key)
	bodies := make([][]byte, len(contacts))
	for i, c := range contacts {
		bodies[i], _ = json.Marshal(map[string]any{"contact_id": c.ID, "template_name": "order_update",
			"template_params": map[string]string{"1": "Ann", "2": fmt.Sprint(i)}})
	}
	url := e.Server.URL + "/api/messages/template"
	for _, p := range concurrencyLevels {
		parallel(b, p, "enqueued", func(i int64) time.Duration {
			body := bodies[i%int64(len(bodies))]
			t0 := time.Now()
			if code := post(b, url, map[string]string{"X-API-Key": key.Key}, body); code != 202 {
				b.Errorf("status %d", code)
			}
			return time.Since(t0)
		})
	}
}
