package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The HTTP proxy is cordon's own HTTP/1.1 server and client (not
// net/http's, whose packages and their initialisation a cold run would pay
// for on every start): one goroutine per client connection reads request
// heads one after the other; CONNECT opens a tunnel, an absolute-form
// http:// request is forwarded on a pooled upstream connection with its
// body streamed both ways.

// The X-Proxy-Error values that are not refusals.
const (
	errBadRequest    = "bad-request"
	errResolveFailed = "resolve-failed"
	errUpstream      = "upstream-error"
)

// maxDiscard is how much of a request body that is not forwarded (a
// refusal) is read and dropped to keep the connection; net/http's server
// reads as much.
const maxDiscard = 256 << 10

// bodyGrace is how long the end of a request body may lag behind the end
// of the answer before the upstream connection is given up (net/http's
// Transport waits as long before it reuses a connection).
const bodyGrace = 50 * time.Millisecond

// clientConn is a client connection of the HTTP proxy.
type clientConn struct {
	c  net.Conn      // the connection: writes, deadlines, splicing
	br *bufio.Reader // reads it, from the byte that told HTTP from SOCKS
	// linger: bytes of a request may be unread; the connection is closed
	// after the client has had time to read the answer (a close with
	// unread bytes resets the connection and can lose the answer).
	linger bool
	// large: the proxy's large head slots (see lineReader)
	large chan struct{}
}

