package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
)

// MaxJSONBody bounds JSON request bodies.
const MaxJSONBody = 1 << 20

// BindJSON decodes the body into dst and answers 400 (or 413) itself on
// failure.
func BindJSON(c *gin.Context, dst any) bool { return BindJSONLimit(c, dst, MaxJSONBody) }

// BindJSONLimit is BindJSON with another size limit, for bulk bodies.
func BindJSONLimit(c *gin.Context, dst any, limit int64) bool { return bindJSON(c, dst, limit, false) }

// BindJSONStrict is BindJSON that refuses fields dst does not have, for
// bodies where a misspelt field would silently widen what a request does
// (an audience whose "tag" filter is ignored selects every contact).
func BindJSONStrict(c *gin.Context, dst any) bool { return bindJSON(c, dst, MaxJSONBody, true) }

func bindJSON(c *gin.Context, dst any, limit int64, strict bool) bool {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	dec := json.NewDecoder(body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		var maxBytes *http.MaxBytesError
		switch {
		case errors.As(err, &maxBytes):
			Fail(c, err)
		case errors.Is(err, io.EOF):
			Fail(c, apperr.Invalidf("request body must be a JSON object"))
		default:
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) && typeErr.Field != "" {
				Fail(c, apperr.Invalidf("%s must be of type %s", typeErr.Field, jsonType(typeErr.Type.Kind().String())))
			} else if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				Fail(c, apperr.Invalidf("unknown field %s", field))
			} else {
				Fail(c, apperr.Invalidf("request body is not valid JSON"))
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

// PathID parses a UUID path parameter, answering 400 itself when malformed.
func PathID(c *gin.Context, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		Fail(c, apperr.Invalidf("%s must be a UUID", name))
		return uuid.Nil, false
	}
	return id, true
}

// PathInt64 parses a positive integer path parameter (a log row's id),
// answering 400 itself when malformed.
func PathInt64(c *gin.Context, name string) (int64, bool) {
	n, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || n <= 0 {
		Fail(c, apperr.Invalidf("%s must be a positive integer", name))
		return 0, false
	}
	return n, true
}

// QueryUUID parses an optional UUID query parameter, answering 400 itself
// when it is malformed.
func QueryUUID(c *gin.Context, name string) (*uuid.UUID, bool) {
	raw := c.Query(name)
	id, err := OptionalUUID(name, &raw)
	if err != nil {
		Fail(c, err)
		return nil, false
	}
	return id, true
}

// OptionalUUID parses an optional UUID field of a request body: nil when
// absent or empty, an Invalid error naming field when malformed.
func OptionalUUID(field string, raw *string) (*uuid.UUID, error) {
	if raw == nil || *raw == "" {
		return nil, nil
	}
	id, err := uuid.Parse(*raw)
	if err != nil {
		return nil, apperr.Invalidf("%s must be a UUID", field)
	}
	return &id, nil
}

// Paging reads page and limit with the list's default and maximum limit. A
// limit above the maximum is capped; a malformed value is a 400, which
// Paging answers itself.
func Paging(c *gin.Context, defLimit, maxLimit int) (paging.Params, bool) {
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
			Fail(c, apperr.Invalidf("%s must be a positive integer", q.name))
			return p, false
		}
		*q.dst = n
	}
	p.Limit = min(p.Limit, maxLimit)
	return p, true
}
