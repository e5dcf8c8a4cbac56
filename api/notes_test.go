package api_test

import (
	"testing"

	"wharf/internal/apptest"
)

func TestContactNotes(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var c struct{ ID string }
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550004444", "name": "Ann"}, admin.Auth()).Expect(t, 201).Into(t, &c)
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	e.Do("POST", "/api/roles", map[string]any{"name": "Messages only", "permissions": []string{"messages:read"}}, admin.Auth()).Expect(t, 201)
	noContacts := e.CreateUser(admin.Auth(), "nocontacts@x.com", "Messages only")
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var other apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, e.Admin().Auth()).Expect(t, 200).Into(t, &other)

	path := "/api/contacts/" + c.ID + "/notes"
	var note struct{ ID, Body, AuthorName string }
	e.Do("POST", path, map[string]string{"body": "VIP, prefers email"}, admin.Auth()).Expect(t, 201).Into(t, &note)
	wantEnvelopeError(t, e.Do("POST", path, map[string]string{"body": ""}, admin.Auth()), 400, "body is required")

	// The organization's readers of contacts see it; nobody else does.
	var page struct {
		Items []struct{ ID, Body string } `json:"items"`
	}
	e.Do("GET", path, nil, agent.Auth()).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 1 || page.Items[0].Body != "VIP, prefers email" {
		t.Fatalf("agent sees %+v", page.Items)
	}
	wantEnvelopeError(t, e.Do("GET", path, nil, noContacts.Auth()), 403, "contacts:read")
	wantEnvelopeError(t, e.Do("POST", path, map[string]string{"body": "x"}, noContacts.Auth()), 403, "contacts:read")
	wantEnvelopeError(t, e.Do("GET", path, nil, other.Auth()), 404, "contact not found")
	wantEnvelopeError(t, e.Do("POST", path, map[string]string{"body": "x"}, other.Auth()), 404, "contact not found")
	wantEnvelopeError(t, e.Do("DELETE", path+"/"+note.ID, nil, other.Auth()), 404, "note not found")

	// Only its author deletes it.
	wantEnvelopeError(t, e.Do("DELETE", path+"/"+note.ID, nil, agent.Auth()), 403, "only your own notes")
	e.Do("DELETE", path+"/"+note.ID, nil, admin.Auth()).Expect(t, 200)
	e.Do("GET", path, nil, agent.Auth()).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 0 {
		t.Fatalf("after deletion %+v", page.Items)
	}
}
