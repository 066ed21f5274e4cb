package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// The test servers listen on 127.0.0.1, which the allow lists below name
// literally — as a user reaching a service on the host would — so that
// names resolving there pass the rebinding check. rebind.test resolves to
// 127.0.0.2, which is not listed, and proves the check still holds.
var e2eResolver = StaticResolver{
	"allowed.test":          addrs("127.0.0.1"),
	"a.wild.test":           addrs("127.0.0.1"),
	"wild.test":             addrs("127.0.0.1"),
	"denied.test":           addrs("127.0.0.1"),
	"unlisted.test":         addrs("127.0.0.1"),
	"rebind.test":           addrs("127.0.0.2"),
	"own.test":              addrs("192.0.2.2"),
	"six.test":              addrs("::1"),
	"xn--bcher-kva.example": addrs("127.0.0.1"), // bücher.example
}

var e2eAllow = []string{"allowed.test", "*.wild.test", "denied.test", "rebind.test", "own.test", "127.0.0.1", "[::1]", "six.test", "bücher.example", "nowhere.test"}
var e2eDeny = []string{"denied.test"}

func newE2E(t *testing.T) *rig {
	return newRig(t, Config{AllowedDomains: e2eAllow, DeniedDomains: e2eDeny}, e2eResolver)
}

func proxyClient(proxyAddr string) *http.Client {
	u := &url.URL{Scheme: "http", Host: proxyAddr}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}, Timeout: 10 * time.Second}
}

// upstream is an HTTP test server on 127.0.0.1 that records what it got.
type upstream struct {
	*httptest.Server
	port  int
	conns atomic.Int32
	last  atomic.Pointer[http.Request]
}

func newUpstream(t *testing.T, tlsToo bool, h http.HandlerFunc) *upstream {
	u := &upstream{}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen-Host", r.Host)
			fmt.Fprintf(w, "hello %s %s", r.Method, r.RequestURI)
		}
	}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.last.Store(r)
		h(w, r)
	}))
	u.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	if tlsToo {
		u.StartTLS()
	} else {
		u.Start()
	}
	t.Cleanup(u.Close)
	u.port = u.Listener.Addr().(*net.TCPAddr).Port
	return u
}

func TestHTTPForward(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, nil)
	c := proxyClient(r.http)
	for _, host := range []string{"allowed.test", "ALLOWED.test.", "a.wild.test", "127.0.0.1", "bücher.example"} {
		resp, err := c.Get(fmt.Sprintf("http://%s:%d/p?q=1", host, up.port))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "hello GET /p?q=1" {
			t.Errorf("%s: %s %q", host, resp.Status, body)
		}
		d := r.last(t)
		if !d.Allowed || d.Protocol != "http" || d.Port != up.port || d.Run != "run-1" {
			t.Errorf("%s: decision %s", host, d)
		}
	}
	// the Host sent is the canonical name that was checked
	if got := up.last.Load().Host; got != fmt.Sprintf("xn--bcher-kva.example:%d", up.port) {
		t.Errorf("upstream saw Host %q", got)
	}
}

func TestHTTPRefusals(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, nil)
	c := proxyClient(r.http)
	for _, tc := range []struct {
		host   string
		reason Reason
		status int
	}{
		{"unlisted.test", ReasonAllowlist, 403},
		{"wild.test", ReasonAllowlist, 403},
		{"denied.test", ReasonDenylist, 403},
		{"rebind.test", ReasonPrivate, 403},
		{"own.test", ReasonPrivate, 403},
		{"127.0.0.2", ReasonAllowlist, 403},
		{"nowhere.test", "", 502},
	} {
		t.Run(tc.host, func(t *testing.T) {
			before := up.conns.Load()
			resp, err := c.Get(fmt.Sprintf("http://%s:%d/", tc.host, up.port))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			xerr := resp.Header.Get("X-Proxy-Error")
			if resp.StatusCode != tc.status || tc.reason != "" && xerr != string(tc.reason) {
				t.Fatalf("%s: %s, X-Proxy-Error %q", tc.host, resp.Status, xerr)
			}
			if !strings.Contains(string(body), tc.host) {
				t.Errorf("body does not name %s:\n%s", tc.host, body)
			}
			if up.conns.Load() != before {
				t.Error("the upstream server was contacted")
			}
			if d := r.last(t); d.Allowed || d.Reason != tc.reason {
				t.Errorf("decision %s", d)
			}
		})
	}
}

