package campaignsapi

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/campaigns"
	"wharf/models"
)

func (h *Handlers) progress(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	p, err := h.campaigns.Progress(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toProgressResp(p))
}

func (h *Handlers) report(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	cp, err := h.campaigns.Report(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toReportResp(cp))
}

// Progress stream limits: a stream ends when the campaign is done, after
// streamIdleLimit while the campaign is not sending (draft, scheduled,
// paused), and after streamMaxDuration in any case; EventSource clients
// reconnect by themselves.
const (
	streamIdleLimit   = time.Minute
	streamMaxDuration = time.Hour
)

// progressStream sends the progress as server-sent events every second,
// from the campaign's maintained counters (one row read per second, not a
// count of every recipient), until the campaign is completed or cancelled,
// a limit above is reached, or the client goes away.
func (h *Handlers) progressStream(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	cp, err := h.campaigns.Get(ctx, org, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if err := web.NoWriteDeadline(c); err != nil {
		web.Log(c).Warn("progress stream keeps the server's write timeout", "error", err)
	}
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Accel-Buffering", "no")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	started, active := time.Now(), time.Now()
	var rate campaigns.RateWindow
	c.Stream(func(w io.Writer) bool {
		now := time.Now()
		p := campaigns.Counted(cp)
		rate.Observe(p, now)
		b, _ := json.Marshal(toProgressResp(p))
		fmt.Fprintf(w, "event: progress\ndata: %s\n\n", b)
		switch cp.Status {
		case models.CampaignCompleted, models.CampaignCancelled:
			if p.Sending == 0 {
				return false
			}
		case models.CampaignSending:
			active = now
		}
		if now.Sub(active) > streamIdleLimit || now.Sub(started) > streamMaxDuration {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		next, err := h.campaigns.Get(ctx, org, id)
		if err != nil {
			return false
		}
		cp = next
		return true
	})
}
