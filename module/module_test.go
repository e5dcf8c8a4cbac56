package module_test

import (
	"slices"
	"testing"

	"wharf/api/web"
	"wharf/internal/inbound"
	"wharf/jobs"
	"wharf/module"
)

type consumer string

func (c consumer) ConsumerName() string { return string(c) }

// The lists keep module order, and each route carries its module's tag
// without the module's own routes being changed.
func TestListsKeepModuleOrder(t *testing.T) {
	t.Parallel()
	a := module.Module{Tag: "A", Routes: []web.Route{{Method: "GET", Path: "/a1"}, {Method: "GET", Path: "/a2"}},
		Consumers: []inbound.Consumer{consumer("a")},
		Schedules: []jobs.Schedule{{Name: "a"}}}
	b := module.Module{Tag: "B", Routes: []web.Route{{Method: "GET", Path: "/b", Tag: "other"}},
		Jobs:      []jobs.Handler{{Type: "b:job"}},
		Consumers: []inbound.Consumer{consumer("b1"), consumer("b2")}}
	mods := []module.Module{a, b}
	var got []string
	for _, r := range module.Routes(mods) {
		got = append(got, r.Tag+" "+r.Path)
	}
	if want := []string{"A /a1", "A /a2", "B /b"}; !slices.Equal(got, want) {
		t.Errorf("routes %q, want %q", got, want)
	}
	if b.Routes[0].Tag != "other" {
		t.Errorf("the module's own route was retagged: %q", b.Routes[0].Tag)
	}
	got = nil
	for _, c := range module.Consumers(mods) {
		got = append(got, c.ConsumerName())
	}
	if want := []string{"a", "b1", "b2"}; !slices.Equal(got, want) {
		t.Errorf("consumers %q, want %q", got, want)
	}
	if j := module.Jobs(mods); len(j) != 1 || j[0].Type != "b:job" {
		t.Errorf("jobs %v", j)
	}
	if s := module.Schedules(mods); len(s) != 1 || s[0].Name != "a" {
		t.Errorf("schedules %v", s)
	}
}
