package resourceapi

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
)

// frappeError is Frappe's error answer: the exception's class name, the
// exception as Frappe prints it, and _server_messages, a JSON string of a
// list of JSON strings each holding {"message": ...} (what Frappe's
// clients show).
type frappeError struct {
	ExcType        string `json:"exc_type" description:"Frappe's exception class: ValidationError, MandatoryError, LinkValidationError, DoesNotExistError, PermissionError, DuplicateEntryError, AuthenticationError..."`
	Exception      string `json:"exception" description:"frappe.exceptions.<exc_type>: <message>"`
	ServerMessages string `json:"_server_messages" description:"A JSON string: a list of JSON strings, each {\"message\": ...}."`
}

// fail is the one mapping of the resource API's errors to Frappe's
// statuses and exception types. apperr kinds give the status (Invalid is
// Frappe's 417 ValidationError, never 400) and the default type;
// docframe.Error names a more precise type (MandatoryError...).
func fail(c *gin.Context, err error) {
	status, exc, msg := http.StatusInternalServerError, "Exception", "Internal server error"
	var ae *apperr.Error
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		switch ae.Kind {
		case apperr.Invalid:
			status, exc = http.StatusExpectationFailed, docframe.ExcValidation
		case apperr.Unauthorized:
			status, exc = http.StatusUnauthorized, "AuthenticationError"
		case apperr.Forbidden:
			status, exc = http.StatusForbidden, docframe.ExcPermission
		case apperr.NotFound:
			status, exc = http.StatusNotFound, docframe.ExcDoesNotExist
		case apperr.Conflict:
			status, exc = http.StatusConflict, docframe.ExcDuplicateEntry
		case apperr.TooLarge:
			status, exc = http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"
		case apperr.TooMany:
			status, exc = http.StatusTooManyRequests, "TooManyRequestsError"
		case apperr.Upstream:
			status, exc = http.StatusBadGateway, "UpstreamError"
		case apperr.Unavailable:
			status, exc = http.StatusServiceUnavailable, "ServiceUnavailable"
		}
		if status != http.StatusInternalServerError {
			msg = ae.Message
		}
		if ae.RetryAfter > 0 {
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
		}
		var de *docframe.Error
		if errors.As(err, &de) {
			exc = de.Exc
		}
	case errors.As(err, &maxBytes):
		status, exc, msg = http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "request body is too large"
	case errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil:
		status, msg = 499, "client closed request"
	}
	if status >= 500 {
		web.Log(c).Error("request failed", "request_id", c.GetString(web.KeyRequestID), "method", c.Request.Method,
			"path", c.FullPath(), "error", err)
	}
	c.AbortWithStatusJSON(status, frappeError{ExcType: exc, Exception: "frappe.exceptions." + exc + ": " + msg, ServerMessages: serverMessages(msg)})
}

// serverMessages encodes msg as Frappe does: a JSON list of JSON strings.
func serverMessages(msg string) string {
	one, _ := json.Marshal(map[string]any{"message": msg, "title": "Message", "indicator": "red", "raise_exception": 1})
	list, _ := json.Marshal([]string{string(one)})
	return string(list)
}