// serveHTTP serves the requests of one client connection in turn; first
// is the byte serveConn read.
func (p *Proxy) serveHTTP(c net.Conn, first byte) {
	cc := &clientConn{c: c, br: bufio.NewReaderSize(&prefixConn{Conn: c, first: []byte{first}}, 4<<10), large: p.largeHeads}
	defer cc.close()
	for {
		c.SetReadDeadline(time.Now().Add(handshakeTimeout))
		// the head stays in memory while the request is served
		lr := &lineReader{br: cc.br, budget: maxHead, large: p.largeHeads}
		req, err := parseRequest(lr)
		if err != nil {
			lr.release()
			var he *headError
			if errors.As(err, &he) {
				c.Write(errorResponse(he.status, errBadRequest, "cordon proxy: "+he.msg+"\n", true))
				cc.linger = true
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		ok := p.serveRequest(cc, req)
		lr.release()
		if !ok || p.isClosed() {
			return
		}
		c.SetReadDeadline(time.Now().Add(idleTimeout))
		if _, err := cc.br.Peek(1); err != nil {
			return
		}
	}
}

// close ends the connection, lingering when bytes may be unread.
func (cc *clientConn) close() {
	if cc.linger {
		if cw, ok := cc.c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			cc.c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			io.Copy(io.Discard, io.LimitReader(cc.c, 1<<20))
		}
	}
	cc.c.Close()
}

// serveRequest answers one request; false when the connection must end.
func (p *Proxy) serveRequest(cc *clientConn, req *request) bool {
	host, port, err := splitTarget(req.method, req.target)
	if err != nil {
		return cc.answer(req, 400, errBadRequest, "cordon proxy: "+err.Error()+"\n")
	}
	proto := "http"
	if req.method == "CONNECT" {
		proto = "connect"
	}
	d := p.decide(p.ctx, proto, host, port)
	if !d.Allowed {
		status, xerr, body := refusal(d)
		return cc.answer(req, status, xerr, body)
	}
	if req.method == "CONNECT" {
		return p.connect(cc, req, d)
	}
	return p.forward(cc, req, d)
}

// refusal is the answer to a refused destination: 403 and X-Proxy-Error
// with the reason, or 502 when the name did not resolve.
func refusal(d Decision) (status int, xerr, body string) {
	if d.Reason == "" {
		return 502, errResolveFailed, d.Message()
	}
	return 403, string(d.Reason), d.Message()
}

// errorResponse is an answer of the proxy's own.
func errorResponse(status int, xerr, body string, close bool) []byte {
	b := fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Proxy-Error: %s\r\n"+
		"Cache-Control: no-store\r\nContent-Length: %d\r\n", status, statusText(status), xerr, len(body))
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// answer writes an answer of the proxy's own to a request whose body
// nothing read, and reports whether the connection may serve another. A
// short body is read and dropped; a client that waits for 100 Continue
// before it sends its body gets none, and the connection ends.
func (cc *clientConn) answer(req *request, status int, xerr, body string) bool {
	keep := req.keepAlive() &&
		!(req.body != bodyNone && req.header.hasToken("Expect", "100-continue")) &&
		!(req.body == bodyLength && req.length > maxDiscard)
	if _, err := cc.c.Write(errorResponse(status, xerr, body, !keep)); err != nil {
		return false
	}
	if !keep || req.body == bodyNone {
		cc.linger = req.body != bodyNone
		return keep
	}
	cc.c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer cc.c.SetReadDeadline(time.Time{})
	switch req.body {
	case bodyLength:
		if _, err := cc.br.Discard(int(req.length)); err != nil {
			return false
		}
	case bodyChunked:
		cr := &chunkedReader{br: cc.br, large: cc.large}
		_, err := io.Copy(io.Discard, io.LimitReader(cr, maxDiscard+1))
		cr.release()
		if err != nil || !cr.done {
			cc.linger = true
			return false
		}
	}
	return true
}

// fail answers 502 for an upstream that did not answer; bodyRead says
// whether the request's body was read to its end (or there was none).
func (cc *clientConn) fail(req *request, bodyRead bool, d Decision, err error) bool {
	keep := bodyRead && req.keepAlive()
	if _, err := cc.c.Write(errorResponse(502, errUpstream, upstreamFailure(d, err), !keep)); err != nil {
		return false
	}
	cc.linger = !bodyRead
	return keep
}

// connect dials the destination, then answers 200 and relays bytes.
func (p *Proxy) connect(cc *clientConn, req *request, d Decision) bool {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	upstream, err := p.dial(ctx, d.Addrs, d.Port)
	cancel()
	if err != nil {
		return cc.answer(req, 502, errUpstream, fmt.Sprintf("cordon proxy: connect to %s: %v\n", d.dest(), dialError(err)))
	}
	if _, err := io.WriteString(cc.c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		upstream.Close()
		return false
	}
	// a client may send its first bytes (a TLS hello) before the answer
	var head []byte
	if n := cc.br.Buffered(); n > 0 {
		b, _ := cc.br.Peek(n)
		head = bytes.Clone(b)
	}
	p.relay(cc.c, upstream, head, &d)
	return false
}

// upstreamFailure is the body of a 502 for a destination that could not
// be reached or did not answer.
func upstreamFailure(d Decision, err error) string {
	return fmt.Sprintf("cordon proxy: %s: %v\n", d.dest(), dialError(err))
}

// dialError drops the address from a dial error: the client learns that
// the connection failed, not where the name points.
func dialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// idempotent methods may be sent again (RFC 9110 9.2.2).
func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// forward sends req to d's destination and the answer back; it reports
// whether the client connection may serve another request.
func (p *Proxy) forward(cc *clientConn, req *request, d Decision) bool {
	head := requestHead(req, d)
	// A pooled connection the server closed while it was idle fails
	// before any answer; a request without a body whose method is
	// idempotent is then sent once more on a new connection, as net/http's
	// Transport does. Others get a 502.
	retry := req.body == bodyNone && idempotent(req.method)
	uc := p.pool.get(d.dest())
	for {
		if uc == nil {
			var err error
			if uc, err = p.dialUpstream(d); err != nil {
				return cc.answer(req, 502, errUpstream, upstreamFailure(d, err))
			}
		}
		keep, again := p.exchange(cc, req, d, uc, head, retry && uc.reused)
		if !again {
			return keep
		}
		uc, retry = nil, false
	}
}

// dialUpstream connects to the addresses d allowed.
func (p *Proxy) dialUpstream(d Decision) (*upConn, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	c, err := p.dialDest(ctx, d)
	if err != nil {
		return nil, err
	}
	return &upConn{c: c, br: bufio.NewReaderSize(c, 4<<10), dest: d.dest()}, nil
}

// exchange sends one request on uc and relays the answer. again: uc
// failed before answering, and the request may be sent again (retry).
func (p *Proxy) exchange(cc *clientConn, req *request, d Decision, uc *upConn, head []byte, retry bool) (keep, again bool) {
	if !p.track(uc.c) {
		uc.c.Close()
		return false, false
	}
	pooled := false
	defer func() {
		p.untrack(uc.c)
		if !pooled {
			uc.c.Close()
		}
	}()
	if _, err := uc.c.Write(head); err != nil {
		if retry {
			return false, true
		}
		return cc.answer(req, 502, errUpstream, upstreamFailure(d, err)), false
	}
	// Once the request is sent whole, the client connection is read ahead
	// while the answer is awaited and passed on: a client that goes away
	// (end of stream, reset) closes the upstream connection and so ends
	// the exchange, as net/http's server cancelled the request of a
	// connection that closed. An upstream that does not answer must not
	// hold the client's slot and two descriptors until it does. Bytes of
	// a next request end the watch; stopWatch ends it with a deadline.
	watched := make(chan struct{})
	var watchMu sync.Mutex
	answered := false // a client that leaves after its answer leaves uc to the pool
	gone := false     // the client left before: its request is not sent again
	watch := func() {
		defer close(watched)
		if _, err := cc.br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			watchMu.Lock()
			if !answered {
				gone = true
				uc.c.Close()
			}
			watchMu.Unlock()
		}
	}
	stopped := false
	stopWatch := func() {
		if stopped {
			return
		}
		stopped = true
		cc.c.SetReadDeadline(time.Unix(1, 0))
		<-watched
		cc.c.SetReadDeadline(time.Time{})
	}
	defer stopWatch()
	// The body streams while the answer is read: a server may answer
	// first (100 Continue, or a refusal).
	var bodyDone chan error
	var bodyErr error
	bodyRead := req.body == bodyNone
	if bodyRead {
		go watch()
	} else {
		bodyDone = make(chan error, 1)
		go func() {
			err := copyRequestBody(uc.c, cc, req)
			if err != nil {
				// the request is never completed upstream: a body the
				// proxy cannot frame does not reach the server whole
				uc.c.Close()
			}
			bodyDone <- err
			if err != nil {
				close(watched)
				return
			}
			watch()
		}()
	}
	// finish waits for the body's end, up to grace, then gives it up.
	finish := func(grace time.Duration) {
		if bodyDone == nil {
			return
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case bodyErr = <-bodyDone:
		case <-t.C:
			uc.c.Close()
			cc.c.SetReadDeadline(time.Now())
			bodyErr = <-bodyDone
			cc.c.SetReadDeadline(time.Time{})
		}
		bodyRead = bodyErr == nil
		bodyDone = nil
	}
	var resp *response
	// the head stays in memory while the answer is passed on
	var lr *lineReader
	defer func() { lr.release() }()
	for {
		if _, err := uc.br.Peek(1); err != nil && retry {
			watchMu.Lock()
			again := !gone
			watchMu.Unlock()
			if again {
				return false, true
			}
		}
		var err error
		lr.release() // of a 1xx head before
		lr = &lineReader{br: uc.br, budget: maxHead, large: cc.large}
		resp, err = readResponseHeadIn(lr, req.method)
		if err != nil {
			finish(0)
			var he *headError
			if errors.As(bodyErr, &he) {
				cc.c.Write(errorResponse(400, errBadRequest, "cordon proxy: "+he.msg+"\n", true))
				cc.linger = true
				return false, false
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the connection without an answer")
			}
			return cc.fail(req, bodyRead, d, err), false
		}
		retry = false // an answer came: the request is not sent again
		if resp.status == 101 {
			finish(handshakeTimeout)
			want := req.upgrade()
			if want == "" || !strings.EqualFold(want, resp.header.get("Upgrade")) {
				return cc.fail(req, bodyRead, d, fmt.Errorf("the server switched protocols to %q when %q was asked for",
					printable(resp.header.get("Upgrade")), printable(want))), false
			}
			if !bodyRead {
				cc.linger = true
				return false, false
			}
			h := responseHead(resp)
			h = append(h, "Connection: Upgrade\r\nUpgrade: "...)
			h = append(h, resp.header.get("Upgrade")...)
			h = append(h, "\r\n\r\n"...)
			if _, err := cc.c.Write(h); err == nil {
				stopWatch()
				p.upgraded(cc, uc)
			}
			return false, false
		}
		if resp.status >= 200 {
			break
		}
		// 100 Continue, 103 Early Hints: HTTP/1.0 clients know none
		if req.minor >= 1 {
			if _, err := cc.c.Write(append(responseHead(resp), "\r\n"...)); err != nil {
				finish(0)
				return false, false
			}
		}
	}
	keep = req.keepAlive()
	h := responseHead(resp)
	switch resp.body {
	case bodyNone:
		// a HEAD's or a 304's Content-Length describes what a GET would get
		if cl := resp.header.get("Content-Length"); cl != "" && resp.status != 204 {
			h = append(h, "Content-Length: "+cl+"\r\n"...)
		}
	case bodyLength:
		h = strconv.AppendInt(append(h, "Content-Length: "...), resp.length, 10)
		h = append(h, "\r\n"...)
	case bodyChunked:
		if req.minor >= 1 {
			h = append(h, "Transfer-Encoding: chunked\r\n"...)
			h = announceTrailers(h, resp.header)
		} else {
			keep = false
		}
	case bodyClose:
		// the end of the body is the end of the connection, both sides
		keep = false
	}
	if !keep {
		h = append(h, "Connection: close\r\n"...)
	}
	h = append(h, "\r\n"...)
	if _, err := cc.c.Write(h); err != nil {
		finish(0)
		return false, false
	}
	var err error
	switch resp.body {
	case bodyLength:
		err = copyBody(cc.c, uc.c, uc.br, resp.length)
	case bodyClose:
		err = copyBody(cc.c, uc.c, uc.br, -1)
	case bodyChunked:
		rerr, werr := copyChunked(cc.c, uc.br, req.minor >= 1, cc.large)
		err = errors.Join(rerr, werr)
	}
	watchMu.Lock()
	answered = true
	watchMu.Unlock()
	finish(bodyGrace)
	stopWatch()
	if err != nil {
		// a truncated answer: the client sees the connection end
		return false, false
	}
	if !bodyRead {
		cc.linger = true
		keep = false
	}
	if resp.body != bodyClose && resp.minor >= 1 && !resp.header.hasToken("Connection", "close") && bodyRead {
		pooled = p.pool.put(uc)
	}
	return keep, false
}

