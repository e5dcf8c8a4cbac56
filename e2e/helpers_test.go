package e2e_test

import (
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// fixture is a system with a simulator and a connected account.
type fixture struct {
	*apptest.Fixture
	admin     apptest.Session
	accountID string
	orgID     string
}

func newFixture(t *testing.T, overrides map[string]string, sim func(*platformsim.Config)) *fixture {
	f := apptest.NewFixture(t, overrides, sim)
	return &fixture{Fixture: f, admin: f.Admin, accountID: f.AccountID, orgID: f.OrgID}
}

// contactFromIncoming makes a user write to the business and waits for the
// worker to store it; it returns the contact id.
func (f *fixture) contactFromIncoming(t *testing.T, from, name, text string) string {
	f.Incoming(platformsim.Incoming{From: from, ProfileName: name, Type: "text", Text: text})
	var c models.Contact
	apptest.Eventually(t, 10*time.Second, "contact from incoming message", func() bool {
		return f.DB.Where("phone_number = ?", "+"+from).Take(&c).Error == nil && c.LastInboundAt != nil
	})
	return c.ID.String()
}

func (f *fixture) message(t *testing.T, id string) models.Message {
	var m models.Message
	if err := f.DB.Take(&m, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fixture) waitStatus(t *testing.T, id, status string) models.Message {
	var m models.Message
	apptest.Eventually(t, 15*time.Second, "message "+status, func() bool {
		m = f.message(t, id)
		return string(m.Status) == status
	})
	return m
}
