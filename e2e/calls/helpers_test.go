// Package calls_test drives voice calls end to end: the simulator's pion
// peer calls the business, the api and worker log and route the call, a
// callbridge answers and bridges it to an agent's pion peer.
package calls_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
	"wharf/platformsim/rtcpeer"
)

type callLogOut struct {
	ID                string `json:"id"`
	PlatformAccount   string `json:"platform_account"`
	PlatformCallID    string `json:"platform_call_id"`
	CallerPhone       string `json:"caller_phone"`
	Direction         string `json:"direction"`
	Status            string `json:"status"`
	Duration          int    `json:"duration"`
	AgentID           string `json:"agent_id"`
	DisconnectedBy    string `json:"disconnected_by"`
	RecordingDuration int    `json:"recording_duration"`
}

type transferOut struct {
	ID                string `json:"id"`
	CallLogID         string `json:"call_log_id"`
	PlatformCallID    string `json:"platform_call_id"`
	Status            string `json:"status"`
	TeamID            string `json:"team_id"`
	AgentID           string `json:"agent_id"`
	InitiatingAgentID string `json:"initiating_agent_id"`
	HoldDuration      int    `json:"hold_duration"`
	TalkDuration      int    `json:"talk_duration"`
}

type env struct {
	*apptest.Fixture
	t     *testing.T
	admin apptest.Auth
}

var callers atomic.Int64

// newEnv is a system with a simulator, an account, a worker and a
// callbridge, calling enabled with the given limits (0: the defaults).
func newEnv(t *testing.T, transferTimeout, maxDuration int) *env {
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	f.StartCallBridge(nil)
	e := &env{Fixture: f, t: t, admin: f.Admin.Auth()}
	settings := map[string]any{"calling_enabled": true}
	if transferTimeout > 0 {
		settings["transfer_timeout_secs"] = transferTimeout
	}
	if maxDuration > 0 {
		settings["max_call_duration"] = maxDuration
	}
	e.Do("PUT", "/api/org/settings", settings, e.admin).Expect(t, 200)
	return e
}

// call places a call from a new number and waits for its waiting transfer.
func (e *env) call() (*platformsim.SimCall, transferOut) {
	e.t.Helper()
	from := fmt.Sprintf("1555%07d", callers.Add(1))
	sc, code, err := e.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: e.PhoneNumberID(), From: from,
		ProfileName: "Caller"})
	if err != nil || code != 200 {
		e.t.Fatalf("place call: %d %v", code, err)
	}
	e.t.Cleanup(func() { _ = sc.Peer.Close() })
	return sc, e.waitTransfer(sc.ID, models.TransferWaiting)
}

// waitTransfer waits for the call's newest transfer to have status.
func (e *env) waitTransfer(callID, status string) transferOut {
	e.t.Helper()
	var found transferOut
	apptest.Await(e.t, 15*time.Second, "transfer "+status+" of "+callID, func() (bool, string) {
		var list struct {
			Transfers []transferOut `json:"call_transfers"`
		}
		e.Do("GET", "/api/call-transfers?limit=100", nil, e.admin).Expect(e.t, 200).Into(e.t, &list)
		for _, tr := range list.Transfers { // newest first
			if tr.PlatformCallID == callID {
				found = tr
				return tr.Status == status, fmt.Sprintf("%+v", tr)
			}
		}
		return false, "no transfer"
	})
	return found
}

func (e *env) callLog(id string) callLogOut {
	e.t.Helper()
	var out struct {
		CallLog   callLogOut    `json:"call_log"`
		Transfers []transferOut `json:"transfers"`
	}
	e.Do("GET", "/api/call-logs/"+id, nil, e.admin).Expect(e.t, 200).Into(e.t, &out)
	return out.CallLog
}

func (e *env) waitLog(id, status string) callLogOut {
	e.t.Helper()
	var l callLogOut
	apptest.Await(e.t, 15*time.Second, "call log "+status, func() (bool, string) {
		l = e.callLog(id)
		return l.Status == status, fmt.Sprintf("%+v", l)
	})
	return l
}

// agent is an agent's browser: a pion peer connected to a transfer.
func (e *env) agent(name string) *rtcpeer.Peer {
	e.t.Helper()
	p, err := rtcpeer.New(name)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = p.Close() })
	return p
}

