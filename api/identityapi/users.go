package identityapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
)

func (h *Handlers) listUsers(c *gin.Context) {
	pg, valid := web.Paging(c, 50, 100)
	if !valid {
		return
	}
	users, total, err := h.ids.ListUsers(c.Request.Context(), web.Principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]userResp, len(users))
	for i, u := range users {
		out[i] = toUserResp(u)
	}
	web.OK(c, usersPage{Users: out, Total: total, Page: pg.Page, Limit: pg.Limit})
}

func (h *Handlers) getUser(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	u, err := h.ids.User(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toUserResp(*u))
}

func (h *Handlers) createUser(c *gin.Context) {
	var req createUserRequest
	if !web.BindJSON(c, &req) {
		return
	}
	roleID, err := web.OptionalUUID("role_id", req.RoleID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	u, err := h.ids.CreateUser(c.Request.Context(), web.Principal(c), identity.CreateUserInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, RoleID: roleID})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toUserResp(*u))
}

func (h *Handlers) updateUser(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req updateUserRequest
	if !web.BindJSON(c, &req) {
		return
	}
	roleID, err := web.OptionalUUID("role_id", req.RoleID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	u, err := h.ids.UpdateUser(c.Request.Context(), web.Principal(c), id, identity.UpdateUserInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, RoleID: roleID, IsActive: req.IsActive})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toUserResp(*u))
}

func (h *Handlers) deleteUser(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.ids.DeleteUser(c.Request.Context(), web.Principal(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "user deleted")
}

func (h *Handlers) setAvailability(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req availabilityRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.IsAvailable == nil {
		web.Fail(c, apperr.Invalidf("is_available is required"))
		return
	}
	u, err := h.ids.SetAvailability(c.Request.Context(), web.Principal(c).OrgID, id, *req.IsAvailable)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toUserResp(*u))
}
