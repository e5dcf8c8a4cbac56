package accountsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the accounts routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/accounts", Access: web.Perm("accounts:read"), Handler: h.list,
			Summary: "List the organization's platform accounts", Response: web.Items[accountSummary]{}},
		{Method: "GET", Path: "/api/accounts/:id", Access: web.Perm("accounts:read"), Handler: h.get,
			Summary: "Get a platform account with its credentials and provider details", Response: accountDetail{}},
		{Method: "POST", Path: "/api/accounts", Access: web.Perm("accounts:create"), Handler: h.create,
			Summary: "Add a platform account by hand", Request: accountRequest{}, Response: createdAccount{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/accounts/:id", Access: web.Perm("accounts:update"), Handler: h.update,
			Summary: "Update a platform account", Request: accountRequest{}, Response: accountDetail{}},
		{Method: "DELETE", Path: "/api/accounts/:id", Access: web.Perm("accounts:delete"), Handler: h.delete,
			Summary: "Delete a platform account", Response: web.MessageResp{}},
		{Method: "POST", Path: "/api/accounts/:id/test", Access: web.Perm("accounts:read"), Handler: h.test,
			Summary: "Test the account's credentials at the provider", Response: testResp{}},

		// Embedded signup
		{Method: "GET", Path: "/api/embedded-signup/config", Access: web.Perm("accounts:write"), Handler: h.embeddedSignupConfig,
			Summary: "The provider app and configuration for embedded signup", Response: signupConfigResp{}},
		{Method: "POST", Path: "/api/accounts/exchange-token", Access: web.Perm("accounts:write"), SessionOnly: true, Handler: h.exchangeToken,
			Summary: "Complete embedded signup: trade the code for a token and save the account", Request: exchangeTokenRequest{},
			Response: onboardedResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/accounts/:id/register", Access: web.Perm("accounts:write"), Handler: h.register,
			Summary: "Register the account's number with the provider (body optional)", Request: registerRequest{},
			Response: onboardedResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/accounts/:id/subscribe", Access: web.Perm("accounts:write"), Handler: h.subscribe,
			Summary:  "Subscribe the app to the webhooks of the account's business account (needed once for an account connected by hand)",
			Response: web.MessageResp{}, Errors: []int{http.StatusBadGateway}},
	}
}
