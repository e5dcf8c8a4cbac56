package contactsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/contacts"
)

func (h *Handlers) listTags(c *gin.Context) {
	pg, valid := web.Paging(c, 50, 100)
	if !valid {
		return
	}
	rows, total, err := h.contacts.ListTags(c.Request.Context(), web.Principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]tagResp, len(rows))
	for i := range rows {
		out[i] = toTagResp(&rows[i])
	}
	web.OK(c, tagsPage{Tags: out, Total: total, Page: pg.Page, Limit: pg.Limit})
}

func (h *Handlers) createTag(c *gin.Context) {
	var req tagRequest
	if !web.BindJSON(c, &req) {
		return
	}
	t, err := h.contacts.CreateTag(c.Request.Context(), web.Principal(c).OrgID, contacts.TagInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toTagResp(t))
}

func (h *Handlers) updateTag(c *gin.Context) {
	var req tagRequest
	if !web.BindJSON(c, &req) {
		return
	}
	t, err := h.contacts.UpdateTag(c.Request.Context(), web.Principal(c).OrgID, c.Param("name"), contacts.TagInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toTagResp(t))
}

func (h *Handlers) deleteTag(c *gin.Context) {
	if err := h.contacts.DeleteTag(c.Request.Context(), web.Principal(c).OrgID, c.Param("name")); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "tag deleted")
}
