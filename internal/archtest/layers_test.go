package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "wharf/"

// The layers, from the top. A package may import packages of the layers
// below its own, never above; within a layer only where the rule below says
// so. docs/ARCHITECTURE.md ("Layering") states the same table.
const (
	layerCmd         = "cmd"             // cmd/*: the mains
	layerApp         = "app"             // app: builds each binary
	layerProcess     = "process"         // api, worker, scheduler, callbridge: never one another
	layerHandlers    = "api/<domain>api" // one handler package per domain: never one another
	layerModule      = "module"          // the shape of a domain's module: routes, jobs, consumers, schedules
	layerWeb         = "api/web"
	layerDomain      = "internal/<domain>" // ordered among themselves by domainRank
	layerShared      = "internal/<shared>"
	layerBase        = "jobs, models, platform, migrations"
	layerSimulator   = "platformsim"  // imports nothing of ours
	layerTestSupport = "test support" // imported by tests only
	layerTests       = "tests"        // e2e/*, bench: packages of tests
)

// rank orders the layers that may import downward; test support and tests
// may import anything, the simulator nothing.
var rank = map[string]int{layerCmd: 0, layerApp: 1, layerProcess: 2, layerHandlers: 3, layerModule: 4, layerWeb: 5, layerDomain: 6, layerShared: 7, layerBase: 8}

// domainRank orders the domain packages as they are: a domain imports only
// domains of a lower rank. campaigns and messaging may import templates,
// inbound, accounts and contacts; inbound imports none of its consumers
// (messaging, campaigns, templates); nothing imports messaging or campaigns.
var domainRank = map[string]int{
	"orgsettings": 0, "webhooks": 0, "integration/docframe": 0,
	"identity": 1, "accounts": 1, "contacts": 1, "teams": 1, "integration/notify": 1,
	"inbound": 2, "canned": 2, "customactions": 2, "transfers": 2, "dataops": 2, "pflows": 2, "catalogs": 2, "widgets": 2, "outbound": 2,
	"templates": 3, "calling": 3,
	"messaging": 4, "campaigns": 4,
	"chatbot": 5, "integration/messages": 5, "integration/bulk": 5,
}

// shared are the internal packages below the domains, in internal/infra:
// they import no domain.
var shared = []string{"apperr", "tenant", "paging", "statuses", "secrets", "ratelimit", "authguard", "audio", "storage",
	"safehttp", "phone", "config", "database", "metrics", "memo", "versioned", "ai", "live"}

var testSupport = []string{"internal/testenv", "internal/testfactory", "internal/apptest", "internal/archtest", "internal/infra/metrics/metricstest",
	// The old paths of moved packages (moved.go): the few names test suites
	// written against them use, forwarded; only tests may import them.
	"internal/wharfnotify", "internal/docframe", "internal/storage", "internal/phone", "internal/ai", "internal/live"}

// layerOf places a package of the module (its path without "wharf/"), or
// returns "" for a package the table does not know.
func layerOf(path string) string {
	first, rest, _ := strings.Cut(path, "/")
	switch {
	case first == "cmd":
		return layerCmd
	case path == "app":
		return layerApp
	case path == "api" || path == "worker" || path == "scheduler" || path == "callbridge":
		return layerProcess
	case path == "callbridge/media": // pion and the relay: nothing of ours
		return layerShared
	case path == "api/web":
		return layerWeb
	case path == "module":
		return layerModule
	case path == "api/console": // the web console's files: imports nothing of ours
		return layerHandlers
	case first == "api" && strings.HasSuffix(rest, "api") && !strings.Contains(rest, "/"):
		return layerHandlers
	case slices.Contains(testSupport, path):
		return layerTestSupport
	case first == "internal":
		if _, ok := domainRank[rest]; ok {
			return layerDomain
		}
		if name, ok := strings.CutPrefix(rest, "infra/"); ok && slices.Contains(shared, name) {
			return layerShared
		}
	case path == "jobs" || path == "models" || path == "platform" || path == "migrations":
		return layerBase
	case path == "platformsim" || path == "platformsim/rtcpeer":
		return layerSimulator
	case first == "e2e" || path == "bench":
		return layerTests
	}
	return ""
}

// pkg is what the rules read of `go list -json`: the imports of the
// package's own files (its tests may import the test support), and those
// files, whose SQL the table rule reads.
type pkg struct {
	ImportPath string
	Imports    []string
	Dir        string
	GoFiles    []string
}

// violations lists every import of pkgs against the rule, one sentence
// each, naming the package and the import.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		path, ours := strings.CutPrefix(p.ImportPath, module)
		if !ours {
			continue
		}
		layer := layerOf(path)
		if layer == "" {
			out = append(out, fmt.Sprintf("%s is in no layer: place it in internal/archtest and the Layering section of docs/ARCHITECTURE.md", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			if why := forbidden(path, layer, imp); why != "" {
				out = append(out, fmt.Sprintf("%s imports %s: %s", p.ImportPath, imp, why))
			}
		}
	}
	return out
}

