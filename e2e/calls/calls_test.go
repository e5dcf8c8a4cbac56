package calls_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// A customer calls, the callbridge answers with ringback, an agent
// connects from the browser: audio crosses both ways unchanged, nothing
// echoes back; the agent's hangup ends the whole call at the provider and
// in the logs.
func TestIncomingCallBridgesCallerAndAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	sc, tr := e.call()
	l := e.callLog(tr.CallLogID)
	if l.Status != models.CallAnswered || l.Direction != "incoming" || l.PlatformAccount != "Main" || l.PlatformCallID != sc.ID {
		t.Fatalf("call log %+v", l)
	}
	if got := e.Sim.CallActions(sc.ID); !slices.Equal(got, []string{"pre_accept", "accept"}) {
		t.Fatalf("actions at the provider: %v", got)
	}
	// Ringback reaches the caller before any agent.
	e.hears(sc.Peer, time.Time{}, "", 10) // ringback

	agent := e.agent("agent")
	e.connect(e.admin, agent, tr.ID, "AGENT")
	start := time.Now()
	// Audio crosses both ways (120 packets: 2.4 s of it), and the two talk
	// for at least 3 s (the durations below).
	e.hears(agent, start, sc.Tag, 120)
	e.hears(sc.Peer, start, "AGENT", 120)
	time.Sleep(time.Until(start.Add(3 * time.Second)))
	t.Logf("in %s: agent heard %d caller packets, caller heard %d agent packets", time.Since(start).Round(time.Millisecond),
		countSince(agent, start, sc.Tag), countSince(sc.Peer, start, "AGENT"))
	heard(t, agent, sc.Peer, sc.Tag) // byte-identical, or it fails
	heard(t, sc.Peer, agent, "AGENT")
	if echo := countSince(sc.Peer, time.Time{}, sc.Tag) + countSince(agent, time.Time{}, "AGENT"); echo != 0 {
		t.Fatalf("%d packets echoed back to their sender", echo)
	}
	// The caller heard ringback, then the agent, as one stream: one SSRC,
	// sequence numbers one apart, timestamps never going back.
	got := sc.Peer.Received()
	for i := 1; i < len(got); i++ {
		prev, cur := got[i-1], got[i]
		if cur.SSRC != prev.SSRC || cur.SequenceNumber != prev.SequenceNumber+1 || int32(cur.Timestamp-prev.Timestamp) < 0 {
			t.Fatalf("the caller's stream breaks at packet %d: ssrc %d->%d seq %d->%d ts %d->%d", i, prev.SSRC, cur.SSRC,
				prev.SequenceNumber, cur.SequenceNumber, prev.Timestamp, cur.Timestamp)
		}
	}
	e.waitTransfer(sc.ID, models.TransferConnected)

	var out struct {
		Status string `json:"status"`
	}
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, e.admin).Expect(t, 200).Into(t, &out)
	if out.Status != "completed" {
		t.Fatalf("hangup answered %q", out.Status)
	}
	l = e.waitLog(tr.CallLogID, models.CallCompleted)
	if l.DisconnectedBy != "agent" || l.Duration < 3 || l.AgentID != e.Admin.User.ID {
		t.Fatalf("ended call log %+v", l)
	}
	done := e.waitTransfer(sc.ID, models.TransferCompleted)
	if done.TalkDuration < 3 {
		t.Fatalf("talk_duration %d", done.TalkDuration)
	}
	if got := e.Sim.CallActions(sc.ID); got[len(got)-1] != "terminate" {
		t.Fatalf("the provider was not told: %v", got)
	}
	// A repeated hangup changes nothing.
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, e.admin).Expect(t, 409)
}