// upgraded relays a connection that switched protocols (101) both ways
// until both ends are done.
func (p *Proxy) upgraded(cc *clientConn, uc *upConn) {
	if _, err := writeBuffered(uc.c, cc.br, -1); err != nil {
		return
	}
	if _, err := writeBuffered(cc.c, uc.br, -1); err != nil {
		return
	}
	p.relay(cc.c, uc.c, nil, nil)
}

// copyRequestBody sends the body of req from the client to the upstream.
func copyRequestBody(up net.Conn, cc *clientConn, req *request) error {
	if req.body == bodyChunked {
		rerr, werr := copyChunked(up, cc.br, true, cc.large)
		return errors.Join(rerr, werr)
	}
	return copyBody(up, cc.c, cc.br, req.length)
}

// requestHead is the head sent upstream: origin-form, HTTP/1.1, Host the
// name that was checked (RFC 9112 3.2.2: a proxy replaces Host with the
// target's authority), end-to-end fields, the proxy's own framing. No
// X-Forwarded-For, no Via.
func requestHead(req *request, d Decision) []byte {
	b := make([]byte, 0, 512)
	b = append(b, req.method...)
	b = append(b, ' ')
	b = append(b, originForm(req.target)...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, d.hostHeader()...)
	b = append(b, "\r\n"...)
	b = req.header.endToEnd(b, "Host")
	if req.header.hasToken("TE", "trailers") {
		b = append(b, "TE: trailers\r\n"...)
	}
	switch {
	case req.body == bodyLength:
		b = strconv.AppendInt(append(b, "Content-Length: "...), req.length, 10)
		b = append(b, "\r\n"...)
	case req.body == bodyChunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		b = announceTrailers(b, req.header)
	case req.header.get("Content-Length") != "" || req.method == "POST" || req.method == "PUT" || req.method == "PATCH":
		// as net/http's Transport: some servers want a length, even 0
		b = append(b, "Content-Length: 0\r\n"...)
	}
	if up := req.upgrade(); up != "" {
		b = append(b, "Connection: Upgrade\r\nUpgrade: "...)
		b = append(b, up...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// announceTrailers passes on the Trailer fields of a chunked body that
// stays chunked: the names of the trailer fields to come.
func announceTrailers(b []byte, h header) []byte {
	for _, v := range h.values("Trailer") {
		b = append(b, "Trailer: "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	return b
}

// originForm is the path and query of an absolute-form http:// target
// (splitTarget checked it): "/" when it has none.
func originForm(target string) string {
	_, rest, _ := strings.Cut(target, "://")
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		return "/"
	}
	path, query, hasQuery := strings.Cut(rest[i:], "?")
	var b strings.Builder
	if path == "" {
		b.WriteByte('/')
	}
	// as net/http sent it: non-ASCII bytes of the path escaped; and a
	// fragment is not part of a request-target
	for i := range len(path) {
		if c := path[i]; c >= 0x80 || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(strings.ReplaceAll(query, "#", "%23"))
	}
	return b.String()
}

// responseHead is the status line and the end-to-end fields of resp, as
// HTTP/1.1, without the empty line that ends a head.
func responseHead(resp *response) []byte {
	b := make([]byte, 0, 512)
	b = fmt.Appendf(b, "HTTP/1.1 %03d %s\r\n", resp.status, resp.reason)
	return resp.header.endToEnd(b)
}

// copyBody copies n bytes, or until src ends when n < 0, from src, whose
// reader br may hold the first ones, to dst. Between two *net.TCPConn
// io.Copy splices in the kernel; otherwise the bytes go through a
// 256 KiB buffer.
func copyBody(dst, src net.Conn, br *bufio.Reader, n int64) error {
	k, err := writeBuffered(dst, br, n)
	if err != nil {
		return err
	}
	if n >= 0 {
		n -= int64(k)
	}
	if n == 0 {
		return nil
	}
	// br is empty: the connection is read itself
	var r io.Reader = src
	if n > 0 {
		r = &io.LimitedReader{R: src, N: n}
	}
	var copied int64
	_, tcpDst := dst.(*net.TCPConn)
	_, tcpSrc := src.(*net.TCPConn)
	if tcpDst && tcpSrc {
		copied, err = io.Copy(dst, r)
	} else {
		buf := bodyPool.Get().(*[bodyBufferSize]byte)
		copied, err = io.CopyBuffer(writerOnly{dst}, readerOnly{r}, buf[:])
		bodyPool.Put(buf)
	}
	if err == nil && n > 0 && copied < n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that
// io.CopyBuffer uses the buffer it is given.
type writerOnly struct{ io.Writer }

type readerOnly struct{ io.Reader }

// dest is host:port, with brackets for IPv6.
func (d Decision) dest() string {
	return net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
}

// hostHeader is the authority of the destination, the port left out when
// it is 80.
func (d Decision) hostHeader() string {
	if d.Port == 80 {
		if strings.Contains(d.Host, ":") {
			return "[" + d.Host + "]"
		}
		return d.Host
	}
	return d.dest()
}

// bodyBufferSize is the buffer a forwarded body is copied through when it
// cannot be spliced: a smaller one (net/http's 32 KiB) costs a read and a
// write for every 32 KiB, and a large body on a fast link then spends most
// of its time in system calls.
const bodyBufferSize = 256 << 10

var bodyPool = sync.Pool{New: func() any { return new([bodyBufferSize]byte) }}
