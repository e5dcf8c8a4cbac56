package resourceapi

// listQuery documents the list's query parameters (Frappe's names and the
// spec's).
type listQuery struct {
	Fields          string `query:"fields" description:"JSON list or comma-separated field names; [\"*\"] for every field (child tables excepted). Default: name."`
	Filters         string `query:"filters" description:"JSON: a list of [field, operator, value] (or [doctype, field, operator, value]), or an object of field: value or field: [operator, value]."`
	OrFilters       string `query:"or_filters" description:"Like filters, joined with OR."`
	OrderBy         string `query:"order_by" description:"field [asc|desc], comma-separated. Default: modified desc."`
	Limit           string `query:"limit" description:"Rows to answer: default 20, at most 1000; 0 means 1000."`
	LimitPageLength string `query:"limit_page_length" description:"Frappe's name for limit."`
	Offset          string `query:"offset" description:"Rows to skip."`
	LimitStart      string `query:"limit_start" description:"Frappe's name for offset."`
	SearchTerm      string `query:"search_term" description:"Text searched (case-insensitive) in name, the title field and the search fields."`
	AsDict          string `query:"as_dict" description:"0 or false: rows as lists of values in the order of fields."`
}

// docBody is a document's fields, as JSON (or {"data": {...}}, or a form
// with a data field holding the JSON): an object whose keys are the
// DocType's.
type docBody struct{}

type listResp struct {
	Data []any `json:"data" description:"Rows: objects of the selected fields (lists with as_dict=0)."`
}

// docResp is one document: name and id, owner, creation, modified
// (YYYY-MM-DD HH:MM:SS, UTC), modified_by, docstatus, doctype, idx, every
// field and the child tables' rows.
type docResp struct {
	Data map[string]any `json:"data"`
}

type okResp struct {
	Message string `json:"message" const:"ok"`
}

type runMethodRequest struct {
	RunMethod string `json:"run_method" description:"A method whitelisted on the DocType; the other keys are its arguments."`
}

type runMethodResp struct {
	Data any `json:"data" description:"What the method answered."`
}

// methodResp is a whitelisted method's answer; message is absent when the
// method answers nothing.
type methodResp struct {
	Message any `json:"message,omitempty"`
}

// methodBody is the method's arguments, an object of its own keys.
type methodBody struct{}
