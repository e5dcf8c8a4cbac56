// Package wharfnotify moved to internal/integration/notify. These names stay
// at the old path for test suites written against it (e2e's TestMain runs
// the condition evaluator); new code imports the new path.
package wharfnotify

import (
	"io"

	"wharf/internal/integration/notify"
)

// IsEvaluator is notify.IsEvaluator.
func IsEvaluator(args []string) bool { return notify.IsEvaluator(args) }

// ServeEvaluator is notify.ServeEvaluator.
func ServeEvaluator(in io.Reader, out io.Writer) int { return notify.ServeEvaluator(in, out) }
