package api

import (
	"context"
	"net/http"
	"strings"
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

// readyz reports whether PostgreSQL and Redis answer; a load balancer stops
// sending traffic to a replica that cannot reach them. A missing ffmpeg is
// reported but keeps the replica ready: only audio uploads need it.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	var down []string
	if err := s.ready.Database(ctx); err != nil {
		down = append(down, "database")
	}
	if err := s.ready.Redis(ctx); err != nil {
		down = append(down, "redis")
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
