package widgetsapi

import (
	"wharf/internal/widgets"
	"wharf/module"
)

// Module is the dashboard widgets' share of the processes: routes.
func Module(w *widgets.Service) module.Module {
	return module.Module{Tag: "Dashboard widgets", Routes: New(w).Routes()}
}
