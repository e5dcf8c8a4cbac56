package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/phone"
	"wharf/models"
)

type contactResp struct {
	ID            uuid.UUID      `json:"id"`
	PhoneNumber   string         `json:"phone_number"`
	Name          string         `json:"name"`
	ProfileName   string         `json:"profile_name"`
	AvatarURL     string         `json:"avatar_url"`
	AccountID     *uuid.UUID     `json:"account_id"`
	AssignedTo    *uuid.UUID     `json:"assigned_to"`
	Metadata      map[string]any `json:"metadata"`
	Tags          []string       `json:"tags"`
	LastMessageAt *time.Time     `json:"last_message_at"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// masker hides phone numbers when the organization asks for it
// (mask_phone_numbers); every contact and message answer goes through it.
type masker bool

func (m masker) phone(s string) string {
	if m {
		return phone.Mask(s)
	}
	return s
}

func (m masker) name(s string) string {
	if m {
		return phone.MaskName(s)
	}
	return s
}

func (s *Server) masker(ctx context.Context, orgID uuid.UUID) (masker, error) {
	_, st, err := s.settings.Get(ctx, orgID)
	return masker(st.MaskPhoneNumbers), err
}

func (m masker) contact(v contacts.View) contactResp {
	meta := v.Metadata.V
	if meta == nil {
		meta = map[string]any{}
	}
	return contactResp{ID: v.ID, PhoneNumber: m.phone(v.PhoneNumber), Name: m.name(v.Name), ProfileName: m.name(v.ProfileName),
		AvatarURL: v.AvatarURL, AccountID: v.AccountID, AssignedTo: v.AssignedTo, Metadata: meta, Tags: v.Tags,
		LastMessageAt: utcPtr(v.LastMessageAt), CreatedAt: utc(v.CreatedAt), UpdatedAt: utc(v.UpdatedAt)}
}

func (s *Server) listContacts(c *gin.Context) {
	pg, valid := s.page(c, 20, 100)
	if !valid {
		return
	}
	accountID, valid := s.queryUUID(c, "account_id")
	if !valid {
		return
	}
	ctx, org := c.Request.Context(), principal(c).OrgID
	m, err := s.masker(ctx, org)
	if err != nil {
		s.fail(c, err)
		return
	}
	rows, total, err := s.Contacts.List(ctx, org, c.Query("search"), accountID, pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]contactResp, len(rows))
	for i, v := range rows {
		items[i] = m.contact(v)
	}
	ok(c, http.StatusOK, gin.H{"items": items, "total": total, "page": pg.Page, "limit": pg.Limit, "total_pages": pg.TotalPages(total)})
}

// contactAnswer renders one contact, masked as the organization wants.
func (s *Server) contactAnswer(c *gin.Context, status int, v *contacts.View) {
	m, err := s.masker(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, status, m.contact(*v))
}

func (s *Server) getContact(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	v, err := s.Contacts.Get(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.contactAnswer(c, http.StatusOK, v)
}

type contactReq struct {
	PhoneNumber *string         `json:"phone_number"`
	Name        *string         `json:"name"`
	AccountID   *string         `json:"account_id"`
	Metadata    *map[string]any `json:"metadata"`
}

func (s *Server) contactInput(c *gin.Context) (contacts.Input, bool) {
	var req contactReq
	if !s.bindJSON(c, &req) {
		return contacts.Input{}, false
	}
	accountID, err := optionalUUID("account_id", req.AccountID)
	if err != nil {
		s.fail(c, err)
		return contacts.Input{}, false
	}
	return contacts.Input{PhoneNumber: req.PhoneNumber, Name: req.Name, AccountID: accountID, Metadata: req.Metadata}, true
}

func (s *Server) createContact(c *gin.Context) {
	in, valid := s.contactInput(c)
	if !valid {
		return
	}
	v, err := s.Contacts.Create(c.Request.Context(), principal(c).OrgID, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.contactAnswer(c, http.StatusCreated, v)
}

func (s *Server) updateContact(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	in, valid := s.contactInput(c)
	if !valid {
		return
	}
	v, err := s.Contacts.Update(c.Request.Context(), principal(c).OrgID, id, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.contactAnswer(c, http.StatusOK, v)
}

func (s *Server) deleteContact(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Contacts.Delete(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, nil)
}

func (s *Server) assignContact(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		UserID *string `json:"user_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	userID, err := optionalUUID("user_id", req.UserID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ct, err := s.Contacts.Assign(c.Request.Context(), principal(c).OrgID, id, userID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"id": ct.ID, "assigned_to": ct.AssignedTo, "updated_at": utc(ct.UpdatedAt)})
}

func (s *Server) contactSessionData(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	d, err := s.Contacts.SessionData(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"session_id": d.SessionID, "flow_id": d.FlowID, "flow_name": d.FlowName,
		"session_data": d.SessionData, "panel_config": d.PanelConfig})
}

func (s *Server) setContactTags(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		Tags *[]string `json:"tags"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	if req.Tags == nil {
		s.fail(c, errTagsRequired)
		return
	}
	v, err := s.Contacts.SetTags(c.Request.Context(), principal(c).OrgID, id, *req.Tags)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.contactAnswer(c, http.StatusOK, v)
}

type tagResp struct {
	Name        string    `json:"name"`
	Color       string    `json:"color"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toTagResp(t *models.Tag) tagResp {
	return tagResp{Name: t.Name, Color: t.Color, Description: t.Description, CreatedAt: utc(t.CreatedAt), UpdatedAt: utc(t.UpdatedAt)}
}

func (s *Server) listTags(c *gin.Context) {
	pg, valid := s.page(c, 50, 100)
	if !valid {
		return
	}
	rows, total, err := s.Contacts.ListTags(c.Request.Context(), principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]tagResp, len(rows))
	for i := range rows {
		out[i] = toTagResp(&rows[i])
	}
	ok(c, http.StatusOK, gin.H{"tags": out, "total": total, "page": pg.Page, "limit": pg.Limit})
}

type tagReq struct {
	Name        *string `json:"name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

func (s *Server) createTag(c *gin.Context) {
	var req tagReq
	if !s.bindJSON(c, &req) {
		return
	}
	t, err := s.Contacts.CreateTag(c.Request.Context(), principal(c).OrgID, contacts.TagInput(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toTagResp(t))
}

func (s *Server) updateTag(c *gin.Context) {
	var req tagReq
	if !s.bindJSON(c, &req) {
		return
	}
	t, err := s.Contacts.UpdateTag(c.Request.Context(), principal(c).OrgID, c.Param("name"), contacts.TagInput(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toTagResp(t))
}

func (s *Server) deleteTag(c *gin.Context) {
	if err := s.Contacts.DeleteTag(c.Request.Context(), principal(c).OrgID, c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "tag deleted")
}
