package dataopsapi

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/dataops"
	"wharf/internal/infra/apperr"
)

func (h *Handlers) export(c *gin.Context) {
	var req exportRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if !mayExport(c, req.Table) {
		return
	}
	if req.Format != "" && req.Format != "csv" {
		web.Fail(c, apperr.Invalidf("format must be csv"))
		return
	}
	var tags []string
	for _, t := range strings.Split(req.Filters.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	exp, err := h.ops.PrepareExport(ctx, org, dataops.ExportRequest{Table: req.Table, Columns: req.Columns,
		Search: req.Filters.Search, Tags: tags})
	if err != nil {
		web.Fail(c, err)
		return
	}
	// The export holds a database connection until its client has read
	// the file: a slot bounds how many do at once.
	release, err := h.cfg.ExportSlots.Take(org)
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer release()
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+exp.FileName(time.Now())+`"`)
	c.Status(200)
	// A large export outlasts the server's write timeout, but a client
	// that stops reading for ExportStall is cut off: its write fails, the
	// cursor's transaction ends, and the connection returns to the pool.
	if err := exp.WriteTo(ctx, web.StallGuard(c, h.cfg.ExportStall)); err != nil {
		// The status is sent: all that is left is to cut the answer short,
		// so that the client sees an incomplete file rather than a whole one.
		level := slog.LevelWarn
		if errors.Is(err, os.ErrDeadlineExceeded) {
			level = slog.LevelInfo // the client's doing, not ours
		}
		web.Log(c).Log(ctx, level, "export interrupted", "table", req.Table, "error", err)
		panic(http.ErrAbortHandler)
	}
}

func (h *Handlers) config(c *gin.Context) {
	table := c.Param("table")
	if !mayExport(c, table) {
		return
	}
	cfg, err := dataops.ExportConfig(table)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := configResp{Table: cfg.Table, DefaultColumns: cfg.DefaultColumns}
	for _, col := range cfg.Columns {
		out.Columns = append(out.Columns, columnResp{Key: col.Key, Label: col.Label})
	}
	web.OK(c, out)
}
