package live

import (
	"slices"
	"testing"

	"github.com/google/uuid"
)

// The audience rules, one case per rule: permissions, the contact rule
// (contacts:read, or an owner), the team rule (transfers:assign, no team,
// one's team, one's own transfer) and the single user.
func TestViewerSees(t *testing.T) {
	me, other, team, otherTeam := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	viewer := func(perms ...string) Viewer {
		return Viewer{UserID: me, Can: func(p string) bool { return slices.Contains(perms, p) }, Teams: []uuid.UUID{team}}
	}
	ev := func(a Audience) *Event { return &Event{Type: MessageCreated, Audience: a} }
	for _, c := range []struct {
		name string
		v    Viewer
		a    Audience
		want bool
	}{
		{"no rule", viewer(), Audience{}, true},
		{"missing permission", viewer("contacts:read"), Audience{AnyPerm: []string{"messages:read"}}, false},
		{"one of the permissions", viewer("b"), Audience{AnyPerm: []string{"a", "b"}}, true},
		{"all contacts", viewer("messages:read", "contacts:read"), Audience{AnyPerm: []string{"messages:read"}, ContactScoped: true}, true},
		{"not my contact", viewer("messages:read"), Audience{AnyPerm: []string{"messages:read"}, ContactScoped: true, Owners: []uuid.UUID{other}}, false},
		{"my contact", viewer("messages:read"), Audience{AnyPerm: []string{"messages:read"}, ContactScoped: true, Owners: []uuid.UUID{other, me}}, true},
		{"general queue", viewer("transfers:read"), Audience{AnyPerm: []string{"transfers:read"}, TeamScoped: true}, true},
		{"my team", viewer("transfers:read"), Audience{AnyPerm: []string{"transfers:read"}, TeamScoped: true, Team: &team}, true},
		{"another team", viewer("transfers:read"), Audience{AnyPerm: []string{"transfers:read"}, TeamScoped: true, Team: &otherTeam}, false},
		{"another team's, assigned to me", viewer("transfers:read"), Audience{TeamScoped: true, Team: &otherTeam, Agent: &me}, true},
		{"another team's, assigned to another", viewer("transfers:read"), Audience{TeamScoped: true, Team: &otherTeam, Agent: &other}, false},
		{"another team's, supervisor", viewer("transfers:read", "transfers:assign"), Audience{TeamScoped: true, Team: &otherTeam}, true},
		{"for me", viewer(), Audience{User: &me}, true},
		{"for another", viewer(), Audience{User: &other}, false},
	} {
		if got := c.v.Sees(ev(c.a)); got != c.want {
			t.Errorf("%s: Sees = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAfterOrdersStreamPositions(t *testing.T) {
	for _, c := range []struct {
		id, last string
		want     bool
	}{
		{"2-0", "1-5", true}, {"1-5", "1-5", false}, {"1-6", "1-5", true}, {"10-0", "9-9", true}, {"9-0", "10-0", false},
		{"x", "1-0", false}, {"1-0", "", true},
	} {
		if got := After(c.id, c.last); got != c.want {
			t.Errorf("After(%q, %q) = %v", c.id, c.last, got)
		}
	}
}
