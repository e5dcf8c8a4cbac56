package settingsapi

import "wharf/module"

// Module is the organization settings' share of the processes: routes.
func Module(settings Settings) module.Module {
	return module.Module{Tag: "Settings", Routes: New(settings).Routes()}
}
