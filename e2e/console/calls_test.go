package console

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wharf/callbridge/media"
	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleCalls takes a call in the browser: the simulator's phone
// calls the business, the calls panel rings in the agent's open console
// (call.ringing, no reload), the agent answers with Chromium's fake
// microphone, and what the browser sends reaches the phone (packets that
// are not the bridge's ringback); hold and resume act on the call; hang up
// ends it (call log completed). The call history then lists it, its page
// shows its transfer and plays its recording.
func TestConsoleCalls(t *testing.T) {
	requireBrowser(t)
	// The browser's ICE servers: a STUN address on loopback where nothing
	// answers (the default is a public one; the test makes no outside
	// connection). Host candidates carry the call.
	f := apptest.NewFixture(t, map[string]string{"STUN_URLS": "stun:127.0.0.1:9"}, nil)
	f.StartWorker()
	f.StartCallBridge(nil)
	admin := f.Admin.Auth()
	f.Do("PUT", "/api/org/settings", map[string]any{"calling_enabled": true}, admin).Expect(t, 200)
	// A team to pass calls to (the panel offers it), with Ann in it; Bob is
	// in no team.
	var billing struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Billing", "assignment_strategy": "manual"}, admin).Expect(t, 201).Into(t, &billing)
	ann := f.CreateUser(admin, "ann@wharf.test", "Agent")
	f.CreateUser(admin, "bob@wharf.test", "Agent")
	f.Do("POST", "/api/teams/"+billing.ID+"/members", map[string]any{"user_id": ann.User.ID, "role": "agent"}, admin).Expect(t, 201)
	ringback := map[string]bool{}
	for rb, i := media.BuiltinRingback(), 0; i < rb.Frames(); i++ {
		ringback[string(rb.Frame(i))] = true
	}

	type callLog struct {
		ID                string `json:"id"`
		Status            string `json:"status"`
		AgentID           string `json:"agent_id"`
		DisconnectedBy    string `json:"disconnected_by"`
		RecordingDuration int    `json:"recording_duration"`
		ContactID         string `json:"contact_id"`
		Direction         string `json:"direction"`
	}
	logOf := func(callID string) (callLog, bool) {
		var out struct {
			CallLogs []struct {
				callLog
				PlatformCallID string `json:"platform_call_id"`
			} `json:"call_logs"`
		}
		f.Do("GET", "/api/call-logs?limit=100", nil, admin).Expect(t, 200).Into(t, &out)
		for _, l := range out.CallLogs {
			if l.PlatformCallID == callID {
				return l.callLog, true
			}
		}
		return callLog{}, false
	}
	waitLog := func(callID, what string, ok func(callLog) bool) callLog {
		var l callLog
		apptest.Await(t, 30*time.Second, what, func() (bool, string) {
			var found bool
			l, found = logOf(callID)
			return found && ok(l), fmt.Sprintf("%+v", l)
		})
		return l
	}

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "agent")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.click("link", "Calls")
	p.seeRole("heading", "Calls")
	p.see("No call matches.")

	sc, code, err := f.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: f.PhoneNumberID(), From: "15550003001", ProfileName: "Rita Caller"})
	if err != nil || code != 200 {
		t.Fatalf("place call: %d %v", code, err)
	}
	t.Cleanup(func() { _ = sc.Peer.Close() })

	t.Run("the panel rings and the agent answers; the browser's audio reaches the caller", func(t *testing.T) {
		p.in(t)
		p.waitUntil("the panel rings", `[...document.querySelectorAll('button')].some((b) => shown(b) && (b.getAttribute('aria-label') || '').startsWith('Answer the call from'))`)
		p.see("Incoming call from")
		p.axe("a ringing call")
		p.shot("ringing")
		p.do("answer", chromedp.Click(chromedp.JSPath(withPrelude(`[...document.querySelectorAll('button')].find((b) => shown(b) && (b.getAttribute('aria-label') || '').startsWith('Answer the call from'))`))))
		p.see("Connected ·")
		// The history behind the panel lists the call without a reload.
		p.waitUntil("the call in the history", `[...document.querySelectorAll('tbody tr')].some((r) => r.innerText.includes('+15550003001'))`)
		// The log says who took it (its status stays answered until a hold).
		waitLog(sc.ID, "the agent on the call", func(l callLog) bool { return l.Status == "answered" && l.AgentID == f.Admin.User.ID })
		// What the phone hears from now on that is not ringback came from
		// the browser's microphone, through the bridge.
		apptest.Await(t, 30*time.Second, "the browser's audio at the phone", func() (bool, string) {
			n, bytes := 0, 0
			for _, r := range sc.Peer.Received() {
				if !ringback[string(r.Payload)] {
					n++
					bytes += len(r.Payload)
				}
			}
			return n >= 50, fmt.Sprintf("%d packets (%d bytes) not ringback", n, bytes)
		})
		// And the caller's audio plays in the page.
		p.waitUntil("the caller's audio in the page", `(() => { const a = document.querySelector('audio'); return !!a && !!a.srcObject && a.srcObject.getAudioTracks().some((t) => t.readyState === 'live') })()`)
	})

	t.Run("hold and resume, then hang up ends the call", func(t *testing.T) {
		p.in(t)
		p.click("button", "Hold")
		p.see("On hold ·")
		waitLog(sc.ID, "the call on hold", func(l callLog) bool { return l.Status == "on_hold" })
		p.click("button", "Resume")
		p.see("Connected ·")
		p.choose("Transfer to team", "Billing")
		waitLog(sc.ID, "the call resumed", func(l callLog) bool { return l.Status == "connected" })
		p.axe("a call in progress")
		p.shot("call")
		p.prefersDark(true)
		p.shot("call-dark")
		p.axe("a call in progress, dark")
		p.prefersDark(false)
		p.click("button", "Hang up")
		p.see("You hung up the call with")
		if l := waitLog(sc.ID, "the call completed", func(l callLog) bool { return l.Status == "completed" }); l.DisconnectedBy != "agent" {
			t.Fatalf("ended %+v", l)
		}
	})

	t.Run("the call history lists it and plays its recording", func(t *testing.T) {
		p.in(t)
		l := waitLog(sc.ID, "the recording", func(l callLog) bool { return l.RecordingDuration > 0 })
		p.reload()
		p.seeRole("heading", "Calls")
		p.see("Completed")
		p.choose("Status", "Missed")
		p.see("No call matches.")
		p.choose("Status", "Completed")
		p.waitUntil("the status in the URL", `location.search.includes('status=completed')`)
		p.waitUntil("a link to the recording", `[...document.querySelectorAll('a[aria-label]')].some((a) => a.getAttribute('aria-label').startsWith('Listen to the call of'))`)
		p.axe("call history")
		p.shot("history")
		p.open("/console/calls/" + l.ID)
		p.seeRole("heading", "The call")
		p.see("Completed")
		p.seeRole("heading", "Transfers")
		p.see("(by the agent)")
		p.click("button", "Play the recording")
		p.waitUntil("the recording loaded", `(() => { const a = document.querySelector('audio[aria-label="The call\'s recording"]'); return !!a && a.readyState >= 1 && a.duration > 0 })()`)
		p.axe("a call")
		p.shot("call-detail")
		p.prefersDark(true)
		p.shot("call-detail-dark")
		p.prefersDark(false)
	})

	t.Run("an outgoing call from the contact's page, after asking for permission", func(t *testing.T) {
		p.in(t)
		l, _ := logOf(sc.ID)
		// The permission request is a message: the contact must have written
		// within 24 hours.
		f.Incoming(platformsim.Incoming{From: "15550003001", Type: "text", Text: "Call me back, please"})
		apptest.Await(t, 30*time.Second, "the message stored", func() (bool, string) {
			var c struct {
				LastMessageAt *time.Time `json:"last_message_at"`
			}
			f.Do("GET", "/api/contacts/"+l.ContactID, nil, admin).Expect(t, 200).Into(t, &c)
			return c.LastMessageAt != nil, "no message yet"
		})
		p.open("/console/contacts/" + l.ContactID)
		p.seeRole("heading", "Call")
		p.see("has not allowed calls from this number.")
		p.click("button", "Ask for permission to call")
		p.see("was asked for permission to be called.")
		if err := f.Sim.SetCallPermission(f.PhoneNumberID(), "15550003001", platformsim.PermissionTemporary); err != nil {
			t.Fatal(err)
		}
		p.reload()
		p.see("allows calls")
		p.axe("the contact's call section")
		p.shot("contact-call")
		p.do("call", chromedp.Click(chromedp.JSPath(withPrelude(`[...document.querySelectorAll('button')].find((b) => shown(b) && !b.disabled && norm(b.textContent).startsWith('Call '))`))))
		p.see("Connected ·")
		var out callLog
		var callID string
		apptest.Await(t, 30*time.Second, "the outgoing call accepted", func() (bool, string) {
			var list struct {
				CallLogs []struct {
					callLog
					PlatformCallID string `json:"platform_call_id"`
				} `json:"call_logs"`
			}
			f.Do("GET", "/api/call-logs?direction=outgoing", nil, admin).Expect(t, 200).Into(t, &list)
			if len(list.CallLogs) == 0 {
				return false, "no outgoing call"
			}
			out, callID = list.CallLogs[0].callLog, list.CallLogs[0].PlatformCallID
			return out.Status == "accepted" || out.Status == "connected", fmt.Sprintf("%+v", out)
		})
		callee := f.Sim.CallPeer(callID)
		if callee == nil {
			t.Fatal("the simulator has no peer for the outgoing call")
		}
		apptest.Await(t, 30*time.Second, "the browser's audio at the callee", func() (bool, string) {
			n := 0
			for _, r := range callee.Received() {
				if !ringback[string(r.Payload)] {
					n++
				}
			}
			return n >= 50, fmt.Sprintf("%d packets", n)
		})
		p.click("button", "Hang up")
		p.see("You hung up the call with")
		apptest.Await(t, 30*time.Second, "the outgoing call completed", func() (bool, string) {
			var d struct {
				CallLog callLog `json:"call_log"`
			}
			f.Do("GET", "/api/call-logs/"+out.ID, nil, admin).Expect(t, 200).Into(t, &d)
			return d.CallLog.Status == "completed" && d.CallLog.Direction == "outgoing", fmt.Sprintf("%+v", d.CallLog)
		})
	})

	t.Run("a call passed to a team rings for its member, never for an agent outside it", func(t *testing.T) {
		p.in(t)
		pa := b.newPage(t, "ann")
		pa.open("/console/")
		signIn(pa, "ann@wharf.test", "password-123", "User ann@wharf.test")
		pbob := b.newPage(t, "bob")
		pbob.open("/console/")
		signIn(pbob, "bob@wharf.test", "password-123", "User bob@wharf.test")
		answerButton := `[...document.querySelectorAll('button')].some((b) => shown(b) && (b.getAttribute('aria-label') || '').startsWith('Answer the call from'))`
		click := func(pg *page) {
			pg.do("answer", chromedp.Click(chromedp.JSPath(withPrelude(`[...document.querySelectorAll('button')].find((b) => shown(b) && (b.getAttribute('aria-label') || '').startsWith('Answer the call from'))`))))
		}

		second, code, err := f.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: f.PhoneNumberID(), From: "15550003002", ProfileName: "Tom Caller"})
		if err != nil || code != 200 {
			t.Fatalf("place call: %d %v", code, err)
		}
		t.Cleanup(func() { _ = second.Peer.Close() })
		// No team yet: it rings for everyone who takes calls.
		p.waitUntil("the admin's panel rings", answerButton)
		pbob.waitUntil("bob's panel rings", answerButton)
		click(p)
		p.see("Connected ·")
		pbob.waitUntil("bob's panel stops ringing once answered", "!"+answerButton)
		// From now on, Bob's page notes any ringing at all.
		eval[bool](pbob, `(() => { window.rang = false; new MutationObserver(() => { if (`+answerButton+`) window.rang = true })
  .observe(document.body, { subtree: true, childList: true, attributes: true }); return true })()`)
		p.choose("Transfer to team", "Billing")
		p.click("button", "Transfer")
		p.see("was passed to Billing.")
		pa.waitUntil("ann's panel rings for Billing's call", answerButton)
		pa.shot("ringing-team")
		click(pa)
		pa.see("Connected ·")
		waitLog(second.ID, "ann on the call", func(l callLog) bool { return l.AgentID == ann.User.ID })
		if eval[bool](pbob, `window.rang === true || `+answerButton) {
			t.Fatal("the call passed to Billing rang for an agent outside the team")
		}
		pa.click("button", "Hang up")
		pa.see("You hung up the call with")
		waitLog(second.ID, "the second call completed", func(l callLog) bool { return l.Status == "completed" })
	})

	t.Run("a panel opened while calls wait rings for those the user may take only", func(t *testing.T) {
		p.in(t)
		billingCall, code, err := f.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: f.PhoneNumberID(), From: "15550003004"})
		if err != nil || code != 200 {
			t.Fatalf("place call: %d %v", code, err)
		}
		t.Cleanup(func() { _ = billingCall.Peer.Close() })
		p.waitUntil("the admin's panel rings", `!!byRole('button', 'Answer the call from +15550003004')`)
		p.click("button", "Answer the call from +15550003004")
		p.see("Connected ·")
		p.choose("Transfer to team", "Billing")
		p.click("button", "Transfer")
		p.see("was passed to Billing.")
		general, code, err := f.Sim.PlaceCall(context.Background(), platformsim.IncomingCall{PhoneNumberID: f.PhoneNumberID(), From: "15550003005"})
		if err != nil || code != 200 {
			t.Fatalf("place call: %d %v", code, err)
		}
		t.Cleanup(func() { _ = general.Peer.Close() })
		p.waitUntil("the general call rings", `!!byRole('button', 'Answer the call from +15550003005')`)
		// Both wait (Billing's unassigned: the strategy is manual). A page
		// Bob opens now learns of them from GET /api/call-transfers alone.
		pbob := b.newPage(t, "bob-later")
		pbob.open("/console/")
		signIn(pbob, "bob@wharf.test", "password-123", "User bob@wharf.test")
		pbob.waitUntil("bob's panel rings for the general call", `!!byRole('button', 'Answer the call from +15550003005')`)
		if pbob.has("button", "Answer the call from +15550003004") {
			t.Fatal("a panel rings for a team's call for an agent outside the team")
		}
		pa := b.newPage(t, "ann-later")
		pa.open("/console/")
		signIn(pa, "ann@wharf.test", "password-123", "User ann@wharf.test")
		pa.waitUntil("ann's panel rings for both", `!!byRole('button', 'Answer the call from +15550003005') && !!byRole('button', 'Answer the call from +15550003004')`)
	})
}
