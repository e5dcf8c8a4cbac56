package teamsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/teams"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.teams.List(c.Request.Context(), web.Principal(c).OrgID, caller(c))
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := teamsResp{Teams: make([]teamResp, len(rows))}
	for i, v := range rows {
		out.Teams[i] = toTeamResp(v)
	}
	web.OK(c, out)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	v, err := h.teams.Get(c.Request.Context(), web.Principal(c).OrgID, caller(c), id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toTeamResp(*v))
}

func (h *Handlers) create(c *gin.Context) {
	var req teamRequest
	if !web.BindJSON(c, &req) {
		return
	}
	v, err := h.teams.Create(c.Request.Context(), web.Principal(c).OrgID, teams.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toTeamResp(*v))
}

func (h *Handlers) update(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req teamRequest
	if !web.BindJSON(c, &req) {
		return
	}
	v, err := h.teams.Update(c.Request.Context(), web.Principal(c).OrgID, caller(c), id, teams.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toTeamResp(*v))
}

func (h *Handlers) delete(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.teams.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Team deleted")
}

func (h *Handlers) members(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	rows, err := h.teams.Members(c.Request.Context(), web.Principal(c).OrgID, caller(c), id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := membersResp{Members: make([]memberResp, len(rows))}
	for i, m := range rows {
		out.Members[i] = toMemberResp(m)
	}
	web.OK(c, out)
}

func (h *Handlers) addMember(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req memberRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.UserID == "" {
		web.Fail(c, apperr.Invalidf("user_id is required"))
		return
	}
	userID, err := web.OptionalUUID("user_id", &req.UserID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.teams.AddMember(c.Request.Context(), web.Principal(c).OrgID, caller(c), id, *userID, req.Role)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toMemberResp(*m))
}

func (h *Handlers) removeMember(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	userID, ok := web.PathID(c, "user_id")
	if !ok {
		return
	}
	if err := h.teams.RemoveMember(c.Request.Context(), web.Principal(c).OrgID, caller(c), id, userID); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Member removed")
}
