package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication.
const (
	socksVersion   = 5
	methodNoAuth   = 0x00
	methodNoneOK   = 0xff
	cmdConnect     = 1
	atypIPv4       = 1
	atypDomain     = 3
	atypIPv6       = 4
	maxSOCKSMethod = 255
)

// SOCKS5 reply codes.
const (
	repSucceeded          = 0x00
	repGeneralFailure     = 0x01
	repNotAllowed         = 0x02 // connection not allowed by ruleset
	repNetworkUnreachable = 0x03
	repHostUnreachable    = 0x04
	repConnRefused        = 0x05
	repTTLExpired         = 0x06
	repCmdNotSupported    = 0x07
	repAddrNotSupported   = 0x08
)

// socksRequest is a parsed SOCKS5 request.
type socksRequest struct {
	cmd  byte
	host string // a domain name as sent, or an IP address
	port int
}

// socksError is a request the server answers with a reply code.
type socksError struct {
	rep byte
	msg string
}

func (e *socksError) Error() string { return "socks5: " + e.msg }

// readGreeting reads the method selection message after its version byte
// and reports whether the client offers "no authentication".
func readGreeting(r io.Reader) (noAuth bool, err error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return false, err
	}
	if n[0] == 0 {
		return false, errors.New("socks5: no methods offered")
	}
	methods := make([]byte, n[0])
	if _, err := io.ReadFull(r, methods); err != nil {
		return false, err
	}
	for _, m := range methods {
		if m == methodNoAuth {
			return true, nil
		}
	}
	return false, nil
}

// readRequest reads one SOCKS5 request (RFC 1928 section 4). It reads
// exactly the request's bytes: what follows belongs to the tunnel. An error
// of type *socksError carries the reply the client should get; other errors
// mean the connection is to be dropped without one.
func readRequest(r io.Reader) (socksRequest, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return socksRequest{}, err
	}
	if h[0] != socksVersion {
		return socksRequest{}, errors.New("socks5: bad version in request")
	}
	req := socksRequest{cmd: h[1]}
	switch h[3] {
	case atypIPv4:
		var a [4]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, err
		}
		req.host = netip.AddrFrom4(a).String()
	case atypIPv6:
		var a [16]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, err
		}
		req.host = netip.AddrFrom16(a).String()
	case atypDomain:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return socksRequest{}, err
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(r, name); err != nil {
			return socksRequest{}, err
		}
		if n[0] == 0 {
			return socksRequest{}, &socksError{repAddrNotSupported, "empty domain name"}
		}
		req.host = string(name)
	default:
		return socksRequest{}, &socksError{repAddrNotSupported, "address type not supported"}
	}
	var p [2]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return socksRequest{}, err
	}
	req.port = int(binary.BigEndian.Uint16(p[:]))
	if h[2] != 0 {
		return socksRequest{}, &socksError{repGeneralFailure, "reserved byte not zero"}
	}
	if req.cmd != cmdConnect {
		return socksRequest{}, &socksError{repCmdNotSupported, "only CONNECT is supported"}
	}
	return req, nil
}

// reply is a SOCKS5 reply. The bound address is always 0.0.0.0:0: the
// sandboxed client has no use for the host's address.
func reply(rep byte) []byte {
	return []byte{socksVersion, rep, 0, atypIPv4, 0, 0, 0, 0, 0, 0}
}

// serveSOCKS serves one SOCKS5 connection whose version byte was read.
func (p *Proxy) serveSOCKS(c net.Conn) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	ok, err := readGreeting(c)
	if err != nil {
		return
	}
	if !ok {
		c.Write([]byte{socksVersion, methodNoneOK})
		return
	}
	if _, err := c.Write([]byte{socksVersion, methodNoAuth}); err != nil {
		return
	}
	req, err := readRequest(c)
	if err != nil {
		if se, ok := errors.AsType[*socksError](err); ok {
			c.Write(reply(se.rep))
		}
		return
	}
	c.SetDeadline(time.Time{})
	d := p.decide(p.ctx, "socks5", req.host, req.port)
	if d.Allowed {
		d, _ = p.refuseTunnel(d)
	}
	if !d.Allowed {
		rep := byte(repNotAllowed)
		if d.Reason == "" {
			rep = repHostUnreachable
		}
		c.Write(reply(rep))
		return
	}
	if p.terminates(d) {
		release, _, ok := p.terminateSlot(d)
		if !ok {
			c.Write(reply(repGeneralFailure))
			return
		}
		defer release()
		if _, err := c.Write(reply(repSucceeded)); err == nil {
			p.terminate(c, bufio.NewReader(c), d)
		}
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	upstream, err := p.dialDest(ctx, d)
	cancel()
	if err != nil {
		c.Write(reply(dialReply(err)))
		return
	}
	if _, err := c.Write(reply(repSucceeded)); err != nil {
		upstream.Close()
		return
	}
	// serveConn tracks and closes c; relay tracks it again while it copies
	p.relay(c, upstream, nil, &d)
}

// dialReply maps a dial error to a SOCKS5 reply code. The upstream proxy
// not answering is a general failure; its refusal of a tunnel is "not
// allowed" for a 403 or 407 and "host unreachable" otherwise.
func dialReply(err error) byte {
	if ue, ok := errors.AsType[*UpstreamError](err); ok {
		switch {
		case ue.refused():
			return repNotAllowed
		case ue.Status != "":
			return repHostUnreachable
		}
		return repGeneralFailure
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return repConnRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return repNetworkUnreachable
	case errors.Is(err, syscall.EHOSTUNREACH):
		return repHostUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return repTTLExpired
	}
	return repGeneralFailure
}
