package campaigns_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// audienceContacts creates the contacts the audience tests select from,
// through the API: number(i) for i from 0, with tags and metadata.
//
//	0 Ana   vip lisbon    city Lisbon coupon C0
//	1 Bo    vip           city Porto  coupon C1   (messaged today)
//	2 Cy    lisbon        city Lisbon             (messaged 40 days ago)
//	3 Di    vip blocked   city Lisbon coupon C3
//	4 Ed    -             -
//	5 Flo   vip lisbon    city Lisbon             (opted out of marketing)
func audienceContacts(t *testing.T, f *fixture) []string {
	t.Helper()
	a := f.Admin.Auth()
	type spec struct {
		name string
		tags []string
		meta map[string]any
	}
	specs := []spec{
		{"Ana", []string{"vip", "lisbon"}, map[string]any{"city": "Lisbon", "coupon": "C0"}},
		{"Bo", []string{"vip"}, map[string]any{"city": "Porto", "coupon": "C1"}},
		{"Cy", []string{"lisbon"}, map[string]any{"city": "Lisbon"}},
		{"Di", []string{"vip", "blocked"}, map[string]any{"city": "Lisbon", "coupon": "C3"}},
		{"Ed", nil, map[string]any{}},
		{"Flo", []string{"vip", "lisbon"}, map[string]any{"city": "Lisbon"}},
	}
	ids := make([]string, len(specs))
	for i, s := range specs {
		var c struct {
			ID string `json:"id"`
		}
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": number(i), "name": s.name, "account_id": f.AccountID,
			"metadata": s.meta}, a).Expect(t, 201).Into(t, &c)
		ids[i] = c.ID
		if len(s.tags) > 0 {
			f.Do("PUT", "/api/contacts/"+c.ID+"/tags", map[string]any{"tags": s.tags}, a).Expect(t, 200)
		}
	}
	f.DB.Exec(`UPDATE contacts SET last_message_at = now() WHERE id = ?`, ids[1])
	f.DB.Exec(`UPDATE contacts SET last_message_at = now() - interval '40 days' WHERE id = ?`, ids[2])
	f.Do("PUT", "/api/contacts/"+ids[5]+"/opt-out", map[string]any{"marketing_opt_out": true}, a).Expect(t, 200)
	return ids
}

func (f *fixture) audienceCount(t *testing.T, audience map[string]any) int {
	t.Helper()
	var out struct {
		Count int `json:"count"`
	}
	f.Do("POST", "/api/contacts/audience/count", audience, f.Admin.Auth()).Expect(t, 200).Into(t, &out)
	return out.Count
}

