// Package live moved to internal/infra/live. This name stays at the old
// path for test suites written against it; new code imports the new path.
package live

import "wharf/internal/infra/live"

// PerUser is live.PerUser.
const PerUser = live.PerUser
