package e2e_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/internal/calling"
	"wharf/internal/infra/storage"
	"wharf/models"
	"wharf/platformsim"
)

type callLogOut struct {
	ID                string   `json:"id"`
	PlatformAccount   string   `json:"platform_account"`
	CallerPhone       string   `json:"caller_phone"`
	Direction         string   `json:"direction"`
	Status            string   `json:"status"`
	IVRPath           []string `json:"ivr_path"`
	RecordingDuration int      `json:"recording_duration"`
	Contact           *struct {
		ID          string `json:"id"`
		PhoneNumber string `json:"phone_number"`
	} `json:"contact"`
	Agent *struct {
		ID       string `json:"id"`
		FullName string `json:"full_name"`
	} `json:"agent"`
}

type callTransferOut struct {
	ID        string `json:"id"`
	CallLogID string `json:"call_log_id"`
	Status    string `json:"status"`
}

type callLogsOut struct {
	CallLogs []callLogOut `json:"call_logs"`
	Total    int          `json:"total"`
	Page     int          `json:"page"`
	Limit    int          `json:"limit"`
}

// callRows inserts call logs and transfers straight into the database, as
// the call bridge would have written them.
type callRows struct {
	t *testing.T
	f *fixture
}

func (r callRows) call(org uuid.UUID, at time.Time, opts ...func(*models.CallLog)) models.CallLog {
	r.t.Helper()
	l := models.CallLog{ID: uuid.New(), OrganizationID: org, PlatformAccount: "Main", PlatformCallID: "wacid." + uuid.NewString(),
		CallerPhone: "+15550170000", Direction: "incoming", Status: models.CallCompleted, StartedAt: at, CreatedAt: at, UpdatedAt: at,
		IVRPath: json.RawMessage(`["1","sales"]`)}
	for _, o := range opts {
		o(&l)
	}
	if err := r.f.DB.Create(&l).Error; err != nil {
		r.t.Fatal(err)
	}
	return l
}

func (r callRows) transfer(l models.CallLog, status string, at time.Time) models.CallTransfer {
	r.t.Helper()
	tr := models.CallTransfer{ID: uuid.New(), OrganizationID: l.OrganizationID, CallLogID: l.ID, PlatformCallID: l.PlatformCallID,
		CallerPhone: l.CallerPhone, ContactID: l.ContactID, PlatformAccount: l.PlatformAccount, Status: status, TransferredAt: at,
		CreatedAt: at, UpdatedAt: at}
	if err := r.f.DB.Create(&tr).Error; err != nil {
		r.t.Fatal(err)
	}
	return tr
}

// orgB creates a second organization and answers its admin's session and
// id.
func (f *fixture) orgB(t *testing.T, name, email string) (apptest.Session, uuid.UUID) {
	t.Helper()
	var org struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": name}, f.admin.Auth()).Expect(t, 201).Into(t, &org)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, f.admin.Auth()).Expect(t, 200).Into(t, &inB)
	return f.CreateUser(inB.Auth(), email, "Admin"), uuid.MustParse(org.ID)
}

func callIDs(l callLogsOut) []string {
	out := make([]string, len(l.CallLogs))
	for i, c := range l.CallLogs {
		out[i] = c.ID
	}
	return out
}

