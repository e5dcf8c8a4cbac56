package docframe

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
)

// Method is a whitelisted method, served at /api/method/<Name> (Frappe's
// @frappe.whitelist()). Its result is the answer's message.
type Method struct {
	Name string
	// Verbs are the HTTP methods it answers (nil: GET and POST).
	Verbs []string
	Call  func(ctx context.Context, c *Call) (any, error)
}

// Call is one call of a method: who calls, in which organization, with
// which arguments (query parameters and the body's keys; JSON values are
// kept as decoded, query values are text), and the framework to work with.
type Call struct {
	Actor          Actor
	OrganizationID uuid.UUID
	Args           map[string]any
	Frame          *Service
}

// String answers an argument as text: strings as they are, other values
// as JSON ("" when absent).
func (c *Call) String(key string) string {
	switch v := c.Args[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Allows reports whether m answers verb.
func (m Method) Allows(verb string) bool {
	if m.Verbs == nil {
		return verb == "GET" || verb == "POST"
	}
	return slices.Contains(m.Verbs, verb)
}

// CallMethod runs a whitelisted method; a name nobody whitelisted is a
// DoesNotExistError (404), a verb the method does not answer a
// PermissionError.
func (s *Service) CallMethod(ctx context.Context, name, verb string, c *Call) (any, error) {
	m, ok := s.methods[name]
	if !ok {
		return nil, notFoundf("Method %s not found (not whitelisted)", show(name))
	}
	c.Frame = s
	if !m.Allows(verb) {
		return nil, permissionf("Method %s does not answer %s", m.Name, verb)
	}
	return m.Call(ctx, c)
}

// builtinMethods are the Frappe methods clients (frappe-js-sdk) call.
func builtinMethods() []Method {
	return []Method{
		{Name: "ping", Call: func(context.Context, *Call) (any, error) { return "pong", nil }},
		{Name: "frappe.auth.get_logged_user", Call: func(_ context.Context, c *Call) (any, error) { return c.Actor.Email, nil }},
		{Name: "frappe.client.get_count", Call: func(ctx context.Context, c *Call) (any, error) {
			return c.Frame.Count(ctx, c.Actor, c.OrganizationID, c.String("doctype"), ListArgs{Filters: emptyList(c.String("filters")),
				OrFilters: emptyList(c.String("or_filters")), Limit: -1})
		}},
		{Name: "frappe.client.get_list", Call: func(ctx context.Context, c *Call) (any, error) {
			args, err := ListArgsFrom(c.String)
			if err != nil {
				return nil, err
			}
			if f := c.String("fieldname"); args.Fields == "" && f != "" {
				args.Fields = f
			}
			return c.Frame.List(ctx, c.Actor, c.OrganizationID, c.String("doctype"), args)
		}},
		{Name: "frappe.client.get", Call: func(ctx context.Context, c *Call) (any, error) {
			return c.Frame.Get(ctx, c.Actor, c.OrganizationID, c.String("doctype"), c.String("name"))
		}},
		{Name: "frappe.client.get_value", Call: func(ctx context.Context, c *Call) (any, error) {
			fields := c.String("fieldname")
			if fields == "" {
				fields = "name"
			}
			rows, err := c.Frame.List(ctx, c.Actor, c.OrganizationID, c.String("doctype"), ListArgs{Fields: fields,
				Filters: nameFilter(c.String("filters")), Limit: 1})
			if err != nil || len(rows) == 0 {
				return nil, err
			}
			return rows[0], nil
		}},
		{Name: "frappe.client.insert", Verbs: []string{"POST"}, Call: func(ctx context.Context, c *Call) (any, error) {
			doc, ok := c.Args["doc"].(map[string]any)
			if !ok {
				if err := json.Unmarshal([]byte(c.String("doc")), &doc); err != nil || doc == nil {
					return nil, Validationf("doc must be a JSON object with a doctype")
				}
			}
			dt, _ := doc["doctype"].(string)
			return c.Frame.Insert(ctx, c.Actor, c.OrganizationID, dt, doc)
		}},
		{Name: "frappe.client.delete", Verbs: []string{"POST", "DELETE"}, Call: func(ctx context.Context, c *Call) (any, error) {
			return nil, c.Frame.Delete(ctx, c.Actor, c.OrganizationID, c.String("doctype"), c.String("name"))
		}},
		{Name: "frappe.client.cancel", Verbs: []string{"POST"}, Call: func(ctx context.Context, c *Call) (any, error) {
			return c.Frame.Cancel(ctx, c.Actor, c.OrganizationID, c.String("doctype"), c.String("name"))
		}},
		{Name: "frappe.client.submit", Verbs: []string{"POST"}, Call: func(ctx context.Context, c *Call) (any, error) {
			doc, ok := c.Args["doc"].(map[string]any)
			if !ok {
				if err := json.Unmarshal([]byte(c.String("doc")), &doc); err != nil || doc == nil {
					return nil, Validationf("doc must be a JSON object with doctype and name")
				}
			}
			dt, _ := doc["doctype"].(string)
			name, _ := doc["name"].(string)
			return c.Frame.Submit(ctx, c.Actor, c.OrganizationID, dt, name)
		}},
	}
}

// emptyList treats frappe-js-sdk's empty filters ("[]" or nothing) alike.
func emptyList(s string) string {
	if s == "[]" || s == "{}" {
		return ""
	}
	return s
}

// nameFilter lets get_value's filters be a bare name, as Frappe allows.
func nameFilter(s string) string {
	if s == "" || s[0] == '[' || s[0] == '{' {
		return s
	}
	b, _ := json.Marshal(map[string]string{"name": s})
	return string(b)
}

// Int answers an argument as a whole number (def when absent).
func (c *Call) Int(key string, def int) (int, error) {
	s := c.String(key)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, Validationf("%s must be a whole number, not %s", key, fmt.Sprintf("%q", s))
	}
	return n, nil
}
