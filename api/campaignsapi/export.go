package campaignsapi

import (
	"encoding/csv"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/dataops"
	"wharf/models"
)

// exportStall cuts off a client that stops reading a recipients export.
// The export holds no database connection between its chunks, so this
// bounds only the request's goroutine and socket.
const exportStall = time.Minute

// exportHeader is the recipients export's header row.
var exportHeader = []string{"phone_number", "name", "status", "attempts", "sent_at", "delivered_at", "read_at", "failed_at",
	"error_code", "error_title", "error_detail", "replied_at"}

// exportRecipients streams the campaign's recipients as CSV, with their
// status and the provider's error, masked as the recipients list masks
// them; cells a spreadsheet would run as formulas are defused as the
// contacts export defuses them.
func (h *Handlers) exportRecipients(c *gin.Context) {
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
	m, err := h.maskers.Masker(ctx, org)
	if err != nil {
		web.Fail(c, err)
		return
	}
	status := strings.TrimSpace(c.Query("status"))
	var w *csv.Writer
	started := false
	err = h.campaigns.EachRecipient(ctx, org, id, status, func(r *models.CampaignRecipient) error {
		if !started {
			start(c, cp, status)
			w = csv.NewWriter(web.StallGuard(c, exportStall))
			if err := w.Write(exportHeader); err != nil {
				return err
			}
			started = true
		}
		code := ""
		if r.ErrorCode != nil {
			code = strconv.Itoa(*r.ErrorCode)
		}
		row := []string{m.Phone(r.PhoneNumber), m.Name(r.Name), string(r.Status), strconv.Itoa(r.Attempts), stamp(r.SentAt),
			stamp(r.DeliveredAt), stamp(r.ReadAt), stamp(r.FailedAt), code, r.ErrorTitle, r.ErrorDetail, stamp(r.RepliedAt)}
		for i := range row {
			row[i] = dataops.SafeCell(row[i])
		}
		return w.Write(row)
	})
	if err == nil && !started { // no recipient: the header alone
		start(c, cp, status)
		w = csv.NewWriter(web.StallGuard(c, exportStall))
		err = w.Write(exportHeader)
		started = true
	}
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	if err == nil {
		return
	}
	if !started {
		web.Fail(c, err)
		return
	}
	// The status is sent: cut the answer short, so that the client sees an
	// incomplete file rather than a whole one.
	level := slog.LevelWarn
	if errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil {
		level = slog.LevelInfo // the client's doing, not ours
	}
	web.Log(c).Log(ctx, level, "recipients export interrupted", "campaign_id", id, "error", err)
	panic(http.ErrAbortHandler)
}

// start sends the export's headers: a file named after the campaign.
func start(c *gin.Context, cp *models.Campaign, status string) {
	name := "campaign-" + cp.ID.String()[:8] + "-recipients"
	if status != "" {
		name += "-" + strings.ToLower(status)
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="`+name+"-"+time.Now().UTC().Format("20060102-150405")+`.csv"`)
	c.Header("Cache-Control", "no-store")
	c.Status(http.StatusOK)
}

func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