// Call logs and transfers through the router: the list's filters, details
// with transfers, masking, and another organization's ids are 404 on every
// read route.
func TestCallLogsAndTransfersThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	rows := callRows{t, f}
	orgA := uuid.MustParse(f.orgID)
	accountA := uuid.MustParse(f.accountID)
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550170001", "name": "Caller"}, admin).Expect(t, 201).Into(t, &contact)
	contactID := uuid.MustParse(contact.ID)
	agent := f.CreateUser(admin, "calls-agent@example.test", "Agent")
	agentID := uuid.MustParse(agent.User.ID)
	day := time.Date(2025, 5, 10, 12, 0, 0, 0, time.UTC)

	first := rows.call(orgA, day, func(l *models.CallLog) {
		l.AccountID, l.ContactID, l.AgentID, l.CallerPhone = &accountA, &contactID, &agentID, "+15550170001"
		l.RecordingKey, l.RecordingDuration = "recordings/"+l.ID.String()+".ogg", 61
	})
	missed := rows.call(orgA, day.Add(24*time.Hour), func(l *models.CallLog) {
		l.AccountID, l.Status, l.CallerPhone = &accountA, models.CallMissed, "+447700900123"
	})
	outgoing := rows.call(orgA, day.Add(48*time.Hour), func(l *models.CallLog) {
		l.PlatformAccount, l.Direction, l.Status = "Old name", "outgoing", models.CallCompleted
	})
	done := rows.transfer(first, models.TransferCompleted, day.Add(time.Minute))
	waiting := rows.transfer(first, models.TransferWaiting, day.Add(2*time.Minute))

	bAdmin, orgB := f.orgB(t, "Calls B", "calls-b@example.test")
	b := bAdmin.Auth()
	theirCall := rows.call(orgB, day)
	theirTransfer := rows.transfer(theirCall, models.TransferWaiting, day)

	list := func(query string, auth apptest.Auth) callLogsOut {
		t.Helper()
		var out callLogsOut
		f.Do("GET", "/api/call-logs"+query, nil, auth).Expect(t, 200).Into(t, &out)
		if out.Total != len(out.CallLogs) && out.Limit >= out.Total {
			t.Errorf("%s: total %d for %d rows", query, out.Total, len(out.CallLogs))
		}
		return out
	}
	for query, want := range map[string][]string{
		"":                          {outgoing.ID.String(), missed.ID.String(), first.ID.String()},
		"?account=Main":             {missed.ID.String(), first.ID.String()},
		"?account=MAIN":             {missed.ID.String(), first.ID.String()},
		"?account=Old%20name":       {outgoing.ID.String()},
		"?account=Nobody":           {},
		"?phone=7700":               {missed.ID.String()},
		"?phone=%2B1%20555%20017":   {outgoing.ID.String(), first.ID.String()},
		"?direction=outgoing":       {outgoing.ID.String()},
		"?status=missed":            {missed.ID.String()},
		"?contact_id=" + contact.ID: {first.ID.String()},
		"?start_date=2025-05-11":    {outgoing.ID.String(), missed.ID.String()},
		"?end_date=2025-05-11":      {missed.ID.String(), first.ID.String()},
		"?start_date=2025-05-11&end_date=2025-05-11": {missed.ID.String()},
		"?start_date=2025-06-01":                     {},
	} {
		if got := callIDs(list(query, admin)); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("GET /api/call-logs%s: %v, want %v", query, got, want)
		}
	}
	if page := list("?page=2&limit=2", admin); page.Total != 3 || page.Page != 2 || page.Limit != 2 || len(page.CallLogs) != 1 ||
		page.CallLogs[0].ID != first.ID.String() {
		t.Errorf("page 2: %+v", page)
	}
	for query, msg := range map[string]string{
		"?direction=inbound":   "direction must be incoming or outgoing",
		"?status=lost":         "status must be one of",
		"?contact_id=nope":     "contact_id must be a UUID",
		"?ivr_flow_id=1":       "ivr_flow_id must be a UUID",
		"?start_date=May%2010": "start_date must be a date (YYYY-MM-DD)",
		"?phone=abc":           "phone must contain digits",
		"?start_date=2025-05-12&end_date=2025-05-10": "end_date must not be before start_date",
	} {
		if r := f.Do("GET", "/api/call-logs"+query, nil, admin).Expect(t, 400); !strings.Contains(r.Message, msg) {
			t.Errorf("%s: %q, want %q", query, r.Message, msg)
		}
	}
	// Organization B lists only its own call.
	if got := callIDs(list("", b)); len(got) != 1 || got[0] != theirCall.ID.String() {
		t.Errorf("organization B lists %v", got)
	}

	var detail struct {
		CallLog   callLogOut        `json:"call_log"`
		Transfers []callTransferOut `json:"transfers"`
	}
	f.Do("GET", "/api/call-logs/"+first.ID.String(), nil, admin).Expect(t, 200).Into(t, &detail)
	c := detail.CallLog
	if c.ID != first.ID.String() || c.Contact == nil || c.Contact.ID != contact.ID || c.Contact.PhoneNumber != "+15550170001" ||
		c.Agent == nil || c.Agent.ID != agent.User.ID || !strings.HasPrefix(c.Agent.FullName, "User ") || c.RecordingDuration != 61 ||
		strings.Join(c.IVRPath, "/") != "1/sales" || c.PlatformAccount != "Main" {
		t.Fatalf("detail %+v", c)
	}
	if len(detail.Transfers) != 2 || detail.Transfers[0].ID != done.ID.String() || detail.Transfers[1].ID != waiting.ID.String() {
		t.Fatalf("transfers %+v", detail.Transfers)
	}

	// Transfers: newest first, by status, one by id.
	var transfers struct {
		CallTransfers []callTransferOut `json:"call_transfers"`
		Total         int               `json:"total"`
	}
	f.Do("GET", "/api/call-transfers", nil, admin).Expect(t, 200).Into(t, &transfers)
	if transfers.Total != 2 || transfers.CallTransfers[0].ID != waiting.ID.String() {
		t.Fatalf("transfers %+v", transfers)
	}
	f.Do("GET", "/api/call-transfers?status=waiting", nil, admin).Expect(t, 200).Into(t, &transfers)
	if transfers.Total != 1 || transfers.CallTransfers[0].ID != waiting.ID.String() {
		t.Fatalf("waiting transfers %+v", transfers)
	}
	f.Do("GET", "/api/call-transfers?status=ringing", nil, admin).Expect(t, 400)
	var one callTransferOut
	f.Do("GET", "/api/call-transfers/"+waiting.ID.String(), nil, admin).Expect(t, 200).Into(t, &one)
	if one.CallLogID != first.ID.String() || one.Status != "waiting" {
		t.Fatalf("transfer %+v", one)
	}

	// Masking covers the caller's and the contact's numbers.
	f.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, admin).Expect(t, 200)
	f.Do("GET", "/api/call-logs/"+first.ID.String(), nil, admin).Expect(t, 200).Into(t, &detail)
	if detail.CallLog.CallerPhone == "+15550170001" || detail.CallLog.Contact.PhoneNumber == "+15550170001" {
		t.Errorf("masked organization shows %q / %q", detail.CallLog.CallerPhone, detail.CallLog.Contact.PhoneNumber)
	}

	// Recordings: none, or one behind a store that signs URLs.
	if r := f.Do("GET", "/api/call-logs/"+missed.ID.String()+"/recording", nil, admin).Expect(t, 404); !strings.Contains(r.Message, "no recording") {
		t.Errorf("no recording: %q", r.Message)
	}
	if _, signs := any(&storage.Local{}).(calling.Store); signs {
		var rec struct {
			URL       string    `json:"url"`
			Duration  int       `json:"duration"`
			ExpiresAt time.Time `json:"expires_at"`
		}
		f.Do("GET", "/api/call-logs/"+first.ID.String()+"/recording", nil, admin).Expect(t, 200).Into(t, &rec)
		if rec.URL == "" || rec.Duration != 61 || time.Until(rec.ExpiresAt) > 900*time.Second || time.Until(rec.ExpiresAt) < 0 {
			t.Errorf("recording %+v", rec)
		}
	} else if r := f.Do("GET", "/api/call-logs/"+first.ID.String()+"/recording", nil, admin).Expect(t, 503); !strings.Contains(r.Message, "object storage") {
		t.Errorf("recording without object storage: %q", r.Message)
	}

	// Another organization's ids are not found on every read route; bad
	// ids are 400s.
	for _, p := range []string{"/api/call-logs/" + first.ID.String(), "/api/call-logs/" + first.ID.String() + "/recording",
		"/api/call-transfers/" + waiting.ID.String()} {
		f.Do("GET", p, nil, b).Expect(t, 404)
	}
	for _, p := range []string{"/api/call-logs/" + theirCall.ID.String(), "/api/call-logs/" + theirCall.ID.String() + "/recording",
		"/api/call-transfers/" + theirTransfer.ID.String()} {
		f.Do("GET", p, nil, admin).Expect(t, 404)
	}
	for _, p := range []string{"/api/call-logs/x", "/api/call-logs/x/recording", "/api/call-transfers/x"} {
		f.Do("GET", p, nil, admin).Expect(t, 400)
	}
}

