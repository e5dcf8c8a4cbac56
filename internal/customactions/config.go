package customactions

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/models"
)

// Icons and ActionTypes are the spec's lists.
var (
	Icons       = []string{"ticket", "user", "bar-chart", "link", "phone", "mail", "file-text", "external-link", "zap", "globe", "code"}
	ActionTypes = []string{models.ActionWebhook, models.ActionURL, models.ActionJavaScript}
	// Methods a webhook action may use.
	Methods = []string{"POST", "GET", "PUT", "PATCH"}
)

// Limits on a configuration: a button's settings, not a payload store.
const (
	maxURL         = 2048
	maxHeaders     = 20
	maxHeaderName  = 100
	maxHeaderValue = 2000
	maxBody        = 64 << 10
	maxCode        = 64 << 10
)

// reservedHeaders are set by the HTTP client from the request itself; a
// configured value would contradict it.
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Te", "Upgrade", "Trailer"}

// webhookConfig is a webhook action's settings, normalised.
type webhookConfig struct {
	URL     string
	Method  string
	Headers map[string]string
	Body    string
}

// urlConfig is a URL action's settings, normalised.
type urlConfig struct {
	URL          string
	OpenInNewTab bool
}

// normalize checks raw as the configuration of an action of type t and
// answers it with its defaults filled in and only the type's keys (others
// are dropped: a configuration carried over from another type keeps what
// the new type uses). policy is the outbound address rule webhook targets
// are held to; URL actions are opened by the user's browser, not by the
// service, so only their scheme is checked.
func normalize(t string, raw map[string]any, policy safehttp.Policy) (map[string]any, error) {
	if raw == nil {
		return nil, apperr.Invalidf("config is required")
	}
	r := reader{raw: raw}
	switch t {
	case models.ActionWebhook:
		c, err := r.webhook()
		if err != nil {
			return nil, err
		}
		// Checked again when the action runs, and at every connection:
		// a name's address can change after the save.
		if err := policy.ValidateURL(sampleURL(c.URL)); err != nil {
			return nil, apperr.Invalidf("config.url: %s", safehttp.Public(err))
		}
		headers := make(map[string]any, len(c.Headers))
		for k, v := range c.Headers {
			headers[k] = v
		}
		return map[string]any{"url": c.URL, "method": c.Method, "headers": headers, "body": c.Body}, nil
	case models.ActionURL:
		c, err := r.url()
		if err != nil {
			return nil, err
		}
		return map[string]any{"url": c.URL, "open_in_new_tab": c.OpenInNewTab}, nil
	case models.ActionJavaScript:
		code, err := r.str("code")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(code) == "" {
			return nil, apperr.Invalidf("config.code is required for a javascript action")
		}
		if len(code) > maxCode {
			return nil, apperr.Invalidf("config.code is longer than %d bytes", maxCode)
		}
		return map[string]any{"code": code}, nil
	}
	return nil, apperr.Invalidf("action_type must be one of %s", strings.Join(ActionTypes, ", "))
}

// webhookOf and urlOf read a stored, normalised configuration.
func webhookOf(cfg map[string]any) webhookConfig {
	c, _ := reader{raw: cfg}.webhook()
	return c
}

func urlOf(cfg map[string]any) urlConfig {
	c, _ := reader{raw: cfg}.url()
	return c
}

// reader reads the keys of a configuration object, saying which key is
// wrong and why.
type reader struct{ raw map[string]any }

func (r reader) str(key string) (string, error) {
	v, ok := r.raw[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", apperr.Invalidf("config.%s must be a string", key)
	}
	return s, nil
}