// TestKeepAlive: one client connection carries several requests, and the
// proxy reuses its upstream connection.
func TestKeepAlive(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, nil)
	c := proxyClient(r.http)
	var reused []bool
	for i := range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET",
			fmt.Sprintf("http://allowed.test:%d/%d", up.port, i), nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if fmt.Sprint(reused) != "[false true true]" {
		t.Errorf("client connection reused: %v; want [false true true]", reused)
	}
	if n := up.conns.Load(); n != 1 {
		t.Errorf("upstream saw %d connections; want 1", n)
	}
	if n := r.count(); n != 3 {
		t.Errorf("%d decisions; want one per request", n)
	}
}

// TestHopByHop: hop-by-hop headers stop at the proxy both ways, the rest
// pass; the Host header is the request-target's, whatever the client says.
func TestHopByHop(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Resp-Hop")
		w.Header().Set("X-Resp-Hop", "1")
		w.Header().Set("X-Resp-End", "1")
		w.Header().Set("Keep-Alive", "timeout=1")
		w.Header().Set("X-Seen-Host", r.Host)
		io.WriteString(w, "ok")
	})
	conn := dialProxy(t, r.http)
	fmt.Fprintf(conn, "GET http://allowed.test:%d/x HTTP/1.1\r\nHost: evil.test\r\nConnection: X-Hop, keep-alive\r\n"+
		"X-Hop: 1\r\nProxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nKeep-Alive: 300\r\n"+
		"X-End: 1\r\n\r\n", up.port)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	got := up.last.Load()
	for _, h := range []string{"X-Hop", "Proxy-Authorization", "Proxy-Connection", "Keep-Alive", "X-Forwarded-For", "Via"} {
		if v := got.Header.Get(h); v != "" {
			t.Errorf("upstream got %s: %s", h, v)
		}
	}
	if got.Header.Get("X-End") != "1" {
		t.Error("upstream lost an end-to-end header")
	}
	if want := fmt.Sprintf("allowed.test:%d", up.port); got.Host != want {
		t.Errorf("upstream got Host %q; want %q", got.Host, want)
	}
	if resp.Header.Get("X-Resp-Hop") != "" || resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("client got hop-by-hop response headers: %v", resp.Header)
	}
	if resp.Header.Get("X-Resp-End") != "1" {
		t.Error("client lost an end-to-end response header")
	}
}

// TestHTTPBodies: request and response bodies stream both ways, chunked or
// not.
func TestHTTPBodies(t *testing.T) {
	r := newE2E(t)
	var readErr atomic.Value // the upstream's last error reading a body
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request) {
		// Go's server is not full duplex: read all before answering
		b, err := io.ReadAll(r.Body)
		if err != nil {
			readErr.Store(fmt.Sprintf("after %d bytes: %v", len(b), err))
		}
		w.Write(b)
	})
	c := proxyClient(r.http)
	// 1 MiB and 3 bytes: several of the forwarder's buffers and a tail
	big := append(bytes.Repeat([]byte("0123456789abcdef"), 1<<16), "end"...)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = bytes.NewReader(big)
		if chunked {
			body = io.MultiReader(bytes.NewReader(big)) // unknown length
		}
		resp, err := c.Post(fmt.Sprintf("http://allowed.test:%d/echo", up.port), "application/octet-stream", body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, big) {
			// (seen once under load, 524288 bytes, before the errors
			// were recorded)
			t.Errorf("chunked=%v: echoed %d bytes; want %d (reading the answer: %v; the upstream reading the body: %v)",
				chunked, len(got), len(big), err, readErr.Load())
		}
	}
}

// TestHTTPAnswerBeforeBodyEnd: an upstream may answer as soon as it has a
// body's last byte, before the forwarder has finished its write of the
// body. The answer must still reach the client whole: with net/http's
// Transport, the upstream connection the answer was streaming on was
// closed and the client got a truncated answer (TestHTTPBodies, once under
// load: 524288 of 1048579 bytes). The forwarder's last write of the body
// is held until the client has the answer's head, which is what load did
// by chance.
func TestHTTPAnswerBeforeBodyEnd(t *testing.T) {
	r := newE2E(t)
	closed := make(chan struct{}) // the forwarder closed its connection
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		select {
		case <-closed:
		case <-time.After(200 * time.Millisecond):
		}
		io.WriteString(w, "second")
	})
	body := append(bytes.Repeat([]byte("0123456789abcdef"), 4<<10), "end of body"...)
	answered := make(chan struct{})
	dial := r.p.dialDest // no connection yet: the forwarder is not in use
	r.p.dialDest = func(ctx context.Context, d Decision) (net.Conn, error) {
		c, err := dial(ctx, d)
		if err != nil {
			return nil, err
		}
		return &holdConn{Conn: c, end: []byte("end of body"), hold: answered, closed: closed}, nil
	}
	resp, err := proxyClient(r.http).Post(fmt.Sprintf("http://allowed.test:%d/", up.port), "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	close(answered)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "first second" || err != nil {
		t.Errorf("answer %q, %v; want %q", got, err, "first second")
	}
}

