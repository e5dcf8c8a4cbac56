package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

type healthResp struct {
	Status string `json:"status"`
}

func (s *Server) healthz(c *gin.Context) { web.OK(c, healthResp{Status: "alive"}) }

type readyResp struct {
	Database string `json:"database"`
	Redis    string `json:"redis"`
	FFmpeg   string `json:"ffmpeg"`
}

// readyTimeout bounds each of readyz's checks.
const readyTimeout = 2 * time.Second

// readyz reports whether PostgreSQL and Redis answer; a load balancer stops
// sending traffic to a replica that cannot reach them. A missing ffmpeg is
// reported but keeps the replica ready: only audio uploads need it. The
// checks run at once, each with its own deadline, so that one that hangs
// (a database pool with no free connection) neither delays nor fails the
// other: the answer names exactly the ones that failed.
func (s *Server) readyz(c *gin.Context) {
	checks := []struct {
		name  string
		check func(context.Context) error
	}{{"database", s.ready.Database}, {"redis", s.ready.Redis}}
	failed := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
			defer cancel()
			failed[i] = ch.check(ctx)
		})
	}
	wg.Wait()
	var down []string
	for i, err := range failed {
		if err != nil {
			down = append(down, checks[i].name)
			web.Log(c).Warn("not ready", "check", checks[i].name, "error", err)
		}
	}
	if len(down) > 0 {
		web.Error(c, http.StatusServiceUnavailable, "not ready: "+strings.Join(down, " and ")+" unreachable")
		return
	}
	ffmpeg := "ok"
	if !s.ready.AudioEnabled() {
		ffmpeg = "missing: audio uploads are disabled"
	}
	web.OK(c, readyResp{Database: "ok", Redis: "ok", FFmpeg: ffmpeg})
}
