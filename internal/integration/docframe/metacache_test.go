package docframe_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
)

// replicas answers two frameworks over one database and one Redis, as two
// api processes are: a (the bundle's, which changes DocTypes) and another
// that inserts. Both cache DocType definitions.
func replicas(t *testing.T) (*bundle, *docframe.Service) {
	t.Helper()
	b := setup(t)
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	opts := docframe.Options{Hooks: []docframe.Hook{b.hook}, Events: b.sink, Log: testenv.Quiet(), Redis: rdb, CacheMaxAge: time.Hour}
	var err error
	if b.svc, err = docframe.New(b.f.DB, b.f.Box, opts); err != nil {
		t.Fatal(err)
	}
	other, err := docframe.New(b.f.DB, b.f.Box, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b, other
}

// doctypeReads counts the statements on db that read DocType definitions.
func doctypeReads(t *testing.T, db *gorm.DB) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	count := func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), "docframe_doctypes") {
			n.Add(1)
		}
	}
	if err := db.Callback().Query().After("gorm:query").Register("test:doctype_reads", count); err != nil {
		t.Fatal(err)
	}
	if err := db.Callback().Raw().After("gorm:raw").Register("test:doctype_reads", count); err != nil {
		t.Fatal(err)
	}
	if err := db.Callback().Row().After("gorm:row").Register("test:doctype_reads", count); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDocTypeChangesAreSeenByTheNextInsertInAnyProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, other := replicas(t)
	for _, def := range []string{
		`{"name": "Gadget Part", "istable": 1, "fields": [{"fieldname": "part", "fieldtype": "Data"}]}`,
		`{"name": "Gadget", "fields": [{"fieldname": "title", "fieldtype": "Data", "reqd": 1},
		  {"fieldname": "parts", "fieldtype": "Table", "options": "Gadget Part"}]}`,
	} {
		if _, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "", obj(t, def), true); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(body string) (map[string]any, error) {
		return other.Insert(ctx, b.admin, b.org.ID, "Gadget", obj(t, body))
	}
	// The other process reads the definition once, then serves it from
	// memory: no statement reads docframe_doctypes.
	for range 2 {
		if _, err := insert(`{"title": "warm"}`); err != nil {
			t.Fatal(err)
		}
	}
	reads := doctypeReads(t, b.f.DB)
	for range 3 {
		if _, err := insert(`{"title": "cached", "parts": [{"part": "p"}]}`); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("%d statements read DocTypes for inserts of a cached DocType, want 0", n)
	}

	// A new mandatory Select field, added by this process, binds the other
	// process's very next insert.
	if _, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "Gadget", obj(t, `{"fields": [
		{"fieldname": "title", "fieldtype": "Data", "reqd": 1},
		{"fieldname": "parts", "fieldtype": "Table", "options": "Gadget Part"},
		{"fieldname": "color", "fieldtype": "Select", "options": "Red\nBlue", "reqd": 1}]}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := insert(`{"title": "no color"}`); err == nil {
		t.Error("an insert without the new mandatory field was accepted")
	}
	if _, err := insert(`{"title": "green", "color": "Green"}`); err == nil {
		t.Error("a value outside the new Select's options was accepted")
	}
	d, err := insert(`{"title": "red", "color": "Red"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d["color"] != "Red" {
		t.Errorf("color %v, want Red", d["color"])
	}

	// A change of the child table alone reaches the parent's entry.
	if _, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "Gadget Part", obj(t, `{"fields": [
		{"fieldname": "part", "fieldtype": "Data"}, {"fieldname": "qty", "fieldtype": "Int", "reqd": 1}]}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := insert(`{"title": "t", "color": "Red", "parts": [{"part": "p"}]}`); err == nil {
		t.Error("a row without the child table's new mandatory field was accepted")
	}

	// A deleted DocType is gone for the other process at once, and one
	// created anew is there at once (absence is cached too).
	if _, err := other.Insert(ctx, b.admin, b.org.ID, "Widget", obj(t, `{}`)); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("insert of a missing DocType: %v, want not found", err)
	}
	if _, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "", obj(t, `{"name": "Widget", "fields": [{"fieldname": "w", "fieldtype": "Data"}]}`), true); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Insert(ctx, b.admin, b.org.ID, "Widget", obj(t, `{"w": "x"}`)); err != nil {
		t.Fatalf("insert right after the DocType's creation: %v", err)
	}
	if err := b.svc.Delete(ctx, b.admin, b.org.ID, "Widget", mustName(t, other, b, "Widget")); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.DeleteDocType(ctx, b.admin, b.org.ID, "Widget"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Insert(ctx, b.admin, b.org.ID, "Widget", obj(t, `{"w": "y"}`)); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("insert right after the DocType's deletion: %v, want not found", err)
	}
}

// mustName answers the name of the one document of doctype.
func mustName(t *testing.T, svc *docframe.Service, b *bundle, doctype string) string {
	t.Helper()
	found, err := svc.Find(context.Background(), nil, docframe.Filter{OrganizationID: b.org.ID, Doctype: doctype})
	if err != nil || len(found) != 1 {
		t.Fatalf("find %s: %v %v", doctype, found, err)
	}
	return found[0].Name
}

// TestDocTypeTableHasNoOtherWriters keeps the premise of the cache's
// transaction rule (metacache.go): DocType definitions are written only by
// doctype.go's SaveDocType, EnsureDocType and DeleteDocType, in
// transactions of their own, so no caller's transaction has changed a
// DocType before it reads one through the cache.
func TestDocTypeTableHasNoOtherWriters(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	write := regexp.MustCompile(`(?is)(insert\s+into|update|delete\s+from|truncate|alter\s+table)\s+docframe_doctypes\b|&doctypeRow\{`)
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == "node_modules" || strings.HasPrefix(e.Name(), ".")) {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("internal", "integration", "docframe", "doctype.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := write.FindIndex(src); loc != nil {
			t.Errorf("%s writes docframe_doctypes (%q): DocType changes must go through doctype.go, which replaces the cache's version",
				rel, src[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
