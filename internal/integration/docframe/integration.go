package docframe

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Operations for an integration's own code (no permission check, acting as
// a named user) that must happen inside a transaction the integration
// already holds, such as an inbound consumer's: the document's hooks run in
// tx, so what they write commits or rolls back with the caller's work, and
// the events are published by the returned function, which the caller runs
// once tx committed (nil is never returned with a nil error).

// InsertDocIn inserts a document inside tx (InsertDoc in the caller's
// transaction). Run publish after the commit.
func (s *Service) InsertDocIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, by, doctype string, in map[string]any) (doc *Doc, publish func(context.Context), err error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, nil, err
	}
	d, err := s.insert(ctx, tx, m, Actor{Email: by, Role: RoleAdmin}, orgID, in)
	if err != nil {
		return nil, nil, err
	}
	return d, func(ctx context.Context) { s.publish(ctx, d, EventAfterInsert) }, nil
}

// InsertProjectionIn is InsertDocIn for a document that projects a core
// row the integration already wrote (an accepted send of a bulk message's
// campaign): the document's hooks run as for any insert, with
// Doc.Projection set, so that a hook that would act on the core for a new
// document (send it) leaves this one; its events are published as any
// insert's. Run publish after the commit.
func (s *Service) InsertProjectionIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, by, doctype string, in map[string]any) (doc *Doc, publish func(context.Context), err error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, nil, err
	}
	d, err := s.insertDoc(ctx, tx, m, Actor{Email: by, Role: RoleAdmin}, orgID, in, true)
	if err != nil {
		return nil, nil, err
	}
	return d, func(ctx context.Context) { s.publish(ctx, d, EventAfterInsert) }, nil
}

// UpdateDocIn changes the given fields of a draft document inside tx (a
// save: validate, validation, update, on_update). Run publish after the
// commit.
func (s *Service) UpdateDocIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, by, doctype, name string, in map[string]any) (doc *Doc, publish func(context.Context), err error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, nil, err
	}
	err = tx.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if doc, err = loadDoc(ctx, tx, m, orgID, name, true); err != nil {
			return err
		}
		if doc.Docstatus != 0 {
			return afterSubmitf("%s %s is not a draft: it cannot be changed", m.Name, name)
		}
		doc.User, doc.actor = by, Actor{Email: by, Role: RoleAdmin}
		if err := applyInput(m, doc, in); err != nil {
			return err
		}
		return s.save(ctx, tx, m, Actor{Email: by, Role: RoleAdmin}, doc)
	})
	if err != nil {
		return nil, nil, s.duplicate(ctx, m, doc, err)
	}
	return doc, func(ctx context.Context) { s.publish(ctx, doc, EventAfterSave) }, nil
}

// GetDoc answers a stored document (no permission check), read through db
// (the framework's pool, or a transaction).
func (s *Service) GetDoc(ctx context.Context, db *gorm.DB, orgID uuid.UUID, doctype, name string) (*Doc, error) {
	if db == nil {
		db = s.db
	}
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	return loadDoc(ctx, db, m, orgID, name, false)
}

// LockDoc answers a stored document read in tx with its row locked until
// tx ends (no permission check): a change computed from it (a status that
// only moves forward) cannot be overtaken by a concurrent one before
// UpdateDocIn writes it.
func (s *Service) LockDoc(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, doctype, name string) (*Doc, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	return loadDoc(ctx, tx, m, orgID, name, true)
}

// NamesBy answers, for each of values, the name of a document of doctype
// whose field holds it (text comparison; one name per value, the most
// recently modified), read through db. A DocType the organization does
// not have has no documents. field must be a field of the DocType.
func (s *Service) NamesBy(ctx context.Context, db *gorm.DB, orgID uuid.UUID, doctype, field string, values []string) (map[string]string, error) {
	out := map[string]string{}
	if len(values) == 0 {
		return out, nil
	}
	if db == nil {
		db = s.db
	}
	// Through the cache even when db is the caller's transaction: no
	// caller's transaction writes DocTypes (metacache.go).
	m, err := s.meta(ctx, db, orgID, doctype)
	if isNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	f, ok := m.byName[field]
	if !ok || f.kind() == kindTable {
		return nil, fmt.Errorf("docframe: %s has no field %q", doctype, field)
	}
	var rows []struct{ Value, Name string }
	err = db.WithContext(ctx).Raw(`SELECT DISTINCT ON (`+textExpr(f)+`) `+textExpr(f)+` AS value, name FROM docframe_documents
		WHERE organization_id = ? AND doctype = ? AND `+textExpr(f)+` IN ? ORDER BY `+textExpr(f)+`, modified DESC, name`,
		orgID, m.Name, values).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.Value] = r.Name
	}
	return out, nil
}

// OrganizationsWith answers the organizations that store one of the
// built-in (not custom) DocTypes named, each once: those whose stored
// definitions an upgrade of the integration brings up to date.
func (s *Service) OrganizationsWith(ctx context.Context, names []string) ([]uuid.UUID, error) {
	var orgs []uuid.UUID
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT organization_id FROM docframe_doctypes WHERE NOT custom AND name IN ?`, names).
		Scan(&orgs).Error
	return orgs, err
}
