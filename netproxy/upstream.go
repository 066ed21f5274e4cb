package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// An upstream proxy (a corporate one) is how cordon's proxy reaches the
// network when the host may not connect out itself: sandbox-runtime's
// parentProxy, or, when that is unset, cordon's own HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY, with sandbox-runtime's meaning. Every
// destination is decided by the policy first, as always; an allowed one
// is then reached through the upstream proxy, never directly behind its
// back: a tunnel (CONNECT, SOCKS5) with a CONNECT to it, a plain http://
// request in absolute form. The upstream resolves the name, so cordon does
// not: the checks of the addresses a name resolves to apply only to what
// goes directly (NO_PROXY, loopback).

// Upstream is an upstream proxy configuration.
type Upstream struct {
	// HTTP carries plain http:// requests; HTTPS carries tunnels
	// (CONNECT, SOCKS5 clients) and falls back on HTTP. A plain request
	// goes directly when only HTTPS is set, as with curl.
	HTTP, HTTPS *url.URL
	// NoProxy is what goes directly.
	NoProxy Bypass
	// TLS, when set, is the client configuration for an https:// upstream
	// (default: this host's roots; the upstream's name as server name).
	TLS *tls.Config
	// Sockets are proxies on unix sockets that some destinations go
	// through instead, whatever NO_PROXY says (sandbox-runtime's
	// mitmProxy); the first that matches takes a destination.
	Sockets []SocketProxy
}

// SocketProxy is an HTTP proxy on a unix socket for the destinations
// its Domains match (patterns of ParsePattern).
type SocketProxy struct {
	Path    string
	Domains []string
	rules   *Rules
}

// Bypass is a NO_PROXY list as sandbox-runtime reads it (and Go's
// x/net/http/httpproxy): "*" for everything; host name suffixes
// ("example.com" and ".example.com" both match example.com and its
// subdomains; a leading "*." is dropped; a ":port" is ignored); IP
// addresses and CIDR ranges.
type Bypass struct {
	all      bool
	suffixes []string
	prefixes []netip.Prefix
}

// ParseNoProxy reads a comma-separated NO_PROXY list. A malformed CIDR
// range is ignored, as sandbox-runtime does.
func ParseNoProxy(s string) Bypass {
	var n Bypass
	for e := range strings.SplitSeq(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			continue
		case e == "*":
			n.all = true
			continue
		case strings.Contains(e, "/"):
			if p, err := netip.ParsePrefix(e); err == nil {
				n.prefixes = append(n.prefixes, p.Masked())
			}
			continue
		}
		if h, _, err := net.SplitHostPort(e); err == nil && strings.HasPrefix(e, "[") {
			e = h
		}
		e = strings.Trim(e, "[]")
		if a, err := netip.ParseAddr(e); err == nil {
			a = a.Unmap()
			n.prefixes = append(n.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		if i := strings.LastIndexByte(e, ':'); i >= 0 {
			if _, err := strconv.Atoi(e[i+1:]); err == nil {
				e = e[:i]
			}
		}
		e = strings.TrimPrefix(e, "*")
		if e != "" && e != "." {
			n.suffixes = append(n.suffixes, e)
		}
	}
	return n
}

// Match reports whether host (a canonical name or an address) goes
// directly.
func (n Bypass) Match(host string) bool {
	if n.all {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		for _, p := range n.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	for _, s := range n.suffixes {
		if v, ok := strings.CutPrefix(s, "."); ok {
			if host == v || strings.HasSuffix(host, s) {
				return true
			}
		} else if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return false
}

// route returns the upstream proxy that a connection to host goes
// through, or nil when it goes directly: no upstream, NO_PROXY, or this
// host's loopback (a name under localhost or a loopback address), which
// never goes through one. tunnel: a CONNECT or SOCKS5 tunnel, not a plain
// http:// request.
func (u *Upstream) route(host string, port int, tunnel bool) *url.URL {
	if u == nil {
		return nil
	}
	for i := range u.Sockets {
		sp := &u.Sockets[i]
		if sp.rules == nil {
			continue
		}
		if m, err := sp.rules.Match(host, port); err == nil && m.Verdict == Allowed {
			return &url.URL{Scheme: "unix", Path: sp.Path}
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || u.NoProxy.Match(host) {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	if tunnel && u.HTTPS != nil {
		return u.HTTPS
	}
	return u.HTTP
}

// ParseProxyURL reads an upstream proxy's URL: http:// or https://, with
// a host and an optional port, user and password; nothing else. Without
// a scheme it is http://, as curl reads HTTP_PROXY.
func ParseProxyURL(s string) (*url.URL, error) {
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", redactURLString(s))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s: an upstream proxy is http:// or https://, not %s://", Redact(u), u.Scheme)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%s: no host", Redact(u))
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%s: an upstream proxy's URL has no path or query", Redact(u))
	}
	if p := u.Port(); p != "" {
		if _, err := parsePort(p); err != nil {
			return nil, fmt.Errorf("%s: %v", Redact(u), err)
		}
	}
	u.Path = ""
	return u, nil
}

// Redact is u without its password, for logs and messages.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	if _, ok := u.User.Password(); ok {
		c := *u
		c.User = url.UserPassword(u.User.Username(), "xxxxx")
		return c.String()
	}
	return u.String()
}

// redactURLString hides what could be a password in a string that does
// not parse as a URL.
func redactURLString(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "xxxxx" + s[i:]
		}
		return "xxxxx" + s[i:]
	}
	return s
}

