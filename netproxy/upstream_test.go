package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseNoProxy(t *testing.T) {
	for _, tc := range []struct {
		list  string
		match []string
		not   []string
	}{
		{"example.com", []string{"example.com", "a.example.com", "a.b.example.com"}, []string{"badexample.com", "example.org", "com"}},
		{".example.com", []string{"example.com", "a.example.com"}, []string{"badexample.com"}},
		{"*.example.com", []string{"example.com", "a.example.com"}, []string{"badexample.com"}},
		{"example.com:8080", []string{"example.com", "a.example.com"}, nil},
		{" Example.COM , other.test ", []string{"example.com", "other.test"}, []string{"example.org"}},
		{"10.0.0.0/8,192.168.1.1", []string{"10.1.2.3", "192.168.1.1", "::ffff:10.0.0.1"}, []string{"11.0.0.1", "192.168.1.2", "10.example"}},
		{"[2001:db8::1]:443,fd00::/8", []string{"2001:db8::1", "fd12::1"}, []string{"2001:db8::2"}},
		{"10.0.0.0/99,bad/cidr", nil, []string{"10.0.0.1", "bad"}},
		{"*", []string{"anything.test", "192.0.2.1"}, nil},
		{"", nil, []string{"example.com"}},
	} {
		n := ParseNoProxy(tc.list)
		for _, h := range tc.match {
			if !n.Match(h) {
				t.Errorf("NO_PROXY=%q does not match %s", tc.list, h)
			}
		}
		for _, h := range tc.not {
			if n.Match(h) {
				t.Errorf("NO_PROXY=%q matches %s", tc.list, h)
			}
		}
	}
}

func TestParseProxyURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"http://proxy.corp:3128", "http://proxy.corp:3128", ""},
		{"proxy.corp:3128", "http://proxy.corp:3128", ""},
		{"https://proxy.corp", "https://proxy.corp", ""},
		{"http://user:p%40ss@proxy.corp:8080/", "http://user:p%40ss@proxy.corp:8080", ""},
		{"http://[2001:db8::1]:3128", "http://[2001:db8::1]:3128", ""},
		{"socks5://proxy.corp:1080", "", "socks5://proxy.corp:1080: an upstream proxy is http:// or https://, not socks5://"},
		{"http://", "", "http:: no host"},
		{"http://proxy.corp:99999", "", `bad port "99999"`},
		{"http://proxy.corp/path", "", "no path or query"},
		{"http://user:secret@proxy.corp:3128/x", "", "http://user:xxxxx@proxy.corp:3128/x: an upstream proxy's URL has no path or query"},
	} {
		u, err := ParseProxyURL(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseProxyURL(%q) = %v, %v; want an error with %q", tc.in, u, err, tc.err)
		case tc.err == "" && (err != nil || u.String() != tc.want):
			t.Errorf("ParseProxyURL(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestResolveUpstream: sandbox-runtime's parentProxy, each key falling
// back on cordon's own variables; HTTPS on HTTP; a bad variable left out
// with a warning, a bad key an error.
func TestResolveUpstream(t *testing.T) {
	for _, tc := range []struct {
		name                string
		httpURL, httpsURL   string
		noProxy             string
		env                 map[string]string
		wantHTTP, wantHTTPS string
		wantDirect, wantVia []string
		warnings            int
		err                 string
	}{
		{name: "nothing"},
		{name: "settings", httpURL: "http://a:1", httpsURL: "http://b:2", noProxy: "internal.test",
			env:      map[string]string{"HTTP_PROXY": "http://env:9", "NO_PROXY": "x.test"},
			wantHTTP: "http://a:1", wantHTTPS: "http://b:2", wantDirect: []string{"internal.test"}, wantVia: []string{"x.test"}},
		{name: "https falls back on http", httpURL: "http://a:1", wantHTTP: "http://a:1", wantHTTPS: "http://a:1"},
		{name: "each key falls back on its variable", httpsURL: "http://b:2",
			env:      map[string]string{"http_proxy": "env:9", "no_proxy": "x.test"},
			wantHTTP: "http://env:9", wantHTTPS: "http://b:2", wantDirect: []string{"x.test"}},
		{name: "upper case first", env: map[string]string{"HTTPS_PROXY": "http://up:1", "https_proxy": "http://low:2", "NO_PROXY": "a.test", "no_proxy": "b.test"},
			wantHTTPS: "http://up:1", wantDirect: []string{"a.test"}, wantVia: []string{"b.test"}},
		{name: "a bad variable is left out", env: map[string]string{"HTTP_PROXY": "socks5://s:1080", "HTTPS_PROXY": "http://ok:1"},
			wantHTTPS: "http://ok:1", warnings: 1},
		{name: "only bad variables", env: map[string]string{"HTTP_PROXY": "ftp://x"}, warnings: 1},
		{name: "a bad key is an error", httpURL: "socks5://s:1080", err: "parentProxy.http: socks5://s:1080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, warnings, err := ResolveUpstream(tc.httpURL, tc.httpsURL, tc.noProxy, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v; want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings %q; want %d", warnings, tc.warnings)
			}
			if tc.wantHTTP == "" && tc.wantHTTPS == "" {
				if u != nil {
					t.Fatalf("an upstream: %+v", u)
				}
				return
			}
			if got := fmt.Sprint(u.HTTP, " ", u.HTTPS); got != fmt.Sprint(nilURL(tc.wantHTTP), " ", nilURL(tc.wantHTTPS)) {
				t.Errorf("http, https %s; want %s %s", got, tc.wantHTTP, tc.wantHTTPS)
			}
			for _, h := range tc.wantDirect {
				if !u.NoProxy.Match(h) {
					t.Errorf("%s does not go directly", h)
				}
			}
			for _, h := range tc.wantVia {
				if u.NoProxy.Match(h) {
					t.Errorf("%s goes directly", h)
				}
			}
		})
	}
}