// Hold: the caller hears hold music, the agent is not heard and hears
// nothing; resume restores the bridge; the hold's time is counted.
func TestHoldAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	sc, tr := e.call()
	agent := e.agent("agent")
	e.connect(e.admin, agent, tr.ID, "AGENT")
	e.hears(sc.Peer, time.Time{}, "AGENT", 10) // bridged

	var out struct {
		Status string `json:"status"`
	}
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/hold", nil, e.admin).Expect(t, 200).Into(t, &out)
	if out.Status != "on_hold" || e.callLog(tr.CallLogID).Status != models.CallOnHold {
		t.Fatalf("hold answered %q", out.Status)
	}
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/hold", nil, e.admin).Expect(t, 409)
	e.drained(sc.Peer, "AGENT")
	held := e.drained(agent, sc.Tag)
	time.Sleep(2 * time.Second)    // on hold for 2 s (hold_duration below)
	e.hears(sc.Peer, held, "", 80) // hold music
	music, agentHeard, callerHeard := countSince(sc.Peer, held, ""), countSince(sc.Peer, held, "AGENT"), countSince(agent, held, sc.Tag)
	t.Logf("on hold: caller got %d packets (%d from the agent), agent got %d from the caller", music, agentHeard, callerHeard)
	if agentHeard != 0 || callerHeard != 0 {
		t.Fatalf("on hold: caller got %d packets of which %d from the agent; agent heard %d", music, agentHeard, callerHeard)
	}

	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/resume", nil, e.admin).Expect(t, 200).Into(t, &out)
	if out.Status != "connected" {
		t.Fatalf("resume answered %q", out.Status)
	}
	e.Do("POST", "/api/call-logs/"+tr.CallLogID+"/resume", nil, e.admin).Expect(t, 409)
	e.hears(sc.Peer, time.Now(), "AGENT", 30) // the agent again
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/hangup", nil, e.admin).Expect(t, 200)
	if done := e.waitTransfer(sc.ID, models.TransferCompleted); done.HoldDuration < 2 {
		t.Fatalf("hold_duration %d", done.HoldDuration)
	}
}

// The caller hangs up: a waiting transfer is abandoned, a connected one
// completed; a repeated terminate webhook is harmless.
func TestCallerHangsUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	sc, tr := e.call()
	if _, err := e.Sim.TerminateCall(context.Background(), sc.ID); err != nil {
		t.Fatal(err)
	}
	e.waitTransfer(sc.ID, models.TransferAbandoned)
	if l := e.waitLog(tr.CallLogID, models.CallMissed); l.DisconnectedBy != "caller" {
		t.Fatalf("abandoned call log %+v", l)
	}

	sc, tr = e.call()
	e.connect(e.admin, e.agent("agent"), tr.ID, "AGENT")
	time.Sleep(1500 * time.Millisecond)
	if _, err := e.Sim.TerminateCall(context.Background(), sc.ID); err != nil {
		t.Fatal(err)
	}
	e.waitTransfer(sc.ID, models.TransferCompleted)
	l := e.waitLog(tr.CallLogID, models.CallCompleted)
	if l.DisconnectedBy != "caller" || l.Duration < 1 {
		t.Fatalf("completed call log %+v", l)
	}
	// The provider sends the terminate again: nothing moves.
	e.postTerminate(sc.ID)
	e.inboundSettled()
	time.Sleep(500 * time.Millisecond) // and what the worker asked the callbridge
	again := e.callLog(tr.CallLogID)
	again.RecordingDuration, l.RecordingDuration = 0, 0 // the recording lands meanwhile
	if again != l {
		t.Fatalf("a duplicate terminate changed the log: %+v -> %+v", l, again)
	}
}

// No agent within transfer_timeout_secs: the transfer is no_answer and the
// call ends at the provider.
func TestNoAgentInTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2, 0)
	sc, tr := e.call()
	e.waitTransfer(sc.ID, models.TransferNoAnswer)
	if l := e.waitLog(tr.CallLogID, models.CallMissed); l.DisconnectedBy != "system" {
		t.Fatalf("call log %+v", l)
	}
	if got := e.Sim.CallActions(sc.ID); got[len(got)-1] != "terminate" {
		t.Fatalf("actions %v", got)
	}
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/connect", map[string]any{"sdp_offer": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"},
		e.admin).Expect(t, 409)
}

// max_call_duration ends a call, counted from the answer: not before the
// limit, by the system. (How soon after it is the callbridge's timer: a busy
// machine delays it, so the test does not bound it beyond its wait for the
// end.) The agent connects, but the test does not wait for the agent's
// leg: on a busy machine ICE may take longer than the call is allowed.
func TestMaxCallDuration(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 10)
	sc, tr := e.call()
	answered := time.Now()
	agent := e.agent("agent")
	offer, err := agent.Offer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		SDPAnswer string `json:"sdp_answer"`
	}
	e.Do("POST", "/api/call-transfers/"+tr.ID+"/connect", map[string]any{"sdp_offer": offer}, e.admin).Expect(t, 200).Into(t, &ans)
	if err := agent.SetAnswer(ans.SDPAnswer); err != nil {
		t.Fatal(err)
	}
	l := e.waitLog(tr.CallLogID, models.CallCompleted)
	took := time.Since(answered)
	t.Logf("ended %s after the answer: %+v", took.Round(time.Millisecond), l)
	if took < 9*time.Second || l.DisconnectedBy != "system" || l.Duration < 10 {
		t.Fatalf("ended after %s: %+v", took, l)
	}
	if got := e.Sim.CallActions(sc.ID); got[len(got)-1] != "terminate" {
		t.Fatalf("actions %v", got)
	}
}

