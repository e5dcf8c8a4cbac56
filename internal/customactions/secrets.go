package customactions

import (
	"maps"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/secrets"
)

// A configuration's secrets are write-only (docs/API.md, "Secrets in
// configurations"): every webhook header value and the credentials in a
// URL are answered masked to everyone who reads actions (every Agent
// does), and an update that sends the mask back keeps the stored value.

// MaskConfig is a stored configuration as the API answers it: header
// values and the URL's credentials replaced by secrets.Mask.
func MaskConfig(cfg map[string]any) map[string]any {
	out := maps.Clone(cfg)
	if out == nil {
		return map[string]any{}
	}
	if u, ok := out["url"].(string); ok {
		out["url"] = secrets.MaskURL(u)
	}
	if h, ok := out["headers"].(map[string]any); ok {
		masked := make(map[string]any, len(h))
		for k, v := range h {
			if s, ok := v.(string); ok && s != "" {
				v = secrets.Mask
			}
			masked[k] = v
		}
		out["headers"] = masked
	}
	return out
}

// keepSecrets resolves the masked values of a given configuration against
// the stored one (nil on create, where there is nothing to keep): the mask
// in the URL or as a header's value becomes the stored value, as long as
// the URL's scheme, host and port are unchanged. It checks nothing else:
// normalize does.
func keepSecrets(in, stored map[string]any) (map[string]any, error) {
	out := maps.Clone(in)
	storedURL, _ := stored["url"].(string)
	newURL, _ := in["url"].(string)
	if newURL != "" {
		kept, err := secrets.KeepURL(newURL, storedURL)
		if err != nil {
			return nil, apperr.Invalidf("config.url: %v", err)
		}
		out["url"] = kept
	}
	h, ok := in["headers"].(map[string]any)
	if !ok {
		return out, nil
	}
	given := map[string]string{}
	for k, v := range h {
		if s, ok := v.(string); ok {
			given[k] = s
		}
	}
	storedHeaders := map[string]string{}
	if sh, ok := stored["headers"].(map[string]any); ok {
		for k, v := range sh {
			if s, ok := v.(string); ok {
				storedHeaders[k] = s
			}
		}
	}
	kept, err := secrets.KeepHeaders(given, storedHeaders, secrets.SameOrigin(newURL, storedURL))
	if err != nil {
		return nil, apperr.Invalidf("config.headers.%v", err)
	}
	headers := maps.Clone(h)
	for k, v := range kept {
		headers[k] = v
	}
	out["headers"] = headers
	return out, nil
}
