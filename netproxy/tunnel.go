package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
)

// A tunnel (CONNECT or SOCKS5) is allowed for the name the client asked
// for, but what the client then sends names a site too: the server name
// of a TLS ClientHello (SNI), the Host of a plain HTTP request. A server
// that hosts many sites at one address (a CDN, a shared load balancer)
// picks the site by that name, so a tunnel to an allowed name carrying
// another name reaches the other site ("domain fronting"). The proxy
// reads the start of the client's first bytes in every tunnel: a name
// there that is not the tunnel's own is decided like a destination of its
// own, and the tunnel is closed when the policy refuses it. What is
// encrypted (the Host inside TLS, an Encrypted ClientHello's inner name)
// and what follows the first HTTP request of a plain tunnel stay unseen.

// maxHello bounds what the proxy reads to find the name: a ClientHello
// (post-quantum key shares make it ~2 KB; the record layer allows 16 KB a
// record, a handshake message may span records) or an HTTP request head.
const maxHello = 64 << 10

// tlsRecordMax is the largest TLS record with its header: the buffer that
// reads the name holds maxHello and one record more.
const tlsRecordMax = 5 + 16384 + 2048

// errNoName: the start of the tunnel is neither TLS nor HTTP, or carries no
// name.
var errNoName = errors.New("no name")

// tunnelName reads, without consuming, the name the start of a tunnel
// carries: proto is "tls" or "http". It returns errNoName when there is
// none, and a read error when the client went away first; a malformed
// ClientHello or request head is an error too (the server would refuse
// it, and a name the proxy cannot read must not pass for none).
func tunnelName(br *bufio.Reader) (name, proto string, err error) {
	first, err := br.Peek(1)
	if err != nil {
		return "", "", err
	}
	switch {
	case first[0] == 0x16:
		name, err := clientHelloName(br)
		return name, "tls", err
	case first[0] >= 'A' && first[0] <= 'Z':
		name, err := httpHostName(br)
		return name, "http", err
	}
	return "", "", errNoName
}

// clientHelloName reassembles the first handshake message from the TLS
// records at the start of br and returns its server_name.
func clientHelloName(br *bufio.Reader) (string, error) {
	var msg []byte
	off := 0
	for {
		hdr, err := br.Peek(off + 5)
		if err != nil {
			return "", err
		}
		h := hdr[off:]
		if h[0] != 0x16 {
			return "", errors.New("a TLS record other than a handshake before the ClientHello")
		}
		n := int(h[3])<<8 | int(h[4])
		if off+5+n > maxHello {
			return "", errors.New("ClientHello too long")
		}
		rec, err := br.Peek(off + 5 + n)
		if err != nil {
			return "", err
		}
		msg = append(msg, rec[off+5:]...)
		off += 5 + n
		if len(msg) >= 4 {
			if msg[0] != 1 {
				return "", errors.New("the first handshake message is not a ClientHello")
			}
			want := 4 + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
			if want > maxHello {
				return "", errors.New("ClientHello too long")
			}
			if len(msg) >= want {
				return helloServerName(msg[4:want])
			}
		}
	}
}

// helloServerName parses a ClientHello body (RFC 8446 4.1.2) for the
// host_name of its server_name extension (RFC 6066 3).
func helloServerName(b []byte) (string, error) {
	bad := errors.New("malformed ClientHello")
	r := reader(b)
	if !r.skip(2+32) || !r.skipVec(1) || !r.skipVec(2) || !r.skipVec(1) {
		return "", bad
	}
	if len(r) == 0 {
		return "", errNoName // no extensions
	}
	exts, ok := r.vec(2)
	if !ok {
		return "", bad
	}
	for len(exts) > 0 {
		typ, ok1 := exts.u16()
		data, ok2 := exts.vec(2)
		if !ok1 || !ok2 {
			return "", bad
		}
		if typ != 0 {
			continue
		}
		list, ok := data.vec(2)
		if !ok {
			return "", bad
		}
		for len(list) > 0 {
			kind, ok1 := list.u8()
			host, ok2 := list.vec(2)
			if !ok1 || !ok2 {
				return "", bad
			}
			if kind == 0 {
				return string(host), nil
			}
		}
		return "", errNoName
	}
	return "", errNoName
}

