package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"cordon.dev/cordon/netproxy/mask"
)

// TLS termination, for masked secrets, and for every tunnel under
// Config.Terminate. A tunnel to a host some masked secret may go to
// (Config.Mask) is answered by cordon itself: its TLS is ended here with a
// certificate of the run's CA (Config.CA), which the sandbox trusts, and
// each request in it goes to the host over a TLS connection of cordon's
// own, to the addresses the decision allowed and verified against this
// host's roots, with the secrets' real values in place of their fakes.
// The decrypted requests and the real values never leave this process but
// re-encrypted to that verified server. Every other tunnel stays opaque,
// unless Config.Terminate ends them all (but its Exclude's). A tunnel
// whose first bytes are not a TLS ClientHello is relayed as any other
// (refused under RefuseOpaqueTunnels).

// Termination is sandbox-runtime's tlsTerminate: every allowed tunnel
// that carries TLS is ended here, but those to Exclude's hosts.
type Termination struct {
	// Exclude are patterns of ParsePattern whose tunnels stay opaque,
	// masked secrets' hosts too (excludeDomains).
	Exclude []string
	// MaxTunnels bounds the tunnels ended at once (0: 256), whether for
	// Terminate or for masked secrets: past it a CONNECT is answered 503
	// (X-Proxy-Error: too-many-tunnels), a SOCKS5 request refused, and
	// the refusal reported.
	MaxTunnels int
	// HandshakeTimeout bounds an ended tunnel's first bytes and TLS
	// handshake (0: 30s).
	HandshakeTimeout time.Duration
	exclude          *Rules
}

// defaultMaxTerminated bounds the tunnels ended at once.
const defaultMaxTerminated = 256

func (t *Termination) maxTunnels() int {
	if t == nil {
		return 0
	}
	return t.MaxTunnels
}

// terminates reports whether a tunnel to d is ended here.
func (p *Proxy) terminates(d Decision) bool {
	if p.cfg.CA == nil {
		return false
	}
	if t := p.cfg.Terminate; t != nil {
		if m, err := t.exclude.Match(d.Host, d.Port); err == nil && m.Verdict == Allowed {
			return false
		}
		return true
	}
	return p.cfg.Mask != nil && p.cfg.Mask.Injects(d.Host)
}

// terminateSlot takes one of the slots of the tunnels ended at once for a
// tunnel to d, and returns its release; false, with the refusal reported,
// when none is free.
func (p *Proxy) terminateSlot(d Decision) (release func(), r Decision, ok bool) {
	select {
	case p.terminated <- struct{}{}:
		return func() { <-p.terminated }, d, true
	default:
	}
	r = Decision{Run: d.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: ReasonTooManyTunnels,
		Rule: fmt.Sprintf("%d tunnels whose TLS cordon ends are open at once (sandbox.network.tlsTerminate.maxTunnels)", cap(p.terminated)), kind: kindTooManyTunnels}
	p.report(r)
	return nil, r, false
}

// terminate serves a tunnel to d, already answered 200, whose first bytes
// (after head) are read from br: a ClientHello is ended here; anything
// else is relayed, or refused under RefuseOpaqueTunnels.
func (p *Proxy) terminate(client net.Conn, br *bufio.Reader, d Decision) {
	timeout := handshakeTimeout
	if t := p.cfg.Terminate; t != nil && t.HandshakeTimeout > 0 {
		timeout = t.HandshakeTimeout
	}
	deadline := time.Now().Add(timeout)
	client.SetReadDeadline(deadline)
	first, err := br.Peek(1)
	client.SetReadDeadline(time.Time{})
	if err != nil {
		client.Close()
		return
	}
	if first[0] != 0x16 && p.cfg.RefuseOpaqueTunnels {
		// not TLS: a tunnel the proxy cannot see into after all
		p.report(Decision{Run: d.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: ReasonTunnel,
			Rule: "refuseOpaqueTunnels: a tunnel that carries no TLS", kind: kindTunnel})
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
	conn.SetDeadline(deadline)
	if err := conn.Handshake(); err != nil {
		conn.Close()
		return
	}
	conn.SetDeadline(time.Time{})
	rt := route{dest: &d, dial: p.dialTLS, pool: "tls", tls: true}
	if p.cfg.Mask != nil {
		rt.prepare = p.unmask
	}
	p.serveHTTP(conn, conn, rt)
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
