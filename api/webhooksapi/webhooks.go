package webhooksapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/webhooks"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.webhooks.List(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]webhookResp, len(rows))
	for i, v := range rows {
		items[i] = toWebhookResp(v)
	}
	web.OK(c, webhooksResp{Items: items, AvailableEvents: webhooks.Catalog})
}

func (h *Handlers) create(c *gin.Context) {
	var req webhookRequest
	if !web.BindJSON(c, &req) {
		return
	}
	v, err := h.webhooks.Create(c.Request.Context(), web.Principal(c).OrgID, webhooks.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toWebhookResp(*v))
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	v, err := h.webhooks.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toWebhookResp(*v))
}

func (h *Handlers) update(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req webhookRequest
	if !web.BindJSON(c, &req) {
		return
	}
	v, err := h.webhooks.Update(c.Request.Context(), web.Principal(c).OrgID, id, webhooks.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toWebhookResp(*v))
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.webhooks.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "webhook deleted")
}

func (h *Handlers) test(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	r, err := h.webhooks.Test(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, testResp{Success: r.Success, StatusCode: r.StatusCode, Error: r.Error, DurationMS: r.Duration.Milliseconds()})
}

// deliveriesShown is how many of the latest attempts the log shows.
const deliveriesShown = 50

func (h *Handlers) deliveries(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	rows, err := h.webhooks.Deliveries(c.Request.Context(), web.Principal(c).OrgID, id, deliveriesShown)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]deliveryResp, len(rows))
	for i, d := range rows {
		items[i] = deliveryResp{ID: d.ID, Event: d.Event, EventID: d.EventID, Attempt: d.Attempt, Success: d.Success,
			StatusCode: d.StatusCode, Error: d.Error, DurationMS: d.DurationMS, CreatedAt: web.UTC(d.CreatedAt)}
	}
	web.OK(c, web.Items[deliveryResp]{Items: items})
}
