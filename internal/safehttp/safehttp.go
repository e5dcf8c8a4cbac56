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
	// tests (OUTBOUND_ALLOW_PRIVATE). Link-local (cloud metadata) and
	// unspecified addresses stay refused.
	AllowPrivate bool
}

// ErrBlocked is returned for a refused target.
var ErrBlocked = errors.New("target address is not allowed")

// cgnat is the carrier-grade NAT range, private in practice.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// checkAddr refuses addresses that reach inside the network.
func (p Policy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	switch {
	case a.IsUnspecified(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsMulticast(),
		a.IsInterfaceLocalMulticast(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%w: %s is unspecified, link-local or multicast", ErrBlocked, a)
	case a.IsLoopback(), a.IsPrivate(), cgnat.Contains(a):
		if !p.AllowPrivate {
			return fmt.Errorf("%w: %s is a loopback or private address", ErrBlocked, a)
		}
	}
	return nil
}

// ValidateURL checks a URL when it is saved: http or https, a host, and no
// internal host name or IP literal.
func (p Policy) ValidateURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return errors.New("url must be an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("url scheme must be http or https")
	}
	if u.User != nil {
		return errors.New("url must not contain credentials")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return errors.New("url must have a host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(a)
	}
	if host == "0.0.0.0" {
		return fmt.Errorf("%w: 0.0.0.0", ErrBlocked)
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