// holdConn holds the write that ends with end until hold is closed, and
// closes closed when it is closed.
type holdConn struct {
	net.Conn
	end    []byte
	hold   <-chan struct{}
	closed chan struct{}
	last   []byte // the tail of what was written
	once   sync.Once
}

func (c *holdConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.last = append(c.last, b[:n]...)
	c.last = c.last[max(len(c.last)-len(c.end), 0):]
	if bytes.Equal(c.last, c.end) {
		select {
		case <-c.hold:
		case <-time.After(10 * time.Second):
		}
	}
	return n, err
}

func (c *holdConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func TestHTTPNotProxyRequests(t *testing.T) {
	r := newE2E(t)
	for _, line := range []string{"GET / HTTP/1.1", "GET https://allowed.test/ HTTP/1.1", "CONNECT allowed.test HTTP/1.1"} {
		conn := dialProxy(t, r.http)
		fmt.Fprintf(conn, "%s\r\nHost: allowed.test\r\n\r\n", line)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 400 || resp.Header.Get("X-Proxy-Error") != errBadRequest {
			t.Errorf("%q: %s %q", line, resp.Status, resp.Header.Get("X-Proxy-Error"))
		}
	}
}

func TestUpstreamDown(t *testing.T) {
	r := newE2E(t)
	port := closedPort(t)
	resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://allowed.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || resp.Header.Get("X-Proxy-Error") != errUpstream {
		t.Errorf("%s %q", resp.Status, resp.Header.Get("X-Proxy-Error"))
	}
	conn := dialProxy(t, r.http)
	fmt.Fprintf(conn, "CONNECT allowed.test:%d HTTP/1.1\r\n\r\n", port)
	resp, err = http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 502 {
		t.Errorf("CONNECT to a closed port: %s", resp.Status)
	}
}

// TestHTTPS: TLS through CONNECT, with the server's certificate checked
// end to end.
func TestHTTPS(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, true, nil)
	pool := x509.NewCertPool()
	pool.AddCert(up.Certificate())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.http}),
		// httptest's certificate is for example.com: the chain is checked
		// for that name, while the server name sent is the tunnel's (the
		// proxy refuses a tunnel whose ClientHello names another site).
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "example.com"})
			return err
		}},
	}}
	resp, err := c.Get(fmt.Sprintf("https://allowed.test:%d/secure", up.port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello GET /secure" {
		t.Errorf("got %q", body)
	}
	if d := r.last(t); !d.Allowed || d.Protocol != "connect" {
		t.Errorf("decision %s", d)
	}
	_, err = c.Get(fmt.Sprintf("https://unlisted.test:%d/", up.port))
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to an unlisted name: %v", err)
	}
}

// connectRaw opens a CONNECT tunnel by hand; early is sent with the request.
func connectRaw(t *testing.T, proxyAddr, target, early string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s", target, target, early)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, resp
}

// TestConnectTunnel: bytes sent before the 200 are not lost, and a half
// close passes through the tunnel both ways.
func TestConnectTunnel(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", port), "early ")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	io.WriteString(conn, "and late")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(br)
	if err != nil || string(got) != "early and late" {
		t.Errorf("echo through the tunnel: %q, %v", got, err)
	}
}

// TestConfigDial: Config.Dial makes the connections to allowed
// destinations, at the addresses the decision checked, each within a
// deadline: here the only way to the echo server, which the name's address
// (TEST-NET) does not reach.
func TestConfigDial(t *testing.T) {
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	var mu sync.Mutex
	var dialed []string
	r := newRig(t, Config{
		AllowedDomains: []string{"elsewhere.test"},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, network+" "+address)
			mu.Unlock()
			if _, ok := ctx.Deadline(); !ok {
				return nil, errors.New("no deadline")
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		},
	}, StaticResolver{"elsewhere.test": addrs("192.0.2.77")})
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("elsewhere.test:%d", port), "through ")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	io.WriteString(conn, "the dialer")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(br)
	if err != nil || string(got) != "through the dialer" {
		t.Errorf("echo through the tunnel: %q, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{fmt.Sprintf("tcp 192.0.2.77:%d", port)}; !slices.Equal(dialed, want) {
		t.Errorf("Config.Dial was asked for %q, want %q", dialed, want)
	}
}

