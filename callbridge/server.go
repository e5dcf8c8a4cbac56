// Package callbridge is the process that carries the media of voice calls:
// it answers the platform's SDP offers, bridges the caller to an agent's
// browser, plays ringback and hold music, and records. Each call lives in
// one instance's memory (media cannot move); the instance records itself as
// the call's owner in Redis (calling.Bridge) so that control requests from
// any api replica reach it, and several instances share new calls through
// one queue. The call's state is written to PostgreSQL through the calling
// domain, whose conditional updates decide every race.
package callbridge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"wharf/callbridge/media"
	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
	"wharf/platform"
)

// Config tunes a callbridge instance.
type Config struct {
	// RecordingEnabled records both legs of every answered call.
	RecordingEnabled bool
	// RecordingDir holds the legs' files until they are mixed and stored.
	RecordingDir string
	FFmpegPath   string
	// MaxRequests bounds the requests served at once (CALLBRIDGE_MAX_REQUESTS;
	// DefaultMaxRequests when 0): a flood of control requests must not
	// exhaust the process that carries every call's media.
	MaxRequests int
}

// DefaultMaxRequests is MaxRequests when none is configured.
const DefaultMaxRequests = 64

// Deps are the callbridge's collaborators.
type Deps struct {
	Calls    *calling.Service
	Bridge   *calling.Bridge
	Engine   *media.Engine
	Provider *platform.Client
	Store    RecordingStore
	Audio    AudioFiles
	Metrics  *metrics.Set
	Config   Config
	Log      *slog.Logger
}

// RecordingStore keeps mixed recordings (the storage interface).
type RecordingStore interface {
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
}

// AudioFiles opens an organization's uploaded audio by its stored name.
type AudioFiles interface {
	OpenAudio(ctx context.Context, orgID uuid.UUID, name string) (io.ReadCloser, error)
}

// Server is one callbridge instance.
type Server struct {
	Deps
	mu       sync.Mutex
	sessions map[uuid.UUID]*session
	// slots holds one token per request being served (MaxRequests).
	slots chan struct{}
	// Recordings are mixed and stored in the background; shutdown waits
	// for them. closing (under recMu) makes a call that ends during the
	// shutdown store its recording at once: WaitGroup.Add must never run
	// beside Wait.
	recMu   sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// background runs fn in a goroutine that shutdown waits for, or right
// away once the shutdown began.
func (s *Server) background(fn func()) {
	s.recMu.Lock()
	if s.closing {
		s.recMu.Unlock()
		fn()
		return
	}
	s.wg.Add(1)
	s.recMu.Unlock()
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// New builds an instance.
func New(d Deps) *Server {
	if d.Config.MaxRequests <= 0 {
		d.Config.MaxRequests = DefaultMaxRequests
	}
	return &Server{Deps: d, sessions: map[uuid.UUID]*session{}, slots: make(chan struct{}, d.Config.MaxRequests)}
}

// Beat intervals.
const (
	beatEvery  = time.Second
	renewEvery = calling.OwnerLease / 3
	popWait    = time.Second
)

// Run serves control requests until ctx ends, then ends its calls (the
// provider is told) and leaves.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Bridge.Beat(ctx); err != nil {
		return err
	}
	var bg sync.WaitGroup
	bg.Add(1)
	go func() { defer bg.Done(); s.keepAlive(ctx) }()
	var err error
	for ctx.Err() == nil {
		var r *calling.Request
		r, err = s.Bridge.Next(ctx, popWait)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			s.Log.Warn("callbridge: reading requests", "error", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if r != nil {
			s.dispatch(ctx, r)
		}
	}
	bg.Wait()
	s.shutdown()
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

// keepAlive heartbeats, renews the leases of this instance's calls and
// sweeps calls whose owner died.
func (s *Server) keepAlive(ctx context.Context) {
	beat := time.NewTicker(beatEvery)
	renew := time.NewTicker(renewEvery)
	sweep := time.NewTicker(calling.SweepEvery)
	defer beat.Stop()
	defer renew.Stop()
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			if err := s.Bridge.Beat(ctx); err != nil && ctx.Err() == nil {
				s.Log.Warn("callbridge: heartbeat", "error", err)
			}
		case <-renew.C:
			for _, ss := range s.all() {
				if err := s.Bridge.Own(ctx, ss.callLogID); err != nil && ctx.Err() == nil {
					s.Log.Warn("callbridge: renewing a call's lease", "call_log_id", ss.callLogID, "error", err)
				}
			}
		case <-sweep.C:
			s.Calls.SweepOrphans(ctx)
		}
	}
}

func (s *Server) all() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

func (s *Server) session(id uuid.UUID) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Server) add(ss *session) {
	s.mu.Lock()
	s.sessions[ss.callLogID] = ss
	n := len(s.sessions)
	s.mu.Unlock()
	s.Metrics.CallsActive(n)
}

func (s *Server) remove(id uuid.UUID) {
	s.mu.Lock()
	delete(s.sessions, id)
	n := len(s.sessions)
	s.mu.Unlock()
	s.Metrics.CallsActive(n)
}