func nilURL(s string) *url.URL {
	if s == "" {
		return nil
	}
	u, _ := url.Parse(s)
	return u
}

// parent is an upstream proxy for the tests: CONNECT and absolute-form
// http:// requests, optionally asking for credentials; it resolves every
// name to 127.0.0.1 itself (the names are unknown to the test's own
// resolver: cordon must not resolve them), and records what it was asked.
type parent struct {
	*httptest.Server
	auth string // the Proxy-Authorization it wants; "": none
	mu   sync.Mutex
	got  []string // "CONNECT host:port" or "GET http://...", with " auth" when credentials came
}

func newParent(t *testing.T, auth string, tlsToo bool) *parent {
	p := &parent{auth: auth}
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	if tlsToo {
		p.StartTLS()
	} else {
		p.Start()
	}
	t.Cleanup(p.Close)
	return p
}

func (p *parent) serve(w http.ResponseWriter, r *http.Request) {
	line := r.Method + " " + r.RequestURI
	if a := r.Header.Get("Proxy-Authorization"); a != "" {
		line += " auth"
	}
	p.mu.Lock()
	p.got = append(p.got, line)
	p.mu.Unlock()
	if p.auth != "" && r.Header.Get("Proxy-Authorization") != p.auth {
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "parent: credentials, please", http.StatusProxyAuthRequired)
		return
	}
	host, port, _ := net.SplitHostPort(r.Host)
	if port == "" {
		port = "80"
	}
	if host == "refused-by-parent.test" {
		http.Error(w, "parent: no", http.StatusForbidden)
		return
	}
	target := net.JoinHostPort("127.0.0.1", port)
	if r.Method == "CONNECT" {
		up, err := net.Dial("tcp", target)
		if err != nil {
			http.Error(w, "parent: "+err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(200)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		if n := brw.Reader.Buffered(); n > 0 {
			b, _ := brw.Reader.Peek(n)
			up.Write(b)
		}
		go func() { io.Copy(up, c); up.Close() }()
		io.Copy(c, up)
		c.Close()
		return
	}
	out := r.Clone(context.Background())
	out.RequestURI = ""
	out.URL.Host = target
	out.Header.Del("Proxy-Authorization")
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, "parent: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *parent) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// TestUpstreamProxy: behind an upstream proxy, allowed destinations are
// reached through it (CONNECT for tunnels and SOCKS5 clients, absolute
// form for http://, its credentials sent), without cordon resolving their
// names; refused ones never reach it; NO_PROXY and loopback go directly;
// an upstream that is down or refuses is said so, and nothing goes
// directly instead.
func TestUpstreamProxy(t *testing.T) {
	up := newUpstream(t, false, nil)
	tlsUp := newUpstream(t, true, nil)
	par := newParent(t, "", false)
	parURL, _ := url.Parse(par.URL)
	r := newRig(t, Config{
		AllowedDomains: []string{"site.test", "*.via.test", "direct.test", "refused-by-parent.test", "127.0.0.1", "localhost"},
		DeniedDomains:  []string{"denied.via.test"},
		Upstream:       &Upstream{HTTP: parURL, HTTPS: parURL, NoProxy: ParseNoProxy("direct.test")},
	}, StaticResolver{"direct.test": addrs("127.0.0.1"), "localhost": addrs("127.0.0.1")})
	c := proxyClient(r.http)
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("X-Proxy-Error") + " " + string(b)
	}
	// http:// through the parent, in absolute form
	if code, body := get(fmt.Sprintf("http://site.test:%d/a?b", up.port)); code != 200 || !strings.Contains(body, "hello GET /a?b") {
		t.Errorf("http via the parent: %d %s", code, body)
	}
	if d := r.last(t); !d.Allowed || d.Via != par.URL || len(d.Addrs) != 0 || !strings.Contains(d.String(), "via "+par.URL) {
		t.Errorf("decision %s (via %q)", d, d.Via)
	}
	// CONNECT through the parent
	pool := x509.NewCertPool()
	pool.AddCert(tlsUp.Certificate())
	tc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.http}),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "example.com"})
			return err
		}},
	}}
	resp, err := tc.Get(fmt.Sprintf("https://a.via.test:%d/secure", tlsUp.port))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello GET /secure" {
		t.Errorf("https via the parent: %q", b)
	}
	// a SOCKS5 client's tunnel through the parent
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	sc, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("b.via.test:%d", echo))
	if err != nil {
		t.Fatal(err)
	}
	// not a token: the tunnel's check waits for the end of what could be
	// a request line
	io.WriteString(sc, "[ping]")
	sc.SetReadDeadline(time.Now().Add(5 * time.Second))
	ping := make([]byte, 6)
	if _, err := io.ReadFull(sc, ping); err != nil || string(ping) != "[ping]" {
		t.Errorf("socks5 via the parent: %q, %v", ping, err)
	}
	sc.Close()
	// refused: the parent is never asked
	if code, body := get(fmt.Sprintf("http://denied.via.test:%d/", up.port)); code != 403 || !strings.HasPrefix(body, "blocked-by-denylist") {
		t.Errorf("denied: %d %s", code, body)
	}
	if code, body := get(fmt.Sprintf("http://unlisted.test:%d/", up.port)); code != 403 || !strings.HasPrefix(body, "blocked-by-allowlist") {
		t.Errorf("unlisted: %d %s", code, body)
	}
	// NO_PROXY and loopback go directly (and are resolved and checked)
	for _, h := range []string{"direct.test", "127.0.0.1", "localhost"} {
		if code, body := get(fmt.Sprintf("http://%s:%d/d", h, up.port)); code != 200 {
			t.Errorf("%s: %d %s", h, code, body)
		}
		if d := r.last(t); d.Via != "" || len(d.Addrs) == 0 {
			t.Errorf("%s: decision %s", h, d)
		}
	}
	// the parent's own refusal of an http:// request is passed on as it is;
	// of a tunnel, it is a 502 that names it
	if code, body := get(fmt.Sprintf("http://refused-by-parent.test:%d/", up.port)); code != 403 || !strings.Contains(body, "parent: no") {
		t.Errorf("http refused by the parent: %d %s", code, body)
	}
	_, _, cresp := connectRaw(t, r.http, fmt.Sprintf("refused-by-parent.test:%d", echo), "")
	cb, _ := io.ReadAll(cresp.Body)
	if cresp.StatusCode != 502 || cresp.Header.Get("X-Proxy-Error") != errUpstreamProxy ||
		!strings.Contains(string(cb), "the upstream proxy "+par.URL+" answered 403 Forbidden to CONNECT refused-by-parent.test:") {
		t.Errorf("CONNECT refused by the parent: %s %q %s", cresp.Status, cresp.Header.Get("X-Proxy-Error"), cb)
	}
	_, err = socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("refused-by-parent.test:%d", echo))
	if err == nil || !strings.Contains(err.Error(), "connection not allowed by ruleset") {
		t.Errorf("SOCKS5 refused by the parent: %v", err)
	}
	want := []string{
		fmt.Sprintf("GET http://site.test:%d/a?b", up.port),
		fmt.Sprintf("CONNECT a.via.test:%d", tlsUp.port),
		fmt.Sprintf("CONNECT b.via.test:%d", echo),
		fmt.Sprintf("GET http://refused-by-parent.test:%d/", up.port),
		fmt.Sprintf("CONNECT refused-by-parent.test:%d", echo),
		fmt.Sprintf("CONNECT refused-by-parent.test:%d", echo),
	}
	if diff := cmp.Diff(want, par.requests()); diff != "" {
		t.Errorf("the parent was asked (-want +got):\n%s", diff)
	}
}

