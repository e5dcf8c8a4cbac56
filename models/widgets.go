package models

import (
	"time"

	"github.com/google/uuid"
)

// WidgetFilter narrows a widget's rows: field (of the widget's data source)
// compared with value by operator. Value is kept as text; numeric operators
// parse it.
type WidgetFilter struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
}

// DashboardWidget is one tile of a user's dashboard, shared with the
// organization when IsShared.
type DashboardWidget struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	CreatedBy      uuid.UUID `gorm:"type:uuid"`
	Name           string
	Description    string
	DataSource     string
	Metric         string
	Field          string
	Filters        JSON[[]WidgetFilter] `gorm:"type:jsonb"`
	DisplayType    string
	ChartType      string
	GroupByField   string
	ShowChange     bool
	Color          string
	Size           string
	DisplayOrder   int
	GridX          int
	GridY          int
	GridW          int
	GridH          int
	Config         JSON[map[string]any] `gorm:"type:jsonb"`
	IsShared       bool
	IsDefault      bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}
