package app

import (
	"wharf/api"
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
	"wharf/internal/dataops"
	"wharf/internal/infra/config"
	"wharf/internal/infra/live"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/infra/storage"
	"wharf/module"
)

// apiParts is what only the api gives the modules' handlers: its
// configuration, the rate limiter, the event streams' slots and the file
// store. The worker and the scheduler build the modules without them: they
// read only the jobs, consumers and schedules.
type apiParts struct {
	config  config.API
	limiter *ratelimit.Limiter
	streams *live.Slots
	store   storage.Store
}

// modules is the one list of the domains as the processes see them (see
// package module): the api serves their routes, the worker registers their
// jobs, inbound hands the provider's webhooks to their consumers and the
// scheduler fires their schedules. A new domain adds its line here.
//
// The order is the route table's (docs/API.md and the OpenAPI document's
// tags list the domains in it) and the consumers': messaging stores an
// incoming message and applies statuses before the campaigns and the
// chatbot see them, and the integration (resource), which mirrors every
// status and message, comes after every other consumer.
//
// Building the list reads no service's state, so it may be built with some
// or all of d's services missing: the scheduler and the route table's tests
// read only schedules and routes, and buildDomains reads the consumers
// before inbound exists.
func modules(d *domains, cc config.Campaigns, x apiParts) []module.Module {
	c := x.config
	return []module.Module{
		identityapi.Module(d.Identity, x.limiter, web.NewOrigins(c.PublicURL, c.TrustedProxies)),
		settingsapi.Module(d.Settings),
		accountsapi.Module(d.Accounts, c.EmbeddedSignupScriptURL),
		inboundapi.Module(d.Inbound),
		contactsapi.Module(d.Contacts, d.Settings, d.Chatbot),
		messagesapi.Module(d.Messaging, d.Settings, d.Contacts),
		eventsapi.Module(d.Live, x.streams, d.Settings, d.Teams, d.Identity,
			eventsapi.Config{Heartbeat: c.EventStreamHeartbeat, Recheck: c.EventStreamRecheck}),
		templatesapi.Module(d.Templates),
		campaignsapi.Module(d.Campaigns, d.Settings, cc.SweepInterval),
		// The framework's documents that project core rows follow them
		// from the events outbox (messages and bulk, projection.go).
		webhooksapi.Module(d.Webhooks, d.Wharf, d.Bulk),
		teamsapi.Module(d.Teams),
		cannedapi.Module(d.Canned),
		chatbotapi.Module(d.Chatbot, d.Settings),
		transfersapi.Module(d.Transfers, d.Settings),
		pflowsapi.Module(d.Flows, d.Messaging),
		dataopsapi.Module(d.DataOps, dataopsapi.Config{ImportWait: c.ImportWait, ExportStall: c.ExportStallTimeout,
			ExportSlots: dataops.NewExportSlots(c.ExportConcurrency, c.ExportConcurrencyPerOrg)}),
		customactionsapi.Module(d.Actions),
		catalogsapi.Module(d.Catalogs),
		widgetsapi.Module(d.Widgets),
		callingapi.Module(d.Calling, d.Settings),
		resourceapi.Module(d.Frame, d.Settings, d.Wharf, d.Notify, d.Templates),
		filesapi.Module(x.store),
	}
}

// APIDescription is the api's server built without services or
// connections: its route table and OpenAPI document, which the modules
// alone decide, for the tests that check docs/API.md, the console's copy of
// the document and every answer against it. Serving it would panic.
func APIDescription() *api.Server {
	return api.New(api.Deps{Modules: modules(&domains{}, config.Campaigns{}, apiParts{})})
}
