package widgetsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the widget routes and the dashboard's overview; every one
// needs analytics:read (sharing needs analytics:share besides, checked by
// the domain since it depends on the body). It reads no field of h, so a nil *Handlers lists the table too.
// The fixed paths come before /:id ones only for readers: gin matches
// static segments first.
func (h *Handlers) Routes() []web.Route {
	read := web.Perm("analytics:read")
	return []web.Route{
		{Method: "GET", Path: "/api/widgets", Access: read, Handler: h.list,
			Summary: "List the caller's widgets and the organization's shared ones, in display order", Response: listResp{}},
		{Method: "GET", Path: "/api/widgets/data-sources", Access: read, Handler: h.dataSources,
			Summary: "Describe the data sources, their fields, metrics, display and chart types, operators and sizes", Response: dataSourcesResp{}},
		{Method: "GET", Path: "/api/widgets/data", Access: read, Handler: h.allData, Query: periodQuery{},
			Summary: "Get the data of every widget on the caller's dashboard, keyed by widget id", Response: allDataResp{}},
		{Method: "POST", Path: "/api/widgets/layout", Access: read, Handler: h.layout,
			Summary: "Place the caller's widgets (all or none); the array's order becomes their display order", Request: layoutRequest{},
			Response: web.MessageResp{}, Errors: []int{http.StatusNotFound}},
		{Method: "POST", Path: "/api/widgets", Access: read, Handler: h.create,
			Summary: "Create a widget (is_shared needs analytics:share; at most 50 per user, 409 past it)", Request: widgetRequest{}, Response: widgetResp{}, Status: http.StatusCreated},
		{Method: "GET", Path: "/api/widgets/:id", Access: read, Handler: h.get,
			Summary: "Get a widget the caller owns or that is shared", Response: widgetResp{}},
		{Method: "PUT", Path: "/api/widgets/:id", Access: read, Handler: h.update,
			Summary: "Update the caller's own widget; absent fields stay, except group_by_field, which is always applied", Request: widgetRequest{},
			Response: widgetResp{}},
		{Method: "DELETE", Path: "/api/widgets/:id", Access: read, Handler: h.delete,
			Summary: "Delete the caller's own widget", Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/widgets/:id/data", Access: read, Handler: h.data, Query: periodQuery{},
			Summary: "Get a widget's data over a period of UTC days", Response: dataResp{}},
		{Method: "GET", Path: "/api/analytics/overview", Access: read, Handler: h.overview,
			Summary:  "Get the dashboard's fixed tiles: messages in and out today, active conversations, waiting transfers, running campaigns, 7-day delivery and read rates",
			Response: overviewResp{}},
	}
}