// TestUpstreamProxyCredentials: the user and password of the upstream's
// URL go to it as Proxy-Authorization (Basic), for tunnels and http://
// alike; with none, its 407 reaches the client.
func TestUpstreamProxyCredentials(t *testing.T) {
	up := newUpstream(t, false, nil)
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	par := newParent(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("user:p@ss word")), false)
	for _, tc := range []struct {
		name, userinfo string
		code           int
		tunnel         string // the start of the error of a tunnel, "" for none
	}{
		{"right", "user:p%40ss%20word@", 200, ""},
		{"none", "", 407, "the upstream proxy http://127.0.0.1:"},
		{"wrong", "user:nope@", 407, "the upstream proxy http://user:xxxxx@127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ParseProxyURL("http://" + tc.userinfo + par.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			r := newRig(t, Config{AllowedDomains: []string{"site.test"}, Upstream: &Upstream{HTTP: u, HTTPS: u}}, nil)
			resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://site.test:%d/x", up.port))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("http://: %s; want %d", resp.Status, tc.code)
			}
			_, _, cresp := connectRaw(t, r.http, fmt.Sprintf("site.test:%d", echo), "")
			var body []byte
			if cresp.StatusCode != 200 {
				body, _ = io.ReadAll(cresp.Body)
			}
			switch {
			case tc.tunnel == "" && cresp.StatusCode != 200:
				t.Errorf("CONNECT: %s %s", cresp.Status, body)
			case tc.tunnel != "" && (cresp.StatusCode != 502 || !strings.Contains(string(body), tc.tunnel) || !strings.Contains(string(body), "407 Proxy Authentication Required")):
				t.Errorf("CONNECT: %s %s; want a 502 with %q", cresp.Status, body, tc.tunnel)
			}
			if strings.Contains(string(body), "nope") {
				t.Errorf("the refusal shows the password: %s", body)
			}
		})
	}
}

