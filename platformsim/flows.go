package platformsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

type flow struct {
	waba             *waba
	id               string
	name             string
	categories       []string
	status           string // DRAFT, PUBLISHED, DEPRECATED
	flowJSON         []byte
	validationErrors []flowValidationError
}

func (f *flow) wabaID() string   { return f.waba.id }
func (f *flow) nodeType() string { return "WhatsAppFlow" }

type flowValidationError struct {
	Error       string `json:"error"`
	ErrorType   string `json:"error_type"`
	Message     string `json:"message"`
	LineStart   int    `json:"line_start"`
	LineEnd     int    `json:"line_end"`
	ColumnStart int    `json:"column_start"`
	ColumnEnd   int    `json:"column_end"`
}

func (f *flow) fields() map[string]any {
	m := map[string]any{
		"id":                f.id,
		"name":              f.name,
		"status":            f.status,
		"categories":        slices.Clone(f.categories),
		"validation_errors": f.errorsOrEmpty(),
	}
	if f.flowJSON != nil {
		var doc struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(f.flowJSON, &doc) == nil && doc.Version != "" {
			m["json_version"] = doc.Version
		}
	}
	return m
}

func (f *flow) errorsOrEmpty() []flowValidationError {
	if f.validationErrors == nil {
		return []flowValidationError{}
	}
	return slices.Clone(f.validationErrors)
}

var flowCategories = []string{"SIGN_UP", "SIGN_IN", "APPOINTMENT_BOOKING", "LEAD_GENERATION", "CONTACT_US",
	"CUSTOMER_SUPPORT", "SURVEY", "OTHER"}

func checkFlowCategories(cats []string) *apiError {
	if len(cats) == 0 {
		return errMissing("categories")
	}
	for _, c := range cats {
		if !slices.Contains(flowCategories, c) {
			return errInvalid("categories: %q is not one of %s", c, strings.Join(flowCategories, ", "))
		}
	}
	return nil
}

