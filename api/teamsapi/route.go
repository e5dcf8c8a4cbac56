package teamsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the teams routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI). Changing a team
// or its members needs teams:read here: teams:update or being the team's
// manager is checked by the teams domain (403 otherwise).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/teams", Access: web.Perm("teams:read"), Handler: h.list,
			Summary: "List the teams the caller may see (all with teams:update, else their own)", Response: teamsResp{}},
		{Method: "GET", Path: "/api/teams/:id", Access: web.Perm("teams:read"), Handler: h.get,
			Summary: "Get a team", Response: teamResp{}},
		{Method: "POST", Path: "/api/teams", Access: web.Perm("teams:create"), Handler: h.create,
			Summary: "Create a team", Request: teamRequest{}, Response: teamResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/teams/:id", Access: web.Perm("teams:read"), Handler: h.update,
			Summary: "Update a team (teams:update or the team's manager)", Request: teamRequest{}, Response: teamResp{}},
		{Method: "DELETE", Path: "/api/teams/:id", Access: web.Perm("teams:delete"), Handler: h.delete,
			Summary: "Delete a team", Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/teams/:id/members", Access: web.Perm("teams:read"), Handler: h.members,
			Summary: "List a team's members", Response: membersResp{}},
		{Method: "POST", Path: "/api/teams/:id/members", Access: web.Perm("teams:read"), Handler: h.addMember,
			Summary: "Add a member of the organization to a team (teams:update or the team's manager; managers need teams:update)",
			Request: memberRequest{}, Response: memberResp{}, Status: http.StatusCreated},
		{Method: "DELETE", Path: "/api/teams/:id/members/:user_id", Access: web.Perm("teams:read"), Handler: h.removeMember,
			Summary: "Remove a member from a team (teams:update or the team's manager; managers need teams:update)", Response: web.MessageResp{}},
	}
}