// TestUpstreamProxyDown: an upstream proxy that does not answer is a 502
// naming it (a SOCKS5 general failure), and nothing is dialled directly,
// though the destination would answer.
func TestUpstreamProxyDown(t *testing.T) {
	up := newUpstream(t, false, nil)
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	down := "http://127.0.0.1:" + strconv.Itoa(closedPort(t))
	u, _ := ParseProxyURL(down)
	r := newRig(t, Config{AllowedDomains: []string{"allowed.test"}, Upstream: &Upstream{HTTP: u, HTTPS: u}}, e2eResolver)
	resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://allowed.test:%d/", up.port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantBody := fmt.Sprintf("cordon proxy: allowed.test:%d: the upstream proxy %s did not answer: connect: connection refused. cordon reaches the network through it, never directly (its NO_PROXY names what goes directly).\n", up.port, down)
	if resp.StatusCode != 502 || resp.Header.Get("X-Proxy-Error") != errUpstreamProxy || string(body) != wantBody {
		t.Errorf("http://: %s %q %q; want 502 %q", resp.Status, resp.Header.Get("X-Proxy-Error"), body, wantBody)
	}
	_, _, cresp := connectRaw(t, r.http, fmt.Sprintf("allowed.test:%d", echo), "")
	if cresp.StatusCode != 502 || cresp.Header.Get("X-Proxy-Error") != errUpstreamProxy {
		t.Errorf("CONNECT: %s %q", cresp.Status, cresp.Header.Get("X-Proxy-Error"))
	}
	_, err = socksDialer(t, r.socks).DialContext(context.Background(), "tcp", fmt.Sprintf("allowed.test:%d", echo))
	if err == nil || !strings.Contains(err.Error(), "general SOCKS server failure") {
		t.Errorf("SOCKS5: %v", err)
	}
	if n := up.conns.Load(); n != 0 {
		t.Errorf("the destination got %d connections directly", n)
	}
}