func (r reader) webhook() (webhookConfig, error) {
	var c webhookConfig
	var err error
	if c.URL, err = r.targetURL(); err != nil {
		return c, err
	}
	if c.Method, err = r.str("method"); err != nil {
		return c, err
	}
	c.Method = strings.ToUpper(strings.TrimSpace(c.Method))
	if c.Method == "" {
		c.Method = "POST"
	}
	if !slices.Contains(Methods, c.Method) {
		return c, apperr.Invalidf("config.method must be one of %s", strings.Join(Methods, ", "))
	}
	if c.Headers, err = r.headers(); err != nil {
		return c, err
	}
	if c.Body, err = r.str("body"); err != nil {
		return c, err
	}
	if strings.TrimSpace(c.Body) == "" {
		c.Body = ""
	}
	if c.Body != "" {
		if c.Method == "GET" {
			return c, apperr.Invalidf("config.body: a GET webhook sends no body; use POST, PUT or PATCH")
		}
		if len(c.Body) > maxBody {
			return c, apperr.Invalidf("config.body is longer than %d bytes", maxBody)
		}
		if err := checkVariables("config.body", c.Body); err != nil {
			return c, err
		}
		if !json.Valid([]byte(fill(c.Body, sampleValues(), jsonString))) {
			return c, apperr.Invalidf("config.body must be a JSON template: valid JSON once the variables are filled in (put variables inside JSON strings, as in {\"name\": \"{{contact.name}}\"})")
		}
	}
	return c, nil
}

func (r reader) headers() (map[string]string, error) {
	out := map[string]string{}
	v, ok := r.raw["headers"]
	if !ok || v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apperr.Invalidf("config.headers must be an object of strings")
	}
	if len(m) > maxHeaders {
		return nil, apperr.Invalidf("config.headers: at most %d headers", maxHeaders)
	}
	seen := map[string]bool{}
	for name, val := range m {
		s, ok := val.(string)
		if !ok {
			return nil, apperr.Invalidf("config.headers must be an object of strings (%q is not a string)", name)
		}
		if !validHeaderName(name) || len(name) > maxHeaderName {
			return nil, apperr.Invalidf("config.headers: %q is not a valid header name", name)
		}
		canon := strings.ToLower(name)
		if seen[canon] {
			return nil, apperr.Invalidf("config.headers: %q is given twice", name)
		}
		seen[canon] = true
		if slices.ContainsFunc(reservedHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
			return nil, apperr.Invalidf("config.headers: %s is set by the service", name)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, apperr.Invalidf("config.headers: the value of %s contains a line break", name)
		}
		if len(s) > maxHeaderValue {
			return nil, apperr.Invalidf("config.headers: the value of %s is longer than %d bytes", name, maxHeaderValue)
		}
		if err := checkVariables(fmt.Sprintf("config.headers.%s", name), s); err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func (r reader) url() (urlConfig, error) {
	c := urlConfig{OpenInNewTab: true}
	var err error
	if c.URL, err = r.targetURL(); err != nil {
		return c, err
	}
	if v, ok := r.raw["open_in_new_tab"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return c, apperr.Invalidf("config.open_in_new_tab must be a boolean")
		}
		c.OpenInNewTab = b
	}
	return c, nil
}

// targetURL reads config.url: required, an absolute http or https URL
// without credentials, whose variables (in the path, query and fragment
// only) are known ones.
func (r reader) targetURL() (string, error) {
	raw, err := r.str("url")
	if err != nil {
		return "", err
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", apperr.Invalidf("config.url is required")
	}
	if len(raw) > maxURL {
		return "", apperr.Invalidf("config.url is longer than %d characters", maxURL)
	}
	if err := checkVariables("config.url", raw); err != nil {
		return "", err
	}
	if origin, _ := splitOrigin(raw); strings.Contains(origin, "{{") {
		return "", apperr.Invalidf("config.url: variables may be used in the path, query and fragment, not in the scheme or host")
	}
	if err := checkTarget(sampleURL(raw)); err != nil {
		return "", apperr.Invalidf("config.url %s", err)
	}
	return raw, nil
}

// sampleURL fills a URL template with the sample values (which are never
// dot segments).
func sampleURL(tmpl string) string {
	u, _ := fillURL(tmpl, sampleValues())
	return u
}

// checkTarget is the URL rule for every target, saved or filled in:
// absolute, http or https, a host, no credentials. (A javascript: or data:
// URL behind the redirect would run in the service's name.)
func checkTarget(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must be an http or https URL")
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("must have a host")
	case u.User != nil:
		return fmt.Errorf("must not contain credentials")
	}
	return nil
}