func TestConnectRefused(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	for target, reason := range map[string]Reason{
		fmt.Sprintf("unlisted.test:%d", port): ReasonAllowlist,
		fmt.Sprintf("denied.test:%d", port):   ReasonDenylist,
		fmt.Sprintf("rebind.test:%d", port):   ReasonPrivate,
		fmt.Sprintf("[::2]:%d", port):         ReasonAllowlist,
	} {
		_, _, resp := connectRaw(t, r.http, target, "")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != string(reason) {
			t.Errorf("CONNECT %s: %s %q", target, resp.Status, resp.Header.Get("X-Proxy-Error"))
		}
		if !strings.Contains(string(body), "--allow-domain") && reason != ReasonDenylist {
			t.Errorf("CONNECT %s: body does not say how to allow it:\n%s", target, body)
		}
	}
}

func socksDialer(t *testing.T, addr string) proxy.ContextDialer {
	t.Helper()
	d, err := proxy.SOCKS5("tcp", addr, nil, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	return d.(proxy.ContextDialer)
}

// TestSOCKS5 with golang.org/x/net/proxy's client: names (socks5h), IPv4
// and IPv6 addresses; and SOCKS on the HTTP port, HTTP on the SOCKS port.
func TestSOCKS5(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	port6 := echoServer(t, "tcp6", "[::1]:0")
	for _, tc := range []struct{ via, target string }{
		{r.socks, fmt.Sprintf("allowed.test:%d", port)},
		{r.socks, fmt.Sprintf("x.a.wild.test:%d", port)},
		{r.socks, fmt.Sprintf("127.0.0.1:%d", port)},
		{r.socks, fmt.Sprintf("[::1]:%d", port6)},
		{r.socks, fmt.Sprintf("six.test:%d", port6)},
		{r.http, fmt.Sprintf("allowed.test:%d", port)}, // the ports speak both
	} {
		t.Run(tc.target, func(t *testing.T) {
			if tc.target == "x.a.wild.test:"+strconv.Itoa(port) {
				// not in the resolver: refused as unresolvable, host unreachable
				_, err := socksDialer(t, tc.via).DialContext(context.Background(), "tcp", tc.target)
				if err == nil || !strings.Contains(err.Error(), "host unreachable") {
					t.Fatalf("unresolvable name: %v", err)
				}
				return
			}
			c, err := socksDialer(t, tc.via).DialContext(context.Background(), "tcp", tc.target)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// a line: what could be the start of an HTTP request line is
			// held until the line ends (see checkTunnel)
			io.WriteString(c, "ping\n")
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got := make([]byte, 5)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping\n" {
				t.Errorf("echo %q, %v", got, err)
			}
			if d := r.last(t); !d.Allowed || d.Protocol != "socks5" {
				t.Errorf("decision %s", d)
			}
		})
	}
	t.Run("http on the socks port", func(t *testing.T) {
		up := newUpstream(t, false, nil)
		resp, err := proxyClient(r.socks).Get(fmt.Sprintf("http://allowed.test:%d/", up.port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Error(resp.Status)
		}
	})
}

func TestSOCKS5Refusals(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	for _, target := range []string{
		fmt.Sprintf("unlisted.test:%d", port), fmt.Sprintf("denied.test:%d", port),
		fmt.Sprintf("rebind.test:%d", port), fmt.Sprintf("127.0.0.2:%d", port),
	} {
		_, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", target)
		if err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
			t.Errorf("%s: %v; want connection not allowed by ruleset", target, err)
		}
	}
	_, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("allowed.test:%d", closedPort(t)))
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("closed port: %v", err)
	}
	// by hand: the reply codes and the methods
	for _, tc := range []struct {
		name string
		send []byte
		want []byte
	}{
		{"auth only", []byte{5, 1, 2}, []byte{5, 0xff}},
		{"bind", []byte{5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80}, []byte{5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0}},
		{"udp", []byte{5, 1, 0, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0}, []byte{5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0}},
		{"refused", append([]byte{5, 1, 0, 5, 1, 0, 3, 13}, "unlisted.test\x00\x50"...), []byte{5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0}},
		{"bad atyp", []byte{5, 1, 0, 5, 1, 0, 9, 0, 0}, []byte{5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0}},
	} {
		conn := dialProxy(t, r.socks)
		conn.Write(tc.send)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		got := make([]byte, len(tc.want))
		if _, err := io.ReadFull(conn, got); err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got % x, %v; want % x", tc.name, got, err, tc.want)
		}
		// and nothing more: the proxy hangs up
		if n, _ := conn.Read(make([]byte, 1)); n != 0 {
			t.Errorf("%s: more after the reply", tc.name)
		}
		conn.Close()
	}
}

