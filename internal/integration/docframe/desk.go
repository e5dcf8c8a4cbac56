package docframe

import (
	"context"
	"slices"

	"github.com/google/uuid"
)

// DeskMethod is the method the console's document pages read first: the
// DocTypes the caller may read, each with what the caller may do with its
// documents, so that a page shows only the controls whose requests the
// framework would allow (Frappe's desk learns the same from its boot info:
// can_read, can_create...).
const DeskMethod = "wharf.desk.get_doctypes"

// DeskRights are the caller's rights on a DocType's documents (0 or 1).
type DeskRights struct {
	Read   Flag `json:"read"`
	Write  Flag `json:"write"`
	Create Flag `json:"create"`
	Delete Flag `json:"delete"`
	Submit Flag `json:"submit"`
	Cancel Flag `json:"cancel"`
}

// DeskDoctype is a DocType as the desk lists it.
type DeskDoctype struct {
	Name          string     `json:"name"`
	Module        string     `json:"module"`
	Custom        Flag       `json:"custom"`
	IsSubmittable Flag       `json:"is_submittable"`
	TitleField    string     `json:"title_field,omitempty"`
	Rights        DeskRights `json:"rights"`
}

// DeskDoctypes answers the organization's DocTypes whose documents a may
// read (child tables left out: their rows are read through their parents),
// by name, with a's rights on each. The built-in DocTypes
// (Options.BuiltInNames) are created first when the organization does not
// have them yet, as their first use through any route would: a user opening
// the documents page meets the integration's DocTypes from the start.
func (s *Service) DeskDoctypes(ctx context.Context, a Actor, orgID uuid.UUID) ([]DeskDoctype, error) {
	rows, err := s.doctypeRows(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if s.builtIn != nil && ctx.Value(noBuiltInKey{}) == nil {
		missing := false
		for _, name := range s.builtInNames {
			if !slices.ContainsFunc(rows, func(r doctypeRow) bool { return r.Name == name }) {
				missing = true
				if _, err := s.docMeta(ctx, orgID, name); err != nil && !isNotFound(err) {
					return nil, err
				}
			}
		}
		if missing {
			if rows, err = s.doctypeRows(ctx, orgID); err != nil {
				return nil, err
			}
		}
	}
	out := []DeskDoctype{}
	for i := range rows {
		if rows[i].Istable {
			continue
		}
		m, err := rows[i].meta()
		if err != nil {
			return nil, err
		}
		m = s.withGuards(m)
		r := DeskRights{Read: flag(m.allows(a, PermRead)), Write: flag(m.allows(a, PermWrite)), Create: flag(m.allows(a, PermCreate)),
			Delete: flag(m.allows(a, PermDelete)), Submit: flag(m.allows(a, PermSubmit)), Cancel: flag(m.allows(a, PermCancel))}
		if !r.Read.On() {
			continue
		}
		if !m.IsSubmittable.On() {
			r.Submit, r.Cancel = 0, 0
		}
		out = append(out, DeskDoctype{Name: m.Name, Module: m.Module, Custom: flag(rows[i].Custom), IsSubmittable: m.IsSubmittable,
			TitleField: m.TitleField, Rights: r})
	}
	return out, nil
}

func (s *Service) doctypeRows(ctx context.Context, orgID uuid.UUID) ([]doctypeRow, error) {
	var rows []doctypeRow
	err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Order("name").Find(&rows).Error
	return rows, err
}

func deskMethod() Method {
	return Method{Name: DeskMethod, Verbs: []string{"GET"}, Call: func(ctx context.Context, c *Call) (any, error) {
		return c.Frame.DeskDoctypes(ctx, c.Actor, c.OrganizationID)
	}}
}
