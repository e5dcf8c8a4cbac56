package platformsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is a provider error answer. Message is the text after the
// "(#code) " prefix the provider puts in front of it.
type apiError struct {
	status  int
	code    int
	subcode int
	message string
	details string
}

type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Message   string        `json:"message"`
	Type      string        `json:"type"`
	Code      int           `json:"code"`
	Subcode   int           `json:"error_subcode,omitempty"`
	ErrorData errorDataJSON `json:"error_data"`
	FBTraceID string        `json:"fbtrace_id"`
}

type errorDataJSON struct {
	MessagingProduct string `json:"messaging_product"`
	Details          string `json:"details"`
}

func newError(status, code int, message, details string) *apiError {
	return &apiError{status: status, code: code, message: message, details: details}
}

func errInvalidToken() *apiError {
	return newError(http.StatusUnauthorized, 190, "Invalid OAuth access token",
		"Invalid OAuth access token - Cannot parse access token")
}

func errNoObject(id string) *apiError {
	e := newError(http.StatusNotFound, 100,
		fmt.Sprintf("Unsupported get request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation", id),
		fmt.Sprintf("Object with ID '%s' does not exist", id))
	e.subcode = 33
	return e
}

// errWrongNode answers a request for an edge the object's type does not have.
func errWrongNode(edge, node string) *apiError {
	return newError(http.StatusBadRequest, 100, "Invalid parameter",
		fmt.Sprintf("Tried accessing nonexisting field (%s) on node type (%s)", edge, node))
}

// errInvalid is the generic "(#100) Invalid parameter" with details.
func errInvalid(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, 100, "Invalid parameter", fmt.Sprintf(format, args...))
}

func errMissing(param string) *apiError {
	return newError(http.StatusBadRequest, 100, fmt.Sprintf("The parameter %s is required.", param),
		fmt.Sprintf("The parameter %s is required.", param))
}

// errParamValue is 131009, the messaging validation error.
func errParamValue(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, 131009, "Parameter value is not valid", fmt.Sprintf(format, args...))
}

func errThroughput(rate int) *apiError {
	e := newError(http.StatusBadRequest, 130429, "Rate limit hit",
		fmt.Sprintf("Cloud API message throughput (%d messages per second for this phone number) has been reached.", rate))
	e.subcode = 2655007
	return e
}

func errTransient() *apiError {
	return newError(http.StatusInternalServerError, 131000, "Something went wrong",
		"Something went wrong. Please retry later (injected by the simulator).")
}

// writeError answers with the provider error shape and tells the request
// log which code was answered.
func writeError(w http.ResponseWriter, e *apiError) {
	if sw, ok := w.(*statusWriter); ok {
		sw.errorCode = e.code
	}
	details := e.details
	if details == "" {
		details = e.message
	}
	writeJSON(w, e.status, errorBody{Error: errorJSON{
		Message:   fmt.Sprintf("(#%d) %s", e.code, e.message),
		Type:      "OAuthException",
		Code:      e.code,
		Subcode:   e.subcode,
		ErrorData: errorDataJSON{MessagingProduct: "whatsapp", Details: details},
		FBTraceID: newTraceID(),
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// success is the common {"success":true} answer.
var success = map[string]bool{"success": true}
