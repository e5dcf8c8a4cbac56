package identityapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
)

func (h *Handlers) listOrganizations(c *gin.Context) {
	orgs, err := h.ids.ListOrganizations(c.Request.Context(), web.Principal(c))
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]orgResp, len(orgs))
	for i, o := range orgs {
		out[i] = toOrgResp(o)
	}
	web.OK(c, organizationsResp{Organizations: out, Total: len(out)})
}

func (h *Handlers) currentOrganization(c *gin.Context) {
	o, err := h.ids.Organization(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	st, err := orgsettings.Of(o)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, currentOrgResp{orgResp: toOrgResp(*o), Timezone: st.Timezone, DateFormat: st.DateFormat})
}

func (h *Handlers) createOrganization(c *gin.Context) {
	var req createOrgRequest
	if !web.BindJSON(c, &req) {
		return
	}
	o, err := h.ids.CreateOrganization(c.Request.Context(), web.Principal(c), req.Name)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toOrgResp(*o))
}

func (h *Handlers) listMembers(c *gin.Context) {
	pg, valid := web.Paging(c, 50, 100)
	if !valid {
		return
	}
	ms, total, err := h.ids.ListMembers(c.Request.Context(), web.Principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]memberResp, len(ms))
	for i, m := range ms {
		out[i] = memberResp(m)
		out[i].CreatedAt = web.UTC(m.CreatedAt)
	}
	web.OK(c, membersPage{Members: out, Total: total, Page: pg.Page, Limit: pg.Limit})
}

func (h *Handlers) addMember(c *gin.Context) {
	var req addMemberRequest
	if !web.BindJSON(c, &req) {
		return
	}
	userID, err1 := web.OptionalUUID("user_id", req.UserID)
	roleID, err2 := web.OptionalUUID("role_id", req.RoleID)
	for _, err := range []error{err1, err2} {
		if err != nil {
			web.Fail(c, err)
			return
		}
	}
	if err := h.ids.AddMember(c.Request.Context(), web.Principal(c), identity.AddMemberInput{UserID: userID, Email: req.Email, RoleID: roleID}); err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, web.MessageResp{Message: "member added"})
}

func (h *Handlers) updateMember(c *gin.Context) {
	id, valid := web.PathID(c, "member_id")
	if !valid {
		return
	}
	var req updateMemberRequest
	if !web.BindJSON(c, &req) {
		return
	}
	roleID, err := web.OptionalUUID("role_id", req.RoleID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if roleID == nil {
		web.Fail(c, apperr.Invalidf("role_id is required"))
		return
	}
	if err := h.ids.UpdateMemberRole(c.Request.Context(), web.Principal(c), id, roleID); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "member updated")
}

func (h *Handlers) removeMember(c *gin.Context) {
	id, valid := web.PathID(c, "member_id")
	if !valid {
		return
	}
	if err := h.ids.RemoveMember(c.Request.Context(), web.Principal(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "member removed")
}
