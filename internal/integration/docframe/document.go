package docframe

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

var errNoRows = sql.ErrNoRows

// Doc is a document as hooks see it: standard properties and the typed
// values of its fields (string, int64, float64, JSON values; a Table field
// holds []map[string]any rows). Password fields are not in Fields: a set one
// reads as Mask in answers; SetPassword gives a new secret.
type Doc struct {
	OrganizationID uuid.UUID
	Doctype        string
	Name           string
	Docstatus      int
	Owner          string
	ModifiedBy     string
	Creation       time.Time
	Modified       time.Time
	Fields         map[string]any
	// User is the email of who acts (Frappe's session user).
	User string
	// Projection: the integration inserts this document as the projection
	// of a core row it already wrote (InsertProjectionIn): a hook that acts
	// on the core for a new document (a send) leaves it. Only the
	// integration's code sets it; a client's insert never does.
	Projection bool
	// actor is who acts, with their rights (Actor).
	actor Actor

	passwords map[string]string // new plaintexts, sealed on write
	sealed    map[string]string // stored sealed secrets
}

// Actor is who acts on the document, with their role and core
// permissions, for a hook that checks a right of its own (a notification's
// author must be able to read the DocType it sends from). The integration's
// own writes act as the Admin.
func (d *Doc) Actor() Actor { return d.actor }

// Get answers a field's value (nil when unset).
func (d *Doc) Get(field string) any { return d.Fields[field] }

// Set sets a field's value; the framework coerces and validates it.
func (d *Doc) Set(field string, v any) { d.Fields[field] = v }

// SetPassword gives a Password field a new secret ("" clears it).
func (d *Doc) SetPassword(field, plain string) {
	if d.passwords == nil {
		d.passwords = map[string]string{}
	}
	d.passwords[field] = plain
}

// NewPassword answers the secret a Password field is being given by the
// current operation (ok false when it keeps its stored one), for hooks
// that mirror the secret elsewhere in the same transaction: known in
// before_insert and validate, not after the write.
func (d *Doc) NewPassword(field string) (plain string, ok bool) {
	plain, ok = d.passwords[field]
	return plain, ok
}

// HasPassword reports whether a Password field holds a secret.
func (d *Doc) HasPassword(field string) bool {
	if p, ok := d.passwords[field]; ok {
		return p != ""
	}
	_, ok := d.sealed[field]
	return ok
}

func (d *Doc) clone() *Doc {
	c := *d
	b, _ := json.Marshal(d.Fields)
	c.Fields = decodeJSONMap(b)
	c.passwords, c.sealed = nil, maps.Clone(d.sealed)
	return &c
}

