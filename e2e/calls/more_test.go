package calls_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// A transfer to a team: the first agent is no longer bridged, the caller
// hears ringback, a new transfer waits with the team and the agent the
// round-robin strategy picked, who connects and is bridged.
func TestTransferToATeam(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	member := e.CreateUser(e.admin, "calls-team-member@example.test", "Agent")
	var team struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/teams", map[string]any{"name": "Billing"}, e.admin).Expect(t, 201).Into(t, &team)
	e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": member.User.ID, "role": "agent"}, e.admin).Expect(t, 201)

	sc, tr := e.call()
	first := e.agent("first")
	e.connect(e.admin, first, tr.ID, "FIRST")
	e.hears(sc.Peer, time.Time{}, "FIRST", 10) // bridged
	e.Do("POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": "not-a-uuid"}, e.admin).Expect(t, 400)
	e.Do("POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": team.ID,
		"agent_id": e.Admin.User.ID}, e.admin).Expect(t, 400) // not a member
	var out struct {
		Status string `json:"status"`
	}
	e.Do("POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": team.ID}, e.admin).
		Expect(t, 200).Into(t, &out)
	if out.Status != "transferring" || e.callLog(tr.CallLogID).Status != models.CallTransferring {
		t.Fatalf("initiate answered %q", out.Status)
	}
	next := e.waitTransfer(sc.ID, models.TransferWaiting)
	if next.ID == tr.ID || next.TeamID != team.ID || next.InitiatingAgentID != e.Admin.User.ID || next.AgentID != member.User.ID {
		t.Fatalf("new transfer %+v", next)
	}
	var old transferOut
	e.Do("GET", "/api/call-transfers/"+tr.ID, nil, e.admin).Expect(t, 200).Into(t, &old)
	if old.Status != models.TransferCompleted {
		t.Fatalf("old transfer %+v", old)
	}
	e.drained(sc.Peer, "FIRST")
	moved := e.drained(first, sc.Tag)
	e.hears(sc.Peer, moved, "", 30) // ringback
	if n := countSince(first, moved, sc.Tag); n != 0 {
		t.Fatalf("the first agent still hears the caller (%d packets)", n)
	}
	if ring, fromFirst := countSince(sc.Peer, moved, ""), countSince(sc.Peer, moved, "FIRST"); fromFirst != 0 {
		t.Fatalf("caller during the transfer: %d packets, %d from the first agent", ring, fromFirst)
	}
	// Only the assigned agent may take it.
	e.Do("POST", "/api/call-transfers/"+next.ID+"/connect", map[string]any{"sdp_offer": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"},
		e.admin).Expect(t, 403)
	second := e.agent("second")
	e.connect(member.Auth(), second, next.ID, "SECOND")
	joined := time.Now()
	e.hears(second, joined, sc.Tag, 70)
	e.hears(sc.Peer, joined, "SECOND", 70)
	if l := e.callLog(tr.CallLogID); l.Status != models.CallConnected || l.AgentID != member.User.ID {
		t.Fatalf("call log after the transfer %+v", l)
	}
}