// TestResolvedOnce: a name is resolved once per connection, and the
// address that passed the check is the one dialled, whatever the name
// resolves to afterwards.
func TestResolvedOnce(t *testing.T) {
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	res := &countingResolver{answers: [][]netip.Addr{addrs("127.0.0.1"), addrs("127.0.0.2")}}
	r := newRig(t, Config{AllowedDomains: []string{"flip.test", "127.0.0.1"}, Resolver: res}, nil)
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("flip.test:%d", port), "")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	io.WriteString(conn, "x")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, _ := io.ReadAll(br); string(got) != "x" {
		t.Errorf("tunnel echoed %q", got)
	}
	if n := res.n(); n != 1 {
		t.Errorf("%d lookups for one connection", n)
	}
	// the second lookup answers 127.0.0.2: refused
	_, _, resp = connectRaw(t, r.http, fmt.Sprintf("flip.test:%d", port), "")
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != string(ReasonPrivate) {
		t.Errorf("after the rebinding: %s", resp.Status)
	}
}

// TestLoopbackRefusedWithoutCarveOut: a name resolving to the loopback
// test server is refused when 127.0.0.1 is not listed, with the request
// never reaching it.
func TestLoopbackRefusedWithoutCarveOut(t *testing.T) {
	r := newRig(t, Config{AllowedDomains: []string{"allowed.test"}}, e2eResolver)
	up := newUpstream(t, false, nil)
	resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://allowed.test:%d/", up.port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != string(ReasonPrivate) || up.conns.Load() != 0 {
		t.Errorf("%s %q, %d upstream connections", resp.Status, resp.Header.Get("X-Proxy-Error"), up.conns.Load())
	}
	if d := r.last(t); d.Addrs[0].String() != "127.0.0.1" {
		t.Errorf("the decision does not name the refused address: %s", d)
	}
}

// TestClose ends open tunnels and makes Serve return ErrClosed.
func TestClose(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", port), "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	sc, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("allowed.test:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	idle, err := net.Dial("tcp", r.http) // a client that has said nothing yet
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { r.p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs")
	}
	for name, c := range map[string]io.Reader{"connect": br, "socks": sc, "idle": idle} {
		if cc, ok := c.(net.Conn); ok {
			cc.SetReadDeadline(time.Now().Add(5 * time.Second))
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s: still open after Close: %v", name, err)
		}
	}
	for range 2 {
		if err := <-r.serveErr; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve returned %v", err)
		}
	}
	if err := r.p.Serve(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close: %v", err)
	}
}

// TestDialConnect: the client of cordon proxy-connect, with a server that
// speaks first (as sshd does), and a refusal.
func TestDialConnect(t *testing.T) {
	r := newE2E(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "SSH-2.0-test\r\n")
		io.Copy(c, c)
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ctx := context.Background()
	c, err := DialConnect(ctx, r.http, "allowed.test", port)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Pipe(c, strings.NewReader("SSH-2.0-client\r\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "SSH-2.0-test\r\nSSH-2.0-client\r\n" {
		t.Errorf("piped %q", got)
	}
	_, err = DialConnect(ctx, r.http, "unlisted.test", 22)
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) || re.Reason != ReasonAllowlist || !strings.Contains(re.Message, "--allow-domain unlisted.test") {
		t.Errorf("refusal: %#v", err)
	}
}

