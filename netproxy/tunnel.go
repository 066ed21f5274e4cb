package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/http2/hpack"
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

// tunnelName reads, without consuming, the names the start of a tunnel
// carries: proto is "tls" (the server name) or "http" (the request's
// absolute-form host and every Host). It returns errNoName when there are
// none, and a read error when the client went away first; a malformed
// ClientHello or request head is an error too (the server would refuse
// it, or read it otherwise, and a name the proxy cannot read must not
// pass for none).
func tunnelName(br *bufio.Reader) (names []string, proto string, err error) {
	first, err := br.Peek(1)
	if err != nil {
		return nil, "", err
	}
	switch {
	case first[0] == 0x16:
		name, err := clientHelloName(br)
		if err != nil {
			return nil, "tls", err
		}
		return []string{name}, "tls", nil
	case first[0] == '\r' || first[0] == '\n' || isTokenChar(first[0]):
		// Servers skip empty lines before a request (RFC 9112 2.2) and
		// take any token as a method, not only upper case ones.
		names, err := httpHostNames(br)
		return names, "http", err
	}
	return nil, "", errNoName
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

// httpHostNames reads the head of the first HTTP request in br and returns
// the host of an absolute-form request-target and the value of every Host
// field, ports removed: a server may route by any of them. The first
// request of HTTP/2 with prior knowledge counts too (its :authority and
// host fields).
//
// The client sends its start as it likes, possibly a byte at a time, and
// each pass looks only at what is new (the empty lines before the request,
// the request line, the search for the head's end, the HTTP/2 frames): a start of maxHello bytes trickled one by one costs linear
// time, not the quadratic of scanning it all again at every byte.
func httpHostNames(br *bufio.Reader) ([]string, error) {
	preface := []byte(h2Preface)
	var (
		lead    int         // empty lines before the request line
		line    lineScanner // the request line, as far as it came
		scanned int         // head bytes searched for its end
		h2      h2Start     // the frames after an HTTP/2 preface
	)
	for {
		b, _ := br.Peek(br.Buffered())
		need := len(b) + 1 // what the next pass needs
		switch {
		case len(b) >= len(preface) && bytes.HasPrefix(b, preface):
			names, done, more, err := h2.hostNames(b[len(preface):])
			if done {
				return names, err
			}
			need = len(preface) + more
		case bytes.HasPrefix(preface, b):
			// the start of the preface: read on
		default:
			for lead < len(b) && (b[lead] == '\r' || b[lead] == '\n') {
				lead++
			}
			head := b[lead:]
			if !line.feed(head) {
				// Not HTTP after all (a protocol that starts like a
				// method): nothing to check.
				return nil, errNoName
			}
			if end := headEnd(head, scanned); end >= 0 {
				return requestNames(head[:end])
			}
			scanned = len(head)
		}
		if len(b) >= maxHello || need > maxHello {
			return nil, errors.New("request head too long")
		}
		if _, err := br.Peek(need); err != nil {
			return nil, err
		}
	}
}

// h2Preface starts what an HTTP/2 client with prior knowledge sends
// (RFC 9113 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// HTTP/2 frame types and flags the name reader knows (RFC 9113 6).
const (
	h2Headers      = 0x1
	h2Continuation = 0x9
	h2EndHeaders   = 0x4
	h2Padded       = 0x8
	h2Priority     = 0x20
)

// h2Start reads the frames after an HTTP/2 client preface up to the first
// HEADERS (with its CONTINUATIONs), as they come: each pass reads only the
// frames that are new since the last.
type h2Start struct {
	off    int    // of the bytes after the preface: the frames read
	block  []byte // the header block so far, once its HEADERS came
	stream uint32 // the HEADERS' stream
}

// hostNames reads on in b, all the bytes after the preface so far, and
// returns the first HEADERS' :authority and host, ports removed; done is
// false when more bytes are needed, and need is then how many (of b, a
// whole frame more). Frames before it (SETTINGS, WINDOW_UPDATE, PRIORITY)
// are skipped.
func (s *h2Start) hostNames(b []byte) (names []string, done bool, need int, err error) {
	for {
		f := b[s.off:]
		if len(f) < 9 {
			return nil, false, s.off + 9, nil
		}
		n := int(f[0])<<16 | int(f[1])<<8 | int(f[2])
		typ, flags := f[3], f[4]
		id := (uint32(f[5])<<24 | uint32(f[6])<<16 | uint32(f[7])<<8 | uint32(f[8])) & 0x7fffffff
		if 9+n > maxHello {
			return nil, true, 0, errors.New("malformed HTTP/2 start: frame too long")
		}
		if len(f) < 9+n {
			return nil, false, s.off + 9 + n, nil
		}
		payload := f[9 : 9+n]
		s.off += 9 + n
		switch {
		case s.block != nil:
			// a header block continues on its stream, and nothing else
			// comes between (RFC 9113 6.10)
			if typ != h2Continuation || id != s.stream {
				return nil, true, 0, errors.New("malformed HTTP/2 start: a header block without its CONTINUATION")
			}
			s.block = append(s.block, payload...)
		case typ == h2Continuation:
			return nil, true, 0, errors.New("malformed HTTP/2 start: CONTINUATION without HEADERS")
		case typ == h2Headers:
			if id == 0 {
				return nil, true, 0, errors.New("malformed HTTP/2 start: HEADERS on stream 0")
			}
			if flags&h2Padded != 0 {
				if len(payload) < 1 || int(payload[0]) > len(payload)-1 {
					return nil, true, 0, errors.New("malformed HTTP/2 start: bad padding")
				}
				payload = payload[1 : len(payload)-int(payload[0])]
			}
			if flags&h2Priority != 0 {
				if len(payload) < 5 {
					return nil, true, 0, errors.New("malformed HTTP/2 start: short priority")
				}
				payload = payload[5:]
			}
			s.stream = id
			s.block = append([]byte{}, payload...)
		default:
			continue
		}
		if flags&h2EndHeaders == 0 {
			continue
		}
		names, err := h2Authorities(s.block)
		return names, true, 0, err
	}
}

// h2Authorities decodes a header block (HPACK) for its :authority and
// host fields. The fields decoded are bounded as a server bounds them
// (a header list of maxHello), whatever the block's references expand to.
func h2Authorities(block []byte) ([]string, error) {
	var names []string
	size := 0
	var dec *hpack.Decoder
	dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		size += len(f.Name) + len(f.Value) + 32
		if size > maxHello {
			dec.SetEmitEnabled(false)
			return
		}
		if (f.Name == ":authority" || f.Name == "host") && f.Value != "" {
			names = append(names, withoutPort(f.Value))
		}
	})
	dec.SetMaxStringLength(maxHello)
	if _, err := dec.Write(block); err != nil {
		return nil, fmt.Errorf("malformed HTTP/2 start: %w", err)
	}
	if err := dec.Close(); err != nil {
		return nil, fmt.Errorf("malformed HTTP/2 start: %w", err)
	}
	if size > maxHello {
		return nil, errors.New("malformed HTTP/2 start: header list too long")
	}
	if len(names) == 0 {
		return nil, errNoName
	}
	return names, nil
}

