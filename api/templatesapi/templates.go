package templatesapi

import (
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/templates"
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
	f := templates.Filter{Status: c.Query("status"), Category: c.Query("category"), Search: c.Query("search"), AccountID: accountID}
	rows, total, err := h.templates.List(c.Request.Context(), web.Principal(c).OrgID, f, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]templateResp, len(rows))
	for i := range rows {
		items[i] = toTemplateResp(&rows[i])
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	t, err := h.templates.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toTemplateResp(t))
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
	t, err := h.templates.Create(c.Request.Context(), web.Principal(c).OrgID, templates.Input{AccountID: accountID, Name: req.Name,
		Language: req.Language, Category: req.Category, ParameterFormat: req.ParameterFormat, Components: req.Components,
		SampleValues: req.SampleValues})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toTemplateResp(t))
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
	t, err := h.templates.Update(c.Request.Context(), web.Principal(c).OrgID, id, req.Components, req.SampleValues)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toTemplateResp(t))
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.templates.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "template deleted")
}

func (h *Handlers) publish(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	t, err := h.templates.Publish(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, publishedResp{ID: t.ID, Status: t.Status})
}

// syncWait is how long the sync endpoint waits for the job before answering
// 202 with the task id.
const syncWait = 25 * time.Second

// sync runs the template:sync job and answers its counts; a sync that takes
// longer is reported as queued (the job finishes on its own).
func (h *Handlers) sync(c *gin.Context) {
	var req syncRequest
	if !web.BindJSON(c, &req) {
		return
	}
	accountID, err := web.OptionalUUID("account_id", req.AccountID)
	if err != nil || accountID == nil {
		web.Fail(c, apperr.Invalidf("account_id is required (a UUID)"))
		return
	}
	res, taskID, done, err := h.templates.RequestSync(c.Request.Context(), web.Principal(c).OrgID, *accountID, syncWait)
	switch {
	case err != nil:
		web.Fail(c, err)
	case !done:
		web.Accepted(c, syncQueuedResp{Status: "queued", TaskID: taskID})
	default:
		web.OK(c, syncResp(*res))
	}
}
