package campaignsapi

import (
	"net/http"

	"wharf/api/web"
	"wharf/internal/campaigns"
)

// Routes lists the campaigns routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/campaigns", Access: web.Perm("campaigns:read"), Handler: h.list,
			Summary: "List campaigns, newest first", Query: listQuery{}, Response: web.Page[campaignResp]{}},
		{Method: "POST", Path: "/api/campaigns/recurrence/preview", Access: web.Perm("campaigns:create"), Handler: h.previewRecurrence,
			Summary: "Check a recurrence and give its next 3 occurrences (in the organization's timezone) without creating anything",
			Request: previewRequest{}, Response: previewResp{}},
		{Method: "GET", Path: "/api/campaigns/:id", Access: web.Perm("campaigns:read"), Handler: h.get,
			Summary: "Get a campaign with its counters", Response: campaignResp{}},
		{Method: "POST", Path: "/api/campaigns", Access: web.Perm("campaigns:create"), Handler: h.create,
			Summary: "Create a draft campaign", Request: campaignRequest{}, Response: campaignResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/campaigns/:id", Access: web.Perm("campaigns:update"), Handler: h.update,
			Summary: "Update a draft campaign", Request: campaignRequest{}, Response: campaignResp{}},
		{Method: "DELETE", Path: "/api/campaigns/:id", Access: web.Perm("campaigns:delete"), Handler: h.delete,
			Summary: "Delete a campaign that is not sending", Response: web.MessageResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/recipients/import", Access: web.Perm("campaigns:update"), Bulk: true, Handler: h.importRecipients,
			Summary: "Import recipients into a draft campaign: JSON (up to 32 MB), or a CSV file with a column mapping (multipart/form-data)",
			Request: importRequest{}, AlsoRequest: csvImportRequest{}, Response: importResp{}},
		{Method: "POST", Path: "/api/campaigns/recipients/check", Access: web.Perm("campaigns:create"), Bulk: true, Handler: h.checkCSV,
			Summary: "Check a recipients CSV file before any campaign exists: its columns, first rows, and the rows an import would refuse",
			Request: checkRequest{}, Response: checkResp{}},
		{Method: "GET", Path: "/api/campaigns/:id/recipients", Access: web.Perm("campaigns:read"), Handler: h.listRecipients,
			Summary: "List a campaign's recipients", Query: recipientsQuery{}, Response: web.Page[recipientResp]{}},
		{Method: "GET", Path: "/api/campaigns/:id/recipients/export", Access: web.Perm("campaigns:read"), Handler: h.exportRecipients,
			Summary: "Download a campaign's recipients as CSV, with their status and the provider's error (numbers masked as in the list)",
			Query:   exportQuery{}, Produces: "text/csv"},
		{Method: "POST", Path: "/api/campaigns/:id/test-send", Access: web.Perm("campaigns:update"), Handler: h.testSend,
			Summary: "Send the campaign's message to 1 to 5 numbers, with a recipient's values or given ones; the campaign's counters are untouched",
			Request: testSendRequest{}, Response: testSendResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/start", Access: web.Perm("campaigns:update"), Bulk: true, Handler: h.action((*campaigns.Service).Start),
			Summary: "Start a draft campaign (or schedule it, when scheduled_at is in the future; a recurring one starts recurring)", Response: campaignResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/resume", Access: web.Perm("campaigns:update"), Bulk: true, Handler: h.action((*campaigns.Service).Start),
			Summary: "Resume a paused campaign (a recurring one from its next occurrence: those missed while paused are not replayed)", Response: campaignResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/pause", Access: web.Perm("campaigns:update"), Handler: h.action((*campaigns.Service).Pause),
			Summary: "Pause a sending campaign, or a recurring one (no occurrence fires until resumed; its runs go on)", Response: campaignResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/cancel", Access: web.Perm("campaigns:update"), Handler: h.action((*campaigns.Service).Cancel),
			Summary: "Cancel a campaign for good; recipients not sent stay pending", Response: campaignResp{}},
		{Method: "POST", Path: "/api/campaigns/:id/resend-unknown", Access: web.Perm("campaigns:update"), Bulk: true, Handler: h.resendUnknown,
			Summary: "Put the recipients whose send outcome is unknown back to pending (a completed campaign becomes paused)", Response: resendResp{}},
		{Method: "GET", Path: "/api/campaigns/:id/report", Access: web.Perm("campaigns:read"), Handler: h.report,
			Summary:  "The campaign's outcome: counters and delivery, read, reply (within 72 h) and failure rates; replies counted at most ten seconds ago",
			Response: reportResp{}},
		{Method: "GET", Path: "/api/campaigns/:id/progress", Access: web.Perm("campaigns:read"), Handler: h.progress,
			Summary: "The campaign's progress, counted now", Response: progressResp{}},
		{Method: "GET", Path: "/api/campaigns/:id/progress/stream", Access: web.Perm("campaigns:read"), Handler: h.progressStream,
			Summary:  "The campaign's progress as server-sent events (event: progress), every second until it ends",
			Response: progressResp{}, Produces: "text/event-stream"},
	}
}
