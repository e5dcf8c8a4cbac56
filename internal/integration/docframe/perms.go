package docframe

import (
	"context"

	"github.com/google/uuid"
)

// Rights a DocPerm row grants.
const (
	PermRead   = "read"
	PermWrite  = "write"
	PermCreate = "create"
	PermDelete = "delete"
	PermSubmit = "submit"
	PermCancel = "cancel"
)

// allows reports whether a may exercise right on m's documents. Super
// admins and the organization's Admin hold every right. A guarded DocType
// (the integration's built-ins) follows the caller's core permissions
// (Guard.Rights). Otherwise the DocType's permission rows for a's role
// decide; a DocType without any rows lets every other role read, and
// nothing more.
func (m *meta) allows(a Actor, right string) bool {
	if a.isAdmin() {
		return true
	}
	if m.guard != nil {
		return m.guard.allows(a, right)
	}
	if len(m.Permissions) == 0 {
		return right == PermRead
	}
	for _, p := range m.Permissions {
		if p.Role != a.Role {
			continue
		}
		var f Flag
		switch right {
		case PermRead:
			f = p.Read
		case PermWrite:
			f = p.Write
		case PermCreate:
			f = p.Create
		case PermDelete:
			f = p.Delete
		case PermSubmit:
			f = p.Submit
		case PermCancel:
			f = p.Cancel
		}
		if f.On() {
			return true
		}
	}
	return false
}

func (m *meta) require(a Actor, right string) error {
	if m.allows(a, right) {
		return nil
	}
	needs := ""
	if m.guard != nil {
		needs = m.guard.needs(right)
	}
	return permissionf("Not permitted: %s on %s for role %s%s", right, m.Name, a.Role, needs)
}

// Require checks that a holds right on doctype's documents (403
// PermissionError otherwise; 404 for a DocType the organization does not
// have): for the integration's methods that act on documents outside the
// document operations, such as a bulk message's retry.
func (s *Service) Require(ctx context.Context, a Actor, orgID uuid.UUID, doctype, right string) error {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return err
	}
	return m.require(a, right)
}