// ActiveCalls is how many calls this instance carries.
func (s *Server) ActiveCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// dispatch serves r in a slot of its own. With every slot taken, a request
// somebody waits for (an agent's or the api's control request) is answered
// at once with a 503 that says so, rather than left to time out; one that
// nobody waits for (a new call, the provider's events about a call) must
// not be lost, so the loop waits for a slot and pops nothing meanwhile
// (the requests wait in Redis; another instance takes new calls).
func (s *Server) dispatch(ctx context.Context, r *calling.Request) {
	select {
	case s.slots <- struct{}{}:
	default:
		if r.ReplyTo != "" {
			s.Log.Warn("callbridge: busy, a request was refused", "op", r.Op, "call_log_id", r.CallLogID, "max_requests", cap(s.slots))
			err := apperr.Unavailablef("the callbridge is busy: %d call-control requests are in progress; retry in a moment", cap(s.slots))
			if err := s.Bridge.Answer(context.WithoutCancel(ctx), r, calling.ReplyFor("", err)); err != nil {
				s.Log.Warn("callbridge: answering a request", "op", r.Op, "error", err)
			}
			return
		}
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
	go func() {
		defer func() { <-s.slots }()
		s.serve(ctx, r)
	}()
}

// errGone answers requests for a call this instance no longer carries.
var errGone = apperr.Conflictf("the call has ended")

// serve handles one request and answers it.
func (s *Server) serve(ctx context.Context, r *calling.Request) {
	sdp, callLogID, err := s.handle(ctx, r)
	if err != nil {
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Kind == apperr.Internal {
			s.Log.Error("callbridge: request failed", "op", r.Op, "call_log_id", r.CallLogID, "error", err)
		}
	}
	rep := calling.ReplyFor(sdp, err)
	rep.CallLogID = callLogID
	if err := s.Bridge.Answer(context.WithoutCancel(ctx), r, rep); err != nil {
		s.Log.Warn("callbridge: answering a request", "op", r.Op, "error", err)
	}
}

func (s *Server) handle(ctx context.Context, r *calling.Request) (string, uuid.UUID, error) {
	switch r.Op {
	case calling.OpIncoming:
		return "", r.CallLogID, s.answerIncoming(ctx, r)
	case calling.OpOutgoing:
		return s.placeOutgoing(ctx, r)
	}
	ss := s.session(r.CallLogID)
	if ss == nil {
		if r.Op == calling.OpRemoteEnd || r.Op == calling.OpRemoteProgress || r.Op == calling.OpRemoteAnswer {
			// The call ended here already, or its owner changed: apply what
			// the log needs and nothing more.
			if r.Op == calling.OpRemoteEnd {
				_, err := s.Calls.Finish(ctx, r.OrgID, r.CallLogID, calling.End{By: calling.ByCaller})
				return "", r.CallLogID, err
			}
			return "", r.CallLogID, nil
		}
		return "", r.CallLogID, errGone
	}
	switch r.Op {
	case calling.OpConnect:
		sdp, err := ss.connect(ctx, r.TransferID, r.UserID, r.SDP)
		return sdp, r.CallLogID, err
	case calling.OpHold:
		return "", r.CallLogID, ss.hold(ctx)
	case calling.OpResume:
		return "", r.CallLogID, ss.resume(ctx)
	case calling.OpTransfer:
		return "", r.CallLogID, ss.transfer(ctx, r.UserID, *r.TeamID, r.AgentID)
	case calling.OpHangup:
		ss.end(calling.End{By: calling.ByAgent}, true)
		return "", r.CallLogID, nil
	case calling.OpRemoteEnd:
		ss.end(calling.End{By: calling.ByCaller}, false)
		return "", r.CallLogID, nil
	case calling.OpRemoteAnswer:
		return "", r.CallLogID, ss.remoteAnswer(ctx, r.SDP)
	case calling.OpRemoteProgress:
		return "", r.CallLogID, ss.progress(ctx, r.Status)
	}
	return "", r.CallLogID, apperr.Invalidf("unknown call-control operation %q", r.Op)
}

// shutdown ends every call this instance carries: the media cannot move to
// another instance, so the provider is told and the logs end.
func (s *Server) shutdown() {
	for _, ss := range s.all() {
		ss.end(calling.End{By: calling.BySystem}, true)
	}
	s.recMu.Lock()
	s.closing = true
	s.recMu.Unlock()
	s.wg.Wait() // recordings of the ended calls
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.Bridge.Leave(ctx)
}

// recordDir is a fresh directory for a call's legs.
func (s *Server) recordDir(callLogID uuid.UUID) string {
	if !s.Config.RecordingEnabled {
		return ""
	}
	dir, err := os.MkdirTemp(s.Config.RecordingDir, "call-"+callLogID.String()+"-")
	if err != nil {
		s.Log.Warn("callbridge: the call will not be recorded", "call_log_id", callLogID, "error", err)
		return ""
	}
	return dir
}
