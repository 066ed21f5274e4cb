package netproxy

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestSplitTarget(t *testing.T) {
	tests := []struct {
		method, target string
		host           string
		port           int
		wantErr        bool
	}{
		{method: "CONNECT", target: "example.com:443", host: "example.com", port: 443},
		{method: "CONNECT", target: "[2001:db8::1]:443", host: "2001:db8::1", port: 443},
		{method: "CONNECT", target: "192.0.2.1:22", host: "192.0.2.1", port: 22},
		{method: "CONNECT", target: "example.com", wantErr: true},
		{method: "CONNECT", target: "example.com:", wantErr: true},
		{method: "CONNECT", target: "example.com:0", wantErr: true},
		{method: "CONNECT", target: "example.com:65536", wantErr: true},
		{method: "CONNECT", target: "example.com:https", wantErr: true},
		{method: "CONNECT", target: "example.com:+443", wantErr: true},
		{method: "CONNECT", target: "2001:db8::1:443", wantErr: true},
		{method: "CONNECT", target: "user@example.com:443", wantErr: true},
		{method: "CONNECT", target: "example.com:443/x", wantErr: true},
		{method: "CONNECT", target: "http://example.com:443", wantErr: true},
		{method: "CONNECT", target: ":443", wantErr: true},
		{method: "CONNECT", target: "", wantErr: true},
		{method: "GET", target: "http://example.com/", host: "example.com", port: 80},
		{method: "GET", target: "http://example.com", host: "example.com", port: 80},
		{method: "GET", target: "http://example.com:8080/a?b#c", host: "example.com", port: 8080},
		{method: "GET", target: "HTTP://Example.COM/", host: "Example.COM", port: 80},
		{method: "POST", target: "http://[2001:db8::1]/", host: "2001:db8::1", port: 80},
		{method: "GET", target: "http://[2001:db8::1]:81/", host: "2001:db8::1", port: 81},
		{method: "GET", target: "http://example.com:/", host: "example.com", port: 80},
		{method: "GET", target: "http://bücher.example/", host: "bücher.example", port: 80},
		{method: "GET", target: "/path", wantErr: true},
		{method: "GET", target: "*", wantErr: true},
		{method: "GET", target: "https://example.com/", wantErr: true},
		{method: "GET", target: "ftp://example.com/", wantErr: true},
		{method: "GET", target: "http://user:pw@example.com/", wantErr: true},
		{method: "GET", target: "http:///path", wantErr: true},
		{method: "GET", target: "http:example.com", wantErr: true},
		{method: "GET", target: "http://example.com:99999/", wantErr: true},
		{method: "GET", target: "http://2001:db8::1/", wantErr: true},
		{method: "GET", target: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			host, port, err := splitTarget(tc.method, tc.target)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("splitTarget(%q) = %q, %d; want an error", tc.target, host, port)
				}
				return
			}
			if err != nil || host != tc.host || port != tc.port {
				t.Fatalf("splitTarget(%q) = %q, %d, %v; want %q, %d", tc.target, host, port, err, tc.host, tc.port)
			}
		})
	}
}

// FuzzSplitTarget: the request-target parser never panics, and what it
// returns is a host without brackets or delimiters and a port in range,
// which round-trips through the authority form.
func FuzzSplitTarget(f *testing.F) {
	for _, s := range []string{
		"example.com:443", "[2001:db8::1]:443", "http://example.com/", "http://[::1]:80/x",
		"http://user@x/", "http://example.com:/", "x:0", "[::1%25eth0]:1", "/origin", "*",
	} {
		f.Add(true, s)
		f.Add(false, s)
	}
	f.Fuzz(func(t *testing.T, connect bool, target string) {
		method := "GET"
		if connect {
			method = "CONNECT"
		}
		host, port, err := splitTarget(method, target)
		if err != nil {
			return
		}
		if host == "" || port < 1 || port > 65535 {
			t.Fatalf("splitTarget(%s %q) = %q, %d", method, target, host, port)
		}
		if strings.ContainsAny(host, "[]/?#@ \t\r\n") {
			t.Fatalf("splitTarget(%s %q): host %q has delimiters", method, target, host)
		}
		h2, p2, err := splitAuthority(net.JoinHostPort(host, strconv.Itoa(port)), 0)
		if err != nil || h2 != host || p2 != port {
			t.Fatalf("authority of %q:%d does not round-trip: %q %d %v", host, port, h2, p2, err)
		}
	})
}
