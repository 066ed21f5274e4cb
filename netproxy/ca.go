package netproxy

import (
	"bytes"
	"container/list"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync"
	"time"
)

// CA is the certificate authority of TLS termination: made in memory
// when a run (or cordon serve) starts, its key never leaves this
// process, so only this process can mint a certificate the sandbox
// trusts (or a CA of the user's, LoadCA, whose key the user keeps). It
// mints one leaf certificate per server name, all with one key, and
// keeps the most recently used.
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer
	leafKey *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*list.Element
	lru    *list.List
}

// maxLeaves is how many leaf certificates a CA keeps.
const maxLeaves = 256

type leafEntry struct {
	name string
	cert *tls.Certificate
}

// NewCA makes a CA valid from a day ago (clocks differ) for thirty days.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "cordon ephemeral CA", Organization: []string{"cordon"}},
		NotBefore:             now.Add(-24 * time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{
		cert: cert, key: key, leafKey: leafKey,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leaves:  map[string]*list.Element{}, lru: list.New(),
	}, nil
}

// LoadCA reads a CA of the user's: its certificate (PEM) and its key
// (PEM: PKCS #8, EC or PKCS #1), which must be a CA's and match.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	var blk *pem.Block
	for rest := certPEM; ; {
		if blk, rest = pem.Decode(rest); blk == nil || blk.Type == "CERTIFICATE" {
			break
		}
	}
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	if !cert.IsCA || cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s: not a CA's certificate (it may not sign others)", certFile)
	}
	pair, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes}), keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", certFile, keyFile, err)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a key that cannot sign", keyFile)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &CA{
		cert: cert, key: key, leafKey: leafKey,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes}),
		leaves:  map[string]*list.Element{}, lru: list.New(),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// CertPEM is the CA's certificate, PEM-encoded.
func (c *CA) CertPEM() []byte { return bytes.Clone(c.certPEM) }

// Leaf returns the certificate for a server name (a host name or an IP
// address), minted on first use.
func (c *CA) Leaf(name string) (*tls.Certificate, error) {
	c.mu.Lock()
	if e, ok := c.leaves[name]; ok {
		c.lru.MoveToFront(e)
		cert := e.Value.(*leafEntry).cert
		c.mu.Unlock()
		return cert, nil
	}
	c.mu.Unlock()
	cert, err := c.mint(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.leaves[name]; ok {
		return e.Value.(*leafEntry).cert, nil
	}
	c.leaves[name] = c.lru.PushFront(&leafEntry{name, cert})
	if c.lru.Len() > maxLeaves {
		old := c.lru.Remove(c.lru.Back()).(*leafEntry)
		delete(c.leaves, old.name)
	}
	return cert, nil
}

func (c *CA) mint(name string) (*tls.Certificate, error) {
	if name == "" {
		return nil, errors.New("mint a certificate: no server name")
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-24 * time.Hour),
		NotAfter:     c.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	// a CA of the user's may live for years; a leaf, a month
	if month := now.Add(30 * 24 * time.Hour); month.Before(tmpl.NotAfter) {
		tmpl.NotAfter = month
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("mint a certificate for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: c.leafKey, Leaf: leaf}, nil
}

// rootFiles are where Linux distributions keep the system's roots (Go's
// crypto/x509 reads the same list).
var rootFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine, macOS
}

// TrustBundle returns what the sandbox trusts while TLS to some hosts is
// terminated: the CA, then the roots this host trusts (its SSL_CERT_FILE,
// or the system's bundle) so that the hosts left as tunnels still verify,
// then the certificates of extra (files that do not exist are skipped;
// only their CERTIFICATE blocks are taken, never a key beside them).
func (c *CA) TrustBundle(extra ...string) []byte {
	out := bytes.Clone(c.certPEM)
	files := rootFiles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, certificates(b)...)
			break
		}
	}
	for _, f := range extra {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, certificates(b)...)
		}
	}
	return out
}

// certificates returns the CERTIFICATE blocks of a PEM file, re-encoded.
func certificates(b []byte) []byte {
	var out []byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		if blk.Type == "CERTIFICATE" {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes})...)
		}
	}
}
