package e2e_test

import (
	"os"
	"testing"

	"wharf/internal/integration/notify"
)

// TestMain serves notification conditions when the in-process worker's
// evaluator processes start this test binary again (notify.IsEvaluator).
func TestMain(m *testing.M) {
	if notify.IsEvaluator(os.Args) {
		os.Exit(notify.ServeEvaluator(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
