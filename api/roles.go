package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/models"
)

type permissionResp struct {
	ID          uuid.UUID `json:"id"`
	Resource    string    `json:"resource"`
	Action      string    `json:"action"`
	Key         string    `json:"key"`
	Description string    `json:"description"`
}

func toPermissionResps(ps []models.Permission) []permissionResp {
	out := make([]permissionResp, len(ps))
	for i, p := range ps {
		out[i] = permissionResp{ID: p.ID, Resource: p.Resource, Action: p.Action, Key: p.Key(), Description: p.Description}
	}
	return out
}

type roleResp struct {
	ID              uuid.UUID        `json:"id"`
	Name            string           `json:"name"`
	Description     string           `json:"description"`
	IsSystem        bool             `json:"is_system"`
	IsDefault       bool             `json:"is_default"`
	PermissionCount int              `json:"permission_count"`
	Permissions     []permissionResp `json:"permissions,omitempty"`
	CreatedAt       time.Time        `json:"created_at"`
	UpdatedAt       time.Time        `json:"updated_at"`
}

func toRoleResp(r identity.RoleView, detail bool) roleResp {
	out := roleResp{ID: r.ID, Name: r.Name, Description: r.Description, IsSystem: r.IsSystem, IsDefault: r.IsDefault,
		PermissionCount: r.PermissionCount, CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt)}
	if detail {
		out.Permissions = toPermissionResps(r.Permissions)
		if out.Permissions == nil {
			out.Permissions = []permissionResp{}
		}
	}
	return out
}

func (s *Server) listPermissions(c *gin.Context) {
	ps, err := s.identity.Permissions(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"permissions": toPermissionResps(ps)})
}

func (s *Server) listRoles(c *gin.Context) {
	roles, err := s.identity.ListRoles(c.Request.Context(), principal(c).OrgID, c.Query("search"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]roleResp, len(roles))
	for i, r := range roles {
		out[i] = toRoleResp(r, false)
	}
	ok(c, http.StatusOK, gin.H{"roles": out})
}

func (s *Server) getRole(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	r, err := s.identity.Role(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toRoleResp(*r, true))
}

type roleReq struct {
	Name        *string   `json:"name"`
	Description *string   `json:"description"`
	Permissions *[]string `json:"permissions"`
	IsDefault   *bool     `json:"is_default"`
}

func (r roleReq) input() identity.RoleInput {
	return identity.RoleInput{Name: r.Name, Description: r.Description, Permissions: r.Permissions, IsDefault: r.IsDefault}
}

func (s *Server) createRole(c *gin.Context) {
	var req roleReq
	if !s.bindJSON(c, &req) {
		return
	}
	r, err := s.identity.CreateRole(c.Request.Context(), principal(c), req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toRoleResp(*r, true))
}

func (s *Server) updateRole(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req roleReq
	if !s.bindJSON(c, &req) {
		return
	}
	r, err := s.identity.UpdateRole(c.Request.Context(), principal(c), id, req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toRoleResp(*r, true))
}

func (s *Server) deleteRole(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.identity.DeleteRole(c.Request.Context(), principal(c), id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "role deleted")
}