// ResolveUpstream is the upstream proxy of sandbox-runtime's parentProxy
// keys httpURL, httpsURL and noProxy, each falling back, when empty, on
// cordon's own environment (getenv): HTTP_PROXY or http_proxy, HTTPS_PROXY
// or https_proxy (then the http one), NO_PROXY or no_proxy. A bad value
// of a key is an error; a bad value of a variable is left out, as
// sandbox-runtime does, and said in warnings. Nil when neither URL is set.
func ResolveUpstream(httpURL, httpsURL, noProxy string, getenv func(string) string) (u *Upstream, warnings []string, err error) {
	pick := func(key, value string, names ...string) (*url.URL, error) {
		if value != "" {
			pu, err := ParseProxyURL(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			return pu, nil
		}
		for _, n := range names {
			v := getenv(n)
			if v == "" {
				continue
			}
			pu, err := ParseProxyURL(v)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s is not used as the upstream proxy: %v", n, err))
				return nil, nil
			}
			return pu, nil
		}
		return nil, nil
	}
	hu, err := pick("parentProxy.http", httpURL, "HTTP_PROXY", "http_proxy")
	if err != nil {
		return nil, warnings, err
	}
	su, err := pick("parentProxy.https", httpsURL, "HTTPS_PROXY", "https_proxy")
	if err != nil {
		return nil, warnings, err
	}
	if su == nil {
		su = hu
	}
	if hu == nil && su == nil {
		return nil, warnings, nil
	}
	if noProxy == "" {
		noProxy = getenv("NO_PROXY")
		if noProxy == "" {
			noProxy = getenv("no_proxy")
		}
	}
	return &Upstream{HTTP: hu, HTTPS: su, NoProxy: ParseNoProxy(noProxy)}, warnings, nil
}

// UpstreamError is a failure of the upstream proxy: it did not answer, or
// it refused a tunnel.
type UpstreamError struct {
	// Proxy is the upstream proxy's URL without its password.
	Proxy string
	// Status is the upstream's answer to CONNECT, when it answered one
	// other than 2xx.
	Status string
	Err    error
}

func (e *UpstreamError) Error() string {
	if e.Status != "" {
		return fmt.Sprintf("the upstream proxy %s answered %s", e.Proxy, e.Status)
	}
	return fmt.Sprintf("the upstream proxy %s did not answer: %v", e.Proxy, dialError(e.Err))
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// refused reports whether the upstream refused by policy (403, 407).
func (e *UpstreamError) refused() bool {
	return strings.HasPrefix(e.Status, "403") || strings.HasPrefix(e.Status, "407")
}

// proxyAuthorization is the Proxy-Authorization value of u's user and
// password, or "".
func proxyAuthorization(u *url.URL) string {
	if u.User == nil {
		return ""
	}
	pass, _ := u.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
}

// dialProxy connects to the upstream proxy u, over TLS for https://, or
// to its unix socket.
func (p *Proxy) dialProxy(ctx context.Context, u *url.URL) (net.Conn, error) {
	if u.Scheme == "unix" {
		c, err := p.dialer.DialContext(ctx, "unix", u.Path)
		if err != nil {
			return nil, &UpstreamError{Proxy: Redact(u), Err: err}
		}
		return c, nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	c, err := p.dialAddr(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, &UpstreamError{Proxy: Redact(u), Err: err}
	}
	if u.Scheme != "https" {
		return c, nil
	}
	cfg := &tls.Config{}
	if p.cfg.Upstream.TLS != nil {
		cfg = p.cfg.Upstream.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, &UpstreamError{Proxy: Redact(u), Err: err}
	}
	return tc, nil
}

// dialVia opens a tunnel to d's destination through the upstream proxy u
// with CONNECT.
func (p *Proxy) dialVia(ctx context.Context, u *url.URL, d Decision) (net.Conn, error) {
	c, err := p.dialProxy(ctx, u)
	if err != nil {
		return nil, err
	}
	fail := func(e *UpstreamError) (net.Conn, error) {
		c.Close()
		e.Proxy = Redact(u)
		return nil, e
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	authority := d.dest()
	head := "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n"
	if a := proxyAuthorization(u); a != "" {
		head += "Proxy-Authorization: " + a + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		return fail(&UpstreamError{Err: err})
	}
	hr := &headReader{r: c}
	br := bufio.NewReader(hr)
	resp, err := readResponseHead(br, hr, &http.Request{Method: "CONNECT"})
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("it closed the connection without an answer")
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fail(&UpstreamError{Err: err})
	}
	if resp.StatusCode/100 != 2 {
		return fail(&UpstreamError{Status: printable(resp.Status) + " to CONNECT " + authority})
	}
	if !stop() {
		return fail(&UpstreamError{Err: ctx.Err()})
	}
	if br.Buffered() > 0 {
		// the destination spoke first, and its bytes came with the answer
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}