// TestConnLimit: a command that opens connection after connection to the
// proxy (each one a descriptor and a goroutine of cordon's, outside the
// sandbox's limits) gets at most maxConns of them served at once; the
// next is closed at once, and served again when one ends.
func TestConnLimit(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, nil)
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	// idle ones, HTTP ones kept alive, SOCKS ones in the handshake, tunnels
	for i := range maxConns {
		if i%4 == 3 {
			c, _, resp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", echo), "")
			if resp.StatusCode != 200 {
				t.Fatalf("connection %d: CONNECT: %s", i, resp.Status)
			}
			held = append(held, c)
			continue
		}
		c := dialProxy(t, r.http)
		held = append(held, c)
		switch i % 4 {
		case 1:
			fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			resp.Body.Close()
		case 2:
			c.Write([]byte{5})
		}
	}
	over := func() error {
		c, err := net.Dial("tcp", r.http)
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := over(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection %d: %v; want it closed at once", maxConns+1, err)
	}
	held[0].Close()
	held = held[1:]
	deadline := time.Now().Add(5 * time.Second)
	for err := over(); err != nil; err = over() {
		if time.Now().After(deadline) {
			t.Fatalf("after one ended, a new connection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKeepAliveOtherHosts: each request on a kept-alive client connection
// is decided on its own (a refused one after an allowed one reaches
// nothing), and the upstream pool never carries one name's requests on a
// connection made for another, even when both resolve to one address.
func TestKeepAliveOtherHosts(t *testing.T) {
	r := newE2E(t)
	var hosts sync.Map // upstream connection (its client's address) -> the Host of each request on it
	up := newUpstream(t, false, func(w http.ResponseWriter, req *http.Request) {
		v, _ := hosts.LoadOrStore(req.RemoteAddr, &[]string{})
		*v.(*[]string) = append(*v.(*[]string), req.Host)
	})
	c := dialProxy(t, r.http)
	br := bufio.NewReader(c)
	var got []int
	for _, host := range []string{"allowed.test", "unlisted.test", "a.wild.test", "denied.test", "allowed.test", "a.wild.test"} {
		fmt.Fprintf(c, "GET http://%s:%d/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", host, up.port)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	if want := []int{200, 403, 200, 403, 200, 200}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	hosts.Range(func(_, v any) bool {
		hs := *v.(*[]string)
		for _, h := range hs {
			if h != hs[0] {
				t.Errorf("one upstream connection carried requests for %v", hs)
				break
			}
		}
		if strings.HasPrefix(hs[0], "unlisted.test") || strings.HasPrefix(hs[0], "denied.test") {
			t.Errorf("the upstream got a request for %s", hs[0])
		}
		return true
	})
}

// TestLargeHeadsBounded: a head may be 1 MiB, but a run's proxy holds at
// most maxLargeHeads heads larger than largeHead at once. A sandboxed
// command with 1000 connections each sending 1 MiB of an unfinished head
// had cordon, on the host, outside the sandbox's memory limit, hold 1.8 GB.
func TestLargeHeadsBounded(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, nil)
	big := "GET http://allowed.test:" + fmt.Sprint(up.port) + "/ HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", largeHead+1)
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for range maxLargeHeads {
		c := dialProxy(t, r.http)
		held = append(held, c)
		if _, err := io.WriteString(c, big); err != nil {
			t.Fatal(err)
		}
	}
	// the proxy must have read past largeHead on every one of them
	for wait := time.Now().Add(5 * time.Second); len(r.p.largeHeads) < maxLargeHeads; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("%d large heads held; want %d", len(r.p.largeHeads), maxLargeHeads)
		}
	}
	send := func(finish bool) (*http.Response, error) {
		c := dialProxy(t, r.http)
		defer c.Close()
		head := big
		if finish {
			head += "\r\n\r\n"
		}
		if _, err := io.WriteString(c, head); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp, nil
	}
	resp, err := send(false)
	if err != nil || resp.StatusCode != 431 {
		t.Fatalf("a large head beyond %d at once: %v %v; want 431 at once", maxLargeHeads, resp, err)
	}
	// small heads are served meanwhile
	c := dialProxy(t, r.http)
	fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	sresp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || sresp.StatusCode != 200 {
		t.Fatalf("a small head meanwhile: %v %v", sresp, err)
	}
	// nor may a chunked body's trailer section be large meanwhile
	c = dialProxy(t, r.http)
	fmt.Fprintf(c, "POST http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-Big: %s\r\n\r\n",
		up.port, strings.Repeat("a", largeHead+1))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	tresp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || tresp.StatusCode != 400 {
		t.Fatalf("a large trailer section meanwhile: %v %v; want 400", tresp, err)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := send(true)
		if err == nil && resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a large head once the others ended: %v %v; want 200", resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
