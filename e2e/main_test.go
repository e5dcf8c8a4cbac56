package e2e_test

import (
	"os"
	"testing"

	"wharf/internal/wharfnotify"
)

// TestMain serves notification conditions when the in-process worker's
// evaluator processes start this test binary again (wharfnotify.IsEvaluator).
func TestMain(m *testing.M) {
	if wharfnotify.IsEvaluator(os.Args) {
		os.Exit(wharfnotify.ServeEvaluator(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
