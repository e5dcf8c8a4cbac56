package templatesapi

import (
	"wharf/internal/templates"
	"wharf/module"
)

// Module is the templates' share of the processes: their routes and the
// sync job. Their consumer of template status events is the messaging
// integration's (resourceapi.Module), which updates the core template
// first.
func Module(tpl *templates.Service) module.Module {
	return module.Module{Tag: "Templates", Routes: New(tpl).Routes(), Jobs: tpl.Jobs()}
}
