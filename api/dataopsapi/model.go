package dataopsapi

// exportRequest is the body of POST /api/export.
type exportRequest struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Filters struct {
		Search string `json:"search"`
		// Tags is a comma-separated list (contacts having any of them).
		Tags string `json:"tags"`
	} `json:"filters"`
	Format string `json:"format"`
}

type columnResp struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

type configResp struct {
	Table          string       `json:"table"`
	Columns        []columnResp `json:"columns"`
	DefaultColumns []string     `json:"default_columns"`
}
