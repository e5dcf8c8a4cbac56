package api_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The HTTP layer talks to domain services, never to the database: no
// package under api/ imports gorm (the domains return apperr errors, which
// web.Fail maps; readiness comes in as a ping function).
func TestAPIDoesNotImportGorm(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "wharf/api/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list found only %d packages under api/:\n%s", len(lines), out)
	}
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, ": ")
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "gorm.io/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}
