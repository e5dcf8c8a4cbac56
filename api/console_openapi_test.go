package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"wharf/app"
)

// TestConsoleOpenAPIIsCurrent keeps console/src/api/openapi.json, from which
// the console's typed client is generated at build (openapi-typescript, then
// vue-tsc, which fails when a console call no longer matches the API), equal
// to the document the api serves. Regenerate with
// UPDATE_DOCS=1 go test ./api -run TestConsoleOpenAPIIsCurrent.
func TestConsoleOpenAPIIsCurrent(t *testing.T) {
	const path = "../console/src/api/openapi.json"
	var want bytes.Buffer
	if err := json.Indent(&want, app.APIDescription().OpenAPI(), "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	got, err := os.ReadFile(path)
	if err == nil && bytes.Equal(got, want.Bytes()) {
		return
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is out of date with the route table (%v): run UPDATE_DOCS=1 go test ./api -run TestConsoleOpenAPIIsCurrent", path, err)
}
