package customactionsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/customactions"
	"wharf/internal/infra/apperr"
)

// execute runs an action as the caller: their name, email and role in
// this organization are the {{user.*}} variables.
func (h *Handlers) execute(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req executeRequest
	if !web.BindJSON(c, &req) {
		return
	}
	contactID, err := web.OptionalUUID("contact_id", req.ContactID)
	if err == nil && contactID == nil {
		err = apperr.Invalidf("contact_id is required")
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	p := web.Principal(c)
	res, err := h.actions.Execute(c.Request.Context(), p.OrgID, id, *contactID,
		customactions.Caller{UserID: p.UserID, Name: p.FullName, Email: p.Email, Role: p.RoleName})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toExecuteResp(res))
}