func decodeJSONMap(b []byte) map[string]any {
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

// docRow is a docframe_documents row.
type docRow struct {
	OrganizationID uuid.UUID
	Doctype        string
	Name           string
	Docstatus      int
	Owner          string
	ModifiedBy     string
	Creation       time.Time
	Modified       time.Time
	Data           []byte
	Secrets        []byte
}

// toDoc decodes a stored row into m's document: numbers back to int64 or
// float64 by field type.
func (r *docRow) toDoc(m *meta) *Doc {
	d := &Doc{OrganizationID: r.OrganizationID, Doctype: r.Doctype, Name: r.Name, Docstatus: r.Docstatus, Owner: r.Owner,
		ModifiedBy: r.ModifiedBy, Creation: r.Creation.UTC(), Modified: r.Modified.UTC(), Fields: typed(m, decodeJSONMap(r.Data))}
	d.sealed = map[string]string{}
	if len(r.Secrets) > 0 {
		_ = json.Unmarshal(r.Secrets, &d.sealed)
	}
	return d
}

// typed converts decoded JSON numbers to the Go types of m's fields.
func typed(m *meta, raw map[string]any) map[string]any {
	for k, v := range raw {
		f, ok := m.byName[k]
		if !ok {
			continue
		}
		switch f.kind() {
		case kindInt:
			if n, ok := toInt(v); ok {
				raw[k] = n
			}
		case kindFloat:
			if x, ok := toFloat(v); ok {
				raw[k] = x
			}
		case kindTable:
			rows, _ := v.([]any)
			out := make([]map[string]any, 0, len(rows))
			for _, r := range rows {
				if row, ok := r.(map[string]any); ok {
					if cm := m.children[k]; cm != nil {
						row = typed(cm, row)
					}
					out = append(out, row)
				}
			}
			raw[k] = out
		}
	}
	return raw
}

// view answers a document as a sees it: render, then the guards of its
// DocType and child tables (secrets as has_ flags, numbers and names masked
// for an organization that masks them).
func (s *Service) view(a Actor, m *meta, d *Doc) map[string]any {
	out := s.render(m, d)
	m.guard.protect(a, m, out, d)
	for _, f := range m.tableFields() {
		cm := m.children[f.Fieldname]
		if cm == nil || cm.guard == nil {
			continue
		}
		rows, _ := out[f.Fieldname].([]map[string]any)
		for _, r := range rows {
			cm.guard.protect(a, cm, r, nil)
		}
	}
	return out
}

// render answers a document with every value: the standard properties,
// every field of its DocType (unset ones null, numbers 0, set passwords
// Mask) and its child tables. Answers go through view.
func (s *Service) render(m *meta, d *Doc) map[string]any {
	out := map[string]any{
		"name": d.Name, "id": d.Name, "doctype": d.Doctype, "owner": d.Owner, "modified_by": d.ModifiedBy,
		"creation": formatDatetime(d.Creation), "modified": formatDatetime(d.Modified), "docstatus": d.Docstatus, "idx": 0,
	}
	for _, f := range m.valueFields() {
		out[f.Fieldname] = fieldValue(f, d)
	}
	for _, f := range m.tableFields() {
		rows, _ := d.Fields[f.Fieldname].([]map[string]any)
		cm := m.children[f.Fieldname]
		list := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			row := maps.Clone(r)
			if cm != nil {
				for _, cf := range cm.valueFields() {
					if _, ok := row[cf.Fieldname]; !ok || row[cf.Fieldname] == nil {
						row[cf.Fieldname] = zeroValue(cf)
					}
				}
			}
			list = append(list, row)
		}
		out[f.Fieldname] = list
	}
	return out
}

// fieldValue is what a field reads as in answers.
func fieldValue(f *Field, d *Doc) any {
	if f.kind() == kindPassword {
		if d.HasPassword(f.Fieldname) {
			return Mask
		}
		return nil
	}
	if v := d.Fields[f.Fieldname]; v != nil {
		return v
	}
	return zeroValue(f)
}

// zeroValue is an unset field's answer: 0 for numbers (Frappe's columns
// default to 0), null otherwise.
func zeroValue(f *Field) any {
	switch f.kind() {
	case kindInt:
		return int64(0)
	case kindFloat:
		return float64(0)
	}
	return nil
}

// applyInput copies a client's values into d: only fields of the DocType,
// coerced; a given table replaces the whole table; a Password given as Mask
// keeps its secret. Standard properties and unknown keys are ignored, as
// Frappe ignores them.
func applyInput(m *meta, d *Doc, in map[string]any) error {
	for k, v := range in {
		f, ok := m.byName[k]
		if !ok {
			continue
		}
		switch f.kind() {
		case kindNone:
		case kindPassword:
			if v == nil {
				d.SetPassword(k, "")
				continue
			}
			s, ok := v.(string)
			if !ok {
				return Validationf("%s must be text", f.label())
			}
			if s != Mask {
				d.SetPassword(k, s)
			}
		case kindTable:
			rows, err := tableRows(m, f, v)
			if err != nil {
				return err
			}
			d.Fields[k] = rows
		default:
			val, err := coerce(f, v)
			if err != nil {
				return err
			}
			d.Fields[k] = val
		}
	}
	return nil
}

