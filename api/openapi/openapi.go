// Package openapi generates the OpenAPI 3.1 description of the api from its
// router table (web.Route rows and the Go types they name) and serves it at
// /api/openapi.json, with a readable reference page at /api/docs.
//
// The document is generated, never written by hand, so that it cannot drift
// from the code: a route's path, access, rate-limit class, parameters and
// body come from its row, and the schemas from the very types the handlers
// decode and answer. The end-to-end tests check every answer they receive
// against it (internal/apptest).
package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi31"

	"wharf/api/web"
)

// Security scheme names of the document.
const (
	schemeBearer = "bearerAuth"
	schemeAPIKey = "apiKey"
)

// Build generates the document of routes as JSON.
func Build(routes []web.Route) ([]byte, error) {
	r := newReflector()
	for _, rt := range routes {
		if err := addRoute(r, rt); err != nil {
			return nil, fmt.Errorf("openapi: %s %s: %w", rt.Method, rt.Path, err)
		}
	}
	r.Spec.WithTags(tags(routes)...)
	return json.MarshalIndent(r.Spec, "", "  ")
}

const description = `Wharf's HTTP API: multi-tenant business messaging.

Every JSON answer is an envelope: {"status": "success", "data": ...} or
{"status": "error", "message": "...", "data": null}. The schemas below describe
data; each operation's description names what it requires of the caller.

Authenticate with a bearer access token (POST /api/auth/login) or an API key in
the X-API-Key header. Operations marked session only (x-session-only) refuse API
keys. Every answer of a rate-limited operation carries X-RateLimit-Limit,
X-RateLimit-Remaining and X-RateLimit-Reset; bulk operations (x-bulk) draw on a
separate, smaller allowance.`