// withoutPort drops the port of host:port, and leaves anything else.
func withoutPort(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// lineScanner checks that a head starts with an HTTP/1 request line
// (method SP request-target SP HTTP/1.x, CRLF or LF), or with the start of
// one cut short, looking at each byte once however the head grows.
type lineScanner struct {
	pos     int // bytes of the head checked
	part, n int // method, target, version; bytes read of it
	done    bool
}

// feed checks what head holds past what was checked before (head grows
// between calls, the bytes already checked unchanged) and reports whether
// it can still be, or is, a request line.
func (l *lineScanner) feed(head []byte) bool {
	const version = "HTTP/1."
	for ; !l.done && l.pos < len(head); l.pos++ {
		c := head[l.pos]
		ok := false
		switch l.part {
		case 0, 1:
			if c == ' ' && l.n > 0 {
				l.part, l.n = l.part+1, 0
				continue
			}
			ok = l.part == 0 && isTokenChar(c) || l.part == 1 && c > ' ' && c != 0x7f
		default:
			switch {
			case l.n < len(version):
				ok = c == version[l.n]
			case l.n == len(version):
				ok = '0' <= c && c <= '9'
			case c == '\n':
				l.done = true
				return true
			default:
				ok = c == '\r' && l.n == len(version)+1
			}
		}
		if !ok {
			return false
		}
		l.n++
	}
	return true
}

// headEnd returns the length of the request head at the start of b, up to
// and including the empty line that ends it (CRLF or a bare LF), or -1.
// The search starts near from: b's first from bytes were searched before,
// when b was that long (a line end in them was looked at with the two
// bytes after it, unless they had not come yet).
func headEnd(b []byte, from int) int {
	from = max(0, from-2)
	for i := bytes.IndexByte(b[from:], '\n'); i >= 0; {
		i += from
		rest := b[i+1:]
		switch {
		case bytes.HasPrefix(rest, []byte("\n")):
			return i + 2
		case bytes.HasPrefix(rest, []byte("\r\n")):
			return i + 3
		}
		from = i + 1
		i = bytes.IndexByte(b[from:], '\n')
	}
	return -1
}

// requestNames parses a complete request head: the names are the
// authority of a CONNECT, the host of an absolute-form target and every
// Host. What does not parse is an error: a server more lenient than this
// parser would still route it.
func requestNames(head []byte) ([]string, error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	method, rest, _ := strings.Cut(line, " ")
	target, _, _ := strings.Cut(rest, " ")
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("malformed request head: %w", err)
	}
	var names []string
	switch {
	case strings.EqualFold(method, "CONNECT"):
		// the server is a proxy: the authority is where it connects
		names = append(names, target)
	case !strings.HasPrefix(target, "/") && target != "*":
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("malformed request-target: %w", err)
		}
		if u.Host != "" {
			names = append(names, u.Host)
		}
	}
	for k, vs := range hdr {
		// "Host :" is kept as "Host ", which a lenient server trims
		if !strings.EqualFold(strings.TrimSpace(k), "Host") {
			continue
		}
		for _, v := range vs {
			if v != "" { // an empty Host is no name: the server's default site
				names = append(names, v)
			}
		}
	}
	if len(names) == 0 {
		return nil, errNoName
	}
	for i, h := range names {
		names[i] = withoutPort(h)
	}
	return names, nil
}