// tableRows coerces a given table: a list of objects whose fields are the
// child DocType's (null or absent: empty).
func tableRows(m *meta, f *Field, v any) ([]map[string]any, error) {
	if v == nil {
		return []map[string]any{}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, Validationf("%s must be a list of rows", f.label())
	}
	cm := m.children[f.Fieldname]
	out := make([]map[string]any, 0, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, Validationf("%s: row %d must be an object", f.label(), i+1)
		}
		row := map[string]any{}
		if n, ok := obj["name"].(string); ok && n != "" && checkName(n) == nil {
			row["name"] = n
		}
		for _, cf := range cm.valueFields() {
			val, ok := obj[cf.Fieldname]
			if !ok {
				continue
			}
			c, err := coerce(cf, val)
			if err != nil {
				return nil, Validationf("%s row %d: %s", f.label(), i+1, err.(*Error).Message())
			}
			if c != nil {
				row[cf.Fieldname] = c
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// setDefaults gives a new document's unset fields their defaults (numbers
// 0).
func setDefaults(m *meta, fields map[string]any) {
	for _, f := range m.valueFields() {
		if f.kind() == kindPassword || fields[f.Fieldname] != nil {
			continue
		}
		if f.Default != "" {
			if v, err := coerce(f, string(f.Default)); err == nil {
				fields[f.Fieldname] = v
				continue
			}
		}
		if z := zeroValue(f); z != nil {
			fields[f.Fieldname] = z
		}
	}
}

// finishChildren numbers d's child rows and sets their standard
// properties, keeping the names rows came with.
func finishChildren(m *meta, d *Doc) {
	for _, f := range m.tableFields() {
		rows, _ := d.Fields[f.Fieldname].([]map[string]any)
		cm := m.children[f.Fieldname]
		for i, row := range rows {
			if n, _ := row["name"].(string); n == "" {
				row["name"] = hashName("")
			}
			if cm != nil {
				setDefaults(cm, row)
			}
			row["idx"], row["parent"], row["parenttype"], row["parentfield"] = i+1, d.Name, d.Doctype, f.Fieldname
			row["doctype"], row["docstatus"] = f.Options, d.Docstatus
			row["owner"], row["modified_by"] = d.Owner, d.ModifiedBy
			row["creation"], row["modified"] = formatDatetime(d.Creation), formatDatetime(d.Modified)
		}
	}
}

// validateDoc checks d after the validate hooks: every value coerced again
// (hooks may set raw values), mandatory fields, Select options, and links
// to existing documents of the organization; child rows alike.
func validateDoc(ctx context.Context, tx *gorm.DB, m *meta, d *Doc) error {
	var links []linkRef
	if err := validateFields(m, d.Fields, d, "", &links); err != nil {
		return err
	}
	for _, f := range m.tableFields() {
		cm := m.children[f.Fieldname]
		v := d.Fields[f.Fieldname]
		if v == nil {
			v = []map[string]any{}
		}
		if list, isList := v.([]any); isList { // rows a hook set as decoded JSON
			var err error
			if v, err = tableRows(m, f, list); err != nil {
				return err
			}
		}
		rows, ok := v.([]map[string]any)
		if !ok {
			return Validationf("%s must be a list of rows", f.label())
		}
		if f.Reqd.On() && len(rows) == 0 {
			return mandatoryf("Value missing for %s: %s (at least one row)", m.Name, f.label())
		}
		for i, row := range rows {
			if err := validateFields(cm, row, nil, fmt.Sprintf("%s row %d: ", f.label(), i+1), &links); err != nil {
				return err
			}
		}
		d.Fields[f.Fieldname] = rows
	}
	return checkLinks(ctx, tx, d.OrganizationID, links)
}

// linkRef is a Link value to check.
type linkRef struct {
	doctype, name, label string
}

func validateFields(m *meta, values map[string]any, d *Doc, where string, links *[]linkRef) error {
	for _, f := range m.valueFields() {
		if f.kind() == kindPassword {
			if f.Reqd.On() && (d == nil || !d.HasPassword(f.Fieldname)) {
				return mandatoryf("%sValue missing for %s: %s", where, m.Name, f.label())
			}
			continue
		}
		v, err := coerce(f, values[f.Fieldname])
		if err != nil {
			return Validationf("%s%s", where, err.(*Error).Message())
		}
		if v == nil {
			delete(values, f.Fieldname)
		} else {
			values[f.Fieldname] = v
		}
		if f.Reqd.On() && v == nil {
			return mandatoryf("%sValue missing for %s: %s", where, m.Name, f.label())
		}
		s, _ := v.(string)
		switch f.Fieldtype {
		case TypeSelect:
			if s != "" && !slices.Contains(f.selectOptions(), s) {
				return Validationf("%s%s cannot be %s. It should be one of %s", where, f.label(), show(s), quoteList(f.selectOptions()))
			}
		case TypeLink:
			if s != "" {
				*links = append(*links, linkRef{f.Options, s, where + f.label()})
			}
		case TypeDynamicLink:
			if s != "" {
				target, _ := values[f.Options].(string)
				if target == "" {
					return linkf("%s%s needs %s to name its DocType", where, f.label(), f.Options)
				}
				*links = append(*links, linkRef{target, s, where + f.label()})
			}
		}
	}
	return nil
}

func quoteList(xs []string) string {
	var q []string
	for _, x := range xs {
		if x != "" {
			q = append(q, `"`+x+`"`)
		}
	}
	return strings.Join(q, ", ")
}

// checkLinks verifies, in one query per kind, that every Link names an
// existing document (or DocType) of the organization.
func checkLinks(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, links []linkRef) error {
	if len(links) == 0 {
		return nil
	}
	var docPairs [][]any
	var doctypes []string
	for _, l := range links {
		if l.doctype == DocTypeDoctype {
			doctypes = append(doctypes, l.name)
		} else {
			docPairs = append(docPairs, []any{l.doctype, l.name})
		}
	}
	found := map[[2]string]bool{}
	if len(docPairs) > 0 {
		var rows []struct{ Doctype, Name string }
		if err := tx.WithContext(ctx).Raw(`SELECT doctype, name FROM docframe_documents WHERE organization_id = ? AND (doctype, name) IN ?`,
			orgID, docPairs).Scan(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			found[[2]string{r.Doctype, r.Name}] = true
		}
	}
	if len(doctypes) > 0 {
		var names []string
		if err := tx.WithContext(ctx).Raw(`SELECT name FROM docframe_doctypes WHERE organization_id = ? AND name IN ?`, orgID, doctypes).
			Scan(&names).Error; err != nil {
			return err
		}
		for _, n := range names {
			found[[2]string{DocTypeDoctype, n}] = true
		}
	}
	for _, l := range links {
		if !found[[2]string{l.doctype, l.name}] {
			return linkf("Could not find %s: %s (no %s of that name)", l.label, show(l.name), l.doctype)
		}
	}
	return nil
}

// Get answers a document.
func (s *Service) Get(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name string) (map[string]any, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, PermRead); err != nil {
		return nil, err
	}
	d, err := loadDoc(ctx, s.db, m, orgID, name, false)
	if err != nil {
		return nil, err
	}
	return s.view(a, m, d), nil
}

type noBuiltInKey struct{}

// WithoutBuiltIn marks a context whose reads must not create a missing
// built-in DocType (Options.BuiltIn): a lookup made on behalf of every
// campaign (is this one a bulk message's?) answers "no such document" in an
// organization that never used the integration, instead of setting the
// integration up there.
func WithoutBuiltIn(ctx context.Context) context.Context {
	return context.WithValue(ctx, noBuiltInKey{}, true)
}

// docMeta loads a DocType whose documents are addressed directly: not a
// child table, whose rows live in their parents.
// The answer is shared (metacache.go): callers must not change it.
func (s *Service) docMeta(ctx context.Context, orgID uuid.UUID, doctype string) (*meta, error) {
	m, err := s.meta(ctx, s.db, orgID, doctype)
	if isNotFound(err) && s.builtIn != nil && ctx.Value(noBuiltInKey{}) == nil {
		ok, berr := s.builtIn(ctx, orgID, doctype)
		if berr != nil {
			return nil, berr
		}
		if ok {
			m, err = s.meta(ctx, s.db, orgID, doctype)
		}
	}
	if err != nil {
		return nil, err
	}
	if m.Istable.On() {
		return nil, Validationf("%s is a child table: its rows are read and written through their parent documents", doctype)
	}
	return m, nil
}

func loadDoc(ctx context.Context, db *gorm.DB, m *meta, orgID uuid.UUID, name string, lock bool) (*Doc, error) {
	q := `SELECT organization_id, doctype, name, docstatus, owner, modified_by, creation, modified, data, secrets
		FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name = ?`
	if lock {
		q += ` FOR UPDATE`
	}
	var rows []docRow
	if err := db.WithContext(ctx).Raw(q, orgID, m.Name, name).Scan(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, notFoundf("%s %s not found", m.Name, name)
	}
	return rows[0].toDoc(m), nil
}

// Insert creates a document (Frappe's insert): before_insert, naming,
// validate, the insert, after_insert and on_update, in one transaction;
// After Insert is published after the commit.
func (s *Service) Insert(ctx context.Context, a Actor, orgID uuid.UUID, doctype string, in map[string]any) (map[string]any, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, PermCreate); err != nil {
		return nil, err
	}
	d, err := s.insert(ctx, s.db, m, a, orgID, in)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, d, EventAfterInsert)
	return s.view(a, m, d), nil
}

