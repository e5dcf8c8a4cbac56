package secrets_test

import (
	"errors"
	"maps"
	"testing"

	"wharf/internal/infra/secrets"
)

func TestMaskHeadersHidesEveryValue(t *testing.T) {
	in := map[string]string{"Authorization": "Bearer s3cret", "X-Tenant": "acme", "X-Empty": ""}
	got := secrets.MaskHeaders(in)
	want := map[string]string{"Authorization": secrets.Mask, "X-Tenant": secrets.Mask, "X-Empty": ""}
	if !maps.Equal(got, want) {
		t.Fatalf("masked %v", got)
	}
	if in["Authorization"] != "Bearer s3cret" {
		t.Fatal("the stored map was changed")
	}
}

func TestKeepHeaders(t *testing.T) {
	stored := map[string]string{"Authorization": "Bearer s3cret", "X-Tenant": "acme"}
	// The mask keeps the stored value (any case), a new value replaces it,
	// a header left out is gone.
	got, err := secrets.KeepHeaders(map[string]string{"authorization": secrets.Mask, "X-New": "v"}, stored, true)
	if err != nil || !maps.Equal(got, map[string]string{"authorization": "Bearer s3cret", "X-New": "v"}) {
		t.Fatalf("kept %v, %v", got, err)
	}
	got, err = secrets.KeepHeaders(map[string]string{"Authorization": "Bearer new"}, stored, false)
	if err != nil || got["Authorization"] != "Bearer new" {
		t.Fatalf("replaced %v, %v", got, err)
	}
	if _, err := secrets.KeepHeaders(map[string]string{"X-Other": secrets.Mask}, stored, true); !errors.Is(err, secrets.ErrNothingToKeep) {
		t.Fatalf("mask of an unknown header: %v", err)
	}
	if _, err := secrets.KeepHeaders(map[string]string{"Authorization": secrets.Mask}, stored, false); !errors.Is(err, secrets.ErrTargetChanged) {
		t.Fatalf("mask with a new target: %v", err)
	}
}

func TestCredentialParam(t *testing.T) {
	for name, want := range map[string]bool{
		"token": true, "access_token": true, "api_key": true, "apiKey": true, "key": true, "X-Api-Key": true, "sig": true,
		"signature": true, "client_secret": true, "password": true, "pwd": true, "auth": true, "sessionid": true,
		"page": false, "name": false, "contact": false, "q": false, "id": false,
	} {
		if got := secrets.CredentialParam(name); got != want {
			t.Errorf("CredentialParam(%q) = %v", name, got)
		}
	}
}

func TestMaskURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://crm.example.com/hook":                                  "https://crm.example.com/hook",
		"https://bob:pa55@crm.example.com/x":                            "https://bob:" + secrets.Mask + "@crm.example.com/x",
		"https://bob@crm.example.com/x":                                 "https://bob@crm.example.com/x",
		"https://crm.example.com/c/{{contact.id}}?api_key=k1&page=2#f":  "https://crm.example.com/c/{{contact.id}}?api_key=" + secrets.Mask + "&page=2#f",
		"https://crm.example.com/?token=&sig=abc&q={{contact.name}}":    "https://crm.example.com/?token=&sig=" + secrets.Mask + "&q={{contact.name}}",
		"http://u:p@h:8080?key=1&key=2":                                 "http://u:" + secrets.Mask + "@h:8080?key=" + secrets.Mask + "&key=" + secrets.Mask,
		"https://crm.example.com/path@with-at?x=1#access_token=in-frag": "https://crm.example.com/path@with-at?x=1#access_token=in-frag",
	} {
		if got := secrets.MaskURL(raw); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestKeepURL(t *testing.T) {
	stored := "https://bob:pa55@crm.example.com/c/{{contact.id}}?key=k1&key=k2&token=t1&page=2"
	masked := secrets.MaskURL(stored)
	got, err := secrets.KeepURL(masked, stored)
	if err != nil || got != stored {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	// A changed path keeps the masked values; a changed value replaces.
	got, err = secrets.KeepURL("https://bob:"+secrets.Mask+"@crm.example.com/v2?key="+secrets.Mask+"&token=new", stored)
	if err != nil || got != "https://bob:pa55@crm.example.com/v2?key=k1&token=new" {
		t.Fatalf("changed path: %q, %v", got, err)
	}
	// No mask: the URL as given.
	if got, err := secrets.KeepURL("https://elsewhere.example/x", stored); err != nil || got != "https://elsewhere.example/x" {
		t.Fatalf("plain: %q, %v", got, err)
	}
	for in, want := range map[string]error{
		"https://bob:" + secrets.Mask + "@evil.example/c":           secrets.ErrTargetChanged,
		"http://crm.example.com/c?token=" + secrets.Mask:            secrets.ErrTargetChanged, // another scheme
		"https://crm.example.com:8443/c?token=" + secrets.Mask:      secrets.ErrTargetChanged, // another port
		"https://crm.example.com/c?secret=" + secrets.Mask:          secrets.ErrNothingToKeep, // no such stored parameter
		"https://crm.example.com/c?key=a&key=b&key=" + secrets.Mask: secrets.ErrNothingToKeep, // no third key
		"https://crm.example.com/" + secrets.Mask:                   secrets.ErrNothingToKeep, // not a masked place
		"https://crm.example.com/c?page=" + secrets.Mask:            secrets.ErrNothingToKeep,
	} {
		if _, err := secrets.KeepURL(in, stored); !errors.Is(err, want) {
			t.Errorf("KeepURL(%q): %v, want %v", in, err, want)
		}
	}
	if _, err := secrets.KeepURL("https://x:"+secrets.Mask+"@crm.example.com/", "https://crm.example.com/"); !errors.Is(err, secrets.ErrNothingToKeep) {
		t.Errorf("a masked password with none stored: %v", err)
	}
}