// handleCreateFlow serves POST /{version}/{waba_id}/flows.
func (s *Simulator) handleCreateFlow(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	var in struct {
		Name       string   `json:"name"`
		Categories []string `json:"categories"`
		FlowJSON   string   `json:"flow_json"`
	}
	parseErr := decodeBody(body, &in)
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "flows")
	switch {
	case aerr != nil:
	case parseErr != nil:
		aerr = parseErr
	case in.Name == "":
		aerr = errMissing("name")
	default:
		aerr = checkFlowCategories(in.Categories)
	}
	var answer map[string]any
	if aerr == nil {
		f := &flow{waba: wb, id: s.newIDLocked(), name: in.Name, categories: slices.Clone(in.Categories), status: "DRAFT"}
		if in.FlowJSON != "" {
			f.flowJSON = []byte(in.FlowJSON)
			f.validationErrors = validateFlowJSON(f.flowJSON)
		}
		s.objects[f.id] = f
		wb.flows = append(wb.flows, f)
		answer = map[string]any{"id": f.id, "success": true, "validation_errors": f.errorsOrEmpty()}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// handleListFlows serves GET /{version}/{waba_id}/flows.
func (s *Simulator) handleListFlows(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "flows")
	data := []map[string]any{}
	if aerr == nil {
		for _, f := range wb.flows {
			data = append(data, map[string]any{"id": f.id, "name": f.name, "status": f.status, "categories": slices.Clone(f.categories)})
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// update serves POST /{flow_id}: name and categories, drafts only.
func (f *flow) update(body []byte) *apiError {
	var in struct {
		Name       string   `json:"name"`
		Categories []string `json:"categories"`
	}
	if aerr := decodeBody(body, &in); aerr != nil {
		return aerr
	}
	if f.status != "DRAFT" {
		return errFlow("Flow can't be updated", "only DRAFT flows can be updated; this one is "+f.status)
	}
	if in.Categories != nil {
		if aerr := checkFlowCategories(in.Categories); aerr != nil {
			return aerr
		}
		f.categories = slices.Clone(in.Categories)
	}
	if in.Name != "" {
		f.name = in.Name
	}
	return nil
}

func errFlow(message, details string) *apiError {
	return newError(http.StatusBadRequest, 139001, message, details)
}

// handleUploadFlowJSON serves POST /{version}/{flow_id}/assets (multipart:
// file, name, asset_type=FLOW_JSON). Validation errors do not fail the
// upload: they are reported and block publishing.
func (s *Simulator) handleUploadFlowJSON(w http.ResponseWriter, r *http.Request) {
	var (
		formErr *apiError
		data    []byte
	)
	if err := r.ParseMultipartForm(maxRequestBody); err != nil {
		formErr = errInvalid("the body must be multipart/form-data: %v", err)
	} else {
		defer r.MultipartForm.RemoveAll()
		file, _, err := r.FormFile("file")
		switch {
		case r.FormValue("asset_type") != "FLOW_JSON":
			formErr = errInvalid("asset_type must be FLOW_JSON")
		case err != nil:
			formErr = errMissing("file")
		default:
			data, err = io.ReadAll(file)
			file.Close()
			if err != nil {
				formErr = errInvalid("could not read the file: %v", err)
			}
		}
	}
	s.mu.Lock()
	f, aerr := objectAs[*flow](s, r, r.PathValue("id"), "assets")
	if aerr == nil {
		aerr = formErr
	}
	if aerr == nil && f.status != "DRAFT" {
		aerr = errFlow("Flow can't be updated", "only DRAFT flows can be updated; this one is "+f.status)
	}
	var errs []flowValidationError
	if aerr == nil {
		f.flowJSON = data
		f.validationErrors = validateFlowJSON(data)
		errs = f.errorsOrEmpty()
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "validation_errors": errs})
}

// handleFlowAssets serves GET /{version}/{flow_id}/assets.
func (s *Simulator) handleFlowAssets(w http.ResponseWriter, r *http.Request) {
	base := s.base(r)
	s.mu.Lock()
	f, aerr := objectAs[*flow](s, r, r.PathValue("id"), "assets")
	data := []map[string]string{}
	if aerr == nil && f.flowJSON != nil {
		data = append(data, map[string]string{"name": "flow.json", "asset_type": "FLOW_JSON",
			"download_url": base + "/_sim/flows/" + f.id + "/flow.json"})
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// handleDownloadFlowJSON serves the download_url of a flow's JSON. Like the
// provider's signed asset URLs it needs no token.
func (s *Simulator) handleDownloadFlowJSON(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.objects[r.PathValue("id")].(*flow)
	var data []byte
	if ok {
		data = f.flowJSON
	}
	s.mu.Unlock()
	if data == nil {
		controlError(w, http.StatusNotFound, "no flow JSON uploaded for this flow")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// handlePublishFlow serves POST /{version}/{flow_id}/publish.
func (s *Simulator) handlePublishFlow(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, aerr := objectAs[*flow](s, r, r.PathValue("id"), "publish")
	switch {
	case aerr != nil:
	case f.status != "DRAFT":
		aerr = errFlow("Flow can't be published", "only DRAFT flows can be published; this one is "+f.status)
	case f.flowJSON == nil:
		aerr = errFlow("Flow can't be published", "the flow has no flow JSON")
	case len(f.validationErrors) > 0:
		aerr = errFlow("Flow can't be published", fmt.Sprintf("the flow JSON has %d validation errors", len(f.validationErrors)))
	default:
		f.status = "PUBLISHED"
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}

// handleDeprecateFlow serves POST /{version}/{flow_id}/deprecate.
func (s *Simulator) handleDeprecateFlow(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, aerr := objectAs[*flow](s, r, r.PathValue("id"), "deprecate")
	if aerr == nil {
		if f.status != "PUBLISHED" {
			aerr = errFlow("Flow can't be deprecated", "only PUBLISHED flows can be deprecated; this one is "+f.status)
		} else {
			f.status = "DEPRECATED"
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}

func (s *Simulator) deleteFlowLocked(f *flow) *apiError {
	if f.status != "DRAFT" {
		return errFlow("Flow can't be deleted", "only DRAFT flows can be deleted; this one is "+f.status)
	}
	delete(s.objects, f.id)
	f.waba.flows = slices.DeleteFunc(f.waba.flows, func(x *flow) bool { return x == f })
	return nil
}

// validateFlowJSON checks what the simulator can check of a flow JSON: it
// parses, has a string version and a non-empty screens array whose screens
// have an id and a layout.
func validateFlowJSON(data []byte) []flowValidationError {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		line, col := 1, 1
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col = lineCol(data, syn.Offset)
		}
		return []flowValidationError{{Error: "INVALID_JSON", ErrorType: "JSON_SCHEMA_ERROR",
			Message:   "The flow JSON is not valid JSON: " + err.Error(),
			LineStart: line, LineEnd: line, ColumnStart: col, ColumnEnd: col}}
	}
	var errs []flowValidationError
	add := func(code, message, key string) {
		line, col := locate(data, key)
		errs = append(errs, flowValidationError{Error: code, ErrorType: "FLOW_JSON_ERROR", Message: message,
			LineStart: line, LineEnd: line, ColumnStart: col, ColumnEnd: col + max(len(key), 1)})
	}
	if v, ok := doc["version"]; !ok {
		add("MISSING_REQUIRED_PROPERTY", "The property 'version' is required.", "")
	} else if _, isString := v.(string); !isString {
		add("INVALID_PROPERTY_VALUE", "The property 'version' must be a string.", `"version"`)
	}
	screens, ok := doc["screens"].([]any)
	switch {
	case doc["screens"] == nil:
		add("MISSING_REQUIRED_PROPERTY", "The property 'screens' is required.", "")
	case !ok:
		add("INVALID_PROPERTY_VALUE", "The property 'screens' must be an array.", `"screens"`)
	case len(screens) == 0:
		add("INVALID_PROPERTY_VALUE", "The property 'screens' must contain at least one screen.", `"screens"`)
	}
	for i, sc := range screens {
		m, ok := sc.(map[string]any)
		if !ok {
			add("INVALID_PROPERTY_VALUE", fmt.Sprintf("screens[%d] must be an object.", i), `"screens"`)
			continue
		}
		if id, ok := m["id"].(string); !ok || id == "" {
			add("MISSING_REQUIRED_PROPERTY", fmt.Sprintf("screens[%d]: the property 'id' is required.", i), `"screens"`)
		}
		if _, ok := m["layout"].(map[string]any); !ok {
			add("MISSING_REQUIRED_PROPERTY", fmt.Sprintf("screens[%d]: the property 'layout' is required.", i), `"screens"`)
		}
	}
	return errs
}

// locate returns the 1-based line and column of the first occurrence of key
// in data, or 1, 1 when it is absent.
func locate(data []byte, key string) (int, int) {
	if key == "" {
		return 1, 1
	}
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 1, 1
	}
	return lineCol(data, int64(i)+1)
}

// lineCol turns a 1-based byte offset into a 1-based line and column.
func lineCol(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 1), int64(len(data)))
	line, col := 1, 1
	for _, b := range data[:max(offset-1, 0)] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// SetFlowStatus sets a flow's status as the provider does on its own (for
// example BLOCKED or THROTTLED after quality checks), for tests of code
// that syncs flows. No webhook is posted.
func (s *Simulator) SetFlowStatus(flowID, status string) error {
	status = strings.ToUpper(status)
	if !slices.Contains([]string{"DRAFT", "PUBLISHED", "DEPRECATED", "BLOCKED", "THROTTLED"}, status) {
		return fmt.Errorf("platformsim: unknown flow status %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.objects[flowID].(*flow)
	if !ok {
		return fmt.Errorf("platformsim: %w: flow %s", ErrNotFound, flowID)
	}
	f.status = status
	return nil
}