// newReflector prepares the document: its information, the security
// schemes, the error envelope and the reflection rules for Go types.
func newReflector() *openapi31.Reflector {
	r := openapi31.NewReflector()
	r.Spec.Info.WithTitle("Wharf API").WithVersion("1").WithDescription(description)
	r.Spec.SetHTTPBearerTokenSecurity(schemeBearer, "JWT",
		"An access token from POST /api/auth/login, /api/auth/refresh or /api/auth/switch-org.")
	r.Spec.SetAPIKeySecurity(schemeAPIKey, "X-API-Key", openapi.InHeader,
		"An organization's API key (POST /api/api-keys). Session-only operations refuse it.")

	// UUIDs marshal as strings; say which kind.
	r.AddTypeMapping(uuid.UUID{}, *(&jsonschema.Schema{}).WithType(jsonschema.String.Type()).WithFormat("uuid"))
	r.InlineDefinition(uuid.UUID{})
	r.DefaultOptions = append(r.DefaultOptions,
		// A nil pointer to a struct marshals as null: say so beside the
		// reference instead of making every use of the type nullable.
		func(rc *jsonschema.ReflectContext) { rc.EnvelopNullability = true },
		jsonschema.InterceptProp(describeProperty),
		jsonschema.InterceptDefName(newNamer()),
	)
	addErrorResponses(r)
	return r
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// describeProperty adds what Go's JSON encoding guarantees and a struct
// tag cannot say:
//   - in an answer, every field without omitempty is always present, so it
//     is required (which lets the validation notice an answer of another
//     type than the route declares);
//   - a json.RawMessage field is kept raw only to tell an absent value from
//     null; its `format` tag names the string it holds otherwise, its
//     `rawtype` tag the JSON type it holds (a price kept raw to refuse
//     decimals and strings with a clear message is an integer).
func describeProperty(p jsonschema.InterceptPropParams) error {
	if !p.Processed {
		return nil
	}
	if len(p.PropertySchema.AnyOf) > 0 && p.PropertySchema.Ref == nil {
		// A nullable reference ({anyOf: [null, $ref]}) must not also
		// carry the referenced type beside anyOf, which would refuse null.
		p.PropertySchema.Type = nil
	}
	if p.Field.Type == rawMessageType {
		if t := p.Field.Tag.Get("rawtype"); t != "" {
			p.PropertySchema.WithType(jsonschema.SimpleType(t).Type())
		}
		if format := p.Field.Tag.Get("format"); format != "" {
			p.PropertySchema.TypeEns().WithSliceOfSimpleTypeValues(jsonschema.String, jsonschema.Null)
			p.PropertySchema.Type.SimpleTypes = nil
		}
	}
	oc, ok := openapi.OperationCtx(p.Context)
	if !ok || !oc.IsProcessingResponse() {
		return nil
	}
	if name, opts, _ := strings.Cut(p.Field.Tag.Get("json"), ","); name != "-" && !strings.Contains(opts, "omitempty") {
		if !slices.Contains(p.ParentSchema.Required, p.Name) {
			p.ParentSchema.Required = append(p.ParentSchema.Required, p.Name)
		}
	}
	return nil
}

// addRoute describes one route.
func addRoute(r *openapi31.Reflector, rt web.Route) error {
	path, params := openAPIPath(rt.Path)
	oc, err := r.NewOperationContext(rt.Method, path)
	if err != nil {
		return err
	}
	op := oc.(openapi31.OperationExposer).Operation()
	oc.SetID(operationID(rt.Method, rt.Path))
	oc.SetSummary(rt.Summary)
	oc.SetDescription(accessDescription(rt))
	if rt.Tag != "" {
		oc.SetTags(rt.Tag)
	}
	for _, name := range params {
		op.Parameters = append(op.Parameters, openapi31.ParameterOrReference{Parameter: pathParameter(name)})
	}

	// Access: who may call, and with which credentials.
	if rt.Access.NeedsAuth() {
		oc.AddSecurity(schemeBearer)
		if !rt.SessionOnly {
			oc.AddSecurity(schemeAPIKey)
		}
	}
	op.WithMapOfAnythingItem("x-access", strings.ReplaceAll(rt.Access.String(), "`", ""))
	if p := rt.Access.Permission(); p != "" {
		op.WithMapOfAnythingItem("x-permission", p)
	}
	if rt.SessionOnly {
		op.WithMapOfAnythingItem("x-session-only", true)
	}
	if rt.Bulk {
		op.WithMapOfAnythingItem("x-bulk", true)
	}
	if rt.Unlimited {
		op.WithMapOfAnythingItem("x-rate-limited", false)
	}

	// The request: query parameters and the body.
	if rt.Query != nil {
		oc.AddReqStructure(rt.Query)
	}
	if rt.Request != nil {
		oc.AddReqStructure(rt.Request)
	}
	if rt.AlsoRequest != nil {
		oc.AddReqStructure(rt.AlsoRequest)
	}

	// The answers: success first, then the errors.
	status := rt.Status
	if status == 0 {
		status = http.StatusOK
	}
	addSuccess(oc, status, rt.Response, rt.Produces, "")
	for _, a := range rt.Also {
		addSuccess(oc, a.Status, a.Response, "", a.Description)
	}
	if rt.ErrorBody != nil {
		addOwnErrors(oc, rt)
		return r.AddOperation(oc)
	}
	for _, code := range errorStatuses(rt) {
		op.ResponsesEns().WithMapOfResponseOrReferenceValuesItem(strconv.Itoa(code), openapi31.ResponseOrReference{
			Reference: &openapi31.Reference{Ref: "#/components/responses/" + errorResponseName(code)},
		})
	}
	return r.AddOperation(oc)
}

// addSuccess describes a success answer: data in the envelope, or another
// media type (produces) whose body is response itself.
func addSuccess(oc openapi.OperationContext, status int, response any, produces, desc string) {
	opts := []openapi.ContentOption{openapi.WithHTTPStatus(status)}
	if desc != "" {
		opts = append(opts, func(cu *openapi.ContentUnit) { cu.Description = desc })
	}
	switch produces {
	case "":
		oc.AddRespStructure(envelope(response), opts...)
	case "text/event-stream", "text/html", "*/*":
		// No schema: OpenAPI 3.1 cannot describe the events of a stream
		// (3.2's itemSchema can), a page is for browsers, and a stored file
		// (*/*) is served with its own media type. The description names
		// the type of each event's data.
		switch produces {
		case "text/event-stream":
			desc = "Server-sent events; the data of each event is a JSON " + defName(reflect.TypeOf(response)) + "."
		case "*/*":
			desc = "The file's bytes, with its own Content-Type."
		}
		opts = append(opts, openapi.WithContentType(produces), func(cu *openapi.ContentUnit) { cu.Description = desc },
			openapi.WithCustomize(func(cor openapi.ContentOrReference) {
				cor.(*openapi31.ResponseOrReference).Response.Content[produces] = openapi31.MediaType{}
			}))
		oc.AddRespStructure(nil, opts...)
	default:
		oc.AddRespStructure(response, append(opts, openapi.WithContentType(produces))...)
	}
}

// envelope returns a zero value of the success envelope around data's
// type: {status: "success", data}. The struct type is made at run time
// because the route row holds data as an interface value.
func envelope(data any) any {
	dt := reflect.TypeFor[null]()
	if data != nil {
		dt = reflect.TypeOf(data)
	}
	t := reflect.StructOf([]reflect.StructField{
		{Name: "Status", Type: reflect.TypeFor[string](), Tag: `json:"status" const:"success"`},
		{Name: "Data", Type: dt, Tag: `json:"data"`},
	})
	return reflect.New(t).Elem().Interface()
}

// null is the data of answers that carry none.
type null struct{}

// JSONSchema describes null.
func (null) JSONSchema() (jsonschema.Schema, error) {
	var s jsonschema.Schema
	s.WithType(jsonschema.Null.Type())
	return s, nil
}

// errorEnvelope is the error answer.
type errorEnvelope struct {
	Status  string `json:"status" const:"error"`
	Message string `json:"message" description:"What went wrong, written for people."`
	Data    null   `json:"data"`
}

// errorStatuses are the error answers the route can give: the
// middleware's (401 and 403 when it needs credentials, 429 when it is
// rate limited), web.Fail's for the route's inputs (400 for a malformed
// id, body or query, 404 for an id in the path or the body that names
// nothing, 413 for a body too large), 409 for operations that change state, 500 always, and those the
// row declares besides.
func errorStatuses(rt web.Route) []int {
	_, params := openAPIPath(rt.Path)
	codes := []int{http.StatusInternalServerError}
	if len(params) > 0 || rt.Request != nil || rt.Query != nil {
		codes = append(codes, http.StatusBadRequest)
	}
	if rt.Access.NeedsAuth() {
		codes = append(codes, http.StatusUnauthorized, http.StatusForbidden)
	}
	if len(params) > 0 || namesResource(rt.Request) {
		codes = append(codes, http.StatusNotFound)
	}
	if rt.Method != http.MethodGet {
		codes = append(codes, http.StatusConflict)
	}
	if rt.Request != nil {
		codes = append(codes, http.StatusRequestEntityTooLarge)
	}
	if !rt.Unlimited {
		codes = append(codes, http.StatusTooManyRequests)
	}
	codes = append(codes, rt.Errors...)
	slices.Sort(codes)
	return slices.Compact(codes)
}

// addOwnErrors describes the errors of a route that answers them in a body
// of its own (rt.ErrorBody: the resource API's Frappe shape), where a
// refused input is 417 (Frappe's ValidationError), not 400.
func addOwnErrors(oc openapi.OperationContext, rt web.Route) {
	codes := errorStatuses(rt)
	for i, code := range codes {
		if code == http.StatusBadRequest {
			codes[i] = http.StatusExpectationFailed
		}
	}
	slices.Sort(codes)
	for _, code := range slices.Compact(codes) {
		desc := errorResponses[code]
		if code == http.StatusExpectationFailed {
			desc = "Refused input or operation (ValidationError and its kinds): the message says which field or rule."
		}
		oc.AddRespStructure(rt.ErrorBody, openapi.WithHTTPStatus(code), func(cu *openapi.ContentUnit) { cu.Description = desc })
	}
}

// namesResource reports whether a request body names another resource by
// id (a field whose JSON name ends in _id), which may name none.
func namesResource(body any) bool {
	if body == nil {
		return false
	}
	var names func(t reflect.Type) bool
	names = func(t reflect.Type) bool {
		for f := range t.Fields() {
			if f.Anonymous && f.Type.Kind() == reflect.Struct && names(f.Type) {
				return true
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if strings.HasSuffix(name, "_id") {
				return true
			}
		}
		return false
	}
	t := reflect.TypeOf(body)
	return t.Kind() == reflect.Struct && names(t)
}

// errorResponses are the shared error answers, by status.
var errorResponses = map[int]string{
	http.StatusBadRequest:            "The request is invalid: a malformed id, body or parameter, or a value the operation refuses.",
	http.StatusUnauthorized:          "No valid credentials: missing, malformed, expired or revoked (or a wrong password).",
	http.StatusForbidden:             "The caller may not do this: a missing permission, an API key on a session-only operation, or a rule of the resource.",
	http.StatusNotFound:              "The resource does not exist in the caller's organization.",
	http.StatusConflict:              "The resource's state does not allow the operation, or it would duplicate another.",
	http.StatusRequestEntityTooLarge: "The request body is larger than the operation accepts.",
	http.StatusTooManyRequests:       "Rate limited: retry after the Retry-After header's seconds.",
	http.StatusInternalServerError:   "The server failed; the request id (X-Request-ID) finds it in the logs.",
	http.StatusBadGateway:            "The messaging provider failed or did not answer; retry.",
	http.StatusServiceUnavailable:    "This server cannot do it now or as configured.",
}

func errorResponseName(code int) string {
	return strings.ReplaceAll(http.StatusText(code), " ", "")
}

// addErrorResponses adds the error envelope and one shared response per
// error status.
func addErrorResponses(r *openapi31.Reflector) {
	s, err := r.Reflect(errorEnvelope{}, jsonschema.InterceptProp(func(p jsonschema.InterceptPropParams) error {
		if p.Processed {
			p.ParentSchema.Required = append(p.ParentSchema.Required, p.Name)
		}
		return nil
	}))
	if err != nil {
		panic("openapi: the error envelope: " + err.Error()) // a static type: cannot fail at run time
	}
	sm, err := s.ToSchemaOrBool().ToSimpleMap()
	if err != nil {
		panic("openapi: the error envelope: " + err.Error())
	}
	r.Spec.ComponentsEns().WithSchemasItem("Error", sm)
	for code, desc := range errorResponses {
		r.Spec.Components.WithResponsesItem(errorResponseName(code), openapi31.ResponseOrReference{Response: &openapi31.Response{
			Description: desc,
			Content: map[string]openapi31.MediaType{"application/json": {
				Schema: map[string]any{"$ref": "#/components/schemas/Error"},
			}},
		}})
	}
}

// openAPIPath turns gin's /a/:id into OpenAPI's /a/{id}, with the names of
// the path parameters.
func openAPIPath(p string) (string, []string) {
	parts := strings.Split(p, "/")
	var params []string
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			params = append(params, s[1:])
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/"), params
}

// pathParameter describes a path parameter: ids are UUIDs (tags are named).
func pathParameter(name string) *openapi31.Parameter {
	schema := map[string]any{"type": "string"}
	desc := "The " + name + "."
	if name == "id" || strings.HasSuffix(name, "_id") {
		schema["format"] = "uuid"
		desc = "A UUID."
	}
	return &openapi31.Parameter{Name: name, In: openapi31.ParameterInPath, Required: ptr(true), Schema: schema, Description: &desc}
}

func ptr[T any](v T) *T { return &v }

// operationID names an operation after its method and path:
// GET /api/contacts/:id/messages is getContactsByIdMessages.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, s := range strings.Split(strings.TrimPrefix(path, "/api"), "/") {
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			b.WriteString("By")
			s = s[1:]
		}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// accessDescription says in words what the operation requires.
func accessDescription(rt web.Route) string {
	lines := []string{"Access: " + rt.Access.String() + "."}
	if rt.SessionOnly {
		lines = append(lines, "Session only: API keys are refused.")
	}
	if rt.Bulk {
		lines = append(lines, "Bulk: draws on the bulk rate limit.")
	}
	if rt.Unlimited {
		lines = append(lines, "Not rate limited.")
	}
	return strings.Join(lines, "\n\n")
}

// tags lists the routes' tags in the order they first appear.
func tags(routes []web.Route) []openapi31.Tag {
	var out []openapi31.Tag
	seen := map[string]bool{}
	for _, rt := range routes {
		if rt.Tag != "" && !seen[rt.Tag] {
			seen[rt.Tag] = true
			out = append(out, openapi31.Tag{Name: rt.Tag})
		}
	}
	return out
}

// newNamer returns the namer of the document's schemas: a type's own
// name (PageOfCampaignResp for web.Page[campaignResp]), prefixed with its
// package's when two packages have types of one name (AccountsapiTestResp
// and WebhooksapiTestResp), or the name given below.
func newNamer() func(t reflect.Type, defaultName string) string {
	given := map[reflect.Type]string{
		reflect.TypeFor[web.MessageResp](): "Confirmation", // not a message: {"message": "done"}
	}
	taken := map[string]reflect.Type{}
	return func(t reflect.Type, defaultName string) string {
		name, ok := given[t]
		if !ok {
			name = typeName(t)
		}
		// swaggest names a form's schema apart from the JSON one of the
		// same type.
		if strings.HasPrefix(defaultName, "FormData") {
			name = "FormData" + name
		}
		if other, ok := taken[name]; ok && other != t {
			return defaultName
		}
		taken[name] = t
		return name
	}
}

// typeName is a Go type's name without its package, capitalised; the
// arguments of a generic type follow "Of".
func typeName(t reflect.Type) string {
	name, args, generic := strings.Cut(t.Name(), "[")
	name = capitalize(name)
	if generic {
		for _, a := range strings.Split(strings.TrimSuffix(args, "]"), ",") {
			name += "Of" + capitalize(a[strings.LastIndex(a, ".")+1:])
		}
	}
	return name
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// defName is how the document names a type's schema.
func defName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return typeName(t)
}