// Control requests are validated before any call is touched: connect needs
// an SDP offer with audio, initiate two UUIDs, outgoing its three fields.
func TestCallControlRequestsAreValidated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	rows := callRows{t, f}
	l := rows.call(uuid.MustParse(f.orgID), time.Now())
	tr := rows.transfer(l, models.TransferWaiting, time.Now())
	connect := "/api/call-transfers/" + tr.ID.String() + "/connect"
	for _, c := range []struct {
		method, path string
		body         any
		want         string
	}{
		{"POST", connect, map[string]any{}, "sdp_offer is required"},
		{"POST", connect, map[string]any{"sdp_offer": ""}, "sdp_offer is required"},
		{"POST", connect, map[string]any{"sdp_offer": 42}, "sdp_offer must be of type string"},
		{"POST", connect, map[string]any{"sdp_offer": "hello"}, "must start with v=0 and have an m=audio line"},
		{"POST", connect, map[string]any{"sdp_offer": "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"}, "m=audio"},
		{"POST", "/api/call-transfers/x/connect", map[string]any{"sdp_offer": "v=0\r\nm=audio 9 RTP 111\r\n"}, "id must be a UUID"},
		{"POST", "/api/call-transfers/initiate", map[string]any{"team_id": uuid.NewString()}, "call_log_id is required"},
		{"POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": "1", "team_id": uuid.NewString()}, "call_log_id must be a UUID"},
		{"POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": l.ID.String()}, "team_id is required"},
		{"POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": l.ID.String(), "team_id": uuid.NewString(), "agent_id": "x"}, "agent_id must be a UUID"},
		{"POST", "/api/calls/outgoing", map[string]any{"platform_account": "Main", "sdp_offer": "v=0\r\nm=audio 9 RTP 111\r\n"}, "contact_id is required"},
		{"POST", "/api/calls/outgoing", map[string]any{"contact_id": uuid.NewString(), "sdp_offer": "v=0\r\nm=audio 9 RTP 111\r\n"}, "platform_account is required"},
		{"POST", "/api/calls/outgoing", map[string]any{"contact_id": uuid.NewString(), "platform_account": "Main"}, "sdp_offer is required"},
		{"POST", "/api/calls/permission-request", map[string]any{"platform_account": "Main"}, "contact_id is required"},
		{"POST", "/api/calls/permission-request", map[string]any{"contact_id": uuid.NewString()}, "platform_account is required"},
		{"GET", "/api/calls/permission/" + uuid.NewString(), nil, "platform_account is required"},
		{"GET", "/api/calls/permission/nope?platform_account=Main", nil, "contactId must be a UUID"},
	} {
		if r := f.Do(c.method, c.path, c.body, admin).Expect(t, 400); !strings.Contains(r.Message, c.want) {
			t.Errorf("%s %s %v: %q, want %q", c.method, c.path, c.body, r.Message, c.want)
		}
	}
	// Nothing moved.
	var after models.CallTransfer
	if err := f.DB.Take(&after, "id = ?", tr.ID).Error; err != nil || after.Status != models.TransferWaiting || after.AgentID != nil {
		t.Fatalf("transfer after refused requests: %+v, %v", after, err)
	}
}