// isTokenChar reports whether c may be part of an HTTP token (RFC 9110
// 5.6.2), such as a method.
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// checkTunnel decides the name the start of the tunnel to d carries, when
// it is not d's own: it returns the refusal, or nil when the tunnel may
// go on. The bytes read stay in br.
func (p *Proxy) checkTunnel(br *bufio.Reader, d Decision) *Decision {
	names, proto, err := tunnelName(br)
	switch {
	case errors.Is(err, errNoName):
		return nil
	case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)):
		return nil // the client went away; nothing reaches the server
	case errors.Is(err, syscall.ECONNRESET):
		// The client reset the connection (npm and browsers do when they
		// cancel a request): it can read no answer, and the destination
		// was allowed; no refusal to record.
		return nil
	case err != nil:
		// What cannot be read cannot be checked: refuse rather than
		// pass a name unseen.
		r := Decision{Run: p.cfg.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port,
			Reason: ReasonAllowlist, Rule: "unreadable start of the tunnel: " + err.Error(), kind: kindInvalid}
		p.report(r)
		return &r
	}
	what := "the TLS server name"
	if proto == "http" {
		what = "the Host of the request"
	}
	for _, name := range names {
		canon, addr, nerr := normalizeHost(name)
		if nerr == nil && addr.IsValid() {
			canon = addr.String()
		}
		if nerr == nil && canon == d.Host {
			continue
		}
		if p.cfg.RequireHostMatch {
			r := Decision{Run: p.cfg.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: ReasonHostMismatch,
				Rule: "requireHostMatch: " + what + " in a tunnel to " + d.dest() + " is " + strconv.Quote(printable(name)), kind: kindHostMismatch}
			p.report(r)
			return &r
		}
		// The rules decide; what the name resolves to does not matter, as
		// nothing is dialled for it (the tunnel's addresses were checked).
		inner := p.decideQuietly(p.ctx, d.Protocol, name, d.Port)
		if inner.Allowed || inner.Reason == "" || inner.Reason == ReasonPrivate {
			continue
		}
		inner.Rule += "; " + what + " in a tunnel to " + d.dest()
		inner.Addrs = nil
		p.report(inner)
		return &inner
	}
	return nil
}

// report hands a decision made outside decide to OnDecision.
func (p *Proxy) report(d Decision) {
	if p.cfg.OnDecision != nil {
		p.cfg.OnDecision(d)
	}
}
