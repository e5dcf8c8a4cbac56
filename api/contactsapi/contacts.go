package contactsapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
)

var errTagsRequired = apperr.Invalidf("tags is required: an array of tag names")

func (h *Handlers) list(c *gin.Context) {
	pg, valid := web.Paging(c, 20, 100)
	if !valid {
		return
	}
	accountID, valid := web.QueryUUID(c, "account_id")
	if !valid {
		return
	}
	p := web.Principal(c)
	f := contacts.Filter{Search: c.Query("search"), AccountID: accountID, Tag: c.Query("tag"), Viewer: contacts.ViewerOf(p.UserID, p.Can)}
	if !inboxFilters(c, p.UserID, &f) {
		return
	}
	ctx, org := c.Request.Context(), p.OrgID
	m, err := h.maskers.Masker(ctx, org)
	if err != nil {
		web.Fail(c, err)
		return
	}
	f.MaskedNumbers = m.Masks()
	rows, total, err := h.contacts.List(ctx, org, f, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]contactResp, len(rows))
	for i, v := range rows {
		items[i] = toContactResp(m, v)
	}
	web.OK(c, contactPage{Items: items, Total: total.N, TotalIsEstimate: total.Estimate, Page: pg.Page, Limit: pg.Limit,
		TotalPages: pg.TotalPages(total.N)})
}

// answer renders one contact, masked as the organization wants.
func (h *Handlers) answer(c *gin.Context, status int, v *contacts.View) {
	m, err := h.maskers.Masker(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Respond(c, status, toContactResp(m, *v))
}

// inboxFilters reads the inbox's filters of the list (assigned, unread,
// has_transfer) into f, answering 400 itself when one is invalid.
func inboxFilters(c *gin.Context, me uuid.UUID, f *contacts.Filter) bool {
	switch a := c.Query("assigned"); a {
	case "":
	case "me":
		f.AssignedTo = &me
	case "none":
		f.Unassigned = true
	default:
		id, err := uuid.Parse(a)
		if err != nil {
			web.Fail(c, apperr.Invalidf("assigned must be me, none or a user's id"))
			return false
		}
		f.AssignedTo = &id
	}
	for _, b := range []struct {
		name string
		to   *bool
	}{{"unread", &f.Unread}, {"has_transfer", &f.HasTransfer}} {
		switch c.Query(b.name) {
		case "", "false":
		case "true":
			*b.to = true
		default:
			web.Fail(c, apperr.Invalidf("%s must be true or false", b.name))
			return false
		}
	}
	return true
}

// visible answers whether the caller may see the contact (without
// contacts:read, only their own: internal/contacts, visibility.go),
// answering 404 itself when not.
func (h *Handlers) visible(c *gin.Context, id uuid.UUID) bool {
	p := web.Principal(c)
	if err := h.contacts.CheckVisible(c.Request.Context(), p.OrgID, contacts.ViewerOf(p.UserID, p.Can), id); err != nil {
		web.Fail(c, err)
		return false
	}
	return true
}

func (h *Handlers) get(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid || !h.visible(c, id) {
		return
	}
	v, err := h.contacts.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.answer(c, http.StatusOK, v)
}

// input binds a contact body, answering 400 itself when it is invalid.
func input(c *gin.Context) (contacts.Input, bool) {
	var req contactRequest
	if !web.BindJSON(c, &req) {
		return contacts.Input{}, false
	}
	accountID, err := web.OptionalUUID("account_id", req.AccountID)
	if err != nil {
		web.Fail(c, err)
		return contacts.Input{}, false
	}
	return contacts.Input{PhoneNumber: req.PhoneNumber, Name: req.Name, AccountID: accountID, Metadata: req.Metadata}, true
}

func (h *Handlers) create(c *gin.Context) {
	in, valid := input(c)
	if !valid {
		return
	}
	v, err := h.contacts.Create(c.Request.Context(), web.Principal(c).OrgID, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.answer(c, http.StatusCreated, v)
}

func (h *Handlers) update(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	in, valid := input(c)
	if !valid {
		return
	}
	v, err := h.contacts.Update(c.Request.Context(), web.Principal(c).OrgID, id, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.answer(c, http.StatusOK, v)
}

func (h *Handlers) delete(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.contacts.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, nil)
}

func (h *Handlers) assign(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req assignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	userID, err := web.OptionalUUID("user_id", req.UserID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	ct, err := h.contacts.Assign(c.Request.Context(), web.Principal(c).OrgID, id, userID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, assignedResp{ID: ct.ID, AssignedTo: ct.AssignedTo, UpdatedAt: web.UTC(ct.UpdatedAt)})
}

// setOptOut changes the contact's marketing opt-out as the caller.
func (h *Handlers) setOptOut(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req optOutRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.MarketingOptOut == nil {
		web.Fail(c, apperr.Invalidf("marketing_opt_out is required (true or false)"))
		return
	}
	p := web.Principal(c)
	v, err := h.contacts.SetOptOut(c.Request.Context(), p.OrgID, id, p.UserID, *req.MarketingOptOut)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.answer(c, http.StatusOK, v)
}

func (h *Handlers) sessionData(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	orgID := web.Principal(c).OrgID
	d, err := h.contacts.SessionData(c.Request.Context(), orgID, id) // the contact's 404
	if err != nil {
		web.Fail(c, err)
		return
	}
	s, err := h.sessions.ContactSession(c.Request.Context(), orgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if s != nil {
		d = s
	}
	web.OK(c, sessionDataResp(*d))
}

func (h *Handlers) setTags(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req setTagsRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.Tags == nil {
		web.Fail(c, errTagsRequired)
		return
	}
	v, err := h.contacts.SetTags(c.Request.Context(), web.Principal(c).OrgID, id, *req.Tags)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.answer(c, http.StatusOK, v)
}
