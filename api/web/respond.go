package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"wharf/internal/infra/apperr"
)

// Envelope is the spec's success and error shape:
// {status: "success", data} or {status: "error", message, data: null}.
type Envelope struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Data    any    `json:"data"`
}

// MessageResp is the data of answers that only confirm an action.
type MessageResp struct {
	Message string `json:"message"`
}

// Respond answers data in the success envelope with status.
func Respond(c *gin.Context, status int, data any) {
	c.JSON(status, Envelope{Status: "success", Data: data})
}

// OK answers 200 with data.
func OK(c *gin.Context, data any) { Respond(c, http.StatusOK, data) }

// Created answers 201 with data.
func Created(c *gin.Context, data any) { Respond(c, http.StatusCreated, data) }

// Accepted answers 202 with data: the work continues in the worker.
func Accepted(c *gin.Context, data any) { Respond(c, http.StatusAccepted, data) }

// Message answers 200 with {"message": msg}.
func Message(c *gin.Context, msg string) { OK(c, MessageResp{Message: msg}) }

// Error answers status with msg in the error envelope, for the few answers
// the shell makes itself (405, 503 from /readyz); handlers use Fail.
func Error(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, Envelope{Status: "error", Message: msg, Data: nil})
}

// Fail is the single mapping from errors to HTTP answers: apperr kinds to
// their statuses with their messages, an oversized body to 413, a request
// the client abandoned to 499, anything else to a 500 that is logged with
// the request id and answered without its cause.
func Fail(c *gin.Context, err error) {
	status, msg := http.StatusInternalServerError, "internal server error"
	var ae *apperr.Error
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		switch ae.Kind {
		case apperr.Invalid:
			status = http.StatusBadRequest
		case apperr.Unauthorized:
			status = http.StatusUnauthorized
		case apperr.Forbidden:
			status = http.StatusForbidden
		case apperr.NotFound:
			status = http.StatusNotFound
		case apperr.Conflict:
			status = http.StatusConflict
		case apperr.TooLarge:
			status = http.StatusRequestEntityTooLarge
		case apperr.TooMany:
			status = http.StatusTooManyRequests
		case apperr.Upstream:
			status = http.StatusBadGateway
		case apperr.Unavailable:
			status = http.StatusServiceUnavailable
		}
		if status != http.StatusInternalServerError {
			msg = ae.Message
		}
		if ae.RetryAfter > 0 {
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(ae.RetryAfter.Seconds()))))
		}
	case errors.As(err, &maxBytes):
		status, msg = http.StatusRequestEntityTooLarge, "request body is too large"
	case errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil:
		status, msg = 499, "client closed request" // nobody reads it; keeps logs honest
	}
	if status == http.StatusUnauthorized && c.Writer.Header().Get("WWW-Authenticate") == "" {
		c.Header("WWW-Authenticate", `Bearer realm="wharf"`)
	}
	if status >= 500 {
		Log(c).Error("request failed", "request_id", c.GetString(KeyRequestID), "method", c.Request.Method,
			"path", c.FullPath(), "error", err)
	}
	Error(c, status, msg)
}