// Every condition of an audience, counted through the API, and the
// refusals of a malformed one (a misspelt field or tag would otherwise
// select every contact, or none, silently).
func TestAudienceCountsAndRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	audienceContacts(t, f)
	a := f.Admin.Auth()
	for _, c := range []struct {
		audience map[string]any
		want     int
	}{
		{map[string]any{}, 6},
		{map[string]any{"tags_any": []string{"VIP"}}, 4},
		{map[string]any{"tags_any": []string{"blocked", "lisbon"}}, 4},
		{map[string]any{"tags_all": []string{"vip", "lisbon"}}, 2},
		{map[string]any{"tags_any": []string{"vip"}, "tags_none": []string{"blocked"}}, 3},
		{map[string]any{"tags_none": []string{"vip", "lisbon"}}, 1},
		{map[string]any{"account_id": f.AccountID}, 6},
		{map[string]any{"metadata": []map[string]any{{"key": "city", "op": "eq", "value": "Lisbon"}}}, 4},
		{map[string]any{"metadata": []map[string]any{{"key": "city", "op": "neq", "value": "Lisbon"}}}, 2},
		{map[string]any{"metadata": []map[string]any{{"key": "city", "op": "contains", "value": "ISB"}}}, 4},
		{map[string]any{"metadata": []map[string]any{{"key": "coupon", "op": "exists"}}}, 3},
		{map[string]any{"metadata": []map[string]any{{"key": "coupon", "op": "missing"}}}, 3},
		{map[string]any{"metadata": []map[string]any{{"key": "city", "op": "contains", "value": "%"}}}, 0},
		{map[string]any{"active_within_days": 30}, 1},
		{map[string]any{"inactive_for_days": 30}, 5},
		{map[string]any{"tags_any": []string{"lisbon"}, "metadata": []map[string]any{{"key": "coupon", "op": "missing"}}, "inactive_for_days": 30}, 2},
	} {
		if got := f.audienceCount(t, c.audience); got != c.want {
			t.Errorf("count of %v = %d, want %d", c.audience, got, c.want)
		}
	}
	for body, want := range map[string]string{
		`{"tag": "vip"}`:         "unknown field \"tag\"",
		`{"tags_any": ["nope"]}`: `no tag is named "nope"`,
		`{"tags_all": [""]}`:     "tags_all holds an empty or overlong tag name",
		`{"metadata": [{"key": "city", "op": "like", "value": "x"}]}`:                                         "metadata[0].op must be one of eq, neq, contains, exists, missing",
		`{"metadata": [{"key": "city", "op": "eq"}]}`:                                                         "metadata[0].value is required for eq",
		`{"metadata": [{"key": "", "op": "exists"}]}`:                                                         "metadata[0].key is required",
		`{"active_within_days": 0}`:                                                                           "active_within_days must be between 1 and 3650",
		`{"inactive_for_days": 4000}`:                                                                         "inactive_for_days must be between 1 and 3650",
		`{"account_id": "00000000-0000-0000-0000-000000000001"}`:                                              "account_id does not name an account of this organization",
		`{"segment_id": "00000000-0000-0000-0000-000000000001"}`:                                              "segment_id does not name a segment of this organization",
		`{"tags_any": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r","s","t","u"]}`: "tags_any has more than 20 tags",
	} {
		r := f.Do("POST", "/api/contacts/audience/count", json.RawMessage(body), a).Expect(t, 400)
		if !strings.Contains(r.Message, want) {
			t.Errorf("audience %s: %q, want %q", body, r.Message, want)
		}
	}
}

// Segments: saved filters, unique by name, counted through an audience
// that names them, never nested; writing them needs contacts:update and
// another organization's segment is not found.
func TestSegments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	audienceContacts(t, f)
	a := f.Admin.Auth()
	var seg struct {
		ID     string         `json:"id"`
		Name   string         `json:"name"`
		Filter map[string]any `json:"filter"`
	}
	f.Do("POST", "/api/segments", map[string]any{"name": "Lisbon VIPs", "description": "both tags",
		"filter": map[string]any{"tags_all": []string{"vip", "lisbon"}}}, a).Expect(t, 201).Into(t, &seg)
	if got := f.audienceCount(t, map[string]any{"segment_id": seg.ID}); got != 2 {
		t.Fatalf("the segment counts %d, want 2", got)
	}
	// A segment and more conditions: both hold.
	if got := f.audienceCount(t, map[string]any{"segment_id": seg.ID, "metadata": []map[string]any{{"key": "coupon", "op": "exists"}}}); got != 1 {
		t.Fatalf("the segment with a coupon counts %d, want 1", got)
	}
	r := f.Do("POST", "/api/segments", map[string]any{"name": "lisbon vips", "filter": map[string]any{}}, a).Expect(t, 409)
	if !strings.Contains(r.Message, "a segment with this name already exists") {
		t.Fatalf("a duplicate name: %s", r.Body)
	}
	r = f.Do("POST", "/api/segments", map[string]any{"name": "Nested", "filter": map[string]any{"segment_id": seg.ID}}, a).Expect(t, 400)
	if !strings.Contains(r.Message, "a segment's filter cannot name another segment") {
		t.Fatalf("a nested segment: %s", r.Body)
	}
	r = f.Do("POST", "/api/segments", map[string]any{"name": "Typo", "filter": map[string]any{"tags": []string{"vip"}}}, a).Expect(t, 400)
	if !strings.Contains(r.Message, `unknown field "tags"`) {
		t.Fatalf("a misspelt filter: %s", r.Body)
	}
	f.Do("POST", "/api/segments", map[string]any{"filter": map[string]any{}}, a).Expect(t, 400)
	// A change is seen by the next count.
	f.Do("PUT", "/api/segments/"+seg.ID, map[string]any{"filter": map[string]any{"tags_any": []string{"vip"}}}, a).Expect(t, 200)
	if got := f.audienceCount(t, map[string]any{"segment_id": seg.ID}); got != 4 {
		t.Fatalf("the changed segment counts %d, want 4", got)
	}
	var list struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
		Total int `json:"total"`
	}
	f.Do("GET", "/api/segments", nil, a).Expect(t, 200).Into(t, &list)
	if list.Total != 1 || list.Items[0].Name != "Lisbon VIPs" {
		t.Fatalf("segments: %+v", list)
	}

	// Readers read, only writers write.
	f.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"contacts:read"}}, a).Expect(t, 201)
	reader := f.CreateUser(a, "reader@x.com", "Reader").Auth()
	f.Do("GET", "/api/segments/"+seg.ID, nil, reader).Expect(t, 200)
	f.Do("POST", "/api/contacts/audience/count", map[string]any{"segment_id": seg.ID}, reader).Expect(t, 200)
	f.Do("PUT", "/api/segments/"+seg.ID, map[string]any{"name": "Mine"}, reader).Expect(t, 403)
	f.Do("DELETE", "/api/segments/"+seg.ID, nil, reader).Expect(t, 403)
	f.Do("POST", "/api/segments", map[string]any{"name": "x", "filter": map[string]any{}}, reader).Expect(t, 403)

	// Another organization sees none of it.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, a).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, a).Expect(t, 200).Into(t, &inB)
	other := f.CreateUser(inB.Auth(), "b-admin@x.com", "Admin").Auth()
	f.Do("GET", "/api/segments/"+seg.ID, nil, other).Expect(t, 404)
	f.Do("PUT", "/api/segments/"+seg.ID, map[string]any{"name": "Theirs"}, other).Expect(t, 404)
	f.Do("DELETE", "/api/segments/"+seg.ID, nil, other).Expect(t, 404)
	f.Do("POST", "/api/contacts/audience/count", map[string]any{"segment_id": seg.ID}, other).Expect(t, 400)

	f.Do("DELETE", "/api/segments/"+seg.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/segments/"+seg.ID, nil, a).Expect(t, 404)
}

