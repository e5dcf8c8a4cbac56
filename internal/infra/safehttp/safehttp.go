// Package safehttp is the one HTTP client for URLs that users supply
// (outbound webhooks, media links, custom actions). It refuses internal
// targets twice: when a URL is saved (ValidateURL, by name and IP literal)
// and when a connection is made (the dialer checks the address DNS resolved
// to), so a hostname that resolves, or later re-resolves, to an internal
// address is still refused, and so is a redirect to one.
package safehttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Policy decides which targets are allowed.
type Policy struct {
	// AllowPrivate admits loopback and private-network targets (and the
	// localhost, .local and .internal names), for self-hosted setups and
	// tests (OUTBOUND_ALLOW_PRIVATE). Link-local (cloud metadata),
	// unspecified and "this network" addresses stay refused.
	AllowPrivate bool
}

// ErrBlocked is returned for a refused target. Its text names the address,
// for the server's log only: see Public.
var ErrBlocked = errors.New("target address is not allowed")

// What callers may show of a failure; see Public.
const (
	NotAllowed  = "the address is not allowed"
	Unreachable = "could not be reached"
)

// urlError is a ValidateURL complaint about the form of the URL: it quotes
// nothing but fixed text, so callers may show it.
type urlError string

func (e urlError) Error() string { return string(e) }

// Public is what a caller may be told of err, an error of ValidateURL or of
// a request made with Client: the complaint about a malformed URL,
// NotAllowed for a refused target, and Unreachable for anything else. The
// error's own text never reaches the caller: a dial error names the
// address a host name resolved to, which would map the internal network
// for whoever can choose the URL. Log the error itself.
func Public(err error) string {
	var ue urlError
	switch {
	case errors.Is(err, ErrBlocked):
		return NotAllowed
	case errors.As(err, &ue):
		return string(ue)
	}
	return Unreachable
}

// Special-purpose IPv4 ranges that are neither Go's private nor loopback
// ranges but reach inside networks all the same.
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // "this host on this network": 0.0.0.0 reaches localhost
	cgnat       = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT, private in practice
	benchmark   = netip.MustParsePrefix("198.18.0.0/15") // network benchmarking, never public
)

// IPv6 ranges that carry an IPv4 address, which a translator or relay may
// deliver to: the embedded address gets the IPv4 rules.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")   // well-known NAT64 prefix: the last 32 bits
	nat64Loc   = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64 (RFC 8215): translates to the local network
	sixToFour  = netip.MustParsePrefix("2002::/16")      // 6to4: bits 16-47
	ipv4Compat = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible addresses: the last 32 bits
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, if it is
// in one of the ranges that embed one.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), ipv4Compat.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// checkAddr refuses addresses that reach inside the network.
func (p Policy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		if err := p.checkAddr(v4); err != nil {
			return fmt.Errorf("%w (embedded in %s)", err, a)
		}
		return nil
	}
	switch {
	case a.IsUnspecified(), thisNetwork.Contains(a), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsMulticast(),
		a.IsInterfaceLocalMulticast(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%w: %s is unspecified, this-network, link-local or multicast", ErrBlocked, a)
	case a.IsLoopback(), a.IsPrivate(), cgnat.Contains(a), benchmark.Contains(a), nat64Loc.Contains(a):
		if !p.AllowPrivate {
			return fmt.Errorf("%w: %s is a loopback or private address", ErrBlocked, a)
		}
	}
	return nil
}

// ValidateURL checks a URL when it is saved: http or https, a host, and no
// internal host name or IP literal. Show its error through Public.
func (p Policy) ValidateURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return urlError("must be an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return urlError("scheme must be http or https")
	}
	if u.User != nil {
		return urlError("must not contain credentials")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return urlError("must have a host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(a)
	}
	if !p.AllowPrivate && (host == "localhost" || strings.HasSuffix(host, ".localhost") ||
		strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal")) {
		return fmt.Errorf("%w: %s is an internal host name", ErrBlocked, host)
	}
	return nil
}

// Client returns an HTTP client that enforces the policy at dial time and
// on every redirect.
func (p Policy) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		// Control runs after DNS resolution, for the exact address about to
		// be connected: this is what defeats DNS rebinding.
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			a, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("%w: unparsable address %q", ErrBlocked, host)
			}
			return p.checkAddr(a)
		},
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial on our behalf, past the check
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return p.ValidateURL(req.URL.String())
		},
	}
}

// Head is a convenience for HEAD requests with a context.
func Head(ctx context.Context, c *http.Client, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}
