package main

// TLS termination's figures: the HTTPS requests of a sandboxed command to
// a masked credential's host are ended in cordon's proxy, which puts the
// real value in and sends them on over TLS of its own; every other HTTPS
// connection is an opaque tunnel. Both through one "cordon proxy --mask"
// process, against direct HTTPS, interleaved: throughput of one large
// answer (with the proxy's CPU per GiB) and the time from dialling to the
// first byte of an answer on a new connection (TLS handshake included).

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// The two names of the origin: the tunnel's (opaque) and the masked
// credential's host (terminated). Both are loopback addresses, which the
// proxy allows as literals.
const (
	opaqueHost     = "127.0.0.1"
	terminatedHost = "127.0.0.2"
)

// terminateBench measures TLS termination; n is the number of new
// connections per path (transfers: n/10, at least 5).
func terminateBench(cordon string, n int) error {
	dir, err := os.MkdirTemp("", "cordon-bench-tls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	origin, err := newTLSOrigin(dir)
	if err != nil {
		return err
	}
	defer origin.close()
	const real = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	bundle := filepath.Join(dir, "trust.pem")
	// cordon proxy verifies the origin against SSL_CERT_FILE, as a run
	// verifies servers against the host's roots.
	pp, err := startProxy(cordon, []string{"SSL_CERT_FILE=" + origin.caFile, "BENCH_TOKEN=" + real},
		"--allow-domain", terminatedHost, "--mask", "BENCH_TOKEN="+terminatedHost, "--trust-bundle", bundle)
	if err != nil {
		return err
	}
	defer pp.stop()
	var fake string
	for _, l := range pp.said {
		if _, f, ok := strings.Cut(l, "BENCH_TOKEN="); ok && strings.Contains(l, "masked") {
			fake = f
		}
	}
	if fake == "" {
		return fmt.Errorf("cordon proxy --mask printed no fake: %q", pp.said)
	}
	origin.want.Store(&map[string]string{opaqueHost: "Bearer " + fake, terminatedHost: "Bearer " + real})
	trusted := x509.NewCertPool()
	pemBundle, err := os.ReadFile(bundle)
	if err != nil {
		return err
	}
	trusted.AppendCertsFromPEM(pemBundle)

	type path struct {
		name    string
		host    string
		proxied bool
		dial    func(target string) (net.Conn, error)
	}
	direct := func(t string) (net.Conn, error) { return net.Dial("tcp", t) }
	tunnel := func(t string) (net.Conn, error) {
		br, c, err := dialConnect(pp.httpAddr, t)
		if err != nil {
			return nil, err
		}
		if br.(*bufio.Reader).Buffered() > 0 {
			c.Close()
			return nil, errors.New("bytes after the CONNECT answer")
		}
		return c, nil
	}
	paths := []path{
		{"direct HTTPS", opaqueHost, false, direct},
		{"opaque tunnel (CONNECT)", opaqueHost, true, tunnel},
		{"terminated, credential put in", terminatedHost, true, tunnel},
	}
	// get makes a new connection along p, sends one GET for target with
	// the fake, and returns the answer's body.
	get := func(p path, target string) (io.Reader, net.Conn, error) {
		addr := origin.addr[p.host]
		raw, err := p.dial(addr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p.name, err)
		}
		// a client as curl is: a full handshake each time, no session
		// resumed
		c := tls.Client(raw, &tls.Config{ServerName: p.host, RootCAs: trusted, NextProtos: []string{"http/1.1"}})
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", target, addr, fake)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = errors.New(resp.Status)
		}
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("%s: GET %s: %w", p.name, target, err)
		}
		return resp.Body, c, nil
	}

	runs := max(5, n/10)
	rates := map[string][]float64{}
	cpu := map[string]time.Duration{}
	for range runs + 1 { // the first round warms up
		for _, p := range paths {
			cpu0 := cpuTime(pp.pid)
			start := time.Now()
			body, c, err := get(p, "/bulk")
			if err != nil {
				return err
			}
			got, err := drain(body)
			c.Close()
			if err != nil || got != transferSize {
				return fmt.Errorf("%s: read %d of %d bytes: %v", p.name, got, transferSize, err)
			}
			rates[p.name] = append(rates[p.name], float64(got)/time.Since(start).Seconds())
			cpu[p.name] += cpuTime(pp.pid) - cpu0
		}
	}
	latency := map[string][]time.Duration{}
	for i := range n + 10 {
		for _, p := range paths {
			start := time.Now()
			body, c, err := get(p, "/one")
			if err != nil {
				return err
			}
			var b [1]byte
			_, err = io.ReadFull(body, b[:])
			d := time.Since(start)
			c.Close()
			if err != nil {
				return fmt.Errorf("%s: first byte: %w", p.name, err)
			}
			if i >= 10 {
				latency[p.name] = append(latency[p.name], d)
			}
		}
	}
	if bad := origin.wrong.Load(); bad > 0 {
		return fmt.Errorf("the origin got %d requests with the wrong credential: the bench did not measure what it says", bad)
	}

	opaque := paths[1].name
	fmt.Printf("\ncordon proxy: TLS termination (a masked credential's host) beside the opaque tunnel, HTTPS GET of %d MiB, %d runs each, interleaved\n\n", transferSize>>20, runs)
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "path\tmedian\tworst\tvs opaque\tproxy CPU per GiB\t")
	base := medianF(rates[opaque][1:])
	for _, p := range paths {
		rs := rates[p.name][1:]
		perGiB := "-"
		if p.proxied {
			perGiB = fmt.Sprintf("%d ms", (cpu[p.name] * (1 << 30) / time.Duration(len(rates[p.name])*transferSize)).Milliseconds())
		}
		fmt.Fprintf(w, "%s\t%.2f GB/s\t%.2f GB/s\t%.2fx\t%s\t\n", p.name, medianF(rs)/1e9, minF(rs)/1e9, medianF(rs)/base, perGiB)
	}
	w.Flush()
	fmt.Printf("\ncordon proxy: a new HTTPS connection, dial to the first byte of the answer (TLS handshake, one GET), %d connections each, interleaved\n\n", n)
	w = tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "path\tmedian\tp90\tadded to opaque\tvs opaque\t")
	lbase := median(latency[opaque])
	for _, p := range paths {
		m := median(latency[p.name])
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.2fx\t\n", p.name, us(m), us(percentile(latency[p.name], 0.9)), us(m-lbase), float64(m)/float64(lbase))
	}
	w.Flush()
	fmt.Println("\nTerminated: the client's TLS ends in the proxy (a certificate per host from the run's CA, minted")
	fmt.Println("once), the answer is decrypted and encrypted again there, and the proxy's own TLS connection to")
	fmt.Println("the server is kept for the next request to that host. Opaque: the proxy splices bytes it cannot read.")
	return nil
}

