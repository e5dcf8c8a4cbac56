package api_test

import (
	"reflect"
	"strings"
	"testing"

	"wharf/app"
)

// Every route of the table describes itself for the OpenAPI document: a
// one-line summary, typed request and response values (never a map for the
// answer, which would say nothing of its fields), and query structs whose
// every field names its parameter and describes it.
func TestEveryRouteIsDescribed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range app.APIDescription().Routes() {
		name := r.Method + " " + r.Path
		if seen[name] {
			t.Errorf("%s is in the table twice", name)
		}
		seen[name] = true
		if r.Handler == nil {
			t.Errorf("%s has no handler", name)
		}
		if r.Summary == "" || strings.Contains(r.Summary, "\n") {
			t.Errorf("%s: summary %q, want one line", name, r.Summary)
		}
		if r.Response != nil && reflect.TypeOf(r.Response).Kind() == reflect.Map {
			t.Errorf("%s: the response is a map (%T), want a struct", name, r.Response)
		}
		if r.Request != nil {
			if k := reflect.TypeOf(r.Request).Kind(); k != reflect.Struct {
				t.Errorf("%s: the request is a %s, want a struct", name, k)
			}
		}
		if r.Query != nil {
			checkQuery(t, name, reflect.TypeOf(r.Query))
		}
	}
}

func checkQuery(t *testing.T, route string, typ reflect.Type) {
	t.Helper()
	if typ.Kind() != reflect.Struct {
		t.Errorf("%s: the query is a %s, want a struct", route, typ.Kind())
		return
	}
	for f := range typ.Fields() {
		if f.Anonymous {
			checkQuery(t, route, f.Type)
			continue
		}
		if f.Tag.Get("query") == "" || f.Tag.Get("description") == "" {
			t.Errorf("%s: query field %s lacks a query or description tag", route, f.Name)
		}
	}
}
