package web

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// Origins tells whether a request was sent by a page of this service: a
// browser names the page's origin in the Origin header of every request
// that is not a simple GET, and a foreign page cannot forge it. The job
// monitor (HTTP Basic) and the console's session cookie, both of which a
// browser attaches to any request for this site, accept unsafe requests
// only from the service's own origin.
type Origins struct {
	public  string // PUBLIC_URL's origin, "" when unset
	proxies []netip.Prefix
}

// NewOrigins builds the check from PUBLIC_URL and TRUSTED_PROXIES. A request
// is from this service when its Origin is the origin the request was
// addressed to (scheme and Host; the scheme is https over TLS, or what a
// trusted proxy says in X-Forwarded-Proto), or PUBLIC_URL's.
func NewOrigins(publicURL string, trustedProxies []string) Origins {
	return Origins{public: publicOrigin(publicURL), proxies: parseProxies(trustedProxies)}
}

// Ours reports whether src (an Origin or Referer header's value) is this
// service as seen by request c.
func (o Origins) Ours(c *gin.Context, src string) bool {
	u, err := url.Parse(src)
	if src == "" || err != nil || u.Host == "" {
		return false
	}
	from := origin(u.Scheme, u.Host)
	return from == o.requestOrigin(c) || (o.public != "" && from == o.public)
}

// FromOrigin reports whether request c carries an Origin header naming
// this service. A request without one is refused: every browser sends it
// on the POST requests this guards.
func (o Origins) FromOrigin(c *gin.Context) bool { return o.Ours(c, c.GetHeader("Origin")) }

// Secure reports whether the browser reached this service over HTTPS: the
// request came over TLS, or its Origin (already checked to be ours) is an
// https one, which behind a proxy that terminates TLS is PUBLIC_URL's or
// what the trusted proxy said.
func (o Origins) Secure(c *gin.Context) bool {
	if c.Request.TLS != nil {
		return true
	}
	u, err := url.Parse(c.GetHeader("Origin"))
	return err == nil && strings.EqualFold(u.Scheme, "https")
}

// requestOrigin is the scheme and host the client addressed. Behind a
// trusted proxy that terminates TLS, X-Forwarded-Proto says the scheme; from
// anyone else the header is ignored.
func (o Origins) requestOrigin(c *gin.Context) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	} else if p := strings.ToLower(c.GetHeader("X-Forwarded-Proto")); (p == "https" || p == "http") && o.trustedPeer(c) {
		scheme = p
	}
	return origin(scheme, c.Request.Host)
}

// trustedPeer reports whether the direct peer is one of TRUSTED_PROXIES.
func (o Origins) trustedPeer(c *gin.Context) bool {
	ip, err := netip.ParseAddr(c.RemoteIP())
	if err != nil {
		return false
	}
	for _, p := range o.proxies {
		if p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// SafeMethod reports whether method m only reads (GET, HEAD, OPTIONS), which
// a cross-site check lets through.
func SafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// origin renders scheme://host lower-cased, without the scheme's default port.
func origin(scheme, host string) string {
	scheme, host = strings.ToLower(scheme), strings.ToLower(host)
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return scheme + "://" + host
}

// parseProxies turns TRUSTED_PROXIES entries (addresses or CIDR ranges, as
// gin accepts them) into prefixes; invalid entries are skipped (gin reports
// them when the router is built).
func parseProxies(list []string) []netip.Prefix {
	var out []netip.Prefix
	for _, e := range list {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(e); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

// publicOrigin is PUBLIC_URL's origin, "" when unset or invalid.
func publicOrigin(raw string) string {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || u.Host == "" {
		return ""
	}
	return origin(u.Scheme, u.Host)
}