// Outgoing calls: refused without the callee's permission (no call left
// behind), bridged when the callee picks up, hung up by the agent.
func TestOutgoingCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	var contact struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15557770001", "profile_name": "Callee"}, e.admin).
		Expect(t, 201).Into(t, &contact)
	agent := e.agent("agent")
	offer, err := agent.Offer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"contact_id": contact.ID, "platform_account": "Main", "sdp_offer": offer}
	r := e.Do("POST", "/api/calls/outgoing", body, e.admin).Expect(t, 403)
	if !strings.Contains(r.Message, "permission") {
		t.Fatalf("no permission: %q", r.Message)
	}
	var open int64
	e.DB.Model(&models.CallLog{}).Where("ended_at IS NULL").Count(&open)
	if open != 0 {
		t.Fatalf("%d calls left open after a refused call", open)
	}
	e.Do("POST", "/api/calls/outgoing", map[string]any{"contact_id": contact.ID, "platform_account": "Nope", "sdp_offer": offer}, e.admin).
		Expect(t, 400)

	if err := e.Sim.SetCallPermission(e.PhoneNumberID(), "15557770001", platformsim.PermissionTemporary); err != nil {
		t.Fatal(err)
	}
	var placed struct {
		CallLogID string `json:"call_log_id"`
		SDPAnswer string `json:"sdp_answer"`
	}
	e.Do("POST", "/api/calls/outgoing", body, e.admin).Expect(t, 200).Into(t, &placed)
	if err := agent.SetAnswer(placed.SDPAnswer); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.WaitLimit(10*time.Second))
	defer cancel()
	if err := agent.Connected(ctx); err != nil {
		t.Fatal(err)
	}
	agent.StartSending("AGENT")
	l := e.waitLog(placed.CallLogID, models.CallAccepted)
	if l.Direction != "outgoing" || !strings.HasPrefix(l.PlatformCallID, "wacid.") {
		t.Fatalf("outgoing log %+v", l)
	}
	callee := e.Sim.CallPeer(l.PlatformCallID)
	if callee == nil {
		t.Fatal("the simulator has no peer for the call")
	}
	since := time.Now()
	e.hears(agent, since, "", 70)
	e.hears(callee, since, "AGENT", 70)
	var out struct {
		Status string `json:"status"`
	}
	e.Do("POST", "/api/calls/outgoing/"+placed.CallLogID+"/hangup", nil, e.admin).Expect(t, 200).Into(t, &out)
	if out.Status != "ok" {
		t.Fatalf("hangup answered %q", out.Status)
	}
	if l := e.waitLog(placed.CallLogID, models.CallCompleted); l.DisconnectedBy != "agent" {
		t.Fatalf("ended %+v", l)
	}

	// A callee who declines.
	e.Sim.SetCallBehaviour("15557770001", platformsim.CallBehaviour{Answer: false, RingFor: 200 * time.Millisecond})
	offer, _ = e.agent("again").Offer(context.Background())
	body["sdp_offer"] = offer
	e.Do("POST", "/api/calls/outgoing", body, e.admin).Expect(t, 200).Into(t, &placed)
	e.waitLog(placed.CallLogID, models.CallRejected)
}

