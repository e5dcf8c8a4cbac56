package orgsettings_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// Keywords match a whole trimmed message in any case, opt-out before
// opt-in; anything more than the word is no keyword.
func TestKeywordsMatch(t *testing.T) {
	t.Parallel()
	kw := orgsettings.KeywordsOf(orgsettings.Defaults)
	for _, c := range []struct {
		text          string
		optOut, match bool
	}{
		{"STOP", true, true}, {" stop\n", true, true}, {"Unsubscribe", true, true}, {"arrêt", true, true}, {"ARRÊT", true, true},
		{"baja", true, true}, {"Stopp", true, true}, {"start", false, true}, {" ALTA ", false, true},
		{"stop please", false, false}, {"STOP!", false, false}, {"", false, false}, {"hello", false, false},
	} {
		if out, ok := kw.Match(c.text); out != c.optOut || ok != c.match {
			t.Errorf("Match(%q) = %v %v, want %v %v", c.text, out, ok, c.optOut, c.match)
		}
	}
}

// The keyword settings: the defaults until set, validated (each refusal
// changes nothing), trimmed when stored, and read back by KeywordsIn.
func TestKeywordSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	svc := orgsettings.NewService(f.DB, f.Box, nil, nil)
	org := f.Org()

	kw, err := orgsettings.KeywordsIn(ctx, f.DB, org.ID)
	if err != nil || !reflect.DeepEqual(kw.OptOut, orgsettings.DefaultOptOutKeywords) || !reflect.DeepEqual(kw.OptIn, orgsettings.DefaultOptInKeywords) ||
		kw.OptOutConfirmation != "" {
		t.Fatalf("defaults: %+v, %v", kw, err)
	}

	many := make([]string, orgsettings.MaxKeywords+1)
	for i := range many {
		many[i] = "W" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		u   orgsettings.Update
		msg string
	}{
		{orgsettings.Update{OptOutKeywords: &[]string{}}, "opt_out_keywords must have at least one keyword"},
		{orgsettings.Update{OptOutKeywords: &many}, "opt_out_keywords must have at most 20 keywords"},
		{orgsettings.Update{OptInKeywords: &many}, "opt_in_keywords must have at most 20 keywords"},
		{orgsettings.Update{OptOutKeywords: &[]string{"STOP", "  "}}, "opt_out_keywords[1] is empty"},
		{orgsettings.Update{OptInKeywords: &[]string{strings.Repeat("é", 31)}}, "opt_in_keywords[0] must be at most 30 characters"},
		{orgsettings.Update{OptOutKeywords: &[]string{"Stop", "STOP "}}, `opt_out_keywords has "STOP" twice`},
		{orgsettings.Update{OptOutKeywords: &[]string{"STOP", "go"}, OptInKeywords: &[]string{"GO"}}, `"GO" cannot be both an opt-out and an opt-in keyword`},
		// Against the stored opt-out list when only opt-in changes.
		{orgsettings.Update{OptInKeywords: &[]string{"stop"}}, `"stop" cannot be both an opt-out and an opt-in keyword`},
		{orgsettings.Update{OptOutConfirmation: ptr(strings.Repeat("a", 1025))}, "opt_out_confirmation must be at most 1024 characters"},
		{orgsettings.Update{OptInConfirmation: ptr(strings.Repeat("a", 1025)), OptOutKeywords: &[]string{"QUIT"}}, "opt_in_confirmation must be at most 1024 characters"},
	} {
		testfactory.WantError(t, svc.Apply(ctx, org.ID, c.u), apperr.Invalid, c.msg)
	}
	if _, st, _ := svc.Get(ctx, org.ID); !reflect.DeepEqual(st, orgsettings.Defaults) {
		t.Fatalf("refused updates changed the settings: %+v", st)
	}

	err = svc.Apply(ctx, org.ID, orgsettings.Update{OptOutKeywords: &[]string{" QUIT ", "halt"}, OptInKeywords: &[]string{}, OptOutConfirmation: ptr(" You are out. "),
		OptInConfirmation: ptr("Welcome back")})
	if err != nil {
		t.Fatal(err)
	}
	kw, err = orgsettings.KeywordsIn(ctx, f.DB, org.ID)
	if err != nil || !reflect.DeepEqual(kw.OptOut, []string{"QUIT", "halt"}) || len(kw.OptIn) != 0 || kw.OptOutConfirmation != "You are out." ||
		kw.OptInConfirmation != "Welcome back" {
		t.Fatalf("after the update: %+v, %v", kw, err)
	}
	if _, ok := kw.Match("stop"); ok {
		t.Fatal("STOP is no longer a keyword of this organization")
	}
	if out, ok := kw.Match("Halt"); !out || !ok {
		t.Fatal("Halt opts out")
	}
}
