package campaignsapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/campaigns"
	"wharf/models"
)

func (h *Handlers) list(c *gin.Context) {
	pg, valid := web.Paging(c, 20, 100)
	if !valid {
		return
	}
	accountID, valid := web.QueryUUID(c, "account_id")
	if !valid {
		return
	}
	seriesID, valid := web.QueryUUID(c, "series_id")
	if !valid {
		return
	}
	f := campaigns.Filter{Status: c.Query("status"), AccountID: accountID, SeriesID: seriesID}
	rows, total, err := h.campaigns.List(c.Request.Context(), web.Principal(c).OrgID, f, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]campaignResp, len(rows))
	for i := range rows {
		items[i] = toCampaignResp(&rows[i])
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	cp, err := h.campaigns.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toCampaignResp(cp))
}

func (h *Handlers) create(c *gin.Context) {
	var req campaignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p := web.Principal(c)
	in, err := req.input(p)
	if err != nil {
		web.Fail(c, err)
		return
	}
	cp, err := h.campaigns.Create(c.Request.Context(), p.OrgID, p.UserID, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toCampaignResp(cp))
}

func (h *Handlers) update(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req campaignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p := web.Principal(c)
	in, err := req.input(p)
	if err != nil {
		web.Fail(c, err)
		return
	}
	cp, err := h.campaigns.Update(c.Request.Context(), p.OrgID, id, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toCampaignResp(cp))
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.campaigns.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "campaign deleted")
}

// action serves a state-machine transition. It takes a method expression,
// not a method value, so that the route table can be listed from a nil
// *Handlers.
func (h *Handlers) action(do func(*campaigns.Service, context.Context, uuid.UUID, uuid.UUID) (*models.Campaign, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, valid := web.PathID(c, "id")
		if !valid {
			return
		}
		cp, err := do(h.campaigns, c.Request.Context(), web.Principal(c).OrgID, id)
		if err != nil {
			web.Fail(c, err)
			return
		}
		web.OK(c, toCampaignResp(cp))
	}
}

// resendUnknown requeues the campaign's unknown recipients.
func (h *Handlers) resendUnknown(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	n, cp, err := h.campaigns.ResendUnknown(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, resendResp{Requeued: n, Campaign: toCampaignResp(cp)})
}

// previewRecurrence checks a recurrence and gives its next occurrences.
func (h *Handlers) previewRecurrence(c *gin.Context) {
	var req previewRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r := models.Recurrence{Cron: req.Cron, EndsAt: req.EndsAt, MaxRuns: req.MaxRuns, GraceMinutes: req.GraceMinutes}
	runs, tz, err := h.campaigns.PreviewRecurrence(c.Request.Context(), web.Principal(c).OrgID, r, 3)
	if err != nil {
		web.Fail(c, err)
		return
	}
	for i := range runs {
		runs[i] = runs[i].UTC()
	}
	web.OK(c, previewResp{NextRuns: runs, Timezone: tz})
}
