package contactsapi

import (
	"wharf/internal/contacts"
	"wharf/module"
)

// Module is the contacts' share of the processes: routes.
func Module(cts *contacts.Service, maskers Maskers, sessions Sessions) module.Module {
	return module.Module{Tag: "Contacts", Routes: New(cts, maskers, sessions).Routes()}
}
