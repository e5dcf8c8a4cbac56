package pflowsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/pflows"
	"wharf/platform"
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
	rows, total, err := h.flows.List(c.Request.Context(), web.Principal(c).OrgID, pflows.Filter{Status: c.Query("status"), AccountID: accountID}, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]flowSummary, len(rows))
	for i := range rows {
		items[i] = toSummary(&rows[i])
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	f, err := h.flows.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toFlowResp(f))
}

func (h *Handlers) create(c *gin.Context) {
	var req createRequest
	if !web.BindJSON(c, &req) {
		return
	}
	accountID, err := web.OptionalUUID("account_id", req.AccountID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	f, err := h.flows.Create(c.Request.Context(), web.Principal(c).OrgID, pflows.Input{AccountID: accountID, Name: req.Name,
		Categories: req.Categories, JSONDefinition: req.JSONDefinition})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toFlowResp(f))
}

func (h *Handlers) update(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req updateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	f, err := h.flows.Update(c.Request.Context(), web.Principal(c).OrgID, id, pflows.Input{Name: req.Name, Categories: req.Categories,
		JSONDefinition: req.JSONDefinition})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toFlowResp(f))
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.flows.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Flow deleted")
}

func (h *Handlers) save(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	s, err := h.flows.SaveToProvider(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	verrs := s.ValidationErrors
	if verrs == nil {
		verrs = []platform.FlowValidationError{}
	}
	web.OK(c, savedResp{ProviderFlowID: s.ProviderFlowID, ValidationErrors: verrs, Status: s.Flow.Status})
}

func (h *Handlers) publish(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	f, err := h.flows.Publish(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{ID: f.ID, Status: f.Status})
}

func (h *Handlers) deprecate(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	f, err := h.flows.Deprecate(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{ID: f.ID, Status: f.Status})
}

func (h *Handlers) sync(c *gin.Context) {
	var req syncRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.AccountID == "" {
		web.Fail(c, apperr.Invalidf("account_id is required"))
		return
	}
	accountID, err := web.OptionalUUID("account_id", &req.AccountID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	res, err := h.flows.Sync(c.Request.Context(), web.Principal(c).OrgID, *accountID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, syncResp{Synced: res.Synced, New: res.New, Updated: res.Updated})
}
