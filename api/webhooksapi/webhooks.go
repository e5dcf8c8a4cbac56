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
	bodies := mayReadBodies(c)
	items := make([]deliveryResp, len(rows))
	for i := range rows {
		items[i] = toDeliveryResp(&rows[i], bodies)
	}
	web.OK(c, web.Items[deliveryResp]{Items: items})
}

// mayReadBodies: the logged bodies carry contacts' numbers and message
// texts, which webhooks:read alone does not open.
func mayReadBodies(c *gin.Context) bool {
	p := web.Principal(c)
	return p.Can("contacts:read") && p.Can("messages:read")
}

func (h *Handlers) redeliver(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	deliveryID, valid := web.PathInt64(c, "deliveryId")
	if !valid {
		return
	}
	d, err := h.webhooks.Redeliver(c.Request.Context(), web.Principal(c).OrgID, id, deliveryID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toDeliveryResp(d, mayReadBodies(c)))
}