// A permission request sends exactly one interactive
// call_permission_request message; the permission's status is the
// provider's on every read.
func TestCallPermissionsThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550170077", "name": "Callee"}, admin).Expect(t, 201).Into(t, &contact)
	sent := func() []platformsim.Message {
		return f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: "15550170077"})
	}
	ask := map[string]any{"contact_id": contact.ID, "platform_account": "Main"}

	// Outside the service window, and through an unknown account: refused,
	// nothing sent.
	if r := f.Do("POST", "/api/calls/permission-request", ask, admin).Expect(t, 400); !strings.Contains(r.Message, "24 hours") {
		t.Errorf("outside the window: %q", r.Message)
	}
	f.Do("POST", "/api/calls/permission-request", map[string]any{"contact_id": contact.ID, "platform_account": "Nope"}, admin).Expect(t, 400)
	f.Do("POST", "/api/calls/permission-request", map[string]any{"contact_id": uuid.NewString(), "platform_account": "Main"}, admin).Expect(t, 404)
	if len(sent()) != 0 {
		t.Fatalf("refused requests sent %+v", sent())
	}

	if err := f.DB.Model(&models.Contact{}).Where("id = ?", contact.ID).Update("last_inbound_at", time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	var req struct {
		PermissionID string `json:"permission_id"`
	}
	f.Do("POST", "/api/calls/permission-request", ask, admin).Expect(t, 200).Into(t, &req)
	got := sent()
	if len(got) != 1 || got[0].Type != "interactive" || got[0].BizOpaqueCallbackData != req.PermissionID {
		t.Fatalf("sent %+v, permission_id %s", got, req.PermissionID)
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
	if err := json.Unmarshal(got[0].Body, &body); err != nil || body.Interactive.Type != "call_permission_request" ||
		body.Interactive.Action.Name != "call_permission_request" || body.Interactive.Body.Text == "" {
		t.Fatalf("body %s, %v", got[0].Body, err)
	}

	var perm struct {
		Status    string     `json:"status"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	path := "/api/calls/permission/" + contact.ID + "?platform_account=Main"
	f.Do("GET", path, nil, admin).Expect(t, 200).Into(t, &perm)
	if perm.Status != "no_permission" || perm.ExpiresAt != nil {
		t.Fatalf("before the answer: %+v", perm)
	}
	for _, st := range []string{platformsim.PermissionTemporary, platformsim.PermissionPermanent, platformsim.PermissionNone} {
		if err := f.Sim.SetCallPermission(f.PhoneNumberID(), "15550170077", st); err != nil {
			t.Fatal(err)
		}
		perm.ExpiresAt = nil
		f.Do("GET", path, nil, admin).Expect(t, 200).Into(t, &perm)
		if perm.Status != st || (st == platformsim.PermissionTemporary) != (perm.ExpiresAt != nil) {
			t.Errorf("%s: %+v", st, perm)
		}
	}
	// Each read asked the provider.
	if n := f.Sim.CountRequests(platformsim.RequestFilter{Method: "GET", Path: "/call_permissions"}); n != 4 {
		t.Errorf("%d permission reads at the provider, want 4", n)
	}
	// The provider's trouble is a 502.
	if err := f.Sim.InjectFault(platformsim.Fault{Method: "GET", Path: "/call_permissions", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	f.Do("GET", path, nil, admin).Expect(t, 502)

	// Another organization's admin: the contact is not theirs (checked
	// before the account's name).
	bAdmin, _ := f.orgB(t, "Permissions B", "perm-b@example.test")
	f.Do("GET", path, nil, bAdmin.Auth()).Expect(t, 404)
	f.Do("POST", "/api/calls/permission-request", ask, bAdmin.Auth()).Expect(t, 404)
	if len(sent()) != 1 {
		t.Fatalf("%d messages sent, want the one request", len(sent()))
	}
}

// ICE servers: the default STUN server for every authenticated user, and
// TURN credentials that the relay can check with its secret.
func TestICEServersThroughTheRouter(t *testing.T) {
	t.Parallel()
	type iceOut struct {
		ICEServers []struct {
			URLs       []string `json:"urls"`
			Username   string   `json:"username"`
			Credential string   `json:"credential"`
		} `json:"ice_servers"`
	}
	e := apptest.New(t, nil)
	admin := e.Admin()
	var out iceOut
	e.Do("GET", "/api/calls/ice-servers", nil, admin.Auth()).Expect(t, 200).Into(t, &out)
	if len(out.ICEServers) != 1 || strings.Join(out.ICEServers[0].URLs, ",") != "stun:stun.l.google.com:19302" || out.ICEServers[0].Username != "" {
		t.Fatalf("default %+v", out)
	}
	e.Do("GET", "/api/calls/ice-servers", nil, nil).Expect(t, 401)

	e = apptest.New(t, map[string]string{"STUN_URLS": "stun:stun.example.test:3478", "TURN_URLS": "turn:turn.example.test:3478,turns:turn.example.test:5349",
		"TURN_SECRET": "relay-secret", "TURN_TTL": "2h"})
	admin = e.Admin()
	e.Do("GET", "/api/calls/ice-servers", nil, admin.Auth()).Expect(t, 200).Into(t, &out)
	if len(out.ICEServers) != 2 || out.ICEServers[0].URLs[0] != "stun:stun.example.test:3478" || len(out.ICEServers[1].URLs) != 2 {
		t.Fatalf("configured %+v", out)
	}
	turn := out.ICEServers[1]
	expiry, user, _ := strings.Cut(turn.Username, ":")
	exp, err := strconv.ParseInt(expiry, 10, 64)
	if err != nil || user != admin.User.ID {
		t.Fatalf("username %q", turn.Username)
	}
	if left := time.Until(time.Unix(exp, 0)); left > 2*time.Hour+time.Second || left < 2*time.Hour-time.Minute {
		t.Errorf("TURN credentials valid for %v, want 2h", left)
	}
	mac := hmac.New(sha1.New, []byte("relay-secret"))
	mac.Write([]byte(turn.Username))
	if turn.Credential != base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
		t.Errorf("credential %q does not verify with the relay's secret", turn.Credential)
	}
}

// Which role may do what: a role without the calling permissions is
// refused every calling route, the ICE servers included; a role that may only
// read call logs reads them and nothing else.
func TestCallingPermissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	f.Do("POST", "/api/roles", map[string]any{"name": "Inbox only", "permissions": []string{"contacts:read", "messages:read"}}, admin).Expect(t, 201)
	f.Do("POST", "/api/roles", map[string]any{"name": "Call reader", "permissions": []string{"call_logs:read"}}, admin).Expect(t, 201)
	none := f.CreateUser(admin, "no-calls@example.test", "Inbox only").Auth()
	reader := f.CreateUser(admin, "call-reader@example.test", "Call reader").Auth()
	agent := f.CreateUser(admin, "call-agent@example.test", "Agent").Auth()
	l := callRows{t, f}.call(uuid.MustParse(f.orgID), time.Now())
	id := l.ID.String()
	offer := "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"

	routes := []struct {
		method, path string
		body         any
		perm         string
	}{
		{"GET", "/api/call-logs", nil, "call_logs:read"},
		{"GET", "/api/call-logs/" + id, nil, "call_logs:read"},
		{"GET", "/api/call-logs/" + id + "/recording", nil, "call_logs:read"},
		{"POST", "/api/call-logs/" + id + "/hold", nil, "call_transfers:write"},
		{"POST", "/api/call-logs/" + id + "/resume", nil, "call_transfers:write"},
		{"GET", "/api/call-transfers", nil, "call_transfers:read"},
		{"GET", "/api/call-transfers/" + uuid.NewString(), nil, "call_transfers:read"},
		{"POST", "/api/call-transfers/" + uuid.NewString() + "/connect", map[string]any{"sdp_offer": offer}, "call_transfers:write"},
		{"POST", "/api/call-transfers/" + uuid.NewString() + "/hangup", nil, "call_transfers:write"},
		{"POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": id, "team_id": uuid.NewString()}, "call_transfers:write"},
		{"POST", "/api/calls/outgoing", map[string]any{"contact_id": uuid.NewString(), "platform_account": "Main", "sdp_offer": offer}, "outgoing_calls:write"},
		{"POST", "/api/calls/outgoing/" + id + "/hangup", nil, "outgoing_calls:write"},
		{"POST", "/api/calls/permission-request", map[string]any{"contact_id": uuid.NewString(), "platform_account": "Main"}, "outgoing_calls:write"},
		{"GET", "/api/calls/permission/" + uuid.NewString() + "?platform_account=Main", nil, "outgoing_calls:read"},
	}
	for _, r := range routes {
		if got := f.Do(r.method, r.path, r.body, none); got.Status != 403 {
			t.Errorf("%s %s without %s: %d, want 403", r.method, r.path, r.perm, got.Status)
		}
		got := f.Do(r.method, r.path, r.body, reader)
		if (r.perm == "call_logs:read") != (got.Status != 403) {
			t.Errorf("%s %s as a call_logs:read-only role: %d", r.method, r.path, got.Status)
		}
		// The Agent holds every calling permission; a call they are not on
		// is refused by the call's own rule (the agent on it or a
		// supervisor), not by the route's permission.
		if got := f.Do(r.method, r.path, r.body, agent); got.Status == 403 && !strings.Contains(got.Message, "supervisor") {
			t.Errorf("%s %s as an Agent: 403 %q", r.method, r.path, got.Message)
		}
	}
	// ICE servers carry TURN credentials: only for those who take or place
	// calls.
	for _, who := range []apptest.Auth{none, reader} {
		r := f.Do("GET", "/api/calls/ice-servers", nil, who).Expect(t, 403)
		if !strings.Contains(r.Message, "call_transfers:write") || strings.Contains(string(r.Body), "ice_servers") {
			t.Errorf("ice servers without a calling permission: %s", r.Body)
		}
	}
	f.Do("GET", "/api/calls/ice-servers", nil, agent).Expect(t, 200)
}

// TURN credentials go only to a user session holding a calling permission
// (call_transfers:write or outgoing_calls:write): an API key is refused
// even when its creator may take calls, and so is a role without calling.
func TestICEServersOnlyForUsersWhoTakeCalls(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, map[string]string{"TURN_URLS": "turn:turn.example.test:3478", "TURN_SECRET": "relay-secret"})
	admin := e.Admin()
	e.Do("POST", "/api/roles", map[string]any{"name": "Answers calls", "permissions": []string{"call_transfers:write"}}, admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/roles", map[string]any{"name": "Places calls", "permissions": []string{"outgoing_calls:write"}}, admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/roles", map[string]any{"name": "Reads calls", "permissions": []string{"call_logs:read", "call_transfers:read",
		"outgoing_calls:read"}}, admin.Auth()).Expect(t, 201)
	answers := e.CreateUser(admin.Auth(), "answers@example.test", "Answers calls")
	places := e.CreateUser(admin.Auth(), "places@example.test", "Places calls")
	reads := e.CreateUser(admin.Auth(), "reads@example.test", "Reads calls")

	type iceOut struct {
		ICEServers []struct {
			URLs       []string `json:"urls"`
			Username   string   `json:"username"`
			Credential string   `json:"credential"`
		} `json:"ice_servers"`
	}
	for _, who := range []apptest.Session{admin, answers, places} {
		var out iceOut
		e.Do("GET", "/api/calls/ice-servers", nil, who.Auth()).Expect(t, 200).Into(t, &out)
		if len(out.ICEServers) != 2 || !strings.HasSuffix(out.ICEServers[1].Username, ":"+who.User.ID) || out.ICEServers[1].Credential == "" {
			t.Errorf("%s: %+v", who.User.ID, out)
		}
	}

	r := e.Do("GET", "/api/calls/ice-servers", nil, reads.Auth()).Expect(t, 403)
	if !strings.Contains(r.Message, "insufficient permissions: requires one of call_transfers:write, outgoing_calls:write") {
		t.Errorf("role without calling: %q", r.Message)
	}
	if strings.Contains(string(r.Body), "turn:") {
		t.Errorf("the refusal carries the relay: %s", r.Body)
	}

	// An API key of a user who may take calls (the Admin, every
	// permission) is still refused: no browser leg runs on a key.
	var key struct {
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "integration"}, admin.Auth()).Expect(t, 201).Into(t, &key)
	r = e.Do("GET", "/api/calls/ice-servers", nil, apptest.APIKey(key.Key)).Expect(t, 403)
	if !strings.Contains(r.Message, "API keys cannot use it") || strings.Contains(string(r.Body), "turn:") {
		t.Errorf("API key: %s", r.Body)
	}
}
