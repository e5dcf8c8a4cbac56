package callbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"wharf/callbridge/media"
	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/models"
	"wharf/platform"
)

// session is one call this instance carries. Its mutex orders the
// requests about the call (a connect and a hangup never interleave); the
// database decides between instances and api replicas.
type session struct {
	srv       *Server
	orgID     uuid.UUID
	callLogID uuid.UUID
	callID    string // the provider's wacid
	creds     platform.Creds
	settings  orgsettings.Settings
	call      *media.Call
	ringback  *media.Audio
	holdMusic *media.Audio

	mu         sync.Mutex
	ended      bool
	transferID uuid.UUID   // the open transfer (incoming calls)
	waitT      *time.Timer // no agent within transfer_timeout_secs
	maxT       *time.Timer // max_call_duration
	pickupT    *time.Timer // outgoing: no pickup in time
	bridged    bool        // outgoing: the callee's answer was applied
}

// bg is a context for work that must finish even when the request that
// started it ends (provider calls, database writes of a call's end).
func bg() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 15*time.Second)
}

// newSession builds a call's media and loads its audio.
func (s *Server) newSession(ctx context.Context, orgID, callLogID uuid.UUID, callID string, acct calling.AccountCreds, set orgsettings.Settings) *session {
	ss := &session{srv: s, orgID: orgID, callLogID: callLogID, callID: callID, settings: set,
		creds: platform.Creds{AccessToken: acct.AccessToken, PhoneNumberID: acct.PhoneNumberID}}
	ss.ringback = s.audio(ctx, orgID, set.RingbackFile, media.BuiltinRingback)
	ss.holdMusic = s.audio(ctx, orgID, set.HoldMusicFile, media.BuiltinHold)
	ss.call = s.Engine.NewCall(media.CallOptions{RecordDir: s.recordDir(callLogID), OnPlatformGone: func() {
		go ss.end(calling.End{By: calling.ByCaller}, true)
	}})
	return ss
}

// audio loads an organization's uploaded file, else the built-in one.
func (s *Server) audio(ctx context.Context, orgID uuid.UUID, name string, builtin func() *media.Audio) *media.Audio {
	if name == "" || s.Audio == nil {
		return builtin()
	}
	f, err := s.Audio.OpenAudio(ctx, orgID, name)
	if err != nil {
		s.Log.Warn("callbridge: the organization's audio cannot be read; playing the built-in one", "file", name, "error", err)
		return builtin()
	}
	defer f.Close()
	a, err := media.LoadOgg(f)
	if err != nil {
		s.Log.Warn("callbridge: the organization's audio is not OGG/Opus; playing the built-in one", "file", name, "error", err)
		return builtin()
	}
	return a
}

// answerIncoming answers a user-initiated call: our SDP answer goes to the
// provider (pre_accept, then accept), the caller hears ringback, the log is
// answered and a transfer waits for an agent.
func (s *Server) answerIncoming(ctx context.Context, r *calling.Request) error {
	st, err := s.Calls.LoadSetup(ctx, r.OrgID, r.CallLogID)
	if err != nil {
		return err
	}
	if st.Log.Status != models.CallRinging || s.session(r.CallLogID) != nil {
		return nil // answered already (a repeated request) or ended meanwhile
	}
	if err := s.Bridge.Own(ctx, r.CallLogID); err != nil {
		return err
	}
	ss := s.newSession(ctx, r.OrgID, r.CallLogID, st.Log.PlatformCallID, st.Account, st.Settings)
	fail := func(err error) error {
		ss.call.Close()
		ss.tellProvider("reject")
		_ = s.Calls.MarkFailed(context.WithoutCancel(ctx), r.OrgID, r.CallLogID)
		_ = s.Bridge.Disown(context.WithoutCancel(ctx), r.CallLogID)
		return err
	}
	answer, err := ss.call.AnswerPlatform(ctx, r.SDP)
	if err != nil {
		return fail(fmt.Errorf("answering the caller's offer: %w", err))
	}
	session := &platform.CallSession{SDPType: "answer", SDP: answer}
	for _, action := range []string{"pre_accept", "accept"} {
		if err := s.Provider.CallAction(ctx, ss.creds, ss.callID, action, session); err != nil {
			return fail(fmt.Errorf("%s: %w", action, err))
		}
	}
	ss.call.Play(ss.ringback)
	t, err := s.Calls.MarkAnswered(ctx, &st.Log)
	if err != nil {
		return fail(err)
	}
	ss.mu.Lock()
	ss.transferID = t.ID
	ss.waitT = ss.after(timeoutOf(st.Settings.TransferTimeoutSecs), ss.noAgent(t.ID))
	ss.maxT = ss.after(timeoutOf(st.Settings.MaxCallDuration), ss.tooLong)
	ss.mu.Unlock()
	s.add(ss)
	s.Metrics.CallStarted("incoming")
	return nil
}

func timeoutOf(secs int) time.Duration { return time.Duration(secs) * time.Second }

// after runs fn after d, unless the session ended; d <= 0: never.
func (ss *session) after(d time.Duration, fn func()) *time.Timer {
	if d <= 0 {
		return nil
	}
	return time.AfterFunc(d, fn)
}

// noAgent ends a call whose transfer nobody took in time.
func (ss *session) noAgent(transferID uuid.UUID) func() {
	return func() {
		ctx, cancel := bg()
		defer cancel()
		ok, err := ss.srv.Calls.TransferTimedOut(ctx, ss.orgID, transferID)
		if err != nil {
			ss.srv.Log.Error("callbridge: transfer timeout", "call_log_id", ss.callLogID, "error", err)
			return
		}
		if ok {
			ss.end(calling.End{By: calling.BySystem}, true)
		}
	}
}

