package platformsim

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/platformsim/rtcpeer"
)

// callHook is the value of a received "calls" webhook: call events or call
// statuses.
type callHook struct {
	Metadata struct {
		PhoneNumberID string `json:"phone_number_id"`
	} `json:"metadata"`
	Calls    []map[string]any `json:"calls"`
	Statuses []map[string]any `json:"statuses"`
}

func (rc *receiver) callHooks() []callHook {
	var out []callHook
	for _, h := range rc.hooks("calls") {
		var v callHook
		if err := json.Unmarshal(h.Entry[0].Changes[0].Value, &v); err != nil {
			rc.t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// callEventHooks keeps the webhooks that carry call events (not statuses).
func (rc *receiver) callEventHooks() []callHook {
	return slices.DeleteFunc(rc.callHooks(), func(h callHook) bool { return len(h.Calls) == 0 })
}

// describe renders a calls webhook as "status:RINGING" or "event:connect"
// for order assertions.
func (h callHook) describe() string {
	if len(h.Statuses) > 0 {
		return "status:" + h.Statuses[0]["status"].(string)
	}
	return "event:" + h.Calls[0]["event"].(string)
}

// hooksOfCall waits until the calls webhooks about callID number n.
func hooksOfCall(t *testing.T, f *fixture, callID string, n int) []callHook {
	t.Helper()
	var got []callHook
	waitFor(t, 10*time.Second, "calls webhooks of "+callID, func() bool {
		got = got[:0]
		for _, h := range f.recv.callHooks() {
			if len(h.Calls) > 0 && h.Calls[0]["id"] == callID || len(h.Statuses) > 0 && h.Statuses[0]["id"] == callID {
				got = append(got, h)
			}
		}
		return len(got) >= n
	})
	return got
}

func (f *fixture) callAction(t *testing.T, callID, action, answer string) (int, map[string]any) {
	t.Helper()
	body := map[string]any{"messaging_product": "whatsapp", "call_id": callID, "action": action}
	if answer != "" {
		body["session"] = map[string]any{"sdp_type": "answer", "sdp": answer}
	}
	return f.do(t, "POST", "/v21.0/"+f.phone+"/calls", testToken, body)
}

func newPeer(t *testing.T, name string) *rtcpeer.Peer {
	t.Helper()
	p, err := rtcpeer.New(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// audioFlows waits until each peer heard at least n packets tagged by the
// other and checks that what arrived is byte for byte what was sent.
func audioFlows(t *testing.T, a *rtcpeer.Peer, aTag string, b *rtcpeer.Peer, bTag string, n int) {
	t.Helper()
	waitFor(t, 15*time.Second, "audio both ways", func() bool {
		return a.ReceivedFrom(bTag) >= n && b.ReceivedFrom(aTag) >= n
	})
	for _, dir := range []struct {
		from, to *rtcpeer.Peer
		tag      string
	}{{a, b, aTag}, {b, a, bTag}} {
		sent := dir.from.Sent()
		for _, p := range dir.to.Received() {
			tag, counter, ok := rtcpeer.Tagged(p.Payload)
			if !ok || tag != dir.tag {
				t.Fatalf("%s received a packet not tagged %q: % x", dir.to.Name(), dir.tag, p.Payload)
			}
			if int(counter) >= len(sent) || !bytes.Equal(sent[counter], p.Payload) {
				t.Fatalf("%s received packet %d unlike what %s sent", dir.to.Name(), counter, dir.from.Name())
			}
		}
	}
}

func TestPlaceCallWithMedia(t *testing.T) {
	f := setup(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call, code, err := f.sim.PlaceCall(ctx, IncomingCall{PhoneNumberID: f.phone, From: "15550003333", ProfileName: "Caller"})
	if err != nil || code != 200 {
		t.Fatalf("place call: %d %v", code, err)
	}
	if call.Tag != CallTag(call.ID) || len(call.Tag) != 6 || f.sim.CallPeer(call.ID) != call.Peer {
		t.Fatalf("call %+v", call)
	}
	hs := f.recv.callHooks()
	if len(hs) != 1 || len(hs[0].Calls) != 1 {
		t.Fatalf("calls webhooks %+v", hs)
	}
	ev := hs[0].Calls[0]
	session, _ := ev["session"].(map[string]any)
	offer, _ := session["sdp"].(string)
	if ev["id"] != call.ID || ev["event"] != "connect" || ev["direction"] != "USER_INITIATED" || session["sdp_type"] != "offer" ||
		!strings.Contains(offer, "m=audio ") || !strings.Contains(offer, "a=candidate:") || !strings.Contains(offer, "opus/48000/2") {
		t.Fatalf("connect event %v", ev)
	}

	// The business (here the agent's side, directly) answers the real offer.
	agent := newPeer(t, "agent")
	answer, err := agent.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := f.callAction(t, call.ID, "pre_accept", answer); code != 200 {
		t.Fatalf("pre_accept: %d %v", code, out)
	}
	for _, p := range []*rtcpeer.Peer{call.Peer, agent} {
		if err := p.Connected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Pre-accepted: connected, but the caller says nothing yet.
	time.Sleep(100 * time.Millisecond)
	if n := len(call.Peer.Sent()); n != 0 {
		t.Errorf("the caller sent %d packets before accept", n)
	}
	// A different answer cannot replace the one given.
	other := newPeer(t, "other")
	otherAnswer, err := other.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	code, out := f.callAction(t, call.ID, "accept", otherAnswer)
	wantError(t, code, out, 400, 131009)
	if code, out := f.callAction(t, call.ID, "accept", answer); code != 200 {
		t.Fatalf("accept: %d %v", code, out)
	}

	agent.StartSending("agent")
	audioFlows(t, call.Peer, call.Tag, agent, "agent", 20)
	if got := f.sim.CallActions(call.ID); !slices.Equal(got, []string{"pre_accept", "accept"}) {
		t.Errorf("actions %v", got)
	}

	if code, out := f.callAction(t, call.ID, "terminate", ""); code != 200 {
		t.Fatalf("terminate: %d %v", code, out)
	}
	select {
	case <-call.Peer.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the caller's peer is still open after terminate")
	}
	if got := f.sim.CallActions(call.ID); !slices.Equal(got, []string{"pre_accept", "accept", "terminate"}) {
		t.Errorf("actions after the end %v", got)
	}
	if f.sim.CallPeer(call.ID) != call.Peer {
		t.Error("the ended call's peer is gone")
	}
	code, out = f.callAction(t, call.ID, "terminate", "")
	wantError(t, code, out, 400, 100)
}

func TestPlaceCallUserHangsUp(t *testing.T) {
	f := setup(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call, _, err := f.sim.PlaceCall(ctx, IncomingCall{PhoneNumberID: f.phone, From: "15550004444"})
	if err != nil {
		t.Fatal(err)
	}
	offer := f.recv.callHooks()[0].Calls[0]["session"].(map[string]any)["sdp"].(string)
	agent := newPeer(t, "agent")
	answer, err := agent.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := f.callAction(t, call.ID, "accept", answer); code != 200 {
		t.Fatalf("accept: %d %v", code, out)
	}
	waitFor(t, 15*time.Second, "the caller's audio", func() bool { return agent.ReceivedFrom(call.Tag) >= 5 })

	if code, err := f.sim.TerminateCall(ctx, call.ID); err != nil || code != 200 {
		t.Fatalf("hang up: %d %v", code, err)
	}
	select {
	case <-call.Peer.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the caller's peer is still open after the hang-up")
	}
	hs := f.recv.callEventHooks()
	if ev := hs[len(hs)-1].Calls[0]; ev["event"] != "terminate" || ev["status"] != "COMPLETED" {
		t.Errorf("terminate event %v", ev)
	}
	if got := f.sim.CallActions(call.ID); !slices.Equal(got, []string{"accept"}) {
		t.Errorf("actions %v", got)
	}
}

func TestBusinessInitiatedCallAnswered(t *testing.T) {
	f := setup(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const user = "15550005555"
	if err := f.sim.SetCallPermission(f.phone, user, PermissionPermanent); err != nil {
		t.Fatal(err)
	}
	biz := newPeer(t, "business")
	offer, err := biz.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/calls", testToken, map[string]any{
		"messaging_product": "whatsapp", "to": user, "action": "connect",
		"session": map[string]any{"sdp_type": "offer", "sdp": offer}})
	if code != 200 {
		t.Fatalf("connect: %d %v", code, out)
	}
	callID := out["calls"].([]any)[0].(map[string]any)["id"].(string)

	hs := hooksOfCall(t, f, callID, 3)
	var order []string
	for _, h := range hs {
		order = append(order, h.describe())
	}
	if !slices.Equal(order, []string{"status:RINGING", "event:connect", "status:ACCEPTED"}) {
		t.Fatalf("webhooks in order %v", order)
	}
	st := hs[0].Statuses[0]
	if st["type"] != "call" || st["recipient_id"] != user || hs[0].Metadata.PhoneNumberID != f.phone {
		t.Errorf("ringing status %v", st)
	}
	ev := hs[1].Calls[0]
	session := ev["session"].(map[string]any)
	answer, _ := session["sdp"].(string)
	if ev["direction"] != "BUSINESS_INITIATED" || ev["to"] != user || session["sdp_type"] != "answer" ||
		!strings.Contains(answer, "a=candidate:") {
		t.Fatalf("connect event %v", ev)
	}

	if err := biz.SetAnswer(answer); err != nil {
		t.Fatal(err)
	}
	if err := biz.Connected(ctx); err != nil {
		t.Fatal(err)
	}
	phone := f.sim.CallPeer(callID)
	if phone == nil {
		t.Fatal("no phone peer")
	}
	biz.StartSending("biz")
	audioFlows(t, phone, CallTag(callID), biz, "biz", 20)

	if code, out := f.callAction(t, callID, "terminate", ""); code != 200 {
		t.Fatalf("terminate: %d %v", code, out)
	}
	select {
	case <-phone.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the phone is still open after terminate")
	}
	if got := f.sim.CallActions(callID); !slices.Equal(got, []string{"connect", "terminate"}) {
		t.Errorf("actions %v", got)
	}
}

func TestBusinessInitiatedCallDeclined(t *testing.T) {
	f := setup(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const user = "15550006666"
	if err := f.sim.SetCallPermission(f.phone, user, PermissionTemporary); err != nil {
		t.Fatal(err)
	}
	f.sim.SetCallBehaviour(user, CallBehaviour{Answer: false, RingFor: 50 * time.Millisecond})
	biz := newPeer(t, "business")
	offer, err := biz.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(sdp string) string {
		code, out := f.do(t, "POST", "/v21.0/"+f.phone+"/calls", testToken, map[string]any{
			"messaging_product": "whatsapp", "to": user, "action": "connect",
			"session": map[string]any{"sdp_type": "offer", "sdp": sdp}})
		if code != 200 {
			t.Fatalf("connect: %d %v", code, out)
		}
		return out["calls"].([]any)[0].(map[string]any)["id"].(string)
	}
	callID := connect(offer)
	hs := hooksOfCall(t, f, callID, 2)
	if a, b := hs[0].describe(), hs[1].describe(); a != "status:RINGING" || b != "status:REJECTED" {
		t.Fatalf("webhooks %s, %s", a, b)
	}
	if f.sim.CallPeer(callID) != nil {
		t.Error("a declined call has a phone peer")
	}
	code, out := f.callAction(t, callID, "terminate", "")
	wantError(t, code, out, 400, 100) // the call is over

	// A phone that cannot make sense of the offer drops the call.
	f.sim.SetCallBehaviour(user, CallBehaviour{Answer: true})
	callID = connect("v=0 not an offer")
	hs = hooksOfCall(t, f, callID, 2)
	if a, b := hs[0].describe(), hs[1].describe(); a != "status:RINGING" || b != "event:terminate" || hs[1].Calls[0]["status"] != "FAILED" {
		t.Fatalf("webhooks %s, %s %v", a, b, hs[1].Calls)
	}
	// Nothing more comes for either call.
	time.Sleep(200 * time.Millisecond)
	if n := len(f.recv.callHooks()); n != 4 {
		t.Errorf("%d calls webhooks, want 4", n)
	}
}

func TestCallsControlAPIWithMedia(t *testing.T) {
	f := setup(t, Config{})
	code, out := f.do(t, "POST", "/_sim/calls", "", map[string]any{"phone_number_id": f.phone, "from": "15550007777", "media": true})
	if code != 200 || out["status_code"] != float64(200) {
		t.Fatalf("place call: %d %v", code, out)
	}
	id := out["call_id"].(string)
	if out["tag"] != CallTag(id) {
		t.Errorf("tag %v", out["tag"])
	}
	offer := f.recv.callHooks()[0].Calls[0]["session"].(map[string]any)["sdp"].(string)
	if !strings.Contains(offer, "a=candidate:") {
		t.Errorf("offer without candidates:\n%s", offer)
	}
	code, out = f.do(t, "GET", "/_sim/calls/"+id, "", nil)
	media, _ := out["media"].(map[string]any)
	if code != 200 || out["ongoing"] != true || media == nil || media["connected"] != false || media["sent"] != float64(0) {
		t.Errorf("call info: %d %v", code, out)
	}
	code, _ = f.do(t, "GET", "/_sim/calls/wacid.nope", "", nil)
	if code != 404 {
		t.Errorf("unknown call: %d", code)
	}
	code, _ = f.do(t, "PUT", "/_sim/call_behaviours", "", map[string]any{"user_wa_id": "15550007777", "answer": false, "ring_for_ms": 10})
	if code != 200 {
		t.Errorf("set behaviour: %d", code)
	}
	code, _ = f.do(t, "PUT", "/_sim/call_behaviours", "", map[string]any{"user_wa_id": "x"})
	if code != 400 {
		t.Errorf("bad behaviour: %d", code)
	}
}
