package docframe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// DocTypeDoctype is the DocType of DocTypes: definitions are read and
// written through the resource API like documents.
const DocTypeDoctype = "DocType"

// DocType is a document type (Frappe's DocType): its fields, how its
// documents are named, and who may do what with them.
type DocType struct {
	Name          string    `json:"name"`
	Module        string    `json:"module"`
	Custom        Flag      `json:"custom"`
	IsSubmittable Flag      `json:"is_submittable"`
	Istable       Flag      `json:"istable"`
	Autoname      string    `json:"autoname"`
	NamingSeries  string    `json:"naming_series,omitempty"`
	TitleField    string    `json:"title_field,omitempty"`
	SearchFields  string    `json:"search_fields,omitempty"`
	Description   string    `json:"description,omitempty"`
	Fields        []Field   `json:"fields"`
	Permissions   []DocPerm `json:"permissions"`
}

// DocPerm grants a role rights on the documents of a DocType (Frappe's
// DocPerm). A DocType without any grants the defaults (perms.go).
type DocPerm struct {
	Role   string `json:"role"`
	Read   Flag   `json:"read"`
	Write  Flag   `json:"write"`
	Create Flag   `json:"create"`
	Delete Flag   `json:"delete"`
	Submit Flag   `json:"submit"`
	Cancel Flag   `json:"cancel"`
}