// tooLong ends a call at max_call_duration.
func (ss *session) tooLong() { ss.end(calling.End{By: calling.BySystem}, true) }

func stop(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// connect bridges an agent: the database claim decides between racing
// agents, then the agent's offer is answered; an offer that cannot be
// answered puts the transfer back.
func (ss *session) connect(ctx context.Context, transferID, agentID uuid.UUID, offer string) (string, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return "", errGone
	}
	if _, err := ss.srv.Calls.ClaimTransfer(ctx, ss.orgID, transferID, agentID); err != nil {
		return "", err
	}
	answer, err := ss.call.AnswerAgent(ctx, offer)
	if err != nil {
		_ = ss.srv.Calls.UnclaimTransfer(context.WithoutCancel(ctx), ss.orgID, transferID)
		return "", apperr.Invalidf("the sdp_offer could not be answered: %v", err)
	}
	stop(ss.waitT)
	ss.waitT = nil
	ss.call.Bridge()
	return answer, nil
}

func (ss *session) hold(ctx context.Context) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return errGone
	}
	if err := ss.srv.Calls.MarkHold(ctx, ss.orgID, ss.callLogID); err != nil {
		return err
	}
	ss.call.Hold(ss.holdMusic)
	return nil
}

func (ss *session) resume(ctx context.Context) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return errGone
	}
	if err := ss.srv.Calls.MarkResume(ctx, ss.orgID, ss.callLogID); err != nil {
		return err
	}
	ss.call.Bridge()
	return nil
}

// transfer moves the call to a team: the agent's leg closes, the caller
// hears ringback, and the new transfer's wait starts.
func (ss *session) transfer(ctx context.Context, initiator, teamID uuid.UUID, agentID *uuid.UUID) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return errGone
	}
	t, err := ss.srv.Calls.MarkTransfer(ctx, ss.orgID, ss.callLogID, initiator, teamID, agentID)
	if err != nil {
		return err
	}
	ss.call.DropAgent()
	ss.call.Play(ss.ringback)
	stop(ss.waitT)
	ss.transferID = t.ID
	ss.waitT = ss.after(timeoutOf(ss.settings.TransferTimeoutSecs), ss.noAgent(t.ID))
	return nil
}

// tellProvider sends terminate or reject for the call (best effort: the
// provider ends a call it no longer hears from anyway).
func (ss *session) tellProvider(action string) {
	ctx, cancel := bg()
	defer cancel()
	if err := ss.srv.Provider.CallAction(ctx, ss.creds, ss.callID, action, nil); err != nil {
		var pe *platform.Error
		if !errors.As(err, &pe) || pe.Class != platform.Permanent {
			ss.srv.Log.Warn("callbridge: telling the provider the call ended", "call_log_id", ss.callLogID, "action", action, "error", err)
		}
	}
}

// end ends the call once: the provider is told when we end it, both legs
// close, the log ends, and the recording is mixed and stored.
func (ss *session) end(e calling.End, tellProvider bool) {
	ss.mu.Lock()
	if ss.ended {
		ss.mu.Unlock()
		return
	}
	ss.ended = true
	stop(ss.waitT)
	stop(ss.maxT)
	stop(ss.pickupT)
	ss.mu.Unlock()
	if tellProvider {
		ss.tellProvider("terminate")
	}
	rec := ss.call.Close()
	ctx, cancel := bg()
	defer cancel()
	if _, err := ss.srv.Calls.Finish(ctx, ss.orgID, ss.callLogID, e); err != nil {
		ss.srv.Log.Error("callbridge: ending a call's log", "call_log_id", ss.callLogID, "error", err)
	}
	_ = ss.srv.Bridge.Disown(ctx, ss.callLogID)
	ss.srv.remove(ss.callLogID)
	ss.srv.Metrics.CallEnded(e.By)
	if rec.PlatformFile != "" || rec.AgentFile != "" {
		ss.srv.background(func() { ss.srv.storeRecording(ss.orgID, ss.callLogID, rec) })
	}
}

// storeRecording mixes a call's legs into one OGG/Opus file and stores it.
func (s *Server) storeRecording(orgID, callLogID uuid.UUID, rec media.Recording) {
	dir := filepath.Dir(cmpOr(rec.PlatformFile, rec.AgentFile))
	defer os.RemoveAll(dir)
	if rec.Talk <= 0 {
		return // nobody talked: nothing worth keeping
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := filepath.Join(dir, "mixed.ogg")
	d, err := media.Mix(ctx, s.Config.FFmpegPath, rec, out)
	if err != nil {
		s.Log.Error("callbridge: mixing a recording", "call_log_id", callLogID, "error", err)
		return
	}
	f, err := os.Open(out)
	if err != nil {
		s.Log.Error("callbridge: reading a recording", "call_log_id", callLogID, "error", err)
		return
	}
	defer f.Close()
	key := fmt.Sprintf("orgs/%s/recordings/%s.ogg", orgID, callLogID)
	if _, err := s.Store.Put(ctx, key, f); err != nil {
		s.Log.Error("callbridge: storing a recording", "call_log_id", callLogID, "error", err)
		return
	}
	if err := s.Calls.SetRecording(ctx, orgID, callLogID, key, int(d.Round(time.Second)/time.Second)); err != nil {
		s.Log.Error("callbridge: recording a recording", "call_log_id", callLogID, "error", err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