// InsertDoc is Insert for the integration's own code (no permission check,
// acting as by): it answers the stored document.
func (s *Service) InsertDoc(ctx context.Context, orgID uuid.UUID, by, doctype string, in map[string]any) (*Doc, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	d, err := s.insert(ctx, s.db, m, Actor{Email: by, Role: RoleAdmin}, orgID, in)
	if err != nil {
		return nil, err
	}
	s.publish(ctx, d, EventAfterInsert)
	return d, nil
}

func (s *Service) insert(ctx context.Context, db *gorm.DB, m *meta, a Actor, orgID uuid.UUID, in map[string]any) (*Doc, error) {
	return s.insertDoc(ctx, db, m, a, orgID, in, false)
}

// insertDoc is insert; projection marks the document as a projection
// (Doc.Projection) for its hooks.
func (s *Service) insertDoc(ctx context.Context, db *gorm.DB, m *meta, a Actor, orgID uuid.UUID, in map[string]any, projection bool) (*Doc, error) {
	now := s.now()
	d := &Doc{OrganizationID: orgID, Doctype: m.Name, Owner: a.Email, ModifiedBy: a.Email, Creation: now, Modified: now,
		Fields: map[string]any{}, User: a.Email, actor: a, sealed: map[string]string{}, Projection: projection}
	if err := applyInput(m, d, in); err != nil {
		return nil, err
	}
	setDefaults(m, d.Fields)
	given, _ := in["name"].(string)
	if given == "" {
		given, _ = in["__newname"].(string)
	}
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.run(ctx, tx, BeforeInsert, d); err != nil {
			return err
		}
		name, err := s.newName(ctx, tx, orgID, m, d, strings.TrimSpace(given))
		if err != nil {
			return err
		}
		d.Name = name
		if err := s.run(ctx, tx, Validate, d); err != nil {
			return err
		}
		if err := validateDoc(ctx, tx, m, d); err != nil {
			return err
		}
		finishChildren(m, d)
		if err := s.write(ctx, tx, m, d, true); err != nil {
			return err
		}
		if err := s.run(ctx, tx, AfterInsert, d); err != nil {
			return err
		}
		return s.run(ctx, tx, OnUpdate, d)
	})
	if err != nil {
		return nil, s.duplicate(ctx, m, d, err)
	}
	return d, nil
}

