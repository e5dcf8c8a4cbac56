package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/identity"
	"wharf/models"
)

type orgResp struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	CreatedAt time.Time `json:"created_at"`
}

func toOrgResp(o models.Organization) orgResp {
	return orgResp{ID: o.ID, Name: o.Name, Slug: o.Slug, CreatedAt: utc(o.CreatedAt)}
}

func (s *Server) listOrganizations(c *gin.Context) {
	orgs, err := s.identity.ListOrganizations(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]orgResp, len(orgs))
	for i, o := range orgs {
		out[i] = toOrgResp(o)
	}
	ok(c, http.StatusOK, gin.H{"organizations": out, "total": len(out)})
}

func (s *Server) currentOrganization(c *gin.Context) {
	o, err := s.identity.Organization(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toOrgResp(*o))
}

func (s *Server) createOrganization(c *gin.Context) {
	var req struct {
		Name string `json:"name"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	o, err := s.identity.CreateOrganization(c.Request.Context(), principal(c), req.Name)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toOrgResp(*o))
}

type memberResp struct {
	ID             uuid.UUID `json:"id"`
	UserID         uuid.UUID `json:"user_id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	RoleID         uuid.UUID `json:"role_id"`
	RoleName       string    `json:"role_name"`
	IsDefault      bool      `json:"is_default"`
	Email          string    `json:"email"`
	FullName       string    `json:"full_name"`
	IsActive       bool      `json:"is_active"`
	CreatedAt      time.Time `json:"created_at"`
}

func (s *Server) listMembers(c *gin.Context) {
	pg, valid := s.page(c, 50, 100)
	if !valid {
		return
	}
	ms, total, err := s.identity.ListMembers(c.Request.Context(), principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]memberResp, len(ms))
	for i, m := range ms {
		out[i] = memberResp(m)
		out[i].CreatedAt = utc(m.CreatedAt)
	}
	ok(c, http.StatusOK, gin.H{"members": out, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func (s *Server) addMember(c *gin.Context) {
	var req struct {
		UserID *string `json:"user_id"`
		Email  string  `json:"email"`
		RoleID *string `json:"role_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	userID, err1 := optionalUUID("user_id", req.UserID)
	roleID, err2 := optionalUUID("role_id", req.RoleID)
	for _, err := range []error{err1, err2} {
		if err != nil {
			s.fail(c, err)
			return
		}
	}
	if err := s.identity.AddMember(c.Request.Context(), principal(c), identity.AddMemberInput{UserID: userID, Email: req.Email, RoleID: roleID}); err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, gin.H{"message": "member added"})
}

func (s *Server) updateMember(c *gin.Context) {
	id, valid := s.pathID(c, "member_id")
	if !valid {
		return
	}
	var req struct {
		RoleID *string `json:"role_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	roleID, err := optionalUUID("role_id", req.RoleID)
	if err != nil {
		s.fail(c, err)
		return
	}
	if roleID == nil {
		s.fail(c, apperr.Invalidf("role_id is required"))
		return
	}
	if err := s.identity.UpdateMemberRole(c.Request.Context(), principal(c), id, roleID); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "member updated")
}

func (s *Server) removeMember(c *gin.Context) {
	id, valid := s.pathID(c, "member_id")
	if !valid {
		return
	}
	if err := s.identity.RemoveMember(c.Request.Context(), principal(c), id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "member removed")
}
