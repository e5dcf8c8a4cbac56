package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/apperr"
	"wharf/internal/paging"
)

// envelope is the spec's success and error shape.
type envelope struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Data    any    `json:"data"`
}

func ok(c *gin.Context, status int, data any) {
	c.JSON(status, envelope{Status: "success", Data: data})
}

func message(c *gin.Context, msg string) {
	ok(c, http.StatusOK, gin.H{"message": msg})
}

// fail is the single mapping from domain errors to HTTP answers. Internal
// errors are logged with the request id and answered without their cause.
func (s *Server) fail(c *gin.Context, err error) {
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
	case errors.Is(err, gorm.ErrRecordNotFound):
		status, msg = http.StatusNotFound, "not found"
	case errors.Is(err, gorm.ErrDuplicatedKey):
		status, msg = http.StatusConflict, "already exists"
	case errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil:
		status, msg = 499, "client closed request" // nobody reads it; keeps logs honest
	}
	if status == http.StatusUnauthorized && c.Writer.Header().Get("WWW-Authenticate") == "" {
		c.Header("WWW-Authenticate", `Bearer realm="wharf"`)
	}
	if status >= 500 {
		s.log.Error("request failed", "request_id", c.GetString(ctxRequestID), "method", c.Request.Method,
			"path", c.FullPath(), "error", err)
	}
	c.AbortWithStatusJSON(status, envelope{Status: "error", Message: msg, Data: nil})
}

// maxJSONBody bounds JSON request bodies.
const maxJSONBody = 1 << 20

// bindJSON decodes the body into dst and answers 400 itself on failure.
func (s *Server) bindJSON(c *gin.Context, dst any) bool { return s.bindJSONLimit(c, dst, maxJSONBody) }

// bindJSONLimit is bindJSON with another size limit, for bulk bodies.
func (s *Server) bindJSONLimit(c *gin.Context, dst any, limit int64) bool {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	dec := json.NewDecoder(body)
	if err := dec.Decode(dst); err != nil {
		var maxBytes *http.MaxBytesError
		switch {
		case errors.As(err, &maxBytes):
			s.fail(c, err)
		case errors.Is(err, io.EOF):
			s.fail(c, apperr.Invalidf("request body must be a JSON object"))
		default:
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) && typeErr.Field != "" {
				s.fail(c, apperr.Invalidf("%s must be of type %s", typeErr.Field, jsonType(typeErr.Type.Kind().String())))
			} else {
				s.fail(c, apperr.Invalidf("request body is not valid JSON"))
			}
		}
		return false
	}
	return true
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "number"
	case "slice", "array":
		return "array"
	}
	return "object"
}

// pathID parses a UUID path parameter, answering 400 itself when malformed.
func (s *Server) pathID(c *gin.Context, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		s.fail(c, apperr.Invalidf("%s must be a UUID", name))
		return uuid.Nil, false
	}
	return id, true
}

// page reads page and limit with the list's default and maximum limit. A
// limit above the maximum is capped; a malformed value is a 400.
func (s *Server) page(c *gin.Context, defLimit, maxLimit int) (paging.Params, bool) {
	p := paging.Params{Page: 1, Limit: defLimit}
	for _, q := range []struct {
		name string
		dst  *int
	}{{"page", &p.Page}, {"limit", &p.Limit}} {
		raw := strings.TrimSpace(c.Query(q.name))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			s.fail(c, apperr.Invalidf("%s must be a positive integer", q.name))
			return p, false
		}
		*q.dst = n
	}
	p.Limit = min(p.Limit, maxLimit)
	return p, true
}

// utc renders times in UTC; JSON marshals them as RFC 3339.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
