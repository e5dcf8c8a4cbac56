package phone_test

import (
	"testing"

	"wharf/internal/infra/phone"
)

func TestNormalize(t *testing.T) {
	ok := map[string]string{
		"+1 555 000 1111":    "+15550001111",
		"15550001111":        "+15550001111",
		"+44 20 7946 0958":   "+442079460958",
		"0033 1 23 45 67 89": "+33123456789",
		"+91 (98765) 43210":  "+919876543210",
	}
	for in, want := range ok {
		if got, err := phone.Normalize(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "+1 555", "12", "+999 123456", "555-CALL-NOW", "+1555000111122223333"} {
		if got, err := phone.Normalize(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func TestMask(t *testing.T) {
	if got := phone.Mask("+15551234567"); got != "+155******67" {
		t.Fatalf("mask %q", got)
	}
	if got := phone.MaskName("+1 555 123 4567"); got != "+1 55* *** **67" {
		t.Fatalf("mask name %q", got)
	}
	if got := phone.MaskName("Ann Lee"); got != "Ann Lee" {
		t.Fatalf("name masked: %q", got)
	}
	if phone.LooksLikePhone("Room 101") {
		t.Fatal("Room 101 is not a phone")
	}
}

func TestNumberLike(t *testing.T) {
	for term, want := range map[string]bool{
		"555": true, "+1 555 010-0000": true, "(555) 01.00": true, "5": true,
		"": false, "+-()": false, "Ann": false, "Ann 555": false, "555#": false, "x5": false,
	} {
		if got := phone.NumberLike(term); got != want {
			t.Errorf("NumberLike(%q) = %v, want %v", term, got, want)
		}
	}
}

func TestIsWaID(t *testing.T) {
	for waID, want := range map[string]bool{
		"15550001111": true, "+15550001111": true, "1": true, "123456789012345": true,
		"": false, "+": false, "abc": false, "1555 0001": false, "1234567890123456": false, "١٢٣": false,
	} {
		if got := phone.IsWaID(waID); got != want {
			t.Errorf("IsWaID(%q) = %v, want %v", waID, got, want)
		}
	}
}
