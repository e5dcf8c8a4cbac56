package docframe

import (
	"fmt"

	"wharf/internal/infra/apperr"
)

// Exception types a Frappe client reads in exc_type. Each carries an apperr
// kind, which decides the HTTP status (api/resourceapi/errors.go); the type
// only names the refusal more precisely, as Frappe's exception classes do.
const (
	ExcValidation          = "ValidationError"
	ExcMandatory           = "MandatoryError"
	ExcLinkValidation      = "LinkValidationError"
	ExcLinkExists          = "LinkExistsError"
	ExcUpdateAfterSubmit   = "UpdateAfterSubmitError"
	ExcDocstatusTransition = "DocstatusTransitionError"
	ExcCannotChange        = "CannotChangeConstantError"
	ExcDuplicateEntry      = "DuplicateEntryError"
	ExcDoesNotExist        = "DoesNotExistError"
	ExcPermission          = "PermissionError"
)

// Error is a refusal with its Frappe exception type. It unwraps to the
// apperr.Error whose kind gives the status, so code that knows only apperr
// still classifies it.
type Error struct {
	Exc string
	err *apperr.Error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// Message is what the caller reads.
func (e *Error) Message() string { return e.err.Message }

func newErr(exc string, kind apperr.Kind, format string, args ...any) *Error {
	return &Error{Exc: exc, err: &apperr.Error{Kind: kind, Message: fmt.Sprintf(format, args...)}}
}

// Validationf refuses input or an operation (417 ValidationError); hooks
// return it to stop an insert or a save.
func Validationf(format string, args ...any) *Error {
	return newErr(ExcValidation, apperr.Invalid, format, args...)
}

func mandatoryf(format string, args ...any) *Error {
	return newErr(ExcMandatory, apperr.Invalid, format, args...)
}

func linkf(format string, args ...any) *Error {
	return newErr(ExcLinkValidation, apperr.Invalid, format, args...)
}

func linkExistsf(format string, args ...any) *Error {
	return newErr(ExcLinkExists, apperr.Invalid, format, args...)
}

func afterSubmitf(format string, args ...any) *Error {
	return newErr(ExcUpdateAfterSubmit, apperr.Invalid, format, args...)
}

func transitionf(format string, args ...any) *Error {
	return newErr(ExcDocstatusTransition, apperr.Invalid, format, args...)
}

func duplicatef(format string, args ...any) *Error {
	return newErr(ExcDuplicateEntry, apperr.Conflict, format, args...)
}

func notFoundf(format string, args ...any) *Error {
	return newErr(ExcDoesNotExist, apperr.NotFound, format, args...)
}

func permissionf(format string, args ...any) *Error {
	return newErr(ExcPermission, apperr.Forbidden, format, args...)
}

func cannotChangef(format string, args ...any) *Error {
	return newErr(ExcCannotChange, apperr.Invalid, format, args...)
}

func isNotFound(err error) bool { return apperr.Is(err, apperr.NotFound) }