// A campaign whose recipients come from contacts, through the simulator:
// the audience names a segment, which changes before the start and is used
// as it is then; the start resolves it once into recipients (a contact
// added later is not one of them), placeholders are filled from metadata
// and a fixed value, the opted-out contact is skipped, and refusals leave
// the campaign a draft without recipients.
func TestCampaignFromAnAudience(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	f.StartWorker()
	f.DB.Exec(`UPDATE templates SET category = 'MARKETING' WHERE id = ?`, f.templateID)
	audienceContacts(t, f)
	a := f.Admin.Auth()
	var seg struct {
		ID string `json:"id"`
	}
	f.Do("POST", "/api/segments", map[string]any{"name": "Lisbon VIPs", "filter": map[string]any{"tags_all": []string{"vip", "lisbon"}}}, a).
		Expect(t, 201).Into(t, &seg)
	audience := map[string]any{"segment_id": seg.ID, "tags_none": []string{"blocked"}, "values": map[string]string{"2": "SPRING"}}
	var c struct {
		campaignOut
		Audience           map[string]any    `json:"audience"`
		AudienceResolvedAt *string           `json:"audience_resolved_at"`
		VariableMapping    map[string]string `json:"variable_mapping"`
	}
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Spring", "account_id": f.AccountID, "template_id": f.templateID,
		"variable_mapping": map[string]string{"1": "city"}, "audience": audience}, a).Expect(t, 201).Into(t, &c)
	if c.Audience["segment_id"] != seg.ID || c.AudienceResolvedAt != nil || c.VariableMapping["2"] != "2" || c.TotalRecipients != 0 {
		t.Fatalf("the draft: %s, audience %v, resolved %v, mapping %v", c.campaignOut, c.Audience, c.AudienceResolvedAt, c.VariableMapping)
	}
	// Uploading into it is refused; so is an audience from a caller who
	// cannot read contacts, and a misspelt one.
	r := f.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": []map[string]any{{"phone_number": number(9)}}}, a).Expect(t, 409)
	if !strings.Contains(r.Message, "come from its audience") {
		t.Fatalf("an upload into an audience campaign: %s", r.Body)
	}
	f.Do("POST", "/api/roles", map[string]any{"name": "Campaigner", "permissions": []string{"campaigns:read", "campaigns:create", "campaigns:update"}}, a).Expect(t, 201)
	campaigner := f.CreateUser(a, "campaigner@x.com", "Campaigner").Auth()
	r = f.Do("PUT", "/api/campaigns/"+c.ID, map[string]any{"audience": map[string]any{}}, campaigner).Expect(t, 403)
	if !strings.Contains(r.Message, "contacts:read") {
		t.Fatalf("an audience without contacts:read: %s", r.Body)
	}
	r = f.Do("PUT", "/api/campaigns/"+c.ID, map[string]any{"audience": map[string]any{"tag": "vip"}}, a).Expect(t, 400)
	if !strings.Contains(r.Message, `unknown field "tag"`) {
		t.Fatalf("a misspelt audience: %s", r.Body)
	}
	// The segment changes before the start: the start uses it as it is.
	f.Do("PUT", "/api/segments/"+seg.ID, map[string]any{"filter": map[string]any{"tags_any": []string{"vip"}}}, a).Expect(t, 200)
	if got := f.audienceCount(t, map[string]any{"segment_id": seg.ID, "tags_none": []string{"blocked"}}); got != 3 {
		t.Fatalf("the preview counts %d, want 3 (Ana, Bo, Flo)", got)
	}
	var started campaignOut
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200).Into(t, &started)
	if started.TotalRecipients != 3 || started.Status != "sending" {
		t.Fatalf("started: %s", started)
	}
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 409)
	// A contact added now is not a recipient: the snapshot is taken.
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": number(8), "name": "Late", "account_id": f.AccountID}, a).Expect(t, 201)
	done := f.waitStatus(c.ID, "completed", 30*time.Second)
	apptest.Eventually(t, 10*time.Second, "the counters", func() bool {
		done = f.get(c.ID)
		return done.SentCount == 2 && done.SkippedCount == 1
	})
	if done.TotalRecipients != 3 || done.FailedCount != 0 {
		t.Fatalf("done: %s", done)
	}
	for i, want := range map[int][]string{0: {"Lisbon", "SPRING"}, 1: {"Porto", "SPRING"}} {
		msgs := f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: strings.TrimPrefix(number(i), "+")})
		if len(msgs) != 1 {
			t.Fatalf("%s got %d messages", number(i), len(msgs))
		}
		if got := templateTexts(t, msgs[0].Body); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s got parameters %v, want %v", number(i), got, want)
		}
	}
	for _, i := range []int{2, 3, 4, 5, 8} {
		if n := len(f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: strings.TrimPrefix(number(i), "+")})); n != 0 {
			t.Fatalf("%s is not in the audience (or opted out) but got %d messages", number(i), n)
		}
	}

	// Refusals at the start leave a draft without recipients.
	refused := func(audience map[string]any, mapping map[string]string, want string) {
		t.Helper()
		var d campaignOut
		f.Do("POST", "/api/campaigns", map[string]any{"name": "Refused", "account_id": f.AccountID, "template_id": f.templateID,
			"variable_mapping": mapping, "audience": audience}, a).Expect(t, 201).Into(t, &d)
		r := f.Do("POST", "/api/campaigns/"+d.ID+"/start", nil, a).Expect(t, 400)
		if !strings.Contains(r.Message, want) {
			t.Fatalf("start of %v: %q, want %q", audience, r.Message, want)
		}
		if got := f.get(d.ID); got.Status != "draft" || got.TotalRecipients != 0 || len(f.recipientsBy(d.ID)) != 0 {
			t.Fatalf("after a refused start: %s, recipients %v", got, f.recipientsBy(d.ID))
		}
	}
	refused(map[string]any{"tags_all": []string{"blocked", "lisbon"}}, map[string]string{"1": "name", "2": "coupon"}, "the campaign's audience matches no contact")
	refused(map[string]any{"tags_any": []string{"vip"}}, map[string]string{"1": "name", "2": "nickname"}, `names field "nickname", which no recipient has`)
	gone := map[string]any{"segment_id": seg.ID}
	var d campaignOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Gone", "account_id": f.AccountID, "template_id": f.templateID,
		"variable_mapping": map[string]string{"1": "name", "2": "coupon"}, "audience": gone}, a).Expect(t, 201).Into(t, &d)
	f.Do("DELETE", "/api/segments/"+seg.ID, nil, a).Expect(t, 200)
	r = f.Do("POST", "/api/campaigns/"+d.ID+"/start", nil, a).Expect(t, 400)
	if !strings.Contains(r.Message, "the audience's segment no longer exists") {
		t.Fatalf("a deleted segment: %s", r.Body)
	}
	// Back to uploaded recipients: null clears the audience.
	var cleared struct {
		Audience map[string]any `json:"audience"`
	}
	f.Do("PUT", "/api/campaigns/"+d.ID, map[string]any{"audience": nil}, a).Expect(t, 200).Into(t, &cleared)
	if cleared.Audience != nil {
		t.Fatalf("the audience after null: %v", cleared.Audience)
	}
	f.Do("POST", "/api/campaigns/"+d.ID+"/recipients/import", map[string]any{"recipients": []map[string]any{{"phone_number": number(9), "coupon": "X"}}}, a).Expect(t, 200)
	r = f.Do("PUT", "/api/campaigns/"+d.ID, map[string]any{"audience": map[string]any{"tags_any": []string{"vip"}}}, a).Expect(t, 409)
	if !strings.Contains(r.Message, "already has 1 uploaded recipients") {
		t.Fatalf("an audience on a campaign with uploads: %s", r.Body)
	}
}