// write inserts or updates d's row, its unique fields checked first.
func (s *Service) write(ctx context.Context, tx *gorm.DB, m *meta, d *Doc, insert bool) error {
	if err := checkUnique(ctx, tx, m, d); err != nil {
		return err
	}
	data, err := json.Marshal(d.Fields)
	if err != nil {
		return err
	}
	sealed, err := s.sealPasswords(d.sealed, d)
	if err != nil {
		return err
	}
	secrets, _ := json.Marshal(sealed)
	if insert {
		err = tx.WithContext(ctx).Exec(`INSERT INTO docframe_documents (organization_id, doctype, name, docstatus, owner, modified_by,
			creation, modified, data, secrets) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.OrganizationID, d.Doctype, d.Name, d.Docstatus,
			d.Owner, d.ModifiedBy, d.Creation, d.Modified, string(data), string(secrets)).Error
	} else {
		err = tx.WithContext(ctx).Exec(`UPDATE docframe_documents SET docstatus = ?, modified_by = ?, modified = ?, data = ?, secrets = ?
			WHERE organization_id = ? AND doctype = ? AND name = ?`, d.Docstatus, d.ModifiedBy, d.Modified, string(data), string(secrets),
			d.OrganizationID, d.Doctype, d.Name).Error
	}
	if err != nil {
		return err
	}
	d.sealed, d.passwords = sealed, nil
	return nil
}

// duplicate names what a unique violation was about: the name, or a
// unique field's value (looked up after the failed transaction).
func (s *Service) duplicate(ctx context.Context, m *meta, d *Doc, err error) error {
	if !isDuplicate(err) {
		return err
	}
	var n int64
	s.db.WithContext(ctx).Raw(`SELECT count(*) FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name = ?`,
		d.OrganizationID, d.Doctype, d.Name).Scan(&n)
	if n > 0 {
		return duplicatef("%s %s already exists", m.Name, d.Name)
	}
	for _, f := range m.valueFields() {
		v := d.Fields[f.Fieldname]
		if !f.Unique.On() || v == nil {
			continue
		}
		var other string
		s.db.WithContext(ctx).Raw(`SELECT name FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name <> ? AND `+
			textExpr(f)+` = ? LIMIT 1`, d.OrganizationID, d.Doctype, d.Name, fmt.Sprint(v)).Scan(&other)
		if other != "" {
			return duplicatef("%s %s is already used by %s %s: %s must be unique", f.label(), show(v), m.Name, other, f.label())
		}
	}
	return duplicatef("%s %s duplicates another document", m.Name, d.Name)
}

func isDuplicate(err error) bool { return errors.Is(err, gorm.ErrDuplicatedKey) }

// Update changes the given fields of a draft (Frappe's save): validate,
// the update, on_update; After Save is published after the commit. A
// docstatus of 1 in the input submits the document after the changes, 2
// cancels a submitted one (as a Frappe client may ask through a save).
func (s *Service) Update(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name string, in map[string]any) (map[string]any, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, PermWrite); err != nil {
		return nil, err
	}
	want := -1
	if v, ok := in["docstatus"]; ok {
		n, ok := toInt(v)
		if !ok || n < 0 || n > 2 {
			return nil, transitionf("docstatus must be 0, 1 or 2")
		}
		want = int(n)
	}
	var d *Doc
	var events []string
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if d, err = loadDoc(ctx, tx, m, orgID, name, true); err != nil {
			return err
		}
		d.User, d.actor = a.Email, a
		switch {
		case want == 2 && d.Docstatus == 1:
			events = []string{EventAfterCancel}
			return s.cancel(ctx, tx, m, a, d)
		case d.Docstatus == 1:
			return afterSubmitf("%s %s is submitted: it cannot be changed (cancel it first)", m.Name, d.Name)
		case d.Docstatus == 2:
			return afterSubmitf("%s %s is cancelled: it cannot be changed", m.Name, d.Name)
		case want == 2:
			return transitionf("cannot cancel %s %s: it is not submitted", m.Name, d.Name)
		}
		if err := applyInput(m, d, in); err != nil {
			return err
		}
		if err := s.save(ctx, tx, m, a, d); err != nil {
			return err
		}
		events = []string{EventAfterSave}
		if want == 1 {
			events = append(events, EventAfterSubmit)
			return s.submit(ctx, tx, m, a, d)
		}
		return nil
	})
	if err != nil {
		return nil, s.duplicate(ctx, m, d, err)
	}
	s.publish(ctx, d, events...)
	return s.view(a, m, d), nil
}

// save writes a changed draft: validate hooks, validation, update,
// on_update.
func (s *Service) save(ctx context.Context, tx *gorm.DB, m *meta, a Actor, d *Doc) error {
	d.Modified, d.ModifiedBy = s.now(), a.Email
	if err := s.run(ctx, tx, Validate, d); err != nil {
		return err
	}
	if err := validateDoc(ctx, tx, m, d); err != nil {
		return err
	}
	finishChildren(m, d)
	if err := s.write(ctx, tx, m, d, false); err != nil {
		return err
	}
	return s.run(ctx, tx, OnUpdate, d)
}

// Submit moves a draft of a submittable DocType to submitted (docstatus 1):
// validate, the update, on_submit; After Submit after the commit.
func (s *Service) Submit(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name string) (map[string]any, error) {
	return s.transition(ctx, a, orgID, doctype, name, PermSubmit, EventAfterSubmit, s.submit)
}

// Cancel moves a submitted document to cancelled (docstatus 2), for good:
// the update, on_cancel; After Cancel after the commit.
func (s *Service) Cancel(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name string) (map[string]any, error) {
	return s.transition(ctx, a, orgID, doctype, name, PermCancel, EventAfterCancel, s.cancel)
}

func (s *Service) transition(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name, right, event string,
	step func(context.Context, *gorm.DB, *meta, Actor, *Doc) error) (map[string]any, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, right); err != nil {
		return nil, err
	}
	var d *Doc
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if d, err = loadDoc(ctx, tx, m, orgID, name, true); err != nil {
			return err
		}
		d.User, d.actor = a.Email, a
		return step(ctx, tx, m, a, d)
	})
	if err != nil {
		return nil, err
	}
	s.publish(ctx, d, event)
	return s.view(a, m, d), nil
}

func (s *Service) submit(ctx context.Context, tx *gorm.DB, m *meta, a Actor, d *Doc) error {
	if !m.IsSubmittable.On() {
		return transitionf("%s is not submittable", m.Name)
	}
	if err := m.require(a, PermSubmit); err != nil {
		return err
	}
	switch d.Docstatus {
	case 1:
		return transitionf("%s %s is already submitted", m.Name, d.Name)
	case 2:
		return transitionf("%s %s is cancelled: it cannot be submitted", m.Name, d.Name)
	}
	d.Modified, d.ModifiedBy = s.now(), a.Email
	if err := s.run(ctx, tx, Validate, d); err != nil {
		return err
	}
	if err := validateDoc(ctx, tx, m, d); err != nil {
		return err
	}
	d.Docstatus = 1
	finishChildren(m, d)
	if err := s.write(ctx, tx, m, d, false); err != nil {
		return err
	}
	return s.run(ctx, tx, OnSubmit, d)
}

func (s *Service) cancel(ctx context.Context, tx *gorm.DB, m *meta, a Actor, d *Doc) error {
	if err := m.require(a, PermCancel); err != nil {
		return err
	}
	switch d.Docstatus {
	case 0:
		return transitionf("%s %s is not submitted: only submitted documents can be cancelled", m.Name, d.Name)
	case 2:
		return transitionf("%s %s is already cancelled", m.Name, d.Name)
	}
	d.Docstatus, d.Modified, d.ModifiedBy = 2, s.now(), a.Email
	finishChildren(m, d)
	if err := s.write(ctx, tx, m, d, false); err != nil {
		return err
	}
	return s.run(ctx, tx, OnCancel, d)
}

// Delete removes a draft or cancelled document that no other document
// links to: on_trash, then the delete; Before Delete is published after the
// commit (with the document as it was).
func (s *Service) Delete(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name string) error {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return err
	}
	if err := m.require(a, PermDelete); err != nil {
		return err
	}
	var d *Doc
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if d, err = loadDoc(ctx, tx, m, orgID, name, true); err != nil {
			return err
		}
		d.User, d.actor = a.Email, a
		if d.Docstatus == 1 {
			return transitionf("%s %s is submitted: cancel it before deleting it", m.Name, d.Name)
		}
		if err := checkNotLinked(ctx, tx, orgID, m.Name, d.Name); err != nil {
			return err
		}
		if err := s.run(ctx, tx, OnTrash, d); err != nil {
			return err
		}
		return tx.Exec(`DELETE FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name = ?`, orgID, m.Name, d.Name).Error
	})
	if err != nil {
		return err
	}
	s.publish(ctx, d, EventBeforeDelete)
	return nil
}

// checkNotLinked refuses to delete a document that a Link field of
// another document names, directly or from a child row (Frappe's
// LinkExistsError).
func checkNotLinked(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, doctype, name string) error {
	var refs []struct {
		Doctype   string
		Fieldname string
		Istable   bool
	}
	if err := tx.WithContext(ctx).Raw(`SELECT d.name AS doctype, f->>'fieldname' AS fieldname, d.istable
		FROM docframe_doctypes d, jsonb_array_elements(d.definition->'fields') f
		WHERE d.organization_id = ? AND f->>'fieldtype' = 'Link' AND f->>'options' = ?`, orgID, doctype).Scan(&refs).Error; err != nil {
		return err
	}
	for _, r := range refs {
		var by string
		if !r.Istable {
			if err := tx.WithContext(ctx).Raw(`SELECT name FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND data ->> ? = ? LIMIT 1`,
				orgID, r.Doctype, r.Fieldname, name).Scan(&by).Error; err != nil {
				return err
			}
			if by != "" {
				return linkExistsf("Cannot delete %s %s: it is linked with %s %s (%s)", doctype, name, r.Doctype, by, r.Fieldname)
			}
			continue
		}
		var parents []struct{ Doctype, Fieldname string }
		if err := tx.WithContext(ctx).Raw(`SELECT d.name AS doctype, f->>'fieldname' AS fieldname
			FROM docframe_doctypes d, jsonb_array_elements(d.definition->'fields') f
			WHERE d.organization_id = ? AND f->>'fieldtype' = 'Table' AND f->>'options' = ?`, orgID, r.Doctype).Scan(&parents).Error; err != nil {
			return err
		}
		for _, p := range parents {
			probe, _ := json.Marshal([]map[string]string{{r.Fieldname: name}})
			if err := tx.WithContext(ctx).Raw(`SELECT name FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND data -> ? @> ?::jsonb LIMIT 1`,
				orgID, p.Doctype, p.Fieldname, string(probe)).Scan(&by).Error; err != nil {
				return err
			}
			if by != "" {
				return linkExistsf("Cannot delete %s %s: it is linked with %s %s (%s, %s)", doctype, name, p.Doctype, by, p.Fieldname, r.Fieldname)
			}
		}
	}
	return nil
}

// RunMethod runs a whitelisted document method (MethodHook) on a
// document, in its transaction with the document locked; changes the
// method makes to a draft are saved. It needs write permission.
func (s *Service) RunMethod(ctx context.Context, a Actor, orgID uuid.UUID, doctype, name, method string, args map[string]any) (any, error) {
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, PermWrite); err != nil {
		return nil, err
	}
	mh, ok := s.docMethod(doctype, method)
	if !ok {
		return nil, permissionf("Method %s is not whitelisted on %s", show(method), doctype)
	}
	var d *Doc
	var result any
	changed := false
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if d, err = loadDoc(ctx, tx, m, orgID, name, true); err != nil {
			return err
		}
		d.User, d.actor = a.Email, a
		before, _ := json.Marshal(d.Fields)
		if result, err = mh.RunDocMethod(ctx, tx, method, d, args); err != nil {
			return err
		}
		after, _ := json.Marshal(d.Fields)
		if string(before) == string(after) && len(d.passwords) == 0 {
			return nil
		}
		if d.Docstatus != 0 {
			return afterSubmitf("%s %s is not a draft: method %s cannot change it", m.Name, d.Name, method)
		}
		changed = true
		return s.save(ctx, tx, m, a, d)
	})
	if err != nil {
		return nil, s.duplicate(ctx, m, d, err)
	}
	if changed {
		s.publish(ctx, d, EventAfterSave)
	}
	return result, nil
}
