// Package docframe moved to internal/integration/docframe. This name stays
// at the old path for test suites written against it; new code imports the
// new path.
package docframe

import "wharf/internal/integration/docframe"

// MaxListBytes is docframe.MaxListBytes.
const MaxListBytes = docframe.MaxListBytes
