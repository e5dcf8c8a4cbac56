package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/campaigns"
	"wharf/models"
)

type campaignResp struct {
	ID              uuid.UUID         `json:"id"`
	Name            string            `json:"name"`
	AccountID       *uuid.UUID        `json:"account_id"`
	TemplateID      *uuid.UUID        `json:"template_id"`
	TemplateName    string            `json:"template_name"`
	Status          string            `json:"status"`
	TotalRecipients int               `json:"total_recipients"`
	SentCount       int               `json:"sent_count"`
	DeliveredCount  int               `json:"delivered_count"`
	ReadCount       int               `json:"read_count"`
	FailedCount     int               `json:"failed_count"`
	UnknownCount    int               `json:"unknown_count"`
	PendingCount    int               `json:"pending_count"`
	SendingCount    int               `json:"sending_count"`
	VariableMapping map[string]string `json:"variable_mapping"`
	ScheduledAt     *time.Time        `json:"scheduled_at"`
	StartedAt       *time.Time        `json:"started_at"`
	PausedAt        *time.Time        `json:"paused_at"`
	PauseReason     string            `json:"pause_reason"`
	CompletedAt     *time.Time        `json:"completed_at"`
	CancelledAt     *time.Time        `json:"cancelled_at"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

func toCampaignResp(c *models.Campaign) campaignResp {
	m := c.VariableMapping.V
	if m == nil {
		m = map[string]string{}
	}
	return campaignResp{ID: c.ID, Name: c.Name, AccountID: c.AccountID, TemplateID: c.TemplateID, TemplateName: c.TemplateName,
		Status: c.Status, TotalRecipients: c.TotalRecipients, SentCount: c.SentCount, DeliveredCount: c.DeliveredCount,
		ReadCount: c.ReadCount, FailedCount: c.FailedCount, UnknownCount: c.UnknownCount, PendingCount: c.PendingCount,
		SendingCount: c.SendingCount, VariableMapping: m,
		ScheduledAt: utcPtr(c.ScheduledAt), StartedAt: utcPtr(c.StartedAt), PausedAt: utcPtr(c.PausedAt), PauseReason: c.PauseReason,
		CompletedAt: utcPtr(c.CompletedAt), CancelledAt: utcPtr(c.CancelledAt), CreatedAt: utc(c.CreatedAt), UpdatedAt: utc(c.UpdatedAt)}
}

func (s *Server) listCampaigns(c *gin.Context) {
	pg, valid := s.page(c, 20, 100)
	if !valid {
		return
	}
	accountID, valid := s.queryUUID(c, "account_id")
	if !valid {
		return
	}
	f := campaigns.Filter{Status: c.Query("status"), AccountID: accountID}
	rows, total, err := s.Campaigns.List(c.Request.Context(), principal(c).OrgID, f, pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]campaignResp, len(rows))
	for i := range rows {
		items[i] = toCampaignResp(&rows[i])
	}
	ok(c, http.StatusOK, gin.H{"items": items, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func (s *Server) getCampaign(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	cp, err := s.Campaigns.Get(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toCampaignResp(cp))
}

// campaignReq distinguishes an absent scheduled_at from an explicit null.
type campaignReq struct {
	Name            *string            `json:"name"`
	AccountID       *string            `json:"account_id"`
	TemplateID      *string            `json:"template_id"`
	VariableMapping *map[string]string `json:"variable_mapping"`
	ScheduledAt     json.RawMessage    `json:"scheduled_at"`
}

func (r campaignReq) input() (campaigns.Input, error) {
	in := campaigns.Input{Name: r.Name, VariableMapping: r.VariableMapping}
	var err error
	if in.AccountID, err = optionalUUID("account_id", r.AccountID); err != nil {
		return in, err
	}
	if in.TemplateID, err = optionalUUID("template_id", r.TemplateID); err != nil {
		return in, err
	}
	if len(r.ScheduledAt) > 0 {
		var at *time.Time
		if string(r.ScheduledAt) != "null" {
			var raw string
			if json.Unmarshal(r.ScheduledAt, &raw) != nil {
				return in, apperr.Invalidf("scheduled_at must be an RFC 3339 timestamp or null")
			}
			t, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				return in, apperr.Invalidf("scheduled_at must be an RFC 3339 timestamp or null")
			}
			t = t.UTC()
			at = &t
		}
		in.ScheduledAt = &at
	}
	return in, nil
}

func (s *Server) createCampaign(c *gin.Context) {
	var req campaignReq
	if !s.bindJSON(c, &req) {
		return
	}
	in, err := req.input()
	if err != nil {
		s.fail(c, err)
		return
	}
	p := principal(c)
	cp, err := s.Campaigns.Create(c.Request.Context(), p.OrgID, p.UserID, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toCampaignResp(cp))
}

func (s *Server) updateCampaign(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req campaignReq
	if !s.bindJSON(c, &req) {
		return
	}
	in, err := req.input()
	if err != nil {
		s.fail(c, err)
		return
	}
	cp, err := s.Campaigns.Update(c.Request.Context(), principal(c).OrgID, id, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toCampaignResp(cp))
}

func (s *Server) deleteCampaign(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Campaigns.Delete(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "campaign deleted")
}

// maxImportBody bounds a recipients import (50,000 recipients with some
// extra fields fit comfortably).
const maxImportBody = 32 << 20

func (s *Server) importRecipients(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		Recipients []campaigns.RecipientInput `json:"recipients"`
	}
	if !s.bindJSONLimit(c, &req, maxImportBody) {
		return
	}
	res, err := s.Campaigns.Import(c.Request.Context(), principal(c).OrgID, id, req.Recipients)
	if err != nil {
		s.fail(c, err)
		return
	}
	rows := res.InvalidRows
	if rows == nil {
		rows = []campaigns.InvalidRow{}
	}
	ok(c, http.StatusOK, gin.H{"imported": res.Imported, "duplicates": res.Duplicates, "invalid": res.Invalid, "invalid_rows": rows})
}

func (s *Server) listRecipients(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	pg, valid := s.page(c, 50, 500)
	if !valid {
		return
	}
	ctx, org := c.Request.Context(), principal(c).OrgID
	rows, total, err := s.Campaigns.Recipients(ctx, org, id, c.Query("status"), pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	m, err := s.masker(ctx, org)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]gin.H, len(rows))
	for i, r := range rows {
		item := gin.H{"id": r.ID, "phone_number": m.phone(r.PhoneNumber), "name": m.name(r.Name), "status": r.Status,
			"data": r.Data.V, "attempts": r.Attempts, "platform_message_id": r.PlatformMessageID, "sent_at": utcPtr(r.SentAt),
			"delivered_at": utcPtr(r.DeliveredAt), "read_at": utcPtr(r.ReadAt), "failed_at": utcPtr(r.FailedAt), "error": nil}
		if r.ErrorTitle != "" || r.ErrorCode != nil {
			item["error"] = gin.H{"code": r.ErrorCode, "title": r.ErrorTitle, "detail": r.ErrorDetail}
		}
		items[i] = item
	}
	ok(c, http.StatusOK, gin.H{"items": items, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func (s *Server) campaignAction(action func(*Server, *gin.Context, uuid.UUID, uuid.UUID) (*models.Campaign, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, valid := s.pathID(c, "id")
		if !valid {
			return
		}
		cp, err := action(s, c, principal(c).OrgID, id)
		if err != nil {
			s.fail(c, err)
			return
		}
		ok(c, http.StatusOK, toCampaignResp(cp))
	}
}

func startCampaign(s *Server, c *gin.Context, org, id uuid.UUID) (*models.Campaign, error) {
	return s.Campaigns.Start(c.Request.Context(), org, id)
}

func pauseCampaign(s *Server, c *gin.Context, org, id uuid.UUID) (*models.Campaign, error) {
	return s.Campaigns.Pause(c.Request.Context(), org, id)
}

func cancelCampaign(s *Server, c *gin.Context, org, id uuid.UUID) (*models.Campaign, error) {
	return s.Campaigns.Cancel(c.Request.Context(), org, id)
}

func progressResp(p *campaigns.Progress) gin.H {
	return gin.H{"id": p.Campaign.ID, "status": p.Campaign.Status, "total": p.Total, "pending": p.Pending, "sending": p.Sending,
		"sent": p.Sent, "delivered": p.Delivered, "read": p.Read, "failed": p.Failed, "unknown": p.Unknown,
		"sends_per_second": p.RecentPerSecond, "started_at": utcPtr(p.Campaign.StartedAt), "completed_at": utcPtr(p.Campaign.CompletedAt)}
}

func (s *Server) campaignProgress(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	p, err := s.Campaigns.Progress(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, progressResp(p))
}

// Progress stream limits: a stream ends when the campaign is done, after
// streamIdleLimit while the campaign is not sending (draft, scheduled,
// paused), and after streamMaxDuration in any case; EventSource clients
// reconnect by themselves.
const (
	streamIdleLimit   = time.Minute
	streamMaxDuration = time.Hour
)

// campaignProgressStream sends the progress as server-sent events every
// second, from the campaign's maintained counters (one row read per second,
// not a count of every recipient), until the campaign is completed or
// cancelled, a limit above is reached, or the client goes away.
func (s *Server) campaignProgressStream(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	ctx, org := c.Request.Context(), principal(c).OrgID
	cp, err := s.Campaigns.Get(ctx, org, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := noWriteDeadline(c); err != nil {
		s.log.Warn("progress stream keeps the server's write timeout", "error", err)
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
		b, _ := json.Marshal(progressResp(p))
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
		next, err := s.Campaigns.Get(ctx, org, id)
		if err != nil {
			return false
		}
		cp = next
		return true
	})
}

// resendUnknown requeues the campaign's unknown recipients.
func (s *Server) resendUnknown(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	n, cp, err := s.Campaigns.ResendUnknown(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"requeued": n, "campaign": toCampaignResp(cp)})
}