// tlsOrigin is the bench's HTTPS server, on opaqueHost and terminatedHost,
// with a CA of its own: /bulk answers transferSize bytes, /one a byte.
type tlsOrigin struct {
	addr   map[string]string // host → host:port
	caFile string
	ls     []net.Listener
	// want is the Authorization each host must get: a request with
	// another is counted in wrong.
	want  atomic.Pointer[map[string]string]
	wrong atomic.Int64
}

func newTLSOrigin(dir string) (*tlsOrigin, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cordon bench origin CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "origin"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP(opaqueHost), net.ParseIP(terminatedHost)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	o := &tlsOrigin{addr: map[string]string{}, caFile: filepath.Join(dir, "origin-ca.pem")}
	if err := os.WriteFile(o.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der, caDER}, PrivateKey: key}}}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		if want := o.want.Load(); want == nil || r.Header.Get("Authorization") != (*want)[host] {
			o.wrong.Add(1)
		}
		size := 1
		if r.URL.Path == "/bulk" {
			size = transferSize
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		writeN(w, size)
	})
	for _, host := range []string{opaqueHost, terminatedHost} {
		l, err := net.Listen("tcp4", net.JoinHostPort(host, "0"))
		if err != nil {
			o.close()
			return nil, err
		}
		o.ls = append(o.ls, l)
		o.addr[host] = l.Addr().String()
		go http.Serve(tls.NewListener(l, cfg), handler)
	}
	return o, nil
}

func (o *tlsOrigin) close() {
	for _, l := range o.ls {
		l.Close()
	}
}
