package docframe

import (
	"fmt"
	"slices"

	"wharf/internal/infra/phone"
)

// Guard ties a DocType whose documents hold the core's data (the messaging
// integration's built-in DocTypes: messages, accounts, templates, bulk
// messages...) to the core's rules for that data, so that the resource API
// shows no more than the core API would:
//
//   - rights come from the caller's core permissions (Rights), not from
//     DocPerm rows: a role or an API key without messages:read reads no
//     Platform Message;
//   - phone numbers (Phones) and names (Names) are masked as the core masks
//     them when the organization sets mask_phone_numbers;
//   - secrets (Secrets) are never answered: has_<field> (0 or 1) says whether
//     one is set, and they cannot be selected, filtered, ordered or searched.
//
// Guards are given at construction (Options.Guards) by the packages that
// define the DocTypes, keyed by DocType name, so they hold in every
// organization whatever definition it has stored. A guard on a child table
// DocType masks the rows of that table in its parents' answers (its Rights
// are unused: child rows are read through their parent).
type Guard struct {
	Doctype string
	// Rights maps a right (PermRead, PermCreate, PermWrite, PermDelete,
	// PermSubmit, PermCancel) to the core permission key that grants it
	// ("messages:read"). A right absent from the map is the organization
	// Admin's alone.
	Rights  map[string]string
	Phones  []string
	Names   []string
	Secrets []string
}

// Permissions are the caller's core permissions (identity.Principal
// implements it): they decide the rights on guarded DocTypes.
type Permissions interface {
	Can(key string) bool
}

var rights = []string{PermRead, PermWrite, PermCreate, PermDelete, PermSubmit, PermCancel}

// guards indexes the guards by DocType; two guards of one DocType, or an
// unknown right, are a programming error reported by New.
func guardIndex(gs []Guard) (map[string]*Guard, error) {
	out := make(map[string]*Guard, len(gs))
	for i := range gs {
		g := &gs[i]
		if _, dup := out[g.Doctype]; dup {
			return nil, fmt.Errorf("docframe: two guards for DocType %s", g.Doctype)
		}
		for r := range g.Rights {
			if !slices.Contains(rights, r) {
				return nil, fmt.Errorf("docframe: guard of %s: unknown right %q", g.Doctype, r)
			}
		}
		out[g.Doctype] = g
	}
	return out, nil
}

// allows reports whether a holds right under the guard: the Admin always,
// others through the core permission the right maps to.
func (g *Guard) allows(a Actor, right string) bool {
	if a.isAdmin() {
		return true
	}
	key := g.Rights[right]
	return key != "" && a.Perms != nil && a.Perms.Can(key)
}

// needs words what a refused right would have needed.
func (g *Guard) needs(right string) string {
	if key := g.Rights[right]; key != "" {
		return " (needs the permission " + key + ")"
	}
	return " (the organization's Admin only)"
}

func (g *Guard) secret(field string) bool { return g != nil && slices.Contains(g.Secrets, field) }

// maskKind is how answers mask a guarded field.
type maskKind int

const (
	maskNumber maskKind = iota + 1 // a phone number (phone.Mask)
	maskName                       // a name, masked when it looks like a number (phone.MaskName)
)

// masked answers the fields a's answers mask, by kind: none unless a's
// organization masks numbers. Lists compare these fields only in ways
// that reveal no masked digit (masking.go).
func (g *Guard) masked(a Actor) map[string]maskKind {
	if g == nil || !a.MaskPhones || len(g.Phones)+len(g.Names) == 0 {
		return nil
	}
	out := make(map[string]maskKind, len(g.Phones)+len(g.Names))
	for _, f := range g.Names {
		out[f] = maskName
	}
	for _, f := range g.Phones {
		out[f] = maskNumber
	}
	return out
}

// hasFlag is the name under which a secret's presence is answered.
func hasFlag(field string) string { return "has_" + field }

// protect applies the guard to a rendered document (or child row): secrets
// become has_ flags, phone numbers and names are masked when a's
// organization masks them. d, when given, tells whether Password secrets
// are set (child rows hold none).
func (g *Guard) protect(a Actor, m *meta, out map[string]any, d *Doc) {
	if g == nil {
		return
	}
	for _, f := range g.Secrets {
		fd, ok := m.byName[f]
		if !ok {
			continue
		}
		set := false
		if fd.kind() == kindPassword {
			set = d != nil && d.HasPassword(f)
		} else {
			s, _ := out[f].(string)
			set = s != ""
		}
		delete(out, f)
		out[hasFlag(f)] = int(flag(set))
	}
	if !a.MaskPhones {
		return
	}
	for _, f := range g.Phones {
		if s, ok := out[f].(string); ok {
			out[f] = phone.Mask(s)
		}
	}
	for _, f := range g.Names {
		if s, ok := out[f].(string); ok {
			out[f] = phone.MaskName(s)
		}
	}
}

// withGuards attaches the guards of m and of its child tables.
func (s *Service) withGuards(m *meta) *meta {
	m.guard = s.guards[m.Name]
	for _, cm := range m.children {
		cm.guard = s.guards[cm.Name]
	}
	return m
}

// IsSecret reports whether a field of doctype is a guarded secret, for the
// integration's code that copies documents' values elsewhere (a
// notification's parameters and conditions): secrets go nowhere.
func (s *Service) IsSecret(doctype, field string) bool { return s.guards[doctype].secret(field) }