// Two agents connect at once: one wins, the other gets 409 and changes
// nothing. A missing or malformed sdp_offer is a 400 that changes nothing.
func TestConcurrentConnectsHaveOneWinner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	_, tr := e.call()
	second := e.CreateUser(e.admin, "calls-agent-2@example.test", "Agent").Auth()
	for _, body := range []map[string]any{{}, {"sdp_offer": ""}, {"sdp_offer": "hello"}, {"sdp_offer": 42}} {
		e.Do("POST", "/api/call-transfers/"+tr.ID+"/connect", body, e.admin).Expect(t, 400)
	}
	if got := e.waitTransfer(tr.PlatformCallID, models.TransferWaiting); got.AgentID != "" {
		t.Fatalf("a bad offer changed the transfer: %+v", got)
	}
	peers := []*struct {
		auth apptest.Auth
		code int
	}{{auth: e.admin}, {auth: second}}
	offers := make([]string, len(peers))
	for i := range peers {
		var err error
		if offers[i], err = e.agent("agent").Offer(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			p.code = e.Do("POST", "/api/call-transfers/"+tr.ID+"/connect", map[string]any{"sdp_offer": offers[i]}, p.auth).Status
		})
	}
	wg.Wait()
	codes := []int{peers[0].code, peers[1].code}
	slices.Sort(codes)
	if !slices.Equal(codes, []int{200, 409}) {
		t.Fatalf("connect codes %v, want one 200 and one 409", codes)
	}
}

// Calling off: the call is not answered and is logged missed.
func TestCallingDisabledLeavesTheCallUnanswered(t *testing.T) {
	t.Parallel()
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	f.StartCallBridge(nil)
	sc, _, err := f.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: f.PhoneNumberID(), From: "15559990001"})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Peer.Close()
	var l models.CallLog
	apptest.Eventually(t, 10*time.Second, "missed call log", func() bool {
		return f.DB.Where("platform_call_id = ?", sc.ID).Take(&l).Error == nil
	})
	if l.Status != models.CallMissed || l.EndedAt == nil {
		t.Fatalf("call log %+v", l)
	}
	time.Sleep(500 * time.Millisecond)
	if got := f.Sim.CallActions(sc.ID); len(got) != 0 {
		t.Fatalf("a disabled organization answered: %v", got)
	}
	// Nor can its agents call out.
	r := f.Do("POST", "/api/calls/outgoing", map[string]any{"contact_id": l.ContactID.String(), "platform_account": "Main",
		"sdp_offer": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"}, f.Admin.Auth()).Expect(t, 403)
	if !strings.Contains(r.Message, "calling is disabled") {
		t.Fatalf("outgoing with calling off: %q", r.Message)
	}
}

// Two callbridges share the calls: each answers some, and the control
// requests of every call reach the instance that carries it.
func TestTwoCallbridgesShareTheCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	second := e.StartCallBridge(nil)
	type placed struct {
		tr    transferOut
		agent string
	}
	var calls []placed
	// Redis hands a new call to the instance that has waited longest, so
	// two idle instances take turns; on a busy machine one may not be
	// waiting yet when a call comes, so calls are placed (up to eight)
	// until each instance carries one.
	shared := false
	for i := range 8 {
		sc, tr := e.call()
		agent := e.agent("agent")
		tag := "A" + strconv.Itoa(i)
		e.connect(e.admin, agent, tr.ID, tag)
		calls = append(calls, placed{tr: tr, agent: tag})
		apptest.Eventually(t, 5*time.Second, "audio of call "+tag, func() bool {
			return countSince(sc.Peer, time.Time{}, tag) > 20 && countSince(agent, time.Time{}, sc.Tag) > 20
		})
		if n := second.ActiveCalls(); n > 0 && n < len(calls) {
			shared = true
			break
		}
	}
	if !shared {
		t.Fatalf("the second callbridge carries %d of %d calls", second.ActiveCalls(), len(calls))
	}
	for _, c := range calls {
		e.Do("POST", "/api/call-logs/"+c.tr.CallLogID+"/hold", nil, e.admin).Expect(t, 200)
		e.Do("POST", "/api/call-transfers/"+c.tr.ID+"/hangup", nil, e.admin).Expect(t, 200)
		e.waitLog(c.tr.CallLogID, models.CallCompleted)
	}
}
