// Package ai moved to internal/infra/ai. This name stays at the old path
// for test suites written against it; new code imports the new path.
package ai

import "wharf/internal/infra/ai"

// MaxResponseBytes is ai.MaxResponseBytes.
const MaxResponseBytes = ai.MaxResponseBytes
