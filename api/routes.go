package api

import (
	"slices"

	"wharf/api/accountsapi"
	"wharf/api/callingapi"
	"wharf/api/campaignsapi"
	"wharf/api/cannedapi"
	"wharf/api/catalogsapi"
	"wharf/api/chatbotapi"
	"wharf/api/contactsapi"
	"wharf/api/customactionsapi"
	"wharf/api/dataopsapi"
	"wharf/api/eventsapi"
	"wharf/api/filesapi"
	"wharf/api/identityapi"
	"wharf/api/inboundapi"
	"wharf/api/messagesapi"
	"wharf/api/pflowsapi"
	"wharf/api/resourceapi"
	"wharf/api/settingsapi"
	"wharf/api/teamsapi"
	"wharf/api/templatesapi"
	"wharf/api/transfersapi"
	"wharf/api/web"
	"wharf/api/webhooksapi"
	"wharf/api/widgetsapi"
)

// Domains are the handlers of every domain the api serves. A new domain
// gets a field here and a line in routes.
//
// A nil handler still lists its routes (Routes reads no field of its
// receiver), which is how the documentation test lists the table without
// any service; serving a nil handler's route would panic.
type Domains struct {
	Identity  *identityapi.Handlers
	Settings  *settingsapi.Handlers
	Accounts  *accountsapi.Handlers
	Inbound   *inboundapi.Handlers
	Contacts  *contactsapi.Handlers
	Messages  *messagesapi.Handlers
	Templates *templatesapi.Handlers
	Campaigns *campaignsapi.Handlers
	Webhooks  *webhooksapi.Handlers
	Teams     *teamsapi.Handlers
	Canned    *cannedapi.Handlers
	Transfers *transfersapi.Handlers
	Chatbot   *chatbotapi.Handlers
	Flows     *pflowsapi.Handlers
	DataOps   *dataopsapi.Handlers
	Actions   *customactionsapi.Handlers
	Catalogs  *catalogsapi.Handlers
	Widgets   *widgetsapi.Handlers
	Calling   *callingapi.Handlers
	Resource  *resourceapi.Handlers
	Files     *filesapi.Handlers
	Events    *eventsapi.Handlers
}

// routes is the router table: every domain's routes, in the order
// docs/API.md lists them, each tagged with its domain for the OpenAPI
// document.
func (d Domains) routes() []web.Route {
	return slices.Concat(
		tagged("Identity", d.Identity.Routes()),
		tagged("Settings", d.Settings.Routes()),
		tagged("Accounts", d.Accounts.Routes()),
		tagged("Provider webhook", d.Inbound.Routes()),
		tagged("Contacts", d.Contacts.Routes()),
		tagged("Messages", d.Messages.Routes()),
		tagged("Live events", d.Events.Routes()),
		tagged("Templates", d.Templates.Routes()),
		tagged("Campaigns", d.Campaigns.Routes()),
		tagged("Webhooks", d.Webhooks.Routes()),
		tagged("Teams", d.Teams.Routes()),
		tagged("Canned responses", d.Canned.Routes()),
		tagged("Chatbot", d.Chatbot.Routes()),
		tagged("Agent transfers", d.Transfers.Routes()),
		tagged("Platform flows", d.Flows.Routes()),
		tagged("Export and import", d.DataOps.Routes()),
		tagged("Custom actions", d.Actions.Routes()),
		tagged("Catalogs and products", d.Catalogs.Routes()),
		tagged("Dashboard widgets", d.Widgets.Routes()),
		tagged("Calling", d.Calling.Routes()),
		tagged("Resource API (Frappe)", d.Resource.Routes()),
		tagged("Files", d.Files.Routes()),
	)
}

// tagged sets the tag of routes.
func tagged(tag string, routes []web.Route) []web.Route {
	for i := range routes {
		routes[i].Tag = tag
	}
	return routes
}
