package netproxy

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// splitTarget returns the destination of an HTTP proxy request from its
// request-target: the authority form "host:port" of CONNECT (the port is
// required), or the absolute form "http://host[:port]/path" of any other
// method (port 80 by default). Host comes back as written, brackets
// removed; normalizeHost judges it.
func splitTarget(method, target string) (host string, port int, err error) {
	if method == "CONNECT" {
		return splitAuthority(target, 0)
	}
	if target == "" || target[0] == '/' || target == "*" {
		return "", 0, errors.New("not a proxy request: the request-target must be absolute (http://host/path)")
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return "", 0, errors.New("bad request-target")
	}
	if u.Scheme != "http" {
		return "", 0, errors.New("only http:// URLs are proxied; use CONNECT for TLS")
	}
	if u.User != nil {
		return "", 0, errors.New("user information in the request-target")
	}
	if u.Opaque != "" || u.Host == "" {
		return "", 0, errors.New("no host in the request-target")
	}
	return splitAuthority(u.Host, 80)
}

// splitAuthority splits "host:port", "[v6]:port", or, when defPort is not
// 0, a bare host or "[v6]". The port is decimal, 1-65535.
func splitAuthority(a string, defPort int) (host string, port int, err error) {
	if a == "" {
		return "", 0, errors.New("empty authority")
	}
	if strings.ContainsAny(a, "/?#@ \t\r\n") {
		return "", 0, errors.New("bad authority")
	}
	h, ps, err := net.SplitHostPort(a)
	if err != nil {
		if defPort == 0 {
			return "", 0, errors.New("want host:port")
		}
		// no port: the whole is the host; an IPv6 address needs brackets
		h, ps = a, ""
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		} else if strings.ContainsAny(h, "[]:") {
			return "", 0, errors.New("bad authority")
		}
	}
	if h == "" {
		return "", 0, errors.New("empty host")
	}
	if strings.Contains(h, ":") && !strings.HasPrefix(a, "[") {
		return "", 0, errors.New("IPv6 addresses need brackets")
	}
	if ps == "" {
		if defPort == 0 {
			return "", 0, errors.New("want host:port")
		}
		return h, defPort, nil
	}
	port, err = parsePort(ps)
	if err != nil {
		return "", 0, err
	}
	return h, port, nil
}
