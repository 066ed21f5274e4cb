package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStripResponseHeaders: the fields stripResponseHeaders names never
// reach the command, in any spelling a server may read as theirs.
func TestStripResponseHeaders(t *testing.T) {
	up := newUpstream(t, false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set_Cookie", "b=2")
		w.Header().Add("X-Internal.Token", "t")
		w.Header().Set("X-Kept", "k")
		io.WriteString(w, "ok")
	})
	r := newRig(t, Config{AllowedDomains: []string{"allowed.test", "127.0.0.1"}, StripResponseHeaders: []string{"set-cookie", "X-INTERNAL-TOKEN"}}, e2eResolver)
	resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://allowed.test:%d/", up.port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, h := range []string{"Set-Cookie", "Set_cookie", "X-Internal.token"} {
		if v := resp.Header.Values(h); len(v) > 0 {
			t.Errorf("the client got %s: %q", h, v)
		}
	}
	if resp.Header.Get("X-Kept") != "k" {
		t.Errorf("an other field was stripped: %v", resp.Header)
	}
}

// TestRequireHostMatch: under requireHostMatch, a request whose Host
// names another host or port than its target is answered 421 and
// recorded, and so is a tunnel whose TLS server name or first request
// names another host; without it, Host is replaced by the target's.
func TestRequireHostMatch(t *testing.T) {
	up := newUpstream(t, false, nil)
	r := newRig(t, Config{AllowedDomains: []string{"allowed.test", "*.wild.test", "127.0.0.1"}, RequireHostMatch: true}, e2eResolver)
	for _, tc := range []struct {
		host string
		code int
	}{
		{fmt.Sprintf("allowed.test:%d", up.port), 200},
		{fmt.Sprintf("ALLOWED.test.:%d", up.port), 200},
		{"allowed.test", 421},
		{fmt.Sprintf("a.wild.test:%d", up.port), 421},
	} {
		got := exchangeRaw(t, r.http, fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", up.port, tc.host), 5*time.Second)
		if want := fmt.Sprintf("HTTP/1.1 %d ", tc.code); !strings.HasPrefix(got, want) {
			t.Errorf("Host %s: %q; want %s", tc.host, got, want)
		}
		if tc.code == 421 {
			if d := r.last(t); d.Reason != ReasonHostMismatch || !strings.Contains(d.Rule, "requireHostMatch") {
				t.Errorf("Host %s: decision %s", tc.host, d)
			}
		}
	}
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", echo), "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	// an allowed name, but another one than the tunnel's
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: a.wild.test\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := io.ReadAll(br); len(got) != 0 {
		t.Errorf("the tunnel passed a request for another host: %q", got)
	}
	if d := r.last(t); d.Reason != ReasonHostMismatch {
		t.Errorf("tunnel: decision %s", d)
	}
}

// TestRefuseOpaqueTunnels: under refuseOpaqueTunnels every CONNECT and
// SOCKS5 tunnel is refused and recorded, even to an allowed name; plain
// http:// requests are decided as always.
func TestRefuseOpaqueTunnels(t *testing.T) {
	up := newUpstream(t, false, nil)
	r := newRig(t, Config{AllowedDomains: []string{"allowed.test", "127.0.0.1"}, RefuseOpaqueTunnels: true}, e2eResolver)
	_, _, resp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", up.port), "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != string(ReasonTunnel) || !strings.Contains(string(body), "refuseOpaqueTunnels") {
		t.Errorf("CONNECT: %s %q %s", resp.Status, resp.Header.Get("X-Proxy-Error"), body)
	}
	if d := r.last(t); d.Reason != ReasonTunnel {
		t.Errorf("decision %s", d)
	}
	_, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("allowed.test:%d", up.port))
	if err == nil || !strings.Contains(err.Error(), "not allowed by ruleset") {
		t.Errorf("SOCKS5: %v", err)
	}
	hresp, err := proxyClient(r.http).Get(fmt.Sprintf("http://allowed.test:%d/", up.port))
	if err != nil {
		t.Fatal(err)
	}
	hresp.Body.Close()
	if hresp.StatusCode != 200 {
		t.Errorf("http://: %s", hresp.Status)
	}
	if n := up.conns.Load(); n != 1 {
		t.Errorf("the server got %d connections; want the http:// one", n)
	}
}

