package settingsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the settings routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		// Two families over the same values
		{Method: "GET", Path: "/api/organizations/settings", Access: web.Perm("settings:read"), Handler: h.getShort,
			Summary: "The organization's name and general settings", Response: shortSettingsResp{}},
		{Method: "PUT", Path: "/api/organizations/settings", Access: web.Perm("settings:update"), Handler: h.putShort,
			Summary: "Change the organization's name and general settings", Request: shortSettingsRequest{}, Response: shortSettingsResp{}},
		{Method: "GET", Path: "/api/org/settings", Access: web.Perm("settings:read"), Handler: h.get,
			Summary: "The organization's name and every setting", Response: settingsResp{}},
		{Method: "PUT", Path: "/api/org/settings", Access: web.Perm("settings:update"), Handler: h.put,
			Summary: "Change the organization's settings", Request: settingsRequest{}, Response: web.MessageResp{}},
		{Method: "POST", Path: "/api/org/audio", Access: web.Perm("organizations:write"), Bulk: true, Handler: h.uploadAudio,
			Summary: "Upload hold music or ringback audio (transcoded to Ogg/Opus)", Request: audioUploadForm{},
			Query: audioQuery{}, Response: audioResp{}, Status: http.StatusCreated,
			Errors: []int{http.StatusServiceUnavailable}},
	}
}
