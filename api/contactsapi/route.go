package contactsapi

import (
	"net/http"

	"wharf/api/web"
	"wharf/models"
)

// Routes lists the contacts and tags routes. It reads no field of h, so a
// nil *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		// Without contacts:read, messages:read lists and reads one's own
		// contacts (the inbox's rule: internal/contacts, visibility.go).
		{Method: "GET", Path: "/api/contacts", Access: web.AnyPerm("contacts:read", "messages:read"), Handler: h.list,
			Summary: "List contacts (the inbox's conversations), most recently active first; without contacts:read, only one's own",
			Query:   listQuery{}, Response: contactPage{}},
		{Method: "GET", Path: "/api/contacts/:id", Access: web.AnyPerm("contacts:read", "messages:read"), Handler: h.get,
			Summary: "Get a contact; without contacts:read, only one's own", Response: contactResp{}},
		{Method: "POST", Path: "/api/contacts", Access: web.Perm("contacts:create"), Handler: h.create,
			Summary: "Create a contact", Request: contactRequest{}, Response: contactResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/contacts/:id", Access: web.Perm("contacts:update"), Handler: h.update,
			Summary: "Update a contact's name, account or metadata", Request: contactRequest{}, Response: contactResp{}},
		{Method: "DELETE", Path: "/api/contacts/:id", Access: web.Perm("contacts:delete"), Handler: h.delete,
			Summary: "Delete a contact with its messages"},
		{Method: "PUT", Path: "/api/contacts/:id/assign", Access: web.Perm("contacts:update"), Handler: h.assign,
			Summary: "Assign a contact to a user, or unassign it", Request: assignRequest{}, Response: assignedResp{}},
		{Method: "PUT", Path: "/api/contacts/:id/opt-out", Access: web.Perm("contacts:update"), Handler: h.setOptOut,
			Summary: "Opt a contact out of marketing templates, or back in (recorded with the user)", Request: optOutRequest{},
			Response: contactResp{}},
		{Method: "GET", Path: "/api/contacts/:id/session-data", Access: web.Perm("contacts:read"), Handler: h.sessionData,
			Summary: "The contact's active chatbot session", Response: sessionDataResp{}},
		{Method: "PUT", Path: "/api/contacts/:id/tags", Access: web.Perm("contacts:update"), Handler: h.setTags,
			Summary: "Replace a contact's tags (unknown tags are created)", Request: setTagsRequest{}, Response: contactResp{}},
		{Method: "GET", Path: "/api/contacts/:id/notes", Access: web.Perm("contacts:read"), Handler: h.listNotes,
			Summary: "A contact's private notes, newest first (the organization's users only; never sent)", Query: notesQuery{},
			Response: web.Page[noteResp]{}},
		{Method: "POST", Path: "/api/contacts/:id/notes", Access: web.Perm("contacts:read"), Handler: h.addNote,
			Summary: "Write a private note on a contact", Request: noteRequest{}, Response: noteResp{}, Status: http.StatusCreated},
		{Method: "DELETE", Path: "/api/contacts/:id/notes/:note_id", Access: web.Perm("contacts:read"), Handler: h.deleteNote,
			Summary: "Delete one of one's own notes", Response: web.MessageResp{}},

		// Tags
		{Method: "POST", Path: "/api/contacts/audience/count", Access: web.Perm("contacts:read"), Handler: h.countAudience,
			Summary: "Count the contacts an audience selects now (a campaign's audience or a segment's filter), creating nothing",
			Request: models.Audience{}, Response: countResp{}},
		{Method: "GET", Path: "/api/segments", Access: web.Perm("contacts:read"), Handler: h.listSegments,
			Summary: "List the organization's segments (saved contact filters) by name", Query: segmentsQuery{}, Response: web.Page[segmentResp]{}},
		{Method: "POST", Path: "/api/segments", Access: web.Perm("contacts:update"), Handler: h.createSegment,
			Summary: "Save a contact filter under a name (at most 200 per organization)", Request: segmentRequest{}, Response: segmentResp{},
			Status: http.StatusCreated},
		{Method: "GET", Path: "/api/segments/:id", Access: web.Perm("contacts:read"), Handler: h.getSegment,
			Summary: "Get a segment", Response: segmentResp{}},
		{Method: "PUT", Path: "/api/segments/:id", Access: web.Perm("contacts:update"), Handler: h.updateSegment,
			Summary: "Rename a segment or change its filter (campaigns not started yet use the new filter)", Request: segmentRequest{},
			Response: segmentResp{}},
		{Method: "DELETE", Path: "/api/segments/:id", Access: web.Perm("contacts:update"), Handler: h.deleteSegment,
			Summary: "Delete a segment (a campaign not started that names it is refused at its start)", Response: web.MessageResp{}},

		{Method: "GET", Path: "/api/tags", Access: web.Perm("contacts:read"), Handler: h.listTags,
			Summary: "List the organization's tags", Query: tagsQuery{}, Response: tagsPage{}},
		{Method: "POST", Path: "/api/tags", Access: web.Perm("contacts:update"), Handler: h.createTag,
			Summary: "Create a tag", Request: tagRequest{}, Response: tagResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/tags/:name", Access: web.Perm("contacts:update"), Handler: h.updateTag,
			Summary: "Rename or recolour a tag", Request: tagRequest{}, Response: tagResp{}},
		{Method: "DELETE", Path: "/api/tags/:name", Access: web.Perm("contacts:update"), Handler: h.deleteTag,
			Summary: "Delete a tag", Response: web.MessageResp{}},
	}
}
