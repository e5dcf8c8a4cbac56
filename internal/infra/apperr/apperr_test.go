package apperr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipNeverSplitsARune(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"é", 1, ""},     // a 2-byte rune does not fit in 1 byte
		{"aéb", 2, "a"},  // cut inside é: drop its first byte
		{"日本語", 7, "日本"}, // cut after one byte of 語
		{"x🙂y", 4, "x"},  // 4-byte rune cut after 3 bytes
		{strings.Repeat("ü", 600), 1000, strings.Repeat("ü", 500)},
		{"bad \xff byte", 20, "bad  byte"}, // invalid input is made storable
		{"\xffabc", 3, "ab"},               // ...without losing what follows it
	}
	for _, c := range cases {
		got := Clip(c.in, c.n)
		if got != c.want || len(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q; want %q", c.in, c.n, got, c.want)
		}
	}
	// Odd-length cut of a long run of 2-byte runes, as a provider's localized
	// error detail would be: the result must still be storable text.
	if got := Clip(strings.Repeat("ü", 600), 999); len(got) != 998 || !utf8.ValidString(got) {
		t.Errorf("Clip of 600 ü to 999 bytes: %d bytes, valid=%v", len(got), utf8.ValidString(got))
	}
}
