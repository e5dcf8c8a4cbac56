package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Class tells a caller what to do about a failed call.
type Class int

const (
	// Permanent errors will fail again: do not retry (bad input, no such
	// template, outside the service window, invalid token...).
	Permanent Class = iota
	// Transient errors are provider trouble or network failures: retry with
	// backoff.
	Transient
	// Throttled errors are rate limits: wait, then retry the same request
	// without counting it as a failure.
	Throttled
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Throttled:
		return "throttled"
	}
	return "permanent"
}

// Error codes the service acts on.
const (
	CodeInvalidToken         = 190
	CodeThroughput           = 130429
	CodePairRateLimit        = 131056
	CodeGeneric              = 131000
	CodeServiceUnavailable   = 131016
	CodeMediaDownload        = 131052
	CodeAccountRateLimit     = 80007
	CodeAppRateLimit         = 4
	CodeOutsideWindow        = 131047
	CodeUndeliverable        = 131026
	CodeTemplateNotFound     = 132001
	CodeTemplateParamCount   = 132000
	CodeTemplateParamFormat  = 132012
	CodeInvalidParameter     = 131009
	CodeNoCallPermission     = 138006
	CodeTemplateAlreadyExist = 2388023 // error_subcode of 100
)

// Error is a failed provider call.
type Error struct {
	HTTPStatus int
	Code       int
	Subcode    int
	Type       string
	Message    string
	Details    string
	FBTraceID  string
	Class      Class
	// RetryAfter is how long the provider asks us to wait, when it says.
	RetryAfter time.Duration
	cause      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("provider error %d", e.Code)
	if e.Subcode != 0 {
		s += fmt.Sprintf("/%d", e.Subcode)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Details != "" {
		s += " (" + e.Details + ")"
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.cause }

// AsError returns the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var pe *Error
	ok := errors.As(err, &pe)
	return pe, ok
}

// ClassOf classifies any error from this package; errors that are not
// provider errors (programming errors, cancelled contexts) are permanent.
func ClassOf(err error) Class {
	if pe, ok := AsError(err); ok {
		return pe.Class
	}
	return Permanent
}

// IsThrottled reports whether err asks us to slow down.
func IsThrottled(err error) bool { return err != nil && ClassOf(err) == Throttled }

// IsTransient reports whether err is worth retrying with backoff.
func IsTransient(err error) bool { return err != nil && ClassOf(err) == Transient }

// Classify maps a provider error code (and the HTTP status, for codes we do
// not know) to a class.
func Classify(code, httpStatus int) Class {
	switch code {
	case CodeThroughput, CodePairRateLimit, CodeAccountRateLimit, 80008, CodeAppRateLimit, 17, 32, 613, 130472:
		return Throttled
	case CodeGeneric, CodeServiceUnavailable, 131057, 1, 2, 131052:
		return Transient
	case 0:
	default:
		if httpStatus >= 500 {
			return Transient
		}
		return Permanent
	}
	if httpStatus >= 500 || httpStatus == http.StatusTooManyRequests {
		if httpStatus == http.StatusTooManyRequests {
			return Throttled
		}
		return Transient
	}
	return Permanent
}

type errorEnvelope struct {
	Error struct {
		Message      string `json:"message"`
		Type         string `json:"type"`
		Code         int    `json:"code"`
		ErrorSubcode int    `json:"error_subcode"`
		ErrorData    struct {
			Details string `json:"details"`
		} `json:"error_data"`
		FBTraceID string `json:"fbtrace_id"`
	} `json:"error"`
}

func parseError(status int, h http.Header, body []byte) *Error {
	var env errorEnvelope
	e := &Error{HTTPStatus: status}
	if json.Unmarshal(body, &env) == nil && (env.Error.Code != 0 || env.Error.Message != "") {
		e.Code, e.Subcode, e.Type = env.Error.Code, env.Error.ErrorSubcode, env.Error.Type
		e.Message, e.Details, e.FBTraceID = env.Error.Message, env.Error.ErrorData.Details, env.Error.FBTraceID
	} else {
		e.Message = fmt.Sprintf("HTTP %d from the provider", status)
	}
	e.Class = Classify(e.Code, status)
	if s := h.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return e
}

func networkError(err error) *Error {
	return &Error{Message: "cannot reach the provider", Class: Transient, cause: err}
}

// accountCodes are errors about the business account or its phone number,
// not about one message: every send from the number fails the same way until
// someone fixes the account (a new token, a payment method, a registration,
// the end of a restriction).
var accountCodes = map[int]bool{
	CodeInvalidToken: true, // invalid or expired token
	10:               true, // permission denied (the token lost access)
	200:              true, // permissions error
	368:              true, // temporarily blocked for policy violations
	131005:           true, // access denied
	131031:           true, // business account locked or restricted
	131042:           true, // business eligibility: payment issue
	131045:           true, // incorrect certificate: the number is not registered
	133010:           true, // phone number not registered
}

// templateCodes are errors about the template itself: no recipient can get
// it until the template is fixed.
var templateCodes = map[int]bool{
	CodeTemplateNotFound: true, // name and language do not exist
	132015:               true, // template paused for low quality
	132016:               true, // template disabled
}

// AboutAccount reports whether the error concerns the account or number as a
// whole rather than one message.
func (e *Error) AboutAccount() bool { return accountCodes[e.Code] }

// AboutTemplate reports whether the error concerns the template as a whole.
func (e *Error) AboutTemplate() bool { return templateCodes[e.Code] }
