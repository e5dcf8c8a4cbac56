package callingapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the calling routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
//
// Permissions (the spec names them, not which operation needs which):
// reading call logs and their recordings is call_logs:read; reading call
// transfers is call_transfers:read; acting on a call the business
// received (connect, hangup, hold, resume, transfer to a team) is
// call_transfers:write; placing and ending outgoing calls and asking a
// contact's permission is outgoing_calls:write, reading that permission
// outgoing_calls:read. ICE servers (TURN credentials: a relay anyone
// holding them may use until they expire) are for the people who take or
// place calls: a user session (never an API key: no browser leg runs on
// one) holding call_transfers:write or outgoing_calls:write.
//
// Control routes reach the call bridge that owns the call's media: 503
// when no bridge can take the request, 502 when the provider refuses or
// fails.
func (h *Handlers) Routes() []web.Route {
	control := []int{http.StatusBadGateway, http.StatusServiceUnavailable}
	return []web.Route{
		{Method: "GET", Path: "/api/call-logs", Access: web.Perm("call_logs:read"), Handler: h.listCallLogs,
			Summary: "List the organization's call logs, newest first (call_logs:read)", Query: callLogsQuery{}, Response: callLogsResp{}},
		{Method: "GET", Path: "/api/call-logs/:id", Access: web.Perm("call_logs:read"), Handler: h.getCallLog,
			Summary: "Get a call log with its transfers (call_logs:read)", Response: callLogDetail{}},
		{Method: "GET", Path: "/api/call-logs/:id/recording", Access: web.Perm("call_logs:read"), Handler: h.recording,
			Summary:  "Get a short-lived URL of a call's recording, valid 900 s (call_logs:read); 404 without a recording, 503 without object storage",
			Response: recordingResp{}, Errors: []int{http.StatusServiceUnavailable}},
		{Method: "POST", Path: "/api/call-logs/:id/hold", Access: web.Perm("call_transfers:write"), Handler: h.hold,
			Summary: "Put a call on hold: the caller hears hold music (call_transfers:write)", Response: statusResp{}, Errors: control},
		{Method: "POST", Path: "/api/call-logs/:id/resume", Access: web.Perm("call_transfers:write"), Handler: h.resume,
			Summary: "Resume a call on hold: the audio bridge is restored (call_transfers:write)", Response: statusResp{}, Errors: control},
		{Method: "GET", Path: "/api/call-transfers", Access: web.Perm("call_transfers:read"), Handler: h.listTransfers,
			Summary: "List the organization's call transfers, newest first (call_transfers:read)", Query: transfersQuery{}, Response: transfersResp{}},
		{Method: "GET", Path: "/api/call-transfers/:id", Access: web.Perm("call_transfers:read"), Handler: h.getTransfer,
			Summary: "Get a call transfer (call_transfers:read)", Response: transferResp{}},
		{Method: "POST", Path: "/api/call-transfers/:id/connect", Access: web.Perm("call_transfers:write"), Handler: h.connect,
			Summary: "Take a waiting call with the browser's SDP offer and get the bridge's answer; the first connect wins, later ones get 409 (call_transfers:write)",
			Request: connectRequest{}, Response: connectResp{}, Errors: control},
		{Method: "POST", Path: "/api/call-transfers/:id/hangup", Access: web.Perm("call_transfers:write"), Handler: h.hangupTransfer,
			Summary: "Hang up: ends the whole call (call_transfers:write)", Response: statusResp{}, Errors: control},
		{Method: "POST", Path: "/api/call-transfers/initiate", Access: web.Perm("call_transfers:write"), Handler: h.initiate,
			Summary: "Transfer a call to a team (optionally to one of its agents) (call_transfers:write)", Request: initiateRequest{},
			Response: statusResp{}, Errors: control},
		{Method: "POST", Path: "/api/calls/outgoing", Access: web.Perm("outgoing_calls:write"), Handler: h.outgoing,
			Summary: "Call a contact from an account and get the bridge's SDP answer once the callee picks up, waiting up to 30 s (outgoing_calls:write)",
			Request: outgoingRequest{}, Response: outgoingResp{}, Errors: control},
		{Method: "POST", Path: "/api/calls/outgoing/:id/hangup", Access: web.Perm("outgoing_calls:write"), Handler: h.hangupOutgoing,
			Summary: "End an outgoing call; id is its call log's (outgoing_calls:write)", Response: statusResp{}, Errors: control},
		{Method: "POST", Path: "/api/calls/permission-request", Access: web.Perm("outgoing_calls:write"), Handler: h.requestPermission,
			Summary: "Ask a contact for permission to call them: one interactive call_permission_request message (outgoing_calls:write)",
			Request: permissionRequest{}, Response: permissionRequestResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "GET", Path: "/api/calls/permission/:contactId", Access: web.Perm("outgoing_calls:read"), Handler: h.permission,
			Summary: "Read a contact's call permission live from the provider (outgoing_calls:read)", Query: permissionQuery{},
			Response: permissionResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "GET", Path: "/api/calls/ice-servers", Access: web.AnyPerm("call_transfers:write", "outgoing_calls:write"), SessionOnly: true,
			Handler:  h.iceServers,
			Summary:  "ICE servers for the browser: STUN, and TURN with credentials made for the caller (a user session with call_transfers:write or outgoing_calls:write)",
			Response: iceResp{}},
	}
}
