package netproxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/netproxy/mask"
)

// tlsOrigin is an HTTPS server with a CA of its own (not cordon's), as
// api.example.com and other.example.com; it records the requests it got.
type tlsOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	got  []*http.Request
	body []string
}

func newTLSOrigin(t *testing.T) *tlsOrigin {
	o := &tlsOrigin{}
	o.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.got = append(o.got, r)
		o.body = append(o.body, string(b))
		o.mu.Unlock()
		io.WriteString(w, "hello "+r.Host)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *tlsOrigin) last() (*http.Request, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.got[len(o.got)-1], o.body[len(o.body)-1]
}

// TestTerminate: a tunnel to a masked secret's host is terminated with
// the run's CA and its requests carry the real value; a tunnel to any
// other host stays opaque (the client sees the server's own certificate)
// and carries the fake; the upstream's certificate is verified.
func TestTerminate(t *testing.T) {
	origin := newTLSOrigin(t)
	port := origin.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	set := mask.New(mask.Options{})
	var events []CredentialUse
	var mu sync.Mutex
	real := "ghp_" + strings.Repeat("r", 36)
	fake, err := set.Mask(mask.Rule{Name: "env GH_TOKEN", Hosts: func(h string) bool { return h == "api.example.com" }}, real)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(origin.Certificate())
	res := StaticResolver{"api.example.com": addrs("127.0.0.1"), "other.example.com": addrs("127.0.0.1")}
	r := newRig(t, Config{AllowedDomains: []string{"api.example.com", "other.example.com", "127.0.0.1"}, Mask: set, CA: ca, RootCAs: roots,
		OnCredential: func(e CredentialUse) { mu.Lock(); events = append(events, e); mu.Unlock() }}, res)

	// The sandbox trusts cordon's CA and the host's roots (here the
	// origin's own CA).
	trust := x509.NewCertPool()
	trust.AppendCertsFromPEM(ca.CertPEM())
	trust.AddCert(origin.Certificate())
	client := func(proxyAddr string) *http.Client {
		u := &url.URL{Scheme: "http", Host: proxyAddr}
		if proxyAddr == r.socks {
			u.Scheme = "socks5h"
		}
		return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: trust}}, Timeout: 10 * time.Second}
	}
	for _, via := range []string{r.http, r.socks} {
		c := client(via)
		req, _ := http.NewRequest("POST", "https://api.example.com:"+port+"/v1?key="+fake, strings.NewReader(`{"token":"`+fake+`"}`))
		req.Header.Set("Authorization", "Bearer "+fake)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "hello api.example.com:"+port {
			t.Fatalf("via %s: %d %q", via, resp.StatusCode, b)
		}
		if issuer := resp.TLS.PeerCertificates[0].Issuer.CommonName; issuer != "cordon ephemeral CA" {
			t.Errorf("api.example.com's certificate issued by %q, want cordon's CA", issuer)
		}
		got, body := origin.last()
		if got.Header.Get("Authorization") != "Bearer "+real || body != `{"token":"`+real+`"}` || got.URL.Query().Get("key") != real {
			t.Errorf("api.example.com got %v %q %q, want the real value", got.Header, body, got.URL.RawQuery)
		}

		// another host: opaque, the fake goes out as it is
		req, _ = http.NewRequest("GET", "https://other.example.com:"+port+"/", nil)
		req.Header.Set("Authorization", "Bearer "+fake)
		resp, err = c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if issuer := resp.TLS.PeerCertificates[0].Issuer; issuer.CommonName == "cordon ephemeral CA" {
			t.Errorf("other.example.com was terminated")
		}
		if got, _ := origin.last(); got.Header.Get("Authorization") != "Bearer "+fake {
			t.Errorf("other.example.com got %q, want the fake", got.Header.Get("Authorization"))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n, _ := strconv.Atoi(port)
	use := CredentialUse{Dest: mask.Dest{Host: "api.example.com", Port: n, TLS: true}, Name: "env GH_TOKEN", Own: true, Substituted: true}
	if diff := cmp.Diff([]CredentialUse{use, use}, events); diff != "" {
		t.Errorf("events (-want +got), want one substitution per request (the fakes to other.example.com are not seen):\n%s", diff)
	}
}

// TestTerminateUnverified: an upstream whose certificate the host's roots
// do not verify gets no request, and so no secret.
func TestTerminateUnverified(t *testing.T) {
	origin := newTLSOrigin(t)
	addr := origin.Listener.Addr().String()
	port := addr[strings.LastIndex(addr, ":")+1:]
	ca, _ := NewCA()
	set := mask.New(mask.Options{})
	fake, _ := set.Mask(mask.Rule{Name: "env T", Hosts: func(h string) bool { return h == "api.example.com" }}, "real-secret-value-0123456789")
	r := newRig(t, Config{AllowedDomains: []string{"api.example.com", "127.0.0.1"}, Mask: set, CA: ca, RootCAs: x509.NewCertPool()}, StaticResolver{"api.example.com": addrs("127.0.0.1")})
	trust := x509.NewCertPool()
	trust.AppendCertsFromPEM(ca.CertPEM())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.http}), TLSClientConfig: &tls.Config{RootCAs: trust}}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", "https://api.example.com:"+port+"/", nil)
	req.Header.Set("Authorization", "Bearer "+fake)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	origin.mu.Lock()
	defer origin.mu.Unlock()
	if len(origin.got) != 0 {
		t.Errorf("the unverified server got %d requests", len(origin.got))
	}
}