// templateTexts returns the text parameters of a template send's body, in
// order.
func templateTexts(t *testing.T, body json.RawMessage) []string {
	t.Helper()
	var m struct {
		Template struct {
			Components []struct {
				Type       string `json:"type"`
				Parameters []struct {
					Text string `json:"text"`
				} `json:"parameters"`
			} `json:"components"`
		} `json:"template"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("a template send's body: %v", err)
	}
	var out []string
	for _, c := range m.Template.Components {
		if c.Type == "body" {
			for _, p := range c.Parameters {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// A scheduled campaign resolves its audience when the scheduler starts it
// (two schedulers: once), and one whose audience then matches nobody is
// paused with the reason instead of failing.
func TestScheduledAudienceCampaign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"SCHEDULER_LEADER_TTL": "1s"}, noCap)
	f.StartWorker()
	audienceContacts(t, f)
	a := f.Admin.Auth()
	at := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Format(time.RFC3339)
	schedule := func(audience map[string]any) string {
		var c campaignOut
		f.Do("POST", "/api/campaigns", map[string]any{"name": "Later", "account_id": f.AccountID, "template_id": f.templateID,
			"variable_mapping": map[string]string{"1": "name", "2": "city"}, "audience": audience, "scheduled_at": at}, a).Expect(t, 201).Into(t, &c)
		f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200).Into(t, &c)
		if c.Status != "scheduled" || c.TotalRecipients != 0 {
			t.Fatalf("scheduled: %s", c)
		}
		return c.ID
	}
	lisbon := schedule(map[string]any{"metadata": []map[string]any{{"key": "city", "op": "eq", "value": "Lisbon"}}})
	nobody := schedule(map[string]any{"tags_all": []string{"blocked", "lisbon"}})
	f.StartScheduler()
	f.StartScheduler()
	done := f.waitStatus(lisbon, "completed", 30*time.Second)
	if done.TotalRecipients != 4 {
		t.Fatalf("the Lisbon campaign: %s, want Ana, Cy, Di and Flo", done)
	}
	var paused struct {
		campaignOut
		PauseReason string `json:"pause_reason"`
	}
	apptest.Eventually(t, 10*time.Second, "the empty audience's campaign paused", func() bool {
		f.Do("GET", "/api/campaigns/"+nobody, nil, a).Expect(t, 200).Into(t, &paused)
		return paused.Status == "paused"
	})
	if !strings.Contains(paused.PauseReason, "the campaign's audience matches no contact") || paused.TotalRecipients != 0 {
		t.Fatalf("the empty audience's campaign: %s, reason %q", paused.campaignOut, paused.PauseReason)
	}
	var gen int
	f.DB.Raw(`SELECT run_generation FROM campaigns WHERE id = ?`, lisbon).Scan(&gen)
	if gen != 1 {
		t.Fatalf("the Lisbon campaign started %d times", gen)
	}
	for to, n := range f.sends() {
		if n != 1 {
			t.Fatalf("%s got %d", to, n)
		}
	}
}
