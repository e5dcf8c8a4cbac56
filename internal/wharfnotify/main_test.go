package wharfnotify_test

import (
	"os"
	"testing"

	"wharf/internal/wharfnotify"
)

// TestMain serves conditions when the tests' evaluator processes start this
// binary again (wharfnotify.IsEvaluator).
func TestMain(m *testing.M) {
	if wharfnotify.IsEvaluator(os.Args) {
		os.Exit(wharfnotify.ServeEvaluator(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