// connect connects an agent peer to a transfer and starts its audio.
func (e *env) connect(auth apptest.Auth, p *rtcpeer.Peer, transferID, tag string) {
	e.t.Helper()
	offer, err := p.Offer(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	var ans struct {
		SDPAnswer string `json:"sdp_answer"`
	}
	e.Do("POST", "/api/call-transfers/"+transferID+"/connect", map[string]any{"sdp_offer": offer}, auth).Expect(e.t, 200).Into(e.t, &ans)
	if err := p.SetAnswer(ans.SDPAnswer); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apptest.WaitLimit(10*time.Second))
	defer cancel()
	if err := p.Connected(ctx); err != nil {
		e.t.Fatalf("agent leg: %v", err)
	}
	p.StartSending(tag)
}

// Audio is checked by what arrives, never by how much arrives in a fixed
// time: on a busy machine the peers' 20 ms tickers skip beats and packets
// wait in socket buffers, so "at least 120 packets in 3 s" is a claim about
// the machine. hears waits for the packets; drained waits for the packets
// that were on their way before a change (hold, transfer) to have arrived,
// so that a window after it holds only what the change let through.

// hears waits until to has received at least n packets carrying tag ("":
// any) since since.
func (e *env) hears(to *rtcpeer.Peer, since time.Time, tag string, n int) {
	e.t.Helper()
	apptest.Await(e.t, 10*time.Second, fmt.Sprintf("%s to receive %d packets tagged %q", to.Name(), n, tag), func() (bool, string) {
		got := countSince(to, since, tag)
		return got >= n, fmt.Sprintf("%d packets", got)
	})
}

// drained waits until to has received no packet carrying tag for a second
// and returns the time from which none may arrive. A stream that goes on
// fails the wait, naming when its last packet came.
func (e *env) drained(to *rtcpeer.Peer, tag string) time.Time {
	e.t.Helper()
	apptest.Await(e.t, 5*time.Second, fmt.Sprintf("%s to stop receiving packets tagged %q", to.Name(), tag), func() (bool, string) {
		var last time.Time
		for _, r := range to.Received() {
			if got, _, ok := rtcpeer.Tagged(r.Payload); ok && got == tag && r.At.After(last) {
				last = r.At
			}
		}
		return time.Since(last) > time.Second, fmt.Sprintf("the last one %s ago", time.Since(last).Round(time.Millisecond))
	})
	return time.Now()
}

// inboundSettled waits until the worker has applied every stored provider
// webhook, so that what a duplicate webhook would change has been changed.
func (e *env) inboundSettled() {
	e.t.Helper()
	apptest.Await(e.t, 10*time.Second, "every inbound event processed", func() (bool, string) {
		var pending int64
		e.DB.Raw(`SELECT count(*) FROM inbound_events WHERE processed_at IS NULL`).Scan(&pending)
		return pending == 0, fmt.Sprintf("%d pending", pending)
	})
}

// heard counts the packets to that carry tag, and checks each is
// byte-identical to one from sent.
func heard(t *testing.T, to, from *rtcpeer.Peer, tag string) int {
	t.Helper()
	sent := map[string]bool{}
	for _, p := range from.Sent() {
		sent[string(p)] = true
	}
	n := 0
	for _, p := range to.Received() {
		if got, _, ok := rtcpeer.Tagged(p.Payload); ok && got == tag {
			if !sent[string(p.Payload)] {
				t.Fatalf("a %s packet arrived changed: % x", tag, p.Payload[:min(16, len(p.Payload))])
			}
			n++
		}
	}
	return n
}

// countSince counts the packets to received after since carrying tag ("" any).
func countSince(p *rtcpeer.Peer, since time.Time, tag string) int {
	n := 0
	for _, r := range p.Received() {
		if r.At.Before(since) {
			continue
		}
		got, _, ok := rtcpeer.Tagged(r.Payload)
		if tag == "" || ok && got == tag {
			n++
		}
	}
	return n
}

// postTerminate posts a signed terminate webhook for a call, as the
// provider redelivers one.
func (e *env) postTerminate(callID string) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{
		"id": e.WABA.ID, "changes": []any{map[string]any{"field": "calls", "value": map[string]any{
			"messaging_product": "whatsapp", "metadata": map[string]any{"phone_number_id": e.PhoneNumberID()},
			"calls": []any{map[string]any{"id": callID, "event": "terminate", "status": "COMPLETED"}},
		}}}}}})
	mac := hmac.New(sha256.New, []byte(e.AppSecret))
	mac.Write(body)
	req, _ := http.NewRequest("POST", e.Server.URL+"/api/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		e.t.Fatalf("terminate webhook answered %d", res.StatusCode)
	}
}
