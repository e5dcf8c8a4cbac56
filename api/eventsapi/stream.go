package eventsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
)

// stallLimit is how long one write may wait on a client that stopped
// reading before the stream is cut (and its slot freed).
const stallLimit = 30 * time.Second

// End reasons, the data of the last event of a stream that the server ends.
const (
	endExpired      = "token_expired" // reconnect with a fresh access token
	endUnauthorized = "unauthorized"  // the user, key or membership is gone
	endBehind       = "fell_behind"   // reconnect with Last-Event-ID: the replay has what was missed
	endShutdown     = "shutdown"      // the server stops: reconnect (to another replica) with Last-Event-ID
)

// stream serves GET /api/events.
func (h *Handlers) stream(c *gin.Context) {
	ctx := c.Request.Context()
	p := web.Principal(c)
	var expires time.Time
	if p.APIKeyID == nil {
		if token, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer "); ok {
			exp, err := h.identity.Tokens().AccessExpiry(token)
			if err != nil {
				web.Fail(c, err)
				return
			}
			expires = exp
		}
	}
	slot, err := h.slots.Acquire(ctx, p.UserID)
	switch {
	case errors.Is(err, live.ErrUserStreams):
		web.Fail(c, apperr.TooManyAfter(live.SlotTTL, "you have too many event streams open (at most %d); close one first", live.PerUser))
		return
	case errors.Is(err, live.ErrProcessStreams):
		web.Fail(c, apperr.Unavailablef("this server cannot take more event streams; retry shortly"))
		return
	case err != nil:
		web.Fail(c, err)
		return
	}
	defer slot.Release(ctx)
	sub, err := h.bus.Subscribe(ctx, p.OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer sub.Close()
	viewer, masker, err := h.viewer(c, p)
	if err != nil {
		web.Fail(c, err)
		return
	}
	var replay []live.Event
	reset := false
	if last := strings.TrimSpace(c.GetHeader("Last-Event-ID")); last != "" {
		if replay, reset, err = h.bus.Since(ctx, p.OrgID, last); err != nil {
			web.Fail(c, err)
			return
		}
	}

	if err := web.NoWriteDeadline(c); err != nil {
		web.Log(c).Warn("event stream keeps the server's write timeout", "error", err)
	}
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Accel-Buffering", "no")
	c.Status(200)
	w := web.StallGuard(c, stallLimit)
	lastSent := ""
	send := func(e *live.Event) bool {
		if !viewer.Sees(e) {
			return true
		}
		b, _ := json.Marshal(toEventResp(e, masker))
		if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, b); err != nil {
			return false
		}
		return true
	}
	control := func(typ string, data any) {
		b, _ := json.Marshal(data)
		e := live.Event{Type: typ, At: time.Now(), Data: b}
		r, _ := json.Marshal(toEventResp(&e, masker))
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, r)
		c.Writer.Flush()
	}
	// The retry field sets EventSource's reconnect delay; fetch readers
	// (the console) use their own back-off.
	if _, err := io.WriteString(w, "retry: 2000\n: connected\n\n"); err != nil {
		return
	}
	if reset {
		control(live.Reset, map[string]string{"reason": "your last event is older than the replay window; reload your lists"})
	}
	for i := range replay {
		if !send(&replay[i]) {
			return
		}
		lastSent = replay[i].ID
	}
	c.Writer.Flush()

	beat := time.NewTicker(h.cfg.Heartbeat)
	defer beat.Stop()
	recheck := time.NewTicker(h.cfg.Recheck)
	defer recheck.Stop()
	var expiry <-chan time.Time
	if !expires.IsZero() {
		t := time.NewTimer(time.Until(expires))
		defer t.Stop()
		expiry = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-sub.C():
			if lastSent != "" && !live.After(e.ID, lastSent) {
				continue // replayed already
			}
			if !send(&e) {
				return
			}
			lastSent = e.ID
			c.Writer.Flush()
		case <-sub.Lost():
			control(live.End, map[string]string{"reason": endBehind})
			return
		case <-h.slots.Draining():
			control(live.End, map[string]string{"reason": endShutdown})
			return
		case <-beat.C:
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return
			}
			c.Writer.Flush()
			if err := slot.Renew(ctx); err != nil {
				web.Log(c).Debug("cannot renew an event stream's slot", "error", err)
			}
		case <-recheck.C:
			np, err := h.identity.Recheck(ctx, p)
			if apperr.Is(err, apperr.Unauthorized) {
				control(live.End, map[string]string{"reason": endUnauthorized})
				return
			}
			if err == nil {
				p = np
				if v, m, err := h.viewer(c, p); err == nil {
					viewer, masker = v, m
				}
			}
		case <-expiry:
			control(live.End, map[string]string{"reason": endExpired})
			return
		}
	}
}

// viewer loads what the audience rules and the masking need of p.
func (h *Handlers) viewer(c *gin.Context, p *identity.Principal) (live.Viewer, orgsettings.Masker, error) {
	ctx := c.Request.Context()
	teams, err := h.teams.TeamsOf(ctx, p.OrgID, p.UserID)
	if err != nil {
		return live.Viewer{}, orgsettings.Masker{}, err
	}
	m, err := h.maskers.Masker(ctx, p.OrgID)
	if err != nil {
		return live.Viewer{}, orgsettings.Masker{}, err
	}
	return live.Viewer{UserID: p.UserID, Can: p.Can, Teams: teams}, m, nil
}
