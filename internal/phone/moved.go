// Package phone moved to internal/infra/phone. These names stay at the old
// path for test suites written against it; new code imports the new path.
package phone

import "wharf/internal/infra/phone"

// Mask is phone.Mask.
func Mask(number string) string { return phone.Mask(number) }

// MaskName is phone.MaskName.
func MaskName(s string) string { return phone.MaskName(s) }

// Normalize is phone.Normalize.
func Normalize(raw string) (string, error) { return phone.Normalize(raw) }