// reader reads TLS's big-endian, length-prefixed fields.
type reader []byte

func (r *reader) skip(n int) bool {
	if len(*r) < n {
		return false
	}
	*r = (*r)[n:]
	return true
}

func (r *reader) u8() (int, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := int((*r)[0])
	*r = (*r)[1:]
	return v, true
}

func (r *reader) u16() (int, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := int((*r)[0])<<8 | int((*r)[1])
	*r = (*r)[2:]
	return v, true
}

// vec reads a vector with a size-byte length.
func (r *reader) vec(size int) (reader, bool) {
	var n int
	var ok bool
	if size == 1 {
		n, ok = r.u8()
	} else {
		n, ok = r.u16()
	}
	if !ok || len(*r) < n {
		return nil, false
	}
	v := (*r)[:n]
	*r = (*r)[n:]
	return v, true
}

func (r *reader) skipVec(size int) bool {
	_, ok := r.vec(size)
	return ok
}

// httpHostName reads the head of the first HTTP request in br and returns
// its Host.
func httpHostName(br *bufio.Reader) (string, error) {
	for {
		b, _ := br.Peek(br.Buffered())
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:i+4])))
			if err != nil {
				// Not HTTP after all (a protocol that starts with a
				// capital letter): nothing to check.
				return "", errNoName
			}
			host := req.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if host == "" {
				return "", errNoName
			}
			return host, nil
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line := strings.TrimRight(string(b[:i]), "\r")
			if !strings.HasSuffix(line, " HTTP/1.1") && !strings.HasSuffix(line, " HTTP/1.0") {
				return "", errNoName // no HTTP request line
			}
		}
		if len(b) >= maxHello {
			return "", errors.New("request head too long")
		}
		if _, err := br.Peek(len(b) + 1); err != nil {
			return "", err
		}
	}
}

// checkTunnel decides the name the start of the tunnel to d carries, when
// it is not d's own: it returns the refusal, or nil when the tunnel may
// go on. The bytes read stay in br.
func (p *Proxy) checkTunnel(br *bufio.Reader, d Decision) *Decision {
	name, proto, err := tunnelName(br)
	switch {
	case errors.Is(err, errNoName):
		return nil
	case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)):
		return nil // the client went away; nothing reaches the server
	case err != nil:
		// What cannot be read cannot be checked: refuse rather than
		// pass a name unseen.
		r := Decision{Run: p.cfg.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port,
			Reason: ReasonAllowlist, Rule: "unreadable start of the tunnel: " + err.Error(), kind: kindInvalid}
		p.report(r)
		return &r
	}
	canon, addr, nerr := normalizeHost(name)
	if nerr == nil && addr.IsValid() {
		canon = addr.String()
	}
	if nerr == nil && canon == d.Host {
		return nil
	}
	what := "the TLS server name"
	if proto == "http" {
		what = "the Host of the request"
	}
	// The rules decide; what the name resolves to does not matter, as
	// nothing is dialled for it (the tunnel's addresses were checked).
	inner := p.decideQuietly(p.ctx, d.Protocol, name, d.Port)
	if inner.Allowed || inner.Reason == "" || inner.Reason == ReasonPrivate {
		return nil
	}
	inner.Rule += "; " + what + " in a tunnel to " + d.dest()
	inner.Addrs = nil
	p.report(inner)
	return &inner
}

// report hands a decision made outside decide to OnDecision.
func (p *Proxy) report(d Decision) {
	if p.cfg.OnDecision != nil {
		p.cfg.OnDecision(d)
	}
}
