package web

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"wharf/internal/identity"
)

// Access is what a route requires of its caller. Every route declares one in
// its domain's route table, so a reader sees the permission next to the path.
type Access struct {
	kind  accessKind
	perm  string
	perms []string // AnyPerm: the keys, any one of which lets the caller through
	param string   // SelfOr: the path parameter naming the user
}

type accessKind int

const (
	accessPublic accessKind = iota
	accessAuthenticated
	accessPerm
	accessSuperAdminOr
	accessSelfOr
	accessSuperAdmin
	accessAnyPerm
)

// Public routes need no credentials.
func Public() Access { return Access{kind: accessPublic} }

// Authenticated routes are open to every role.
func Authenticated() Access { return Access{kind: accessAuthenticated} }

// Perm requires one permission key.
func Perm(key string) Access { return Access{kind: accessPerm, perm: key} }

// AnyPerm requires at least one of the keys: a route that serves several
// kinds of work (the ICE servers serve both received and placed calls).
func AnyPerm(keys ...string) Access { return Access{kind: accessAnyPerm, perms: keys} }

// SuperAdminOr lets super admins and holders of key through.
func SuperAdminOr(key string) Access { return Access{kind: accessSuperAdminOr, perm: key} }

// SelfOr lets a user act on themselves (the user named by path parameter
// param) and holders of key act on anyone.
func SelfOr(param, key string) Access { return Access{kind: accessSelfOr, perm: key, param: param} }

// SuperAdmin is for operator-only routes.
func SuperAdmin() Access { return Access{kind: accessSuperAdmin} }

// Permission is the key the route checks, "" when none.
func (a Access) Permission() string { return a.perm }

// Keys are the permission keys any one of which the route accepts (nil
// when it checks none).
func (a Access) Keys() []string {
	if a.kind == accessAnyPerm {
		return slices.Clone(a.perms)
	}
	if a.perm != "" {
		return []string{a.perm}
	}
	return nil
}

// NeedsAuth reports whether credentials are required.
func (a Access) NeedsAuth() bool { return a.kind != accessPublic }

// Allows reports whether principal p may call the route of request c.
func (a Access) Allows(p *identity.Principal, c *gin.Context) bool {
	switch a.kind {
	case accessPublic, accessAuthenticated:
		return true
	case accessPerm:
		return p.Can(a.perm)
	case accessSuperAdminOr:
		return p.IsSuperAdmin || p.Can(a.perm)
	case accessSelfOr:
		return c.Param(a.param) == p.UserID.String() || p.Can(a.perm)
	case accessSuperAdmin:
		return p.IsSuperAdmin
	case accessAnyPerm:
		return slices.ContainsFunc(a.perms, p.Can)
	}
	return false
}

// String renders the requirement for docs/API.md.
func (a Access) String() string {
	switch a.kind {
	case accessPublic:
		return "public"
	case accessAuthenticated:
		return "any authenticated user"
	case accessPerm:
		return "`" + a.perm + "`"
	case accessSuperAdminOr:
		return "super admin or `" + a.perm + "`"
	case accessSelfOr:
		return "self, or `" + a.perm + "`"
	case accessSuperAdmin:
		return "super admin"
	case accessAnyPerm:
		keys := make([]string, len(a.perms))
		for i, k := range a.perms {
			keys[i] = "`" + k + "`"
		}
		return "one of " + strings.Join(keys, ", ")
	}
	return fmt.Sprintf("access(%d)", a.kind)
}
