package testfactory

import (
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
)

// WantError fails the test unless err is an apperr error of kind whose
// message contains msg: domain tests check both what a caller would get as
// status and what they would read.
func WantError(t testing.TB, err error, kind apperr.Kind, msg string) {
	t.Helper()
	if err == nil || apperr.KindOf(err) != kind || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %v (kind %d), want kind %d containing %q", err, apperr.KindOf(err), kind, msg)
	}
}
