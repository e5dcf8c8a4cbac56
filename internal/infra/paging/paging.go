// Package paging carries page/limit parameters from the HTTP layer to domain
// queries, so that every list uses the same offset arithmetic.
package paging

import "strings"

// Params is a validated page request: Page >= 1, 1 <= Limit <= the list's max.
type Params struct {
	Page  int
	Limit int
}

// Offset is the number of rows to skip.
func (p Params) Offset() int { return (p.Page - 1) * p.Limit }

// TotalPages is the number of pages for total rows (0 for no rows).
func (p Params) TotalPages(total int64) int {
	if p.Limit <= 0 {
		return 0
	}
	return int((total + int64(p.Limit) - 1) / int64(p.Limit))
}

// Contains turns a user's search text into an ILIKE pattern matching it
// anywhere, with the pattern characters % and _ taken literally.
func Contains(search string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(search) + "%"
}