// TestUnmaskPlain: over plain HTTP a masked secret's fake stays, to its
// own host too, unless allowPlaintextInject lets the real value go there;
// every fake the proxy sees is reported, to another host too.
func TestUnmaskPlain(t *testing.T) {
	for _, plaintext := range []bool{false, true} {
		t.Run(fmt.Sprint("allowPlaintextInject ", plaintext), func(t *testing.T) {
			var got []string
			var mu sync.Mutex
			up := newUpstream(t, false, func(w http.ResponseWriter, req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				mu.Lock()
				got = append(got, req.Host+" "+req.Header.Get("Authorization")+" "+req.URL.RawQuery+" "+string(b))
				mu.Unlock()
			})
			set := mask.New(mask.Options{Plaintext: plaintext})
			real := "ghp_" + strings.Repeat("r", 36)
			fake, err := set.Mask(mask.Rule{Name: "env GH_TOKEN", Hosts: func(h string) bool { return h == "api.example.com" }}, real)
			if err != nil {
				t.Fatal(err)
			}
			var events []CredentialUse
			r := newRig(t, Config{AllowedDomains: []string{"api.example.com", "other.example.com", "127.0.0.1"}, Mask: set,
				OnCredential: func(e CredentialUse) { mu.Lock(); events = append(events, e); mu.Unlock() }},
				StaticResolver{"api.example.com": addrs("127.0.0.1"), "other.example.com": addrs("127.0.0.1")})
			c := proxyClient(r.http)
			for _, host := range []string{"api.example.com", "other.example.com"} {
				req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s:%d/?k=%s", host, up.port, fake), strings.NewReader("t="+fake))
				req.Header.Set("Authorization", "Bearer "+fake)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("%s: %s", host, resp.Status)
				}
			}
			want := fake
			if plaintext {
				want = real
			}
			hostport := func(h string) string { return fmt.Sprintf("%s:%d", h, up.port) }
			wantGot := []string{
				hostport("api.example.com") + " Bearer " + want + " k=" + want + " t=" + want,
				hostport("other.example.com") + " Bearer " + fake + " k=" + fake + " t=" + fake,
			}
			wantEvents := []CredentialUse{
				{Dest: mask.Dest{Host: "api.example.com", Port: up.port}, Name: "env GH_TOKEN", Own: true, Substituted: plaintext},
				{Dest: mask.Dest{Host: "other.example.com", Port: up.port}, Name: "env GH_TOKEN"},
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(wantGot, got); diff != "" {
				t.Errorf("the servers got (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostHeader: the Host sent leaves out the scheme's default port, as
// clients write it (a signature over the Host, as AWS SigV4's, covers it
// as the client wrote it); any other port stays.
func TestHostHeader(t *testing.T) {
	for _, tc := range []struct {
		host string
		port int
		tls  bool
		want string
	}{
		{"a.example", 80, false, "a.example"},
		{"a.example", 443, true, "a.example"},
		{"a.example", 443, false, "a.example:443"},
		{"a.example", 80, true, "a.example:80"},
		{"a.example", 8443, true, "a.example:8443"},
		{"2001:db8::1", 443, true, "[2001:db8::1]"},
		{"2001:db8::1", 8080, false, "[2001:db8::1]:8080"},
	} {
		if got := (Decision{Host: tc.host, Port: tc.port}).hostHeader(tc.tls); got != tc.want {
			t.Errorf("%s:%d (tls %v): Host %q, want %q", tc.host, tc.port, tc.tls, got, tc.want)
		}
	}
}
