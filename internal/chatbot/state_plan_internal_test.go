package chatbot

import (
	"strings"
	"testing"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// A message's state is read through the contact's and its session's keys,
// whatever the planner believes of the organization's size: with
// statistics taken while the organization had one contact, "organization_id
// = ?" made a scan of every contact (and every open session) of the
// organization look as cheap, and the chatbot read them all for each
// message.
func TestStateReadsOnlyTheContactsRows(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org := f.Org()
	acc := f.Account(org.ID)
	c := f.Contact(org.ID, &acc.ID)
	if err := db.Exec(`ANALYZE contacts; ANALYZE chatbot_sessions`).Error; err != nil {
		t.Fatal(err)
	}
	// A thousand contacts and two hundred sessions the statistics do not know of.
	if err := db.Exec(`INSERT INTO contacts (organization_id, account_id, phone_number, profile_name, metadata)
		SELECT ?, ?, '+1555032' || lpad(i::text, 4, '0'), '', '{}' FROM generate_series(1, 1000) AS i`, org.ID, acc.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO chatbot_sessions (organization_id, contact_id)
		SELECT organization_id, id FROM contacts WHERE organization_id = ? AND id <> ? LIMIT 200`, org.ID, c.ID).Error; err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := db.Raw("EXPLAIN (FORMAT JSON) "+stateSQL, org.ID, c.ID).Row().Scan(&plan); err != nil {
		t.Fatal(err)
	}
	// The sessions table is small here (a few pages): reading it whole is
	// fine; reading the organization's sessions through its index was not.
	if !strings.Contains(plan, `"contacts_pkey"`) || strings.Contains(plan, `"contacts_org_`) ||
		strings.Contains(plan, `"chatbot_sessions_active"`) || strings.Contains(plan, `"chatbot_sessions_org_started"`) {
		t.Errorf("the state is not read through the contact's and its session's keys:\n%s", plan)
	}
}
