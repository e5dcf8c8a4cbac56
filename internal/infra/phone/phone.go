// Package phone normalises phone numbers to E.164 and masks them for
// organizations that hide numbers from their staff.
package phone

import (
	"errors"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// ErrInvalid is returned for input that is not a possible phone number.
var ErrInvalid = errors.New("not a valid phone number in international format")

// Normalize returns the E.164 form ("+15551234567") of an international
// number written with or without "+", spaces, dashes, dots or parentheses.
// Numbers are checked for a possible length for their country, not for being
// assigned, so test ranges such as +1 555 01xx pass.
func Normalize(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", ErrInvalid
	}
	if !strings.HasPrefix(s, "+") {
		s = "+" + strings.TrimPrefix(s, "00")
	}
	for _, r := range s[1:] {
		if !unicode.IsDigit(r) && !strings.ContainsRune(" -.()", r) {
			return "", ErrInvalid
		}
	}
	num, err := phonenumbers.Parse(s, "")
	if err != nil || !phonenumbers.IsPossibleNumber(num) {
		return "", ErrInvalid
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

// Digits returns the number without "+" as the provider wants it ("to",
// "wa_id").
func Digits(e164 string) string { return strings.TrimPrefix(e164, "+") }

// IsWaID reports whether a provider wa_id can be a phone number: 1 to 15
// digits (E.164's most), with or without "+".
func IsWaID(waID string) bool {
	d := strings.TrimPrefix(waID, "+")
	if d == "" || len(d) > 15 {
		return false
	}
	for _, r := range d {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// FromWaID turns a provider wa_id into E.164.
func FromWaID(waID string) string { return "+" + strings.TrimPrefix(waID, "+") }

// Mask hides the middle of a number, keeping the first 3 and last 2 digits:
// "+15551234567" becomes "+155******67".
func Mask(number string) string {
	var digits int
	for _, r := range number {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	if digits < 6 {
		return strings.Repeat("*", len(number))
	}
	var b strings.Builder
	seen := 0
	for _, r := range number {
		if !unicode.IsDigit(r) {
			b.WriteRune(r)
			continue
		}
		seen++
		if seen <= 3 || seen > digits-2 {
			b.WriteRune(r)
		} else {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// LooksLikePhone reports whether a name is really a phone number (profile
// names often are): mostly digits, at least 7 of them.
func LooksLikePhone(s string) bool {
	var digits, other int
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune("+ -.()", r):
		default:
			other++
		}
	}
	return digits >= 7 && other == 0
}

// MaskName masks a name when it looks like a phone number.
func MaskName(s string) string {
	if LooksLikePhone(s) {
		return Mask(s)
	}
	return s
}

// NumberLike reports whether a search term can only be a phone number or a
// part of one: digits and the punctuation numbers are written with
// ("+ -.()"), at least one digit. Where an organization masks numbers, such
// a term must match a whole number, never a fragment: answering which
// contacts a fragment matches would reveal the masked digits, a few at a
// time. A term with any other character cannot match inside a masked value
// (a number, or a name that LooksLikePhone) and may search names as usual.
func NumberLike(term string) bool {
	digits := 0
	for _, r := range term {
		switch {
		case unicode.IsDigit(r):
			digits++
		case !strings.ContainsRune("+ -.()", r):
			return false
		}
	}
	return digits > 0
}
