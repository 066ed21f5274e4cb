package netproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cordon.dev/cordon/netproxy/mask"
)

// TestTerminateAll: under Terminate (sandbox-runtime's tlsTerminate)
// every allowed tunnel that carries TLS is ended with the CA, whether or
// not a masked secret may go there, but those to Exclude's hosts, a
// masked secret's host too (its fake then goes out); with
// RefuseOpaqueTunnels, HTTPS works and a tunnel without TLS is refused;
// past MaxTunnels a CONNECT gets 503 too-many-tunnels, recorded.
func TestTerminateAll(t *testing.T) {
	origin := newTLSOrigin(t)
	port := origin.Listener.Addr().(*net.TCPAddr).Port
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	set := mask.New(mask.Options{})
	real := "ghp_" + strings.Repeat("r", 36)
	fake, err := set.Mask(mask.Rule{Name: "env GH_TOKEN", Hosts: func(h string) bool { return h == "pinned.example.com" }}, real)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(origin.Certificate())
	res := StaticResolver{"api.example.com": addrs("127.0.0.1"), "pinned.example.com": addrs("127.0.0.1")}
	cfg := Config{AllowedDomains: []string{"api.example.com", "pinned.example.com", "127.0.0.1"}, Mask: set, CA: ca, RootCAs: roots,
		Terminate: &Termination{Exclude: []string{"pinned.example.com"}, MaxTunnels: 1}}
	r := newRig(t, cfg, res)
	trust := x509.NewCertPool()
	trust.AppendCertsFromPEM(ca.CertPEM())
	trust.AddCert(origin.Certificate())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.http}), TLSClientConfig: &tls.Config{RootCAs: trust}, DisableKeepAlives: true}, Timeout: 10 * time.Second}
	issuer := func(host string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://%s:%d/", host, port), nil)
		req.Header.Set("Authorization", "Bearer "+fake)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].Issuer.CommonName
	}
	if got := issuer("api.example.com"); got != "cordon ephemeral CA" {
		t.Errorf("api.example.com (no secret goes there): issued by %q, want cordon's CA", got)
	}
	if got := issuer("pinned.example.com"); got == "cordon ephemeral CA" {
		t.Error("pinned.example.com (excluded) was terminated")
	}
	if got, _ := origin.last(); got.Header.Get("Authorization") != "Bearer "+fake {
		t.Errorf("the excluded host got %q, want the fake", got.Header.Get("Authorization"))
	}

	// one slot: a second tunnel while the first is open. The tunnels of
	// the requests above end in the proxy a moment after their client
	// closed them: until then the slot is theirs.
	held, _, resp := connectRaw(t, r.http, fmt.Sprintf("api.example.com:%d", port), "")
	for tries := 0; resp.StatusCode == 503 && tries < 100; tries++ {
		held.Close()
		time.Sleep(20 * time.Millisecond)
		held, _, resp = connectRaw(t, r.http, fmt.Sprintf("api.example.com:%d", port), "")
	}
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	defer held.Close()
	_, _, resp = connectRaw(t, r.http, fmt.Sprintf("api.example.com:%d", port), "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("X-Proxy-Error") != string(ReasonTooManyTunnels) || !strings.Contains(string(body), "maxTunnels") {
		t.Errorf("past maxTunnels: %s %q %s", resp.Status, resp.Header.Get("X-Proxy-Error"), body)
	}
	if d := r.last(t); d.Reason != ReasonTooManyTunnels {
		t.Errorf("decision %s", d)
	}
	held.Close()

	// refuseOpaqueTunnels: HTTPS is served, a tunnel without TLS and one
	// to an excluded host are refused; no masked secret this time
	cfg.RefuseOpaqueTunnels, cfg.Terminate.MaxTunnels, cfg.Mask = true, 0, nil
	r = newRig(t, cfg, res)
	c.Transport.(*http.Transport).Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: r.http})
	if got := issuer("api.example.com"); got != "cordon ephemeral CA" {
		t.Errorf("api.example.com under refuseOpaqueTunnels: issued by %q, want cordon's CA", got)
	}
	conn, br, resp := connectRaw(t, r.http, fmt.Sprintf("api.example.com:%d", port), "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := io.ReadAll(br); len(got) != 0 {
		t.Errorf("a tunnel without TLS passed: %q", got)
	}
	if d := r.last(t); d.Reason != ReasonTunnel || !strings.Contains(d.Rule, "no TLS") {
		t.Errorf("decision %s", d)
	}
	if _, _, resp := connectRaw(t, r.http, fmt.Sprintf("pinned.example.com:%d", port), ""); resp.StatusCode != 403 {
		t.Errorf("an excluded host under refuseOpaqueTunnels: %s", resp.Status)
	}
}

// TestLoadCA: a CA of the user's (an EC or RSA key, PKCS #8 or not)
// signs the leaves; a certificate that is no CA's, or a key that is not
// its own, is refused.
func TestLoadCA(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, blocks ...*pem.Block) string {
		var b []byte
		for _, blk := range blocks {
			b = append(b, pem.EncodeToMemory(blk)...)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert := func(isCA bool, pub, priv any) *pem.Block {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "corp CA"}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour), IsCA: isCA, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
		if err != nil {
			t.Fatal(err)
		}
		return &pem.Block{Type: "CERTIFICATE", Bytes: der}
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherDER, _ := x509.MarshalPKCS8PrivateKey(other)
	for _, tc := range []struct {
		name, cert, key, err string
	}{
		{"EC key", write("ec.pem", &pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}}, cert(true, &ec.PublicKey, ec)), write("ec.key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), ""},
		{"RSA key, PKCS #1", write("rsa.pem", cert(true, &rk.PublicKey, rk)), write("rsa.key", &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}), ""},
		{"not a CA", write("leaf.pem", cert(false, &ec.PublicKey, ec)), write("leaf.key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), "not a CA's certificate"},
		{"another key", write("ec2.pem", cert(true, &ec.PublicKey, ec)), write("other.key", &pem.Block{Type: "PRIVATE KEY", Bytes: otherDER}), "private key does not match public key"},
		{"no certificate", write("none.pem"), write("none.key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca, err := LoadCA(tc.cert, tc.key)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("LoadCA: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := ca.Leaf("api.example.com")
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(ca.CertPEM())
			if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "api.example.com", Roots: pool}); err != nil {
				t.Errorf("the leaf does not verify against the CA: %v", err)
			}
			if life := time.Until(leaf.Leaf.NotAfter); life > 31*24*time.Hour {
				t.Errorf("a leaf valid for %v, past a month", life)
			}
		})
	}
}
