package accountsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/accounts"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.accounts.List(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]accountSummary, len(rows))
	for i, a := range rows {
		out[i] = toAccountSummary(a)
	}
	web.OK(c, web.Items[accountSummary]{Items: out})
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	a, err := h.accounts.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toAccountDetail(a))
}

func (h *Handlers) create(c *gin.Context) {
	var req accountRequest
	if !web.BindJSON(c, &req) {
		return
	}
	a, err := h.accounts.Create(c.Request.Context(), web.Principal(c).OrgID, accounts.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, createdAccount{ID: a.ID, Name: a.Name, Status: a.Status, CreatedAt: web.UTC(a.CreatedAt),
		WebhookVerifyToken: a.WebhookVerifyToken})
}

func (h *Handlers) update(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req accountRequest
	if !web.BindJSON(c, &req) {
		return
	}
	a, err := h.accounts.Update(c.Request.Context(), web.Principal(c).OrgID, id, accounts.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toAccountDetail(a))
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.accounts.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "account deleted")
}

func (h *Handlers) test(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	r, err := h.accounts.Test(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, testResp(*r))
}
