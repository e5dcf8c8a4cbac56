package chatbot

import (
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/apperr"
	"wharf/internal/testfactory"
	"wharf/models"
)

func TestMatchTypes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, keyword, text string
		want               bool
	}{
		{"exact", "Hello", " hello ", true}, {"exact", "hello", "hello there", false},
		{"contains", "PRICE", "what is the price?", true}, {"contains", "price", "prize", false},
		{"starts_with", "order", "Order 12", true}, {"starts_with", "order", "my order", false},
		{"regex", `^order\s+#?\d+$`, "ORDER #12", true}, {"regex", `^order\s+#?\d+$`, "order twelve", false},
		{"regex", "(unclosed", "(unclosed", false},
	} {
		if got := matches(c.typ, []string{c.keyword}, c.text); got != c.want {
			t.Errorf("%s %q on %q: %v, want %v", c.typ, c.keyword, c.text, got, c.want)
		}
	}
	// Input past the bound is cut, not scanned: a long text still matches in
	// its first part and costs no more than the bound.
	if !matches("regex", []string{"^a+$"}, strings.Repeat("a", 10*maxMatchText)) {
		t.Error("bounded input")
	}
}

func TestBusinessHours(t *testing.T) {
	t.Parallel()
	hours := []models.BusinessHours{{Day: 1, Open: "09:00", Close: "17:30"}}
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for hm, want := range map[string]bool{"08:59": false, "09:00": true, "17:29": true, "17:30": false} {
		d, _ := time.ParseDuration(hm[:2] + "h" + hm[3:] + "m")
		if got := isOpen(hours, monday.Add(d)); got != want {
			t.Errorf("Monday %s: %v, want %v", hm, got, want)
		}
	}
	if isOpen(hours, monday.Add(24*time.Hour+10*time.Hour)) {
		t.Error("Tuesday is closed")
	}
	testfactory.WantError(t, validHours([]models.BusinessHours{{Day: 7, Open: "09:00", Close: "10:00"}}), apperr.Invalid, "day must be")
	testfactory.WantError(t, validHours([]models.BusinessHours{{Day: 1, Open: "10:00", Close: "09:00"}}), apperr.Invalid, "open before close")
}

func TestButtonsValidation(t *testing.T) {
	t.Parallel()
	many := make([]models.ChatButton, 11)
	for i := range many {
		many[i] = models.ChatButton{Title: strings.Repeat("b", i+1)}
	}
	_, err := Buttons("greeting_buttons", many, 0)
	testfactory.WantError(t, err, apperr.Invalid, "at most 10 buttons")
	_, err = Buttons("greeting_buttons", []models.ChatButton{{Title: strings.Repeat("x", 21)}}, 0)
	testfactory.WantError(t, err, apperr.Invalid, "at most 20 characters")
	_, err = Buttons("b", []models.ChatButton{{Title: "Yes"}, {Title: "yes"}}, 0)
	testfactory.WantError(t, err, apperr.Invalid, "must differ")
	got, err := Buttons("b", []models.ChatButton{{Title: " Yes "}, {ID: "keep", Title: "No"}}, 1)
	if err != nil || got[0].Title != "Yes" || got[0].ID == "" || got[1].ID != "keep" {
		t.Fatalf("%+v, %v", got, err)
	}
}