// forbidden says why path (in layer) must not import imp, or "".
func forbidden(path, layer, imp string) string {
	to, ours := strings.CutPrefix(imp, module)
	if !ours {
		if strings.HasPrefix(imp, "gorm.io/") && (path == "api" || strings.HasPrefix(path, "api/")) {
			return "the HTTP layer reaches the database only through domain services"
		}
		return ""
	}
	toLayer := layerOf(to)
	switch {
	case toLayer == "":
		return "it is in no layer" // reported for the package itself too
	case layer == layerTestSupport || layer == layerTests:
		return ""
	case toLayer == layerTestSupport || toLayer == layerTests:
		return "only tests import the test support"
	case layer == layerSimulator && toLayer == layerSimulator:
		return "" // platformsim's phones are platformsim/rtcpeer peers
	case layer == layerSimulator:
		return "the simulator stands in for the provider and imports nothing of ours"
	case toLayer == layerSimulator:
		if layer == layerCmd {
			return "" // cmd/platformsim
		}
		return "only cmd/platformsim and tests run the simulator"
	case layer == layerBase:
		return "jobs, models, platform and migrations import nothing of ours (jobs knows no domain)"
	case layer == layerDomain && toLayer == layerDomain:
		from, dep := strings.TrimPrefix(path, "internal/"), strings.TrimPrefix(to, "internal/")
		if domainRank[dep] < domainRank[from] {
			return ""
		}
		return fmt.Sprintf("domain %s (rank %d) may import only domains of a lower rank; %s has rank %d", from, domainRank[from], dep, domainRank[dep])
	case layer == toLayer && layer == layerShared:
		return "" // shared packages build on one another (tenant on apperr, authguard on ratelimit)
	case layer == toLayer:
		return fmt.Sprintf("packages of the layer %q do not import one another (api and worker never do)", layer)
	case rank[toLayer] < rank[layer]:
		return fmt.Sprintf("%s (layer %q) may not import the layer %q above it", path, layer, toLayer)
	}
	return ""
}

// list runs `go list -json ./...` at the module root, once for the tests
// of the package (the layering and the table rule read it).
func list(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var listed = sync.OnceValues(func() ([]pkg, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

// Every package of the module is placed in a layer and imports only what
// its layer may.
func TestLayering(t *testing.T) {
	t.Parallel()
	pkgs := list(t)
	if len(pkgs) < 40 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The rule itself refuses each kind of forbidden import, so that a
// TestLayering that passes means something.
func TestTheRuleRefusesForbiddenImports(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, imp, want string }{
		{"internal/accounts", "wharf/internal/campaigns", "domain accounts (rank 1) may import only domains of a lower rank"},
		{"internal/identity", "wharf/internal/accounts", "domain identity (rank 1) may import only domains of a lower rank"},
		{"internal/inbound", "wharf/internal/messaging", "domain inbound (rank 2)"},
		{"internal/infra/apperr", "wharf/internal/contacts", `may not import the layer "internal/<domain>" above it`},
		{"jobs", "wharf/internal/campaigns", "jobs, models, platform and migrations import nothing of ours"},
		{"models", "wharf/internal/infra/apperr", "import nothing of ours"},
		{"api", "wharf/worker", "do not import one another"},
		{"worker", "wharf/api", "do not import one another"},
		{"api/contactsapi", "wharf/api/campaignsapi", "do not import one another"},
		{"api/web", "wharf/api/contactsapi", "above it"},
		{"api/contactsapi", "gorm.io/gorm", "only through domain services"},
		{"internal/campaigns", "wharf/api/web", "above it"},
		{"internal/campaigns", "wharf/internal/testfactory", "only tests import the test support"},
		{"platformsim", "wharf/platform", "imports nothing of ours"},
		{"internal/messaging", "wharf/platformsim", "only cmd/platformsim and tests"},
		{"app", "wharf/cmd/api", "above it"},
		{"module", "wharf/api/campaignsapi", "above it"},
		{"internal/campaigns", "wharf/module", "above it"},
	} {
		got := violations([]pkg{{ImportPath: module + c.from, Imports: []string{c.imp}}})
		if len(got) != 1 || !strings.Contains(got[0], c.from+" imports "+c.imp) || !strings.Contains(got[0], c.want) {
			t.Errorf("%s importing %s: %q, want one violation saying %q", c.from, c.imp, got, c.want)
		}
	}
	for _, c := range []struct{ from, imp string }{
		{"internal/campaigns", "wharf/internal/templates"},
		{"internal/messaging", "wharf/internal/inbound"},
		{"internal/infra/tenant", "wharf/internal/infra/apperr"},
		{"api/web", "wharf/internal/identity"},
		{"api/campaignsapi", "wharf/module"},
		{"module", "wharf/internal/inbound"},
		{"app", "wharf/module"},
		{"cmd/platformsim", "wharf/platformsim"},
		{"internal/apptest", "wharf/app"},
		{"e2e/campaigns", "wharf/internal/apptest"},
	} {
		if got := violations([]pkg{{ImportPath: module + c.from, Imports: []string{c.imp}}}); len(got) != 0 {
			t.Errorf("%s importing %s refused: %q", c.from, c.imp, got)
		}
	}
	if got := violations([]pkg{{ImportPath: module + "internal/newthing"}}); len(got) != 1 || !strings.Contains(got[0], "is in no layer") {
		t.Errorf("an unplaced package: %q", got)
	}
}
