package notify_test

import (
	"os"
	"testing"

	"wharf/internal/integration/notify"
)

// TestMain serves conditions when the tests' evaluator processes start this
// binary again (notify.IsEvaluator).
func TestMain(m *testing.M) {
	if notify.IsEvaluator(os.Args) {
		os.Exit(notify.ServeEvaluator(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}