// Names a DocType and its fields may have. Fieldnames end up in SQL
// expressions (as literals inside data->>'...') and index names, so they are
// kept to identifier characters.
var (
	doctypeNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 _-]{0,60}$`)
	fieldnameRE   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// reservedFieldnames are the standard properties of every document.
var reservedFieldnames = []string{"name", "id", "owner", "creation", "modified", "modified_by", "docstatus", "idx",
	"parent", "parenttype", "parentfield", "doctype", "amended_from"}

// reservedDoctypes are the framework's own.
var reservedDoctypes = []string{DocTypeDoctype, "DocField", "DocPerm"}

// meta is a loaded DocType with its lookups and the DocTypes of its tables.
type meta struct {
	DocType
	custom   bool
	owner    string
	modBy    string
	creation time.Time
	modified time.Time
	byName   map[string]*Field
	children map[string]*meta // by Table fieldname
	guard    *Guard           // set by Service.withGuards
}

func newMeta(dt DocType) *meta {
	m := &meta{DocType: dt, custom: dt.Custom.On(), byName: map[string]*Field{}, children: map[string]*meta{}}
	for i := range m.Fields {
		m.byName[m.Fields[i].Fieldname] = &m.Fields[i]
	}
	return m
}

// valueFields are the fields that hold a value (not layout, not tables).
func (m *meta) valueFields() []*Field {
	var out []*Field
	for i := range m.Fields {
		if k := m.Fields[i].kind(); k != kindNone && k != kindTable {
			out = append(out, &m.Fields[i])
		}
	}
	return out
}

func (m *meta) tableFields() []*Field {
	var out []*Field
	for i := range m.Fields {
		if m.Fields[i].kind() == kindTable {
			out = append(out, &m.Fields[i])
		}
	}
	return out
}

// doctypeRow is a docframe_doctypes row.
type doctypeRow struct {
	OrganizationID uuid.UUID
	Name           string
	Module         string
	Custom         bool
	IsSubmittable  bool
	Istable        bool
	Autoname       string
	TitleField     string
	SearchFields   string
	Definition     []byte
	Owner          string
	ModifiedBy     string
	Creation       time.Time
	Modified       time.Time
}

func (doctypeRow) TableName() string { return "docframe_doctypes" }

func (r *doctypeRow) meta() (*meta, error) {
	var dt DocType
	if err := json.Unmarshal(r.Definition, &dt); err != nil {
		return nil, fmt.Errorf("docframe: DocType %q: %w", r.Name, err)
	}
	m := newMeta(dt)
	m.custom, m.owner, m.modBy, m.creation, m.modified = r.Custom, r.Owner, r.ModifiedBy, r.Creation, r.Modified
	return m, nil
}

// loadMeta reads a DocType of the organization and the DocTypes of its
// tables (two queries at most). Document operations read through
// Service.meta, which caches it (metacache.go); BuildIndexes reads here
// directly, the definition as it is under its lock.
func loadMeta(ctx context.Context, db *gorm.DB, orgID uuid.UUID, name string) (*meta, error) {
	var row doctypeRow
	err := db.WithContext(ctx).Take(&row, "organization_id = ? AND name = ?", orgID, name).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("DocType %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	m, err := row.meta()
	if err != nil {
		return nil, err
	}
	var childNames []string
	for _, f := range m.tableFields() {
		childNames = append(childNames, f.Options)
	}
	if len(childNames) == 0 {
		return m, nil
	}
	var rows []doctypeRow
	if err := db.WithContext(ctx).Find(&rows, "organization_id = ? AND name IN ?", orgID, childNames).Error; err != nil {
		return nil, err
	}
	byName := map[string]*meta{}
	for i := range rows {
		cm, err := rows[i].meta()
		if err != nil {
			return nil, err
		}
		byName[cm.Name] = cm
	}
	for _, f := range m.tableFields() {
		cm, ok := byName[f.Options]
		if !ok {
			return nil, fmt.Errorf("docframe: DocType %q: table %s names missing DocType %q", name, f.Fieldname, f.Options)
		}
		m.children[f.Fieldname] = cm
	}
	return m, nil
}

// normalize fills defaults and trims what clients send.
func (dt *DocType) normalize() {
	dt.Name = strings.TrimSpace(dt.Name)
	dt.Module = strings.TrimSpace(dt.Module)
	if dt.Module == "" {
		dt.Module = "Custom"
	}
	dt.Autoname = strings.TrimSpace(dt.Autoname)
	if dt.Autoname == "" {
		dt.Autoname = "hash"
	}
	if dt.Fields == nil {
		dt.Fields = []Field{}
	}
	if dt.Permissions == nil {
		dt.Permissions = []DocPerm{}
	}
	for i := range dt.Fields {
		f := &dt.Fields[i]
		f.Fieldname, f.Fieldtype = strings.TrimSpace(f.Fieldname), strings.TrimSpace(f.Fieldtype)
		f.Options = strings.TrimSpace(strings.ReplaceAll(f.Options, "\r\n", "\n"))
		if f.Label == "" {
			f.Label = f.Fieldname
		}
	}
	for i := range dt.Permissions {
		dt.Permissions[i].Role = strings.TrimSpace(dt.Permissions[i].Role)
	}
}

// validateDocType checks a definition against the rules and the
// organization's other DocTypes (Link and Table targets), read in tx.
func validateDocType(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, dt *DocType) error {
	if !doctypeNameRE.MatchString(dt.Name) {
		return Validationf("DocType name %s must start with a letter and hold only letters, digits, spaces, - and _ (at most 61)", show(dt.Name))
	}
	if slices.Contains(reservedDoctypes, dt.Name) {
		return Validationf("DocType name %s is reserved", dt.Name)
	}
	if dt.Istable.On() && dt.IsSubmittable.On() {
		return Validationf("a child table DocType (istable) cannot be submittable")
	}
	if err := checkLimits(dt); err != nil {
		return err
	}
	seen := map[string]bool{}
	var targets []string
	for i := range dt.Fields {
		f := &dt.Fields[i]
		k, ok := fieldKinds[f.Fieldtype]
		if !ok {
			return Validationf("field %s: unknown fieldtype %s (one of: %s)", show(f.Fieldname), show(f.Fieldtype), strings.Join(FieldTypes(), ", "))
		}
		if k == kindNone && f.Fieldname == "" {
			continue // a layout element may be unnamed
		}
		if !fieldnameRE.MatchString(f.Fieldname) {
			return Validationf("fieldname %s must match ^[a-z][a-z0-9_]*$ (at most 64 characters)", show(f.Fieldname))
		}
		if slices.Contains(reservedFieldnames, f.Fieldname) || strings.HasPrefix(f.Fieldname, "_") {
			return Validationf("fieldname %s is reserved", f.Fieldname)
		}
		if seen[f.Fieldname] {
			return Validationf("fieldname %s appears more than once", f.Fieldname)
		}
		seen[f.Fieldname] = true
		switch f.Fieldtype {
		case TypeSelect:
			if strings.TrimSpace(f.Options) == "" {
				return Validationf("field %s: a Select needs options (one per line)", f.Fieldname)
			}
		case TypeLink, TypeTable:
			if f.Options == "" {
				return Validationf("field %s: a %s needs options naming its DocType", f.Fieldname, f.Fieldtype)
			}
			if f.Options != dt.Name && f.Options != DocTypeDoctype {
				targets = append(targets, f.Options)
			}
			if f.Fieldtype == TypeTable && (f.Options == dt.Name || f.Options == DocTypeDoctype) {
				return Validationf("field %s: a Table must name a child table DocType (istable: 1)", f.Fieldname)
			}
		}
		if dt.Istable.On() && (k == kindTable || k == kindPassword) {
			return Validationf("field %s: a child table cannot have %s fields", f.Fieldname, f.Fieldtype)
		}
		if f.Unique.On() || f.SearchIndex.On() {
			if dt.Istable.On() {
				return Validationf("field %s: child table fields cannot be unique or indexed (their rows live in the parent)", f.Fieldname)
			}
			if k == kindTable || k == kindPassword || k == kindJSON || k == kindNone {
				return Validationf("field %s: a %s field cannot be unique or indexed", f.Fieldname, f.Fieldtype)
			}
		}
		if f.Default != "" && k != kindNone && k != kindTable && k != kindPassword {
			if _, err := coerce(f, string(f.Default)); err != nil {
				return Validationf("field %s: default %s is not a valid %s", f.Fieldname, show(string(f.Default)), f.Fieldtype)
			}
			if f.Fieldtype == TypeSelect && !slices.Contains(f.selectOptions(), string(f.Default)) {
				return Validationf("field %s: default %s is not one of its options", f.Fieldname, show(string(f.Default)))
			}
		}
	}
	for i := range dt.Fields {
		f := &dt.Fields[i]
		if f.Fieldtype == TypeDynamicLink {
			src, ok := fieldByName(dt, f.Options)
			if !ok || src.Fieldtype != TypeLink || src.Options != DocTypeDoctype {
				return Validationf("field %s: a Dynamic Link's options must name a Link field to DocType of this DocType", f.Fieldname)
			}
		}
	}
	if err := validateAutoname(dt); err != nil {
		return err
	}
	if dt.TitleField != "" {
		if f, ok := fieldByName(dt, dt.TitleField); !ok || f.kind() != kindText {
			return Validationf("title_field %s must name a text field of the DocType", show(dt.TitleField))
		}
	}
	for _, sf := range splitList(dt.SearchFields) {
		if f, ok := fieldByName(dt, sf); !ok || (f.kind() != kindText && f.kind() != kindInt && f.kind() != kindFloat && f.kind() != kindDate && f.kind() != kindDatetime) {
			return Validationf("search_fields: %s is not a searchable field of the DocType", show(sf))
		}
	}
	for _, p := range dt.Permissions {
		if p.Role == "" || len(p.Role) > 100 {
			return Validationf("permissions: every row needs a role (at most 100 characters)")
		}
	}
	if len(targets) == 0 {
		return nil
	}
	var found []doctypeRow
	if err := tx.WithContext(ctx).Select("name", "istable").Find(&found, "organization_id = ? AND name IN ?", orgID, targets).Error; err != nil {
		return err
	}
	istable := map[string]bool{}
	for _, r := range found {
		istable[r.Name] = r.Istable
	}
	for i := range dt.Fields {
		f := &dt.Fields[i]
		if (f.Fieldtype != TypeLink && f.Fieldtype != TypeTable) || f.Options == dt.Name || f.Options == DocTypeDoctype {
			continue
		}
		child, ok := istable[f.Options]
		if !ok {
			return Validationf("field %s: DocType %s does not exist", f.Fieldname, show(f.Options))
		}
		if f.Fieldtype == TypeTable && !child {
			return Validationf("field %s: DocType %s is not a child table (istable: 1)", f.Fieldname, f.Options)
		}
		if f.Fieldtype == TypeLink && child {
			return Validationf("field %s: cannot link to child table DocType %s", f.Fieldname, f.Options)
		}
	}
	return nil
}

func fieldByName(dt *DocType, name string) (*Field, bool) {
	for i := range dt.Fields {
		if dt.Fields[i].Fieldname == name {
			return &dt.Fields[i], true
		}
	}
	return nil, false
}

// splitList splits a comma list, trimmed, without empties.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// GetDocType answers a DocType of the organization as a document.
func (s *Service) GetDocType(ctx context.Context, a Actor, orgID uuid.UUID, name string) (map[string]any, error) {
	m, err := s.meta(ctx, s.db, orgID, name)
	if err != nil {
		return nil, err
	}
	return renderDocType(m), nil
}

// SaveDocType creates (create true) or changes a DocType: the organization's
// Admin or a super admin only. A change is the stored definition with the
// given keys replaced (a given fields or permissions list replaces the
// whole table, as Frappe does with child tables).
func (s *Service) SaveDocType(ctx context.Context, a Actor, orgID uuid.UUID, name string, in map[string]any, create bool) (map[string]any, error) {
	if !a.isAdmin() {
		return nil, permissionf("creating, changing and deleting DocTypes needs the organization's Admin role")
	}
	var out *meta
	var old *meta
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old = nil
		if !create {
			var err error
			if old, err = lockDocType(ctx, tx, orgID, name); err != nil {
				return err
			}
			if !old.custom {
				return permissionf("DocType %s is built in; it cannot be changed", name)
			}
		}
		dt, err := mergeDocType(old, in)
		if err != nil {
			return err
		}
		if !create {
			dt.Name = name
		}
		dt.Custom = 1
		out, err = s.storeDocType(ctx, tx, orgID, a.Email, dt, old)
		return err
	})
	s.doctypesChanged(ctx, orgID)
	if err != nil {
		if n, _ := in["name"].(string); create && n != "" {
			name = n
		}
		return nil, s.docTypeConflict(name, err)
	}
	s.afterDocTypeChange(ctx, orgID, old, &out.DocType)
	return renderDocType(out), nil
}

// afterDocTypeChange has the indexes follow a committed definition change
// (old or next nil: created or deleted): built and dropped by the worker,
// outside the change's transaction, so that the change never holds a lock
// on the documents table that every organization writes to.
func (s *Service) afterDocTypeChange(ctx context.Context, orgID uuid.UUID, old *meta, next *DocType) {
	var prev *DocType
	name := ""
	if old != nil {
		prev, name = &old.DocType, old.Name
	}
	if next != nil {
		name = next.Name
	}
	if drop, changed := indexChange(orgID, prev, next); changed {
		s.scheduleIndexes(ctx, orgID, name, drop)
	}
}

// EnsureDocType creates or updates a built-in DocType (custom: 0) of the
// organization: idempotent, so the integration calls it at set-up or first
// use. Users cannot change or delete built-in DocTypes.
func (s *Service) EnsureDocType(ctx context.Context, orgID uuid.UUID, def DocType) error {
	// The caller's definition is often shared (a package-level value used
	// for every organization): work on a copy of its lists.
	def.Fields, def.Permissions = slices.Clone(def.Fields), slices.Clone(def.Permissions)
	def.Custom = 0
	def.normalize()
	want, err := json.Marshal(def)
	if err != nil {
		return err
	}
	var old *meta
	stored := false
	ensure := func(tx *gorm.DB) error {
		var err error
		old, stored = nil, false
		old, err = lockDocType(ctx, tx, orgID, def.Name)
		if err != nil && !isNotFound(err) {
			return err
		}
		if old != nil {
			have, _ := json.Marshal(old.DocType)
			if string(have) == string(want) && !old.custom {
				return nil
			}
		}
		_, err = s.storeDocType(ctx, tx, orgID, "Administrator", def, old)
		stored = err == nil
		return err
	}
	// Two first uses at once both find no row; the one whose insert
	// loses finds the other's row on its second try.
	for attempt := 0; ; attempt++ {
		err = s.db.WithContext(ctx).Transaction(ensure)
		if err == nil || !isDuplicate(err) || attempt == 1 {
			break
		}
	}
	// Only a definition that changed (or may have) replaces the version:
	// every process ensures the built-in DocTypes of the organizations it
	// serves, mostly finding them as they are.
	if stored || err != nil {
		s.doctypesChanged(ctx, orgID)
	}
	if err != nil {
		return s.docTypeConflict(def.Name, err)
	}
	if stored {
		s.afterDocTypeChange(ctx, orgID, old, &def)
	}
	return nil
}

// docTypeConflict turns a duplicate DocType name into a 409.
func (s *Service) docTypeConflict(name string, err error) error {
	if isDuplicate(err) {
		return duplicatef("DocType %s already exists", name)
	}
	return err
}

func lockDocType(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, name string) (*meta, error) {
	var row doctypeRow
	err := tx.WithContext(ctx).Clauses(clause.Locking{Strength: "UPDATE"}).Take(&row, "organization_id = ? AND name = ?", orgID, name).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("DocType %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	return row.meta()
}

// mergeDocType decodes a definition: in over old's (nil: a new one).
func mergeDocType(old *meta, in map[string]any) (DocType, error) {
	base := map[string]any{}
	if old != nil {
		b, _ := json.Marshal(old.DocType)
		_ = json.Unmarshal(b, &base)
	}
	for k, v := range in {
		switch k {
		case "doctype", "owner", "creation", "modified", "modified_by", "docstatus", "idx", "custom", "id":
			continue // standard properties, not the client's to set
		}
		base[k] = v
	}
	b, _ := json.Marshal(base)
	var dt DocType
	if err := json.Unmarshal(b, &dt); err != nil {
		return dt, Validationf("DocType definition: %s", jsonProblem(err))
	}
	dt.normalize()
	return dt, nil
}

// jsonProblem words a decoding error for the caller.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be of type %s", te.Field, te.Type)
	}
	return err.Error()
}

// storeDocType validates dt, checks a change against the documents that
// exist and writes the row, in tx. The field indexes follow after the
// commit (afterDocTypeChange).
func (s *Service) storeDocType(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, by string, dt DocType, old *meta) (*meta, error) {
	if err := validateDocType(ctx, tx, orgID, &dt); err != nil {
		return nil, err
	}
	var oldDT *DocType
	if old != nil {
		oldDT = &old.DocType
		if err := checkDocTypeChange(ctx, tx, orgID, old, &dt); err != nil {
			return nil, err
		}
	}
	if err := checkUniqueable(ctx, tx, orgID, oldDT, &dt); err != nil {
		return nil, err
	}
	def, err := json.Marshal(dt)
	if err != nil {
		return nil, err
	}
	now := s.now()
	row := doctypeRow{OrganizationID: orgID, Name: dt.Name, Module: dt.Module, Custom: dt.Custom.On(), IsSubmittable: dt.IsSubmittable.On(),
		Istable: dt.Istable.On(), Autoname: dt.Autoname, TitleField: dt.TitleField, SearchFields: dt.SearchFields, Definition: def,
		Owner: by, ModifiedBy: by, Creation: now, Modified: now}
	if old == nil {
		if err := tx.WithContext(ctx).Create(&row).Error; err != nil {
			return nil, err
		}
	} else {
		row.Owner, row.Creation = old.owner, old.creation
		if err := tx.WithContext(ctx).Model(&doctypeRow{}).Where("organization_id = ? AND name = ?", orgID, dt.Name).
			Updates(map[string]any{"module": row.Module, "custom": row.Custom, "is_submittable": row.IsSubmittable, "istable": row.Istable,
				"autoname": row.Autoname, "title_field": row.TitleField, "search_fields": row.SearchFields, "definition": def,
				"modified_by": by, "modified": now}).Error; err != nil {
			return nil, err
		}
	}
	m := newMeta(dt)
	m.custom, m.owner, m.modBy, m.creation, m.modified = row.Custom, row.Owner, by, row.Creation, now
	return m, nil
}

// checkDocTypeChange refuses changes that would strand existing documents:
// a field's type, istable, and is_submittable while documents are
// submitted or cancelled. A Data field may become a Link: both hold text,
// and a stored value that names no document is refused at the document's
// next save, as any broken Link is.
func checkDocTypeChange(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, old *meta, dt *DocType) error {
	var counts struct {
		Docs      int64
		Submitted int64
	}
	if err := tx.WithContext(ctx).Raw(`SELECT count(*) AS docs, count(*) FILTER (WHERE docstatus <> 0) AS submitted
		FROM docframe_documents WHERE organization_id = ? AND doctype = ?`, orgID, old.Name).Scan(&counts).Error; err != nil {
		return err
	}
	if old.Istable != dt.Istable {
		used, err := referencedBy(ctx, tx, orgID, old.Name)
		if err != nil {
			return err
		}
		if counts.Docs > 0 || len(used) > 0 {
			return cannotChangef("istable of DocType %s cannot change while it has documents or is used by %s", old.Name, strings.Join(used, ", "))
		}
	}
	if old.IsSubmittable.On() && !dt.IsSubmittable.On() && counts.Submitted > 0 {
		return cannotChangef("DocType %s has submitted or cancelled documents; it must stay submittable", old.Name)
	}
	if counts.Docs > 0 {
		for _, f := range dt.Fields {
			if of, ok := old.byName[f.Fieldname]; ok && of.Fieldtype != f.Fieldtype && !(of.Fieldtype == TypeData && f.Fieldtype == TypeLink) {
				return cannotChangef("field %s: its type cannot change from %s to %s while DocType %s has documents",
					f.Fieldname, of.Fieldtype, f.Fieldtype, old.Name)
			}
		}
	}
	return nil
}

// referencedBy names the fields of other DocTypes that link to doctype or
// hold it as a table ("DocType.field").
func referencedBy(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, doctype string) ([]string, error) {
	var rows []struct {
		Name      string
		Fieldname string
	}
	err := tx.WithContext(ctx).Raw(`SELECT d.name, f->>'fieldname' AS fieldname
		FROM docframe_doctypes d, jsonb_array_elements(d.definition->'fields') f
		WHERE d.organization_id = ? AND d.name <> ? AND f->>'fieldtype' IN ('Link', 'Table') AND f->>'options' = ?
		ORDER BY 1, 2`, orgID, doctype, doctype).Scan(&rows).Error
	var out []string
	for _, r := range rows {
		out = append(out, r.Name+"."+r.Fieldname)
	}
	return out, err
}

// DeleteDocType removes a custom DocType that has no documents and that no
// other DocType links to or holds as a table.
func (s *Service) DeleteDocType(ctx context.Context, a Actor, orgID uuid.UUID, name string) error {
	if !a.isAdmin() {
		return permissionf("creating, changing and deleting DocTypes needs the organization's Admin role")
	}
	var old *meta
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		old, err = lockDocType(ctx, tx, orgID, name)
		if err != nil {
			return err
		}
		if !old.custom {
			return permissionf("DocType %s is built in; it cannot be deleted", name)
		}
		var docs int64
		if err := tx.Raw(`SELECT count(*) FROM (SELECT 1 FROM docframe_documents WHERE organization_id = ? AND doctype = ? LIMIT 1000) d`,
			orgID, name).Scan(&docs).Error; err != nil {
			return err
		}
		if docs > 0 {
			return linkExistsf("DocType %s has documents (%d%s); delete them first", name, docs, map[bool]string{true: " or more", false: ""}[docs >= 1000])
		}
		used, err := referencedBy(ctx, tx, orgID, name)
		if err != nil {
			return err
		}
		if len(used) > 0 {
			return linkExistsf("DocType %s is used by %s", name, strings.Join(used, ", "))
		}
		return tx.Exec(`DELETE FROM docframe_doctypes WHERE organization_id = ? AND name = ?`, orgID, name).Error
	})
	s.doctypesChanged(ctx, orgID)
	if err != nil {
		return err
	}
	s.afterDocTypeChange(ctx, orgID, old, nil)
	return nil
}

// renderDocType answers a DocType as Frappe does: a document whose fields
// and permissions are child rows (DocField, DocPerm).
func renderDocType(m *meta) map[string]any {
	b, _ := json.Marshal(m.DocType)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	out["doctype"] = DocTypeDoctype
	out["id"] = m.Name
	out["owner"], out["modified_by"] = m.owner, m.modBy
	out["creation"], out["modified"] = formatDatetime(m.creation), formatDatetime(m.modified)
	out["docstatus"], out["idx"] = 0, 0
	out["custom"] = int(flag(m.custom))
	for _, table := range []struct{ field, doctype string }{{"fields", "DocField"}, {"permissions", "DocPerm"}} {
		rows, _ := out[table.field].([]any)
		for i, r := range rows {
			row := r.(map[string]any)
			row["name"] = childName(m.Name, table.field, i+1)
			row["idx"], row["parent"], row["parenttype"], row["parentfield"], row["doctype"] = i+1, m.Name, DocTypeDoctype, table.field, table.doctype
		}
		if rows == nil {
			out[table.field] = []any{}
		}
	}
	return out
}

// childName names the idx-th row of a DocType's table: stable, so that a
// client reading a DocType twice sees the same rows.
func childName(parent, field string, idx int) string {
	return hashName(fmt.Sprintf("%s\x00%s\x00%d", parent, field, idx))
}
