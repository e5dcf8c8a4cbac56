package secrets

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Secrets inside configurations (a webhook's headers, the password in a
// URL, an api_key query parameter) are write-only: the API answers them
// masked, and an update that sends the mask back keeps what is stored.
//
// The rule, the same everywhere (docs/API.md, "Secrets in configurations"):
//   - every header value that is not empty is answered as Mask, whatever the
//     header's name (any header may carry a credential);
//   - in a URL, the password of its userinfo and the value of every query
//     parameter whose name looks like a credential (CredentialParam) are
//     answered as Mask;
//   - an update that sends Mask where a value was masked keeps the stored
//     value (of the header of the same name, case-insensitively; of the same
//     parameter, by its name and place among the parameters of that name),
//     provided the URL's scheme, host and port are unchanged: a masked value
//     never follows a configuration to a new target. Another value replaces
//     the stored one; a header left out is removed.

// Mask stands for a stored secret in API answers.
const Mask = "********"

// Why a masked value cannot be kept. Callers put the field's name before
// them.
var (
	ErrNothingToKeep = errors.New("the masked value " + Mask + " keeps a stored value, and there is none to keep: send the value itself")
	ErrTargetChanged = errors.New("a masked value (" + Mask + ") is kept only while the URL's scheme, host and port stay the same: " +
		"send the value itself with a new target")
)

// MaskHeaders is h with every non-empty value replaced by Mask (nil for
// nil).
func MaskHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if v != "" {
			v = Mask
		}
		out[k] = v
	}
	return out
}

// KeepHeaders resolves the headers of an update against the stored ones:
// a value equal to Mask is the stored value of the header of the same name
// (case-insensitively). sameTarget says whether the request still goes
// where the stored headers were meant for (SameOrigin); when it does not,
// a masked value is refused (ErrTargetChanged). The error names the
// header.
func KeepHeaders(in, stored map[string]string, sameTarget bool) (map[string]string, error) {
	if in == nil {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	for name, v := range in {
		if v == Mask {
			kept, ok := lookupFold(stored, name)
			if !ok || kept == "" {
				return nil, fmt.Errorf("%s: %w", name, ErrNothingToKeep)
			}
			if !sameTarget {
				return nil, fmt.Errorf("%s: %w", name, ErrTargetChanged)
			}
			v = kept
		}
		out[name] = v
	}
	return out, nil
}

func lookupFold(m map[string]string, name string) (string, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// CredentialParam reports whether a query parameter's name looks like it
// carries a credential: once unescaped, lower-cased and stripped of "-",
// "_" and ".", it contains token, secret, passw, pwd, auth, signature,
// credential or session, ends with key (key, apikey, access_key...), or is
// sig.
func CredentialParam(name string) bool {
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	n := strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(name))
	if n == "sig" || strings.HasSuffix(n, "key") {
		return true
	}
	for _, w := range []string{"token", "secret", "passw", "pwd", "auth", "signature", "credential", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// urlParts is a URL cut as written, without decoding or re-encoding (a
// template's {{variables}} stay as they are).
type urlParts struct {
	scheme   string // up to and with "://", "" when there is none
	userinfo string // without the "@"
	hasUser  bool
	hostport string
	path     string
	query    string // without the "?"
	hasQuery bool
	fragment string // with the "#"
}

func cut(raw string) urlParts {
	var p urlParts
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		p.scheme, rest = rest[:i+3], rest[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		authority := rest[:end]
		rest = rest[end:]
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			p.userinfo, p.hasUser, authority = authority[:at], true, authority[at+1:]
		}
		p.hostport = authority
	}
	if i := strings.Index(rest, "#"); i >= 0 {
		rest, p.fragment = rest[:i], rest[i:]
	}
	p.path, p.query, p.hasQuery = strings.Cut(rest, "?")
	return p
}

func (p urlParts) String() string {
	var b strings.Builder
	b.WriteString(p.scheme)
	if p.hasUser {
		b.WriteString(p.userinfo + "@")
	}
	b.WriteString(p.hostport + p.path)
	if p.hasQuery {
		b.WriteString("?" + p.query)
	}
	b.WriteString(p.fragment)
	return b.String()
}

// password is the userinfo's password as written, and whether it has one.
func (p urlParts) password() (string, bool) {
	if !p.hasUser {
		return "", false
	}
	_, pass, ok := strings.Cut(p.userinfo, ":")
	return pass, ok && pass != ""
}

func (p *urlParts) setPassword(pass string) {
	user, _, _ := strings.Cut(p.userinfo, ":")
	p.userinfo = user + ":" + pass
}

// MaskURL is raw with the password of its userinfo and the values of its
// credential parameters (CredentialParam) replaced by Mask; the rest is
// left as written.
func MaskURL(raw string) string {
	p := cut(raw)
	if _, ok := p.password(); ok {
		p.setPassword(Mask)
	}
	if p.hasQuery {
		params := strings.Split(p.query, "&")
		for i, kv := range params {
			if name, v, ok := strings.Cut(kv, "="); ok && v != "" && CredentialParam(name) {
				params[i] = name + "=" + Mask
			}
		}
		p.query = strings.Join(params, "&")
	}
	return p.String()
}

// SameOrigin reports whether two URLs have the same scheme, host and port
// (compared case-insensitively, as written).
func SameOrigin(a, b string) bool {
	pa, pb := cut(a), cut(b)
	return pa.scheme != "" && strings.EqualFold(pa.scheme, pb.scheme) && strings.EqualFold(pa.hostport, pb.hostport)
}

// KeepURL resolves the URL of an update against the stored one: a Mask
// in the userinfo's password or as a credential parameter's value is the
// stored value at the same place (the parameter of the same name, the
// n-th of that name for the n-th). The origin must be unchanged
// (ErrTargetChanged), and a Mask left anywhere else is refused
// (ErrNothingToKeep): it would be sent as the literal text.
func KeepURL(in, stored string) (string, error) {
	if !strings.Contains(in, Mask) {
		return in, nil
	}
	if stored == "" {
		return "", ErrNothingToKeep
	}
	if !SameOrigin(in, stored) {
		return "", ErrTargetChanged
	}
	// out is the result; probe is the same with the kept values left
	// empty, to find a Mask that kept nothing.
	out, probe, s := cut(in), cut(in), cut(stored)
	if pass, ok := out.password(); ok && pass == Mask {
		kept, ok := s.password()
		if !ok {
			return "", ErrNothingToKeep
		}
		out.setPassword(kept)
		probe.setPassword("")
	}
	if out.hasQuery {
		var storedParams []string
		if s.hasQuery {
			storedParams = strings.Split(s.query, "&")
		}
		seen := map[string]int{}
		params := strings.Split(out.query, "&")
		probed := strings.Split(out.query, "&")
		for i, kv := range params {
			name, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			nth := seen[name]
			seen[name]++
			if v != Mask || !CredentialParam(name) {
				continue
			}
			kept, found := nthParam(storedParams, name, nth)
			if !found || kept == "" {
				return "", ErrNothingToKeep
			}
			params[i], probed[i] = name+"="+kept, name+"="
		}
		out.query, probe.query = strings.Join(params, "&"), strings.Join(probed, "&")
	}
	if strings.Contains(probe.String(), Mask) {
		return "", ErrNothingToKeep
	}
	return out.String(), nil
}

// nthParam is the value of the n-th (from 0) parameter named name.
func nthParam(params []string, name string, n int) (string, bool) {
	for _, kv := range params {
		k, v, _ := strings.Cut(kv, "=")
		if k != name {
			continue
		}
		if n == 0 {
			return v, true
		}
		n--
	}
	return "", false
}
