package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/identity"
)

type userRoleResp struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	IsSystem    bool      `json:"is_system"`
	Description string    `json:"description"`
}

type userResp struct {
	ID          uuid.UUID    `json:"id"`
	Email       string       `json:"email"`
	FullName    string       `json:"full_name"`
	RoleID      uuid.UUID    `json:"role_id"`
	Role        userRoleResp `json:"role"`
	IsActive    bool         `json:"is_active"`
	IsAvailable bool         `json:"is_available"`
	IsMember    bool         `json:"is_member"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

func toUserResp(u identity.UserView) userResp {
	return userResp{ID: u.ID, Email: u.Email, FullName: u.FullName, RoleID: u.RoleID,
		Role:     userRoleResp{ID: u.RoleID, Name: u.RoleName, IsSystem: u.RoleIsSystem, Description: u.RoleDescription},
		IsActive: u.IsActive, IsAvailable: u.IsAvailable, IsMember: u.IsMember,
		CreatedAt: utc(u.CreatedAt), UpdatedAt: utc(u.UpdatedAt)}
}

func (s *Server) listUsers(c *gin.Context) {
	pg, valid := s.page(c, 50, 100)
	if !valid {
		return
	}
	users, total, err := s.identity.ListUsers(c.Request.Context(), principal(c).OrgID, c.Query("search"), pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]userResp, len(users))
	for i, u := range users {
		out[i] = toUserResp(u)
	}
	ok(c, http.StatusOK, gin.H{"users": out, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func (s *Server) getUser(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	u, err := s.identity.User(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toUserResp(*u))
}

// queryUUID parses an optional UUID query parameter, answering 400 itself
// when it is malformed.
func (s *Server) queryUUID(c *gin.Context, name string) (*uuid.UUID, bool) {
	raw := c.Query(name)
	id, err := optionalUUID(name, &raw)
	if err != nil {
		s.fail(c, err)
		return nil, false
	}
	return id, true
}

// optionalUUID parses an optional UUID field of a request body.
func optionalUUID(field string, raw *string) (*uuid.UUID, error) {
	if raw == nil || *raw == "" {
		return nil, nil
	}
	id, err := uuid.Parse(*raw)
	if err != nil {
		return nil, apperr.Invalidf("%s must be a UUID", field)
	}
	return &id, nil
}

func (s *Server) createUser(c *gin.Context) {
	var req struct {
		Email    string  `json:"email"`
		Password string  `json:"password"`
		FullName string  `json:"full_name"`
		RoleID   *string `json:"role_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	roleID, err := optionalUUID("role_id", req.RoleID)
	if err != nil {
		s.fail(c, err)
		return
	}
	u, err := s.identity.CreateUser(c.Request.Context(), principal(c), identity.CreateUserInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, RoleID: roleID})
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toUserResp(*u))
}

func (s *Server) updateUser(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		Email    *string `json:"email"`
		Password *string `json:"password"`
		FullName *string `json:"full_name"`
		RoleID   *string `json:"role_id"`
		IsActive *bool   `json:"is_active"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	roleID, err := optionalUUID("role_id", req.RoleID)
	if err != nil {
		s.fail(c, err)
		return
	}
	u, err := s.identity.UpdateUser(c.Request.Context(), principal(c), id, identity.UpdateUserInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, RoleID: roleID, IsActive: req.IsActive})
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toUserResp(*u))
}

func (s *Server) deleteUser(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.identity.DeleteUser(c.Request.Context(), principal(c), id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "user deleted")
}

func (s *Server) setAvailability(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		IsAvailable *bool `json:"is_available"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	if req.IsAvailable == nil {
		s.fail(c, apperr.Invalidf("is_available is required"))
		return
	}
	u, err := s.identity.SetAvailability(c.Request.Context(), principal(c).OrgID, id, *req.IsAvailable)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toUserResp(*u))
}
