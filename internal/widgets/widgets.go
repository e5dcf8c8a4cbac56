// Package widgets owns dashboard widgets: each user's tiles (a figure, a
// chart, a table or shortcuts), some shared with the whole organization,
// and the figures they show, computed from the organization's messages,
// contacts, campaigns, agent transfers and chatbot sessions over a period of
// UTC days. Only a widget's owner changes, moves or deletes it; everyone in
// the organization reads the shared ones.
package widgets

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// The lists a widget's fields are checked against.
var (
	Metrics      = []string{"count", "sum", "avg"}
	DisplayTypes = []string{"number", "percentage", "chart", "table", "shortcuts"}
	ChartTypes   = []string{"line", "bar", "pie"}
	Sizes        = []string{"small", "medium", "large"}
)

// Operator is a filter operator with the label a form shows.
type Operator struct{ Value, Label string }

// Operators lists the filter operators. contains applies to text fields,
// gt/lt/gte/lte to numeric ones, equals and not_equals to both.
var Operators = []Operator{
	{"equals", "Equals"}, {"not_equals", "Not equals"}, {"contains", "Contains"},
	{"gt", "Greater than"}, {"lt", "Less than"}, {"gte", "Greater than or equal"}, {"lte", "Less than or equal"},
}

const msgNotFound = "Widget not found"

// Caller is who asks: widgets are visible to their owner and, when shared,
// to the whole organization; sharing needs analytics:share.
type Caller struct {
	OrgID, UserID uuid.UUID
	CanShare      bool
}

// Service manages dashboard widgets and computes their data.
type Service struct {
	db        *gorm.DB
	timezones Timezones
	now       func() time.Time
}

// Timezones gives an organization's timezone name (orgsettings), the
// overview's days.
type Timezones interface {
	Timezone(ctx context.Context, orgID uuid.UUID) (string, error)
}

// NewService wires the widgets domain; timezones (nil: every overview is in
// UTC) gives the organizations' timezones.
func NewService(db *gorm.DB, timezones Timezones) *Service {
	return &Service{db: db, timezones: timezones, now: func() time.Time { return time.Now().UTC() }}
}
