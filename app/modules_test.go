package app

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"wharf/internal/infra/config"
	"wharf/module"
)

// taskTypes reads the task types jobs declares (its Type constants).
func taskTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../jobs/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("jobs' files: %v", err)
	}
	decl := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Type[A-Za-z]+\s*=\s*"([^"]+)"`)
	var types []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			types = append(types, m[1])
		}
	}
	return types
}

// The modules, as the worker registers them, handle every task type jobs
// declares exactly once, and the scheduler fires what they handle.
func TestModulesHandleEveryTaskTypeOnce(t *testing.T) {
	t.Parallel()
	mods := modules(&domains{}, config.Campaigns{SweepInterval: 30 * time.Second}, apiParts{})
	handled := map[string]int{}
	for _, h := range module.Jobs(mods) {
		handled[h.Type]++
	}
	types := taskTypes(t)
	if len(types) < 30 {
		t.Fatalf("found only %d task types in jobs", len(types))
	}
	for _, typ := range types {
		if handled[typ] != 1 {
			t.Errorf("the task type %s has %d handlers in the modules, want 1", typ, handled[typ])
		}
	}
	for typ := range handled {
		if !slices.Contains(types, typ) {
			t.Errorf("a module handles %s, which jobs does not declare", typ)
		}
	}
	// Every periodic job the scheduler ran before the modules, each once,
	// with a spec the scheduler accepts and a payload a module handles.
	want := []string{"start due campaigns", "campaign sweep", "campaign replies", "purge refresh tokens", "purge imports",
		"inbound sweep", "chatbot sweep", "webhook events sweep", "notifications", "unconfirmed sends sweep", "media fetch sweep",
		"unsubmitted templates sweep", "docframe index sweep"}
	var names []string
	for _, s := range module.Schedules(mods) {
		names = append(names, s.Name)
		if _, err := cron.ParseStandard(s.Spec); err != nil {
			t.Errorf("schedule %q: spec %q: %v", s.Name, s.Spec, err)
		}
		if typ := s.Job(time.Now()).TaskType(); handled[typ] != 1 {
			t.Errorf("schedule %q enqueues %s, which %d handlers handle", s.Name, typ, handled[typ])
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("schedules %q, want %q", names, want)
	}
}

// inbound sees the consumers in module order, which keeps the order the
// consumers need: messaging stores and applies first, campaigns get the
// statuses messaging did not match, the chatbot sees stored messages, and
// the integration copies incoming messages last.
func TestModulesConsumersInOrder(t *testing.T) {
	t.Parallel()
	var names []string
	for _, c := range module.Consumers(modules(&domains{}, config.Campaigns{}, apiParts{})) {
		names = append(names, c.ConsumerName())
	}
	want := []string{"messaging", "campaigns", "chatbot", "calling", "templates+wharfapp", "wharfapp"}
	if !slices.Equal(names, want) {
		t.Errorf("consumers %q, want %q", names, want)
	}
}
