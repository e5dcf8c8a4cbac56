package accountsapi

import (
	"wharf/internal/accounts"
	"wharf/module"
)

// Module is the platform accounts' share of the processes: their routes
// (signupScript is EMBEDDED_SIGNUP_SCRIPT_URL) and the refresh job.
func Module(accts *accounts.Service, signupScript string) module.Module {
	return module.Module{Tag: "Accounts", Routes: New(accts).WithSignupScript(signupScript).Routes(), Jobs: accts.Jobs()}
}
