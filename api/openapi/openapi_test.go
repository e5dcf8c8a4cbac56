package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"wharf/api/openapi"
	"wharf/app"
)

func document(t *testing.T) []byte {
	t.Helper()
	return app.APIDescription().OpenAPI()
}

// The document is valid OpenAPI 3.1 for kin-openapi (its 3.1 support:
// the document's structure, references, and every schema, examples and
// defaults checked as JSON Schema 2020-12) and for the OpenAPI
// Initiative's own JSON Schema of 3.1 documents, with Schema Objects
// checked against the OAS dialect of JSON Schema 2020-12.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	b := document(t)

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation()); err != nil {
		t.Fatalf("kin-openapi finds the document invalid: %v", err)
	}

	schema := metaSchema(t)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("the OpenAPI 3.1 schema finds the document invalid: %v", err)
	}
}

// metaSchema compiles the OpenAPI 3.1 schema (testdata/oas3.1/README.md).
func metaSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, name := range []string{"schema", "schema-base", "dialect", "meta"} {
		f, err := os.Open(filepath.Join("testdata", "oas3.1", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(doc.(map[string]any)["$id"].(string), doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile("https://spec.openapis.org/oas/3.1/schema-base/WORK-IN-PROGRESS")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The two checks are not vacuous: each refuses documents with a malformed
// operation, parameter or schema.
func TestValidationRefusesBrokenDocuments(t *testing.T) {
	t.Parallel()
	schema := metaSchema(t)
	for name, breakIt := range map[string]func(doc map[string]any){
		"responses not an object": func(doc map[string]any) {
			op(doc, "/api/me", "get")["responses"] = []any{"200"}
		},
		"schema type unknown": func(doc map[string]any) {
			doc["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)["type"] = "record"
		},
		"parameter without in": func(doc map[string]any) {
			delete(op(doc, "/api/contacts/{id}", "get")["parameters"].([]any)[0].(map[string]any), "in")
		},
	} {
		var doc map[string]any
		if err := json.Unmarshal(document(t), &doc); err != nil {
			t.Fatal(err)
		}
		breakIt(doc)
		if err := schema.Validate(doc); err == nil {
			t.Errorf("%s: the OpenAPI 3.1 schema accepts the broken document", name)
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if kin, err := openapi3.NewLoader().LoadFromData(b); err == nil {
			if err := kin.Validate(context.Background()); err == nil {
				t.Errorf("%s: kin-openapi accepts the broken document", name)
			}
		}
	}
}

func op(doc map[string]any, path, method string) map[string]any {
	return doc["paths"].(map[string]any)[path].(map[string]any)[method].(map[string]any)
}

// Every route of the router table is in the document, with its access,
// credentials, flags and success status, and the document has no
// operation the table lacks.
func TestEveryRouteIsInTheDocument(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]struct {
			Security    []map[string][]string `json:"security"`
			Permission  string                `json:"x-permission"`
			Access      string                `json:"x-access"`
			SessionOnly bool                  `json:"x-session-only"`
			Bulk        bool                  `json:"x-bulk"`
			Responses   map[string]json.RawMessage
		} `json:"paths"`
	}
	dec := json.NewDecoder(bytes.NewReader(document(t)))
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	routes := app.APIDescription().Routes()
	documented := 0
	for _, ops := range doc.Paths {
		documented += len(ops)
	}
	if documented != len(routes) {
		t.Errorf("the document has %d operations, the table %d routes", documented, len(routes))
	}
	for _, r := range routes {
		path := r.Path
		for _, seg := range strings.Split(r.Path, "/") {
			if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "*") { // gin's wildcard, like the generator
				path = strings.Replace(path, seg, "{"+seg[1:]+"}", 1)
			}
		}
		o, ok := doc.Paths[path][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s %s is not in the document", r.Method, r.Path)
			continue
		}
		if o.Permission != r.Access.Permission() {
			t.Errorf("%s %s: x-permission %q, want %q", r.Method, r.Path, o.Permission, r.Access.Permission())
		}
		if o.Access == "" || o.SessionOnly != r.SessionOnly || o.Bulk != r.Bulk {
			t.Errorf("%s %s: x-access %q, session only %v, bulk %v", r.Method, r.Path, o.Access, o.SessionOnly, o.Bulk)
		}
		var schemes []string
		for _, req := range o.Security {
			for name := range req {
				schemes = append(schemes, name)
			}
		}
		want := ""
		switch {
		case r.Access.NeedsAuth() && r.SessionOnly:
			want = "bearerAuth"
		case r.Access.NeedsAuth():
			want = "bearerAuth apiKey"
		}
		if got := strings.Join(schemes, " "); got != want {
			t.Errorf("%s %s: security %q, want %q", r.Method, r.Path, got, want)
		}
		status := r.Status
		if status == 0 {
			status = http.StatusOK
		}
		if _, ok := o.Responses[strconv.Itoa(status)]; !ok {
			t.Errorf("%s %s: no %d answer in the document", r.Method, r.Path, status)
		}
	}
}

// New generates the document once, from the routes it is given and its
// own two.
func TestNewDescribesItsOwnRoutes(t *testing.T) {
	t.Parallel()
	h, err := openapi.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(h.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Paths["/api/openapi.json"]["get"] == nil || doc.Paths["/api/docs"]["get"] == nil || len(doc.Paths) != 2 {
		t.Fatalf("paths %v", doc.Paths)
	}
}