// TestSocketProxy: sandbox-runtime's mitmProxy: the domains it lists go
// through the proxy on its unix socket (tunnels with CONNECT, http:// in
// absolute form), ahead of an upstream proxy and NO_PROXY; the rest as
// before; cordon's decisions come first.
func TestSocketProxy(t *testing.T) {
	up := newUpstream(t, false, nil)
	dir, err := os.MkdirTemp("", "mitm") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mitm := newParent(t, "", false)
	mitm.Listener.Close()
	mitm.Config.Handler = http.HandlerFunc(mitm.serve)
	go mitm.Config.Serve(l)
	t.Cleanup(func() { l.Close() })
	r := newRig(t, Config{
		AllowedDomains: []string{"api.inspect.test", "other.test", "denied.inspect.test", "127.0.0.1"},
		DeniedDomains:  []string{"denied.inspect.test"},
		Upstream:       &Upstream{NoProxy: ParseNoProxy("*"), Sockets: []SocketProxy{{Path: sock, Domains: []string{"*.inspect.test"}}}},
	}, StaticResolver{"other.test": addrs("127.0.0.1")})
	c := proxyClient(r.http)
	for _, tc := range []struct {
		host string
		code int
		via  bool
	}{
		{"api.inspect.test", 200, true},
		{"other.test", 200, false},
		{"denied.inspect.test", 403, false},
	} {
		resp, err := c.Get(fmt.Sprintf("http://%s:%d/m", tc.host, up.port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %s", tc.host, resp.Status)
		}
		if d := r.last(t); (d.Via != "") != tc.via {
			t.Errorf("%s: decision %s", tc.host, d)
		}
	}
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("api.inspect.test:%d", echo), "[x]")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := bufio.NewReader(br).Peek(3); err != nil || string(got) != "[x]" {
		t.Errorf("tunnel through the socket: %q, %v", got, err)
	}
	want := fmt.Sprint([]string{fmt.Sprintf("GET http://api.inspect.test:%d/m", up.port), fmt.Sprintf("CONNECT api.inspect.test:%d", echo)})
	if got := fmt.Sprint(mitm.requests()); got != want {
		t.Errorf("the socket's proxy was asked %s; want %s", got, want)
	}
}

// TestServePortExternal: with a proxy of the user's for a port
// (httpProxyPort, socksProxyPort), the sandbox's port relays every
// connection to it as it is, and the other port is cordon's; one that does
// not answer gets a 502 naming it on the HTTP port.
func TestServePortExternal(t *testing.T) {
	ext := echoServer(t, "tcp4", "127.0.0.1:0")
	up := newUpstream(t, false, nil)
	p, err := New(Config{AllowedDomains: []string{"127.0.0.1"}, ExternalHTTP: fmt.Sprintf("127.0.0.1:%d", ext), ExternalSOCKS: fmt.Sprintf("127.0.0.1:%d", closedPort(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	listen := func(socks bool) string {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.ServePort(l, socks)
		return l.Addr().String()
	}
	httpAddr, socksAddr := listen(false), listen(true)
	// the HTTP port: whatever is sent reaches the external proxy (here an
	// echo) untouched, even a request cordon would refuse
	req := "GET http://unlisted.test/ HTTP/1.1\r\nHost: unlisted.test\r\n\r\n"
	c := dialProxy(t, httpAddr)
	io.WriteString(c, req)
	c.(*net.TCPConn).CloseWrite()
	if got := readAllTimeout(t, c); got != req {
		t.Errorf("relayed %q; want %q", got, req)
	}
	// the SOCKS port's external proxy does not answer: closed
	c = dialProxy(t, socksAddr)
	c.Write([]byte{5, 1, 0})
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := c.Read(make([]byte, 8)); n != 0 {
		t.Errorf("the SOCKS port answered %d bytes", n)
	}
	// without an external proxy, the port is cordon's
	q, err := New(Config{AllowedDomains: []string{"127.0.0.1"}, ExternalHTTP: fmt.Sprintf("127.0.0.1:%d", closedPort(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	go q.ServePort(l, true)
	resp, err := proxyClient(l.Addr().String()).Get(fmt.Sprintf("http://127.0.0.1:%d/", up.port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("cordon's own port: %s", resp.Status)
	}
	l2, _ := net.Listen("tcp4", "127.0.0.1:0")
	go q.ServePort(l2, false)
	got := exchangeRaw(t, l2.Addr().String(), "GET http://127.0.0.1/ HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 502 ") || !strings.Contains(got, "X-Proxy-Error: upstream-proxy-error") || !strings.Contains(got, "does not answer") {
		t.Errorf("a proxy of the user's that does not answer: %q", got)
	}
}
