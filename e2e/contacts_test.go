package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/models"
	"wharf/platformsim"
)

type contactOut struct {
	ID          string         `json:"id"`
	PhoneNumber string         `json:"phone_number"`
	Name        string         `json:"name"`
	ProfileName string         `json:"profile_name"`
	AccountID   *string        `json:"account_id"`
	AssignedTo  *string        `json:"assigned_to"`
	Metadata    map[string]any `json:"metadata"`
	Tags        []string       `json:"tags"`
}

func TestContactCRUDSearchAndPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	f.Do("POST", "/api/contacts", map[string]any{"name": "x"}, a).Expect(t, 400)
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "12"}, a).Expect(t, 400)
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550100000", "account_id": uuid.NewString()}, a).Expect(t, 400)
	var c contactOut
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+1 (555) 010-0000", "name": "Zed", "account_id": f.accountID,
		"metadata": map[string]any{"plan": "gold", "seats": 3, "vip": true, "address": map[string]any{"city": "Lima"}}}, a).Expect(t, 201).Into(t, &c)
	if c.PhoneNumber != "+15550100000" || c.Name != "Zed" || c.AccountID == nil || c.Metadata["plan"] != "gold" || len(c.Tags) != 0 {
		t.Fatalf("created %+v", c)
	}
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "15550100000"}, a).Expect(t, 409)
	for i := 0; i < 24; i++ {
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": fmt.Sprintf("+1555020%04d", i), "name": fmt.Sprintf("Bulk %d", i)}, a).Expect(t, 201)
	}
	var list struct {
		Items      []contactOut `json:"items"`
		Total      int          `json:"total"`
		Page       int          `json:"page"`
		Limit      int          `json:"limit"`
		TotalPages int          `json:"total_pages"`
	}
	f.Do("GET", "/api/contacts", nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 25 || list.Limit != 20 || list.TotalPages != 2 || len(list.Items) != 20 {
		t.Fatalf("page 1: total %d limit %d pages %d items %d", list.Total, list.Limit, list.TotalPages, len(list.Items))
	}
	f.Do("GET", "/api/contacts?page=2", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Items) != 5 {
		t.Fatalf("page 2 has %d", len(list.Items))
	}
	f.Do("GET", "/api/contacts?limit=1000", nil, a).Expect(t, 200).Into(t, &list)
	if list.Limit != 100 || len(list.Items) != 25 {
		t.Fatalf("limit cap %d", list.Limit)
	}
	f.Do("GET", "/api/contacts?search=zED", nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 1 || list.Items[0].ID != c.ID {
		t.Fatalf("search by name %+v", list)
	}
	f.Do("GET", "/api/contacts?search=0100000", nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 1 {
		t.Fatalf("search by phone %d", list.Total)
	}
	f.Do("GET", "/api/contacts?account_id="+f.accountID, nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 1 {
		t.Fatalf("account filter %d", list.Total)
	}

	var upd contactOut
	f.Do("PUT", "/api/contacts/"+c.ID, map[string]any{"name": "Zed Two", "metadata": map[string]any{"plan": "silver"}}, a).Expect(t, 200).Into(t, &upd)
	if upd.Name != "Zed Two" || upd.Metadata["plan"] != "silver" || upd.Metadata["seats"] != nil {
		t.Fatalf("updated %+v", upd)
	}
	f.Do("PUT", "/api/contacts/"+c.ID, map[string]any{"phone_number": "+15550100001"}, a).Expect(t, 400)
	f.Do("PUT", "/api/contacts/"+c.ID, map[string]any{"metadata": "not an object"}, a).Expect(t, 400)

	var sess map[string]any
	f.Do("GET", "/api/contacts/"+c.ID+"/session-data", nil, a).Expect(t, 200).Into(t, &sess)
	if _, ok := sess["session_data"]; !ok {
		t.Fatalf("session data %v", sess)
	}
	f.Do("GET", "/api/contacts/"+uuid.NewString(), nil, a).Expect(t, 404)
}

func TestAssignContact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	agent := f.CreateUser(a, "agent@x.com", "Agent")
	var me struct{ ID string }
	f.Do("GET", "/api/me", nil, agent.Auth()).Expect(t, 200).Into(t, &me)
	var c contactOut
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550110000"}, a).Expect(t, 201).Into(t, &c)
	var out struct {
		ID         string  `json:"id"`
		AssignedTo *string `json:"assigned_to"`
		UpdatedAt  string  `json:"updated_at"`
	}
	f.Do("PUT", "/api/contacts/"+c.ID+"/assign", map[string]any{"user_id": me.ID}, a).Expect(t, 200).Into(t, &out)
	if out.AssignedTo == nil || *out.AssignedTo != me.ID || out.UpdatedAt == "" {
		t.Fatalf("assign %+v", out)
	}
	f.Do("PUT", "/api/contacts/"+c.ID+"/assign", map[string]any{"user_id": uuid.NewString()}, a).Expect(t, 400)
	f.Do("PUT", "/api/contacts/"+c.ID+"/assign", map[string]any{"user_id": nil}, a).Expect(t, 200).Into(t, &out)
	if out.AssignedTo != nil {
		t.Fatal("not unassigned")
	}
}

func TestTagsAndContactTags(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	f.Do("POST", "/api/tags", map[string]any{"name": strings.Repeat("t", 51)}, a).Expect(t, 400)
	f.Do("POST", "/api/tags", map[string]any{"name": "vip", "color": "pink"}, a).Expect(t, 400)
	var tag struct{ Name, Color string }
	f.Do("POST", "/api/tags", map[string]any{"name": "VIP", "color": "purple"}, a).Expect(t, 201).Into(t, &tag)
	f.Do("POST", "/api/tags", map[string]any{"name": "vip"}, a).Expect(t, 409)
	f.Do("POST", "/api/tags", map[string]any{"name": "lead"}, a).Expect(t, 201).Into(t, &tag)
	if tag.Color != "gray" {
		t.Fatalf("default color %q", tag.Color)
	}
	var c contactOut
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550120000"}, a).Expect(t, 201).Into(t, &c)
	f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{}, a).Expect(t, 400)
	f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{"tags": []string{strings.Repeat("x", 51)}}, a).Expect(t, 400)
	f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{"tags": []string{"vip", "lead", "new-one", "VIP"}}, a).Expect(t, 200).Into(t, &c)
	if strings.Join(c.Tags, ",") != "VIP,lead,new-one" {
		t.Fatalf("tags %v", c.Tags)
	}
	// Replace the set.
	f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{"tags": []string{"lead"}}, a).Expect(t, 200).Into(t, &c)
	if strings.Join(c.Tags, ",") != "lead" {
		t.Fatalf("replaced tags %v", c.Tags)
	}
	// Renaming shows on the contact; deleting removes it from the contact.
	f.Do("PUT", "/api/tags/lead", map[string]any{"name": "prospect", "color": "green"}, a).Expect(t, 200)
	f.Do("GET", "/api/contacts/"+c.ID, nil, a).Expect(t, 200).Into(t, &c)
	if strings.Join(c.Tags, ",") != "prospect" {
		t.Fatalf("after rename %v", c.Tags)
	}
	f.Do("PUT", "/api/tags/prospect", map[string]any{"name": "VIP"}, a).Expect(t, 409)
	f.Do("DELETE", "/api/tags/prospect", nil, a).Expect(t, 200)
	f.Do("GET", "/api/contacts/"+c.ID, nil, a).Expect(t, 200).Into(t, &c)
	if len(c.Tags) != 0 {
		t.Fatalf("after delete %v", c.Tags)
	}
	f.Do("DELETE", "/api/tags/prospect", nil, a).Expect(t, 404)
	var list struct {
		Tags  []struct{ Name, Color string } `json:"tags"`
		Total int                            `json:"total"`
	}
	f.Do("GET", "/api/tags?search=PURP", nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 1 || list.Tags[0].Name != "VIP" {
		t.Fatalf("tag search %+v", list)
	}
}

func TestDeletingAContactDeletesItsMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	id := f.contactFromIncoming(t, "15550130000", "Mo", "hello")
	f.Do("DELETE", "/api/contacts/"+id, nil, f.admin.Auth()).Expect(t, 200)
	var n int64
	f.DB.Model(&models.Message{}).Where("contact_id = ?", id).Count(&n)
	if n != 0 {
		t.Fatalf("%d messages left", n)
	}
	f.Do("DELETE", "/api/contacts/"+id, nil, f.admin.Auth()).Expect(t, 404)
}

func TestMaskPhoneNumbers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	f.SeedTemplate(f.orgID, f.accountID, "hello", "Hello", false)
	id := f.contactFromIncoming(t, "15550140000", "+1 555 014 0000", "hi")
	f.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, f.admin.Auth()).Expect(t, 200)
	var c contactOut
	r := f.Do("GET", "/api/contacts/"+id, nil, f.admin.Auth()).Expect(t, 200)
	r.Into(t, &c)
	if c.PhoneNumber != "+155******00" || strings.Contains(string(r.Body), "15550140000") || strings.Contains(c.ProfileName, "014 0") {
		t.Fatalf("masked contact %s", r.Body)
	}
	r = f.Do("GET", "/api/contacts", nil, f.admin.Auth()).Expect(t, 200)
	if strings.Contains(string(r.Body), "15550140000") {
		t.Fatalf("list not masked: %s", r.Body)
	}
	r = f.Do("POST", "/api/messages/template", map[string]any{"contact_id": id, "template_name": "hello"}, f.admin.Auth()).Expect(t, 202)
	if strings.Contains(string(r.Body), "15550140000") {
		t.Fatalf("template answer not masked: %s", r.Body)
	}
	f.Incoming(platformsim.Incoming{From: "15550140000", Type: "text", Text: "x"})
	r = f.Do("GET", "/api/contacts/"+id+"/messages", nil, f.admin.Auth()).Expect(t, 200)
	if strings.Contains(string(r.Body), "15550140000") {
		t.Fatalf("messages not masked: %s", r.Body)
	}
}