// Recordings: the mixed file lasts the talk time (within 5 %), its URL
// works without credentials until it expires and not when tampered with.
func TestRecordingOfATalk(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffmpeg is not installed")
	}
	e := newEnv(t, 0, 0)
	sc, tr := e.call()
	e.connect(e.admin, e.agent("agent"), tr.ID, "AGENT")
	time.Sleep(6 * time.Second)
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, e.admin).Expect(t, 200)
	apptest.Eventually(t, 30*time.Second, "the recording", func() bool { return e.callLog(tr.CallLogID).RecordingDuration > 0 })
	var ct models.CallTransfer
	if err := e.DB.Where("platform_call_id = ?", sc.ID).Take(&ct).Error; err != nil {
		t.Fatal(err)
	}
	talk := ct.EndedAt.Sub(*ct.ConnectedAt).Seconds()

	var rec struct {
		URL       string    `json:"url"`
		Duration  int       `json:"duration"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	e.Do("GET", "/api/call-logs/"+tr.CallLogID+"/recording", nil, e.admin).Expect(t, 200).Into(t, &rec)
	if left := time.Until(rec.ExpiresAt); left <= 0 || left > 900*time.Second {
		t.Fatalf("recording URL expires in %s", left)
	}
	// The URL is under PUBLIC_URL; the test's api listens elsewhere.
	rel, ok := strings.CutPrefix(rec.URL, e.Cfg.PublicURL)
	if !ok || !strings.Contains(rel, "expires="+strconv.FormatInt(rec.ExpiresAt.Unix(), 10)) {
		t.Fatalf("recording URL %s (PUBLIC_URL %s, expires_at %s)", rec.URL, e.Cfg.PublicURL, rec.ExpiresAt)
	}
	rec.URL = e.Server.URL + rel
	res, err := http.Get(rec.URL)
	if err != nil {
		t.Fatal(err)
	}
	audio, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "audio/") || len(audio) < 1000 {
		t.Fatalf("recording: %d %s %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(audio))
	}
	got := probeSeconds(t, rec.URL)
	t.Logf("talk %.2f s, recording %.2f s", talk, got)
	if got < talk*0.95 || got > talk*1.05 {
		t.Fatalf("recording lasts %.2f s for %.2f s of talk", got, talk)
	}
	tampered := strings.Replace(rec.URL, "expires=", "expires=1", 1)
	if res, err := http.Get(tampered); err != nil || res.StatusCode != 403 {
		t.Fatalf("tampered URL: %v %v", res.StatusCode, err)
	}
}

func probeSeconds(t *testing.T, url string) float64 {
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", url).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("ffprobe said %q", out)
	}
	return d
}

// A second organization gets 404 on every call id of the first.
func TestAnotherTenantGets404OnEveryCallID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	_, tr := e.call()
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Calls B"}, e.admin).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, e.admin).Expect(t, 200).Into(t, &inB)
	b := e.CreateUser(inB.Auth(), "calls-b@example.test", "Admin").Auth()
	offer := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
	var teamB struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/teams", map[string]any{"name": "B team"}, b).Expect(t, 201).Into(t, &teamB)
	var contact models.CallLog
	if err := e.DB.Where("id = ?", tr.CallLogID).Take(&contact).Error; err != nil {
		t.Fatal(err)
	}
	contactA := contact.ContactID.String()
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/call-logs/" + tr.CallLogID, nil},
		{"GET", "/api/call-logs/" + tr.CallLogID + "/recording", nil},
		{"POST", "/api/call-logs/" + tr.CallLogID + "/hold", nil},
		{"POST", "/api/call-logs/" + tr.CallLogID + "/resume", nil},
		{"GET", "/api/call-transfers/" + tr.ID, nil},
		{"POST", "/api/call-transfers/" + tr.ID + "/connect", map[string]any{"sdp_offer": offer}},
		{"POST", "/api/call-transfers/" + tr.ID + "/hangup", nil},
		{"POST", "/api/calls/outgoing/" + tr.CallLogID + "/hangup", nil},
		{"POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": teamB.ID}},
		{"POST", "/api/calls/outgoing", map[string]any{"contact_id": contactA, "platform_account": "Main", "sdp_offer": offer}},
		{"GET", "/api/calls/permission/" + contactA + "?platform_account=Main", nil},
		{"POST", "/api/calls/permission-request", map[string]any{"contact_id": contactA, "platform_account": "Main"}},
	} {
		if r := e.Do(c.method, c.path, c.body, b); r.Status != 404 {
			t.Errorf("%s %s from another organization: %d", c.method, c.path, r.Status)
		}
	}
	// The call is untouched.
	if got := e.waitTransfer(tr.PlatformCallID, models.TransferWaiting); got.AgentID != "" {
		t.Fatalf("transfer %+v", got)
	}
}

// A callbridge that dies: a request for its call fails cleanly, the call
// is ended at the provider and logged.
func TestDeadCallbridgeEndsItsCalls(t *testing.T) {
	t.Parallel()
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	e := &env{Fixture: f, t: t, admin: f.Admin.Auth()}
	e.Do("PUT", "/api/org/settings", map[string]any{"calling_enabled": true}, e.admin).Expect(t, 200)
	p := f.StartCallBridgeProcess(nil)
	sc, tr := e.call()
	p.Kill()
	time.Sleep(6 * time.Second) // past calling.AliveWithin
	r := e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/hold", nil, e.admin)
	if r.Status != 409 || !strings.Contains(r.Message, "callbridge") {
		t.Fatalf("hold on a dead callbridge's call: %d %q", r.Status, r.Message)
	}
	if l := e.waitLog(tr.CallLogID, models.CallFailed); l.DisconnectedBy != "system" {
		t.Fatalf("call log %+v", l)
	}
	if got := e.Sim.CallActions(sc.ID); got[len(got)-1] != "terminate" {
		t.Fatalf("actions %v", got)
	}
}

// Who may control a call: the agent on it, or a supervisor
// (transfers:assign: Admin, Manager); another agent of the organization
// gets 403 and changes nothing.
func TestAgentsControlOnlyTheirOwnCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	onCall := e.CreateUser(e.admin, "calls-on@example.test", "Agent")
	other := e.CreateUser(e.admin, "calls-other@example.test", "Agent").Auth()
	manager := e.CreateUser(e.admin, "calls-manager@example.test", "Manager").Auth()
	var team struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/teams", map[string]any{"name": "Support"}, e.admin).Expect(t, 201).Into(t, &team)

	_, tr := e.call()
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, other).Expect(t, 403) // nobody is on it yet
	e.connect(onCall.Auth(), e.agent("agent"), tr.ID, "AGENT")
	for _, c := range []struct{ path string }{
		{"/api/call-logs/" + tr.CallLogID + "/hold"},
		{"/api/call-transfers/" + tr.ID + "/hangup"},
	} {
		if r := e.Do("POST", c.path, nil, other); r.Status != 403 || !strings.Contains(r.Message, "supervisor") {
			t.Fatalf("%s by another agent: %d %q", c.path, r.Status, r.Message)
		}
	}
	e.Do("POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": team.ID}, other).Expect(t, 403)
	if l := e.callLog(tr.CallLogID); l.Status != models.CallAnswered || l.AgentID != onCall.User.ID {
		t.Fatalf("refused requests changed the call: %+v", l)
	}
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/hold", nil, onCall.Auth()).Expect(t, 200)
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/resume", nil, other).Expect(t, 403)
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/resume", nil, manager).Expect(t, 200)
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, manager).Expect(t, 200)
	e.waitLog(tr.CallLogID, models.CallCompleted)
}

// A call moved to a team waits for that team: an agent outside it cannot
// take it (403, and the transfer still waits), a member can.
func TestCallTransfersStayInTheirTeam(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	member := e.CreateUser(e.admin, "calls-billing@example.test", "Agent")
	outsider := e.CreateUser(e.admin, "calls-outsider@example.test", "Agent")
	var team struct {
		ID string `json:"id"`
	}
	e.Do("POST", "/api/teams", map[string]any{"name": "Billing", "assignment_strategy": "manual"}, e.admin).Expect(t, 201).Into(t, &team)
	e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": member.User.ID, "role": "agent"}, e.admin).Expect(t, 201)

	// The outsider's and the member's event streams: the team's ringing goes
	// to the member only (checked at the end).
	outStream := e.OpenStream(e.Server.URL, "/api/events", outsider.Auth(), nil)
	inStream := e.OpenStream(e.Server.URL, "/api/events", member.Auth(), nil)
	if outStream.Status != 200 || inStream.Status != 200 {
		t.Fatalf("streams: %d %d", outStream.Status, inStream.Status)
	}

	sc, tr := e.call()
	e.connect(e.admin, e.agent("first"), tr.ID, "FIRST")
	e.Do("POST", "/api/call-transfers/initiate", map[string]any{"call_log_id": tr.CallLogID, "team_id": team.ID}, e.admin).Expect(t, 200)
	next := e.waitTransfer(sc.ID, models.TransferWaiting)
	if next.ID == tr.ID || next.TeamID != team.ID || next.AgentID != "" {
		t.Fatalf("the team's transfer %+v", next)
	}

	offer, err := e.agent("outsider").Offer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := e.Do("POST", "/api/call-transfers/"+next.ID+"/connect", map[string]any{"sdp_offer": offer}, outsider.Auth()).Expect(t, 403)
	if !strings.Contains(r.Message, "another team") {
		t.Errorf("outsider's connect: %q", r.Message)
	}
	var still transferOut
	e.Do("GET", "/api/call-transfers/"+next.ID, nil, e.admin).Expect(t, 200).Into(t, &still)
	if still.Status != models.TransferWaiting || still.AgentID != "" {
		t.Fatalf("the refusal changed the transfer: %+v", still)
	}
	e.connect(member.Auth(), e.agent("member"), next.ID, "MEMBER")
	if l := e.callLog(tr.CallLogID); l.AgentID != member.User.ID {
		t.Fatalf("call log after the member took it: %+v", l)
	}

	// The member's stream rang for the team's transfer and said it was
	// answered; the outsider's carried the first transfer's events (no
	// team: anyone may take it) and nothing of the team's.
	transfersOn := func(s *apptest.EventStream, until string) map[string][]string {
		seen := map[string][]string{}
		deadline := time.Now().Add(apptest.MinWait)
		for time.Now().Before(deadline) {
			ev, ok := s.Next(time.Until(deadline))
			if !ok {
				break
			}
			var ce struct {
				Type string `json:"type"`
				Data struct {
					CallTransferID string `json:"call_transfer_id"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &ce); err != nil {
				t.Fatal(err)
			}
			seen[ce.Data.CallTransferID] = append(seen[ce.Data.CallTransferID], ce.Type)
			if ce.Data.CallTransferID == until && ce.Type == "call.answered" {
				break
			}
		}
		return seen
	}
	if got := transfersOn(inStream, next.ID)[next.ID]; len(got) != 2 || got[0] != "call.ringing" || got[1] != "call.answered" {
		t.Fatalf("the member's stream carried %v of the team's transfer", got)
	}
	// The outsider's stream: read up to the first transfer's answer, then
	// whatever came within a quiet second after the member's answer.
	seen := transfersOn(outStream, tr.ID)
	for {
		ev, ok := outStream.Next(time.Second)
		if !ok {
			break
		}
		var ce struct {
			Data struct {
				CallTransferID string `json:"call_transfer_id"`
			} `json:"data"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &ce)
		seen[ce.Data.CallTransferID] = append(seen[ce.Data.CallTransferID], ce.Type)
	}
	if got := seen[tr.ID]; len(got) < 2 || got[0] != "call.ringing" {
		t.Fatalf("the outsider's stream carried %v of the first transfer", got)
	}
	if got := seen[next.ID]; len(got) != 0 {
		t.Fatalf("the outsider's stream carried the team's transfer: %v", got)
	}
}