// TestUpstreamProxyTLS: an https:// upstream proxy is spoken to over TLS,
// its certificate checked.
func TestUpstreamProxyTLS(t *testing.T) {
	up := newUpstream(t, false, nil)
	par := newParent(t, "", true)
	u, _ := ParseProxyURL(par.URL)
	pool := x509.NewCertPool()
	pool.AddCert(par.Certificate())
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		code int
	}{
		{"trusted", &tls.Config{RootCAs: pool, ServerName: "example.com"}, 200},
		{"untrusted", &tls.Config{ServerName: "example.com"}, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{AllowedDomains: []string{"site.test"}, Upstream: &Upstream{HTTP: u, HTTPS: u, TLS: tc.tls}}, nil)
			resp, err := proxyClient(r.http).Get(fmt.Sprintf("http://site.test:%d/t", up.port))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("%s %s; want %d", resp.Status, body, tc.code)
			}
		})
	}
}

// TestDialViaEarlyBytes: bytes the destination sends with the upstream's
// answer to CONNECT (an ssh banner) are not lost.
func TestDialViaEarlyBytes(t *testing.T) {
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
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\nSSH-2.0-banner\r\n")
		io.Copy(io.Discard, br)
	}()
	u, _ := ParseProxyURL(l.Addr().String())
	p, err := New(Config{AllowedDomains: []string{"a.test"}, Upstream: &Upstream{HTTPS: u}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d := p.decide(context.Background(), "socks5", "a.test", 22)
	c, err := p.dialDest(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 16)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "SSH-2.0-banner\r\n" {
		t.Errorf("%q, %v", got, err)
	}
	var ue *UpstreamError
	if _, err := p.dialVia(context.Background(), &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(closedPort(t))}, d); !errors.As(err, &ue) {
		t.Errorf("a closed port: %v", err)
	}
}

// FuzzParseProxyURL: an upstream proxy's URL never panics the parser; one
// it accepts is http:// or https://, with
// a host, and reads back the same from its String; an error never shows
// the password.
func FuzzParseProxyURL(f *testing.F) {
	for _, s := range []string{"http://proxy:3128", "proxy:3128", "https://u:p%40ss@proxy/", "socks5://x:1", "http://[::1]:8080", "http://u:secret@h/x", "http://h:0", ":3128"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseProxyURL(s)
		if err != nil {
			if pu, perr := url.Parse(s); perr == nil {
				if pass, ok := pu.User.Password(); ok && len(pass) > 3 && strings.Contains(err.Error(), pass) {
					t.Fatalf("the error shows the password: %v", err)
				}
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
			t.Fatalf("ParseProxyURL(%q) = %v", s, u)
		}
		again, err := ParseProxyURL(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("ParseProxyURL(%q) = %v; again %v, %v", s, u, again, err)
		}
	})
}

// FuzzParseNoProxy: a NO_PROXY list never panics the parser, and an
// entry that is a host name matches that name and its subdomains, as Go's
// httpproxy and sandbox-runtime read it.
func FuzzParseNoProxy(f *testing.F) {
	for _, s := range []string{"example.com", ".example.com,10.0.0.0/8", "*", "*.a.b:8080,[::1]", "a..b,/", ""} {
		f.Add(s, "a.example.com")
	}
	f.Fuzz(func(t *testing.T, list, host string) {
		n := ParseNoProxy(list)
		n.Match(host)
		for e := range strings.SplitSeq(list, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			if e == "" || strings.ContainsAny(e, ":/[]*") || strings.HasPrefix(e, ".") || strings.HasSuffix(e, ".") {
				continue
			}
			if _, err := netip.ParseAddr(e); err == nil {
				continue
			}
			if !n.Match(e) || !n.Match("sub."+e) {
				t.Fatalf("NO_PROXY=%q does not match %s and its subdomains", list, e)
			}
		}
	})
}
