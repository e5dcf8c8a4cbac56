package identityapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the identity routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		// Authentication and session
		{Method: "POST", Path: "/api/auth/register", Access: web.Public(), Handler: h.register,
			Summary: "Register a user in an organization that accepts self-registration", Request: registerRequest{},
			Response: sessionResp[registeredUser]{}, Status: http.StatusCreated, Errors: []int{http.StatusForbidden}},
		{Method: "POST", Path: "/api/auth/login", Access: web.Public(), Handler: h.login,
			Summary: "Sign in with email and password", Request: loginRequest{}, Response: sessionResp[loginUser]{},
			Errors: []int{http.StatusUnauthorized, http.StatusForbidden}},
		{Method: "POST", Path: "/api/auth/refresh", Access: web.Public(), Handler: h.refresh,
			Summary: "Trade a refresh token (in the body, or the console's cookie) for new tokens", Request: refreshTokenRequest{},
			Response: tokensResp{}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden}},
		{Method: "POST", Path: "/api/auth/logout", Access: web.Public(), Handler: h.logout,
			Summary: "Revoke a refresh token's session (in the body, or the console's cookie)", Request: refreshTokenRequest{},
			Response: web.MessageResp{}, Errors: []int{http.StatusForbidden}},
		{Method: "POST", Path: "/api/auth/switch-org", Access: web.Authenticated(), SessionOnly: true, Handler: h.switchOrg,
			Summary: "Switch the session to another of the caller's organizations", Request: switchOrgRequest{},
			Response: sessionResp[switchedUser]{}},
		{Method: "GET", Path: "/api/me", Access: web.Authenticated(), Handler: h.me,
			Summary: "The caller's profile, role and permissions", Response: meResp{}},
		{Method: "PUT", Path: "/api/me/password", Access: web.Authenticated(), SessionOnly: true, Handler: h.changePassword,
			Summary: "Change the caller's password", Request: changePasswordRequest{}, Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/me/organizations", Access: web.Authenticated(), Handler: h.myOrganizations,
			Summary: "The caller's organizations, default first", Response: myOrganizationsResp{}},

		// API keys
		{Method: "GET", Path: "/api/api-keys", Access: web.Perm("api_keys:read"), Handler: h.listAPIKeys,
			Summary: "List the organization's API keys", Response: []apiKeyResp{}},
		{Method: "POST", Path: "/api/api-keys", Access: web.Perm("api_keys:create"), SessionOnly: true, Handler: h.createAPIKey,
			Summary: "Create an API key (the key is shown only in this answer)", Request: createAPIKeyRequest{},
			Response: apiKeyResp{}, Status: http.StatusCreated},
		{Method: "DELETE", Path: "/api/api-keys/:id", Access: web.Perm("api_keys:delete"), Handler: h.deleteAPIKey,
			Summary: "Revoke an API key", Response: web.MessageResp{}},

		// Users, roles and permissions
		{Method: "GET", Path: "/api/users", Access: web.Perm("users:read"), Handler: h.listUsers,
			Summary: "List the organization's users", Query: searchPageQuery{}, Response: usersPage{}},
		{Method: "GET", Path: "/api/users/:id", Access: web.Perm("users:read"), Handler: h.getUser,
			Summary: "Get a user", Response: userResp{}},
		{Method: "POST", Path: "/api/users", Access: web.Perm("users:create"), SessionOnly: true, Handler: h.createUser,
			Summary: "Create a user in the organization", Request: createUserRequest{}, Response: userResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/users/:id", Access: web.Perm("users:update"), SessionOnly: true, Handler: h.updateUser,
			Summary: "Update a user", Request: updateUserRequest{}, Response: userResp{}},
		{Method: "DELETE", Path: "/api/users/:id", Access: web.Perm("users:delete"), SessionOnly: true, Handler: h.deleteUser,
			Summary: "Delete a user", Response: web.MessageResp{}},
		{Method: "PUT", Path: "/api/users/:id/availability", Access: web.SelfOr("id", "users:update"), Handler: h.setAvailability,
			Summary: "Set a user's availability for assignments", Request: availabilityRequest{}, Response: userResp{}},
		{Method: "GET", Path: "/api/permissions", Access: web.Perm("roles:read"), Handler: h.listPermissions,
			Summary: "List every permission", Response: permissionsResp{}},
		{Method: "GET", Path: "/api/roles", Access: web.Perm("roles:read"), Handler: h.listRoles,
			Summary: "List the organization's roles", Query: searchQuery{}, Response: rolesResp{}},
		{Method: "GET", Path: "/api/roles/:id", Access: web.Perm("roles:read"), Handler: h.getRole,
			Summary: "Get a role with its permissions", Response: roleResp{}},
		{Method: "POST", Path: "/api/roles", Access: web.Perm("roles:create"), SessionOnly: true, Handler: h.createRole,
			Summary: "Create a role", Request: roleRequest{}, Response: roleResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/roles/:id", Access: web.Perm("roles:update"), SessionOnly: true, Handler: h.updateRole,
			Summary: "Update a role", Request: roleRequest{}, Response: roleResp{}},
		{Method: "DELETE", Path: "/api/roles/:id", Access: web.Perm("roles:delete"), SessionOnly: true, Handler: h.deleteRole,
			Summary: "Delete a role", Response: web.MessageResp{}},

		// Organizations and members
		{Method: "GET", Path: "/api/organizations", Access: web.SuperAdminOr("organizations:read"), Handler: h.listOrganizations,
			Summary: "List organizations (every one for a super admin)", Response: organizationsResp{}},
		{Method: "GET", Path: "/api/organizations/current", Access: web.Authenticated(), Handler: h.currentOrganization,
			Summary: "The caller's current organization, with its timezone and date format", Response: currentOrgResp{}},
		{Method: "POST", Path: "/api/organizations", Access: web.SuperAdminOr("organizations:write"), SessionOnly: true, Handler: h.createOrganization,
			Summary: "Create an organization with the caller as its admin", Request: createOrgRequest{}, Response: orgResp{},
			Status: http.StatusCreated},
		{Method: "GET", Path: "/api/organizations/members", Access: web.Perm("users:read"), Handler: h.listMembers,
			Summary: "List the organization's members", Query: searchPageQuery{}, Response: membersPage{}},
		{Method: "POST", Path: "/api/organizations/members", Access: web.Perm("users:create"), SessionOnly: true, Handler: h.addMember,
			Summary: "Add an existing user to the organization", Request: addMemberRequest{}, Response: web.MessageResp{},
			Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/organizations/members/:member_id", Access: web.Perm("users:update"), SessionOnly: true, Handler: h.updateMember,
			Summary: "Change a member's role", Request: updateMemberRequest{}, Response: web.MessageResp{}},
		{Method: "DELETE", Path: "/api/organizations/members/:member_id", Access: web.Perm("users:delete"), SessionOnly: true, Handler: h.removeMember,
			Summary: "Remove a member from the organization", Response: web.MessageResp{}},
	}
}
