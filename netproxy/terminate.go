package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"time"

	"cordon.dev/cordon/netproxy/mask"
)

// TLS termination, for masked secrets. A tunnel to a host some masked
// secret may go to (Config.Mask) is answered by cordon itself: its TLS is
// ended here with a certificate of the run's CA (Config.CA), which the
// sandbox trusts, and each request in it goes to the host over a TLS
// connection of cordon's own, to the addresses the decision allowed and
// verified against this host's roots, with the secrets' real values in
// place of their fakes. The decrypted requests and the real values never
// leave this process but re-encrypted to that verified server. Every
// other tunnel stays opaque. A tunnel whose first bytes are not a TLS
// ClientHello is relayed as any other.

// terminates reports whether a tunnel to d is ended here.
func (p *Proxy) terminates(d Decision) bool {
	return p.cfg.Mask != nil && p.cfg.CA != nil && p.cfg.Mask.Injects(d.Host)
}

// terminate serves a tunnel to d, already answered 200, whose first bytes
// (after head) are read from br: a ClientHello is ended here; anything
// else is relayed.
func (p *Proxy) terminate(client net.Conn, br *bufio.Reader, d Decision) {
	client.SetReadDeadline(time.Now().Add(handshakeTimeout))
	first, err := br.Peek(1)
	client.SetReadDeadline(time.Time{})
	if err != nil {
		client.Close()
		return
	}
	if first[0] != 0x16 {
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
		upstream, err := p.dialDest(ctx, d)
		cancel()
		if err != nil {
			client.Close()
			return
		}
		p.relay(&bufferedConn{Conn: client, r: br}, upstream, nil, &d)
		return
	}
	leaf, err := p.cfg.CA.Leaf(d.Host)
	if err != nil {
		client.Close()
		return
	}
	conn := tls.Server(&bufferedConn{Conn: client, r: br}, &tls.Config{
		// The tunnel's host, whatever name the client asks for: a
		// request in it goes there and nowhere else.
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})
	if !p.track(conn) {
		conn.Close()
		return
	}
	defer p.untrack(conn)
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := conn.Handshake(); err != nil {
		conn.Close()
		return
	}
	conn.SetDeadline(time.Time{})
	p.serveHTTP(conn, conn, route{dest: &d, dial: p.dialTLS, pool: "tls", prepare: p.unmask, tls: true})
}

// CredentialUse is a masked secret met on the wire (Config.OnCredential).
type CredentialUse = mask.Event

// unmask puts the real values into a request to d (over TLS when tls):
// see mask.Set.Request.
func (p *Proxy) unmask(req *http.Request, d Decision, tls bool) error {
	query := req.URL.RawQuery
	if err := p.cfg.Mask.Request(req, mask.Dest{Host: d.Host, Port: d.Port, TLS: tls}, p.cfg.OnCredential); err != nil {
		return err
	}
	if req.URL.RawQuery != query {
		// the forwarder sends the target as the client wrote it
		path, _, _ := strings.Cut(req.RequestURI, "?")
		req.RequestURI = path + "?" + req.URL.RawQuery
	}
	return nil
}

// dialTLS connects to the addresses d allowed as a TLS client that
// verifies the server as d.Host against this host's roots
// (Config.RootCAs in tests).
func (p *Proxy) dialTLS(ctx context.Context, d Decision) (net.Conn, error) {
	raw, err := p.dialDest(ctx, d)
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, &tls.Config{ServerName: d.Host, RootCAs: p.cfg.RootCAs, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	if err := c.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}
