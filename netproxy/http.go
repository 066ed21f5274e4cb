package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The HTTP proxy serves each client connection with one goroutine that
// reads requests one after the other with net/http's parser (see head.go);
// CONNECT opens a tunnel, an absolute-form http:// request is forwarded on
// a pooled upstream connection with its body streamed both ways.

// The X-Proxy-Error values that are not refusals of the destination.
const (
	errBadRequest     = "bad-request"
	errResolveFailed  = "resolve-failed"
	errUpstream       = "upstream-error"
	errRequestRefused = "request-refused"
	errMisdirected    = "misdirected-request"
	errUpstreamProxy  = "upstream-proxy-error"
)

// maxDiscard is how much of a request body that is not forwarded (a
// refusal) is read and dropped to keep the connection; net/http's server
// reads as much.
const maxDiscard = 256 << 10

// bodyGrace is how long the end of a request body may lag behind the end
// of the answer before the upstream connection is given up (net/http's
// Transport waits as long before it reuses a connection).
const bodyGrace = 50 * time.Millisecond

// route says where the requests of one client connection go. The zero
// route is the proxy port's: every request names its destination in
// absolute form and is decided on its own.
type route struct {
	// dest, when not nil, is where every request goes: a destination
	// decided before, as a tunnel's whose TLS the proxy ends. Requests
	// are then in origin form, and one whose Host names another host is
	// refused (421).
	dest *Decision
	// dial, when set, connects to an allowed destination instead of
	// Proxy.dialDest (as a TLS client, say); pool then names its
	// connections in the pool, beside the destination.
	dial func(context.Context, Decision) (net.Conn, error)
	pool string
	// prepare, when set, sees each request before it is sent upstream
	// (tls: over a TLS connection of the proxy's own). It may change its
	// header and its body (req.Body, with req.ContentLength, -1 for a
	// chunked body), or refuse it with an error, which the client gets as
	// a 403.
	prepare func(req *http.Request, d Decision, tls bool) error
	tls     bool
}

// clientConn is a client connection of the HTTP proxy.
type clientConn struct {
	c  net.Conn      // the connection: writes, deadlines, splicing
	br *bufio.Reader // reads it, through hr
	hr *headReader
	// linger: bytes of a request may be unread; the connection is closed
	// after the client has had time to read the answer (a close with
	// unread bytes resets the connection and can lose the answer).
	linger bool
}

// serveHTTP serves the requests of the client connection c in turn, read
// from r (c, or what gives back the bytes read to tell HTTP from SOCKS),
// as rt says.
func (p *Proxy) serveHTTP(c net.Conn, r io.Reader, rt route) {
	hr := &headReader{r: r, large: p.largeHeads}
	cc := &clientConn{c: c, br: bufio.NewReaderSize(hr, 4<<10), hr: hr}
	defer cc.close()
	for {
		c.SetReadDeadline(time.Now().Add(handshakeTimeout))
		req, err := readRequestHead(cc.br, hr)
		if err != nil {
			var he *headError
			if errors.As(err, &he) {
				c.Write(errorResponse(he.status, errBadRequest, "cordon proxy: "+he.msg+"\n", true))
				cc.linger = true
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		// the head stays in memory while the request is served
		ok := p.serveRequest(cc, req, rt)
		hr.release()
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
	cc.hr.release()
	if cc.linger {
		if cw, ok := cc.c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			cc.c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			io.Copy(io.Discard, io.LimitReader(cc.c, 1<<20))
		}
	}
	cc.c.Close()
}

// serveRequest answers one request; false when the connection must end.
func (p *Proxy) serveRequest(cc *clientConn, req *http.Request, rt route) bool {
	if rt.dest != nil {
		d := *rt.dest
		if req.Method == "CONNECT" || !strings.HasPrefix(req.RequestURI, "/") && req.RequestURI != "*" {
			return cc.answer(req, 400, errBadRequest, "cordon proxy: not an origin-form request\n")
		}
		if host := strings.TrimSuffix(withoutPort(req.Host), "."); !strings.EqualFold(strings.Trim(host, "[]"), d.Host) {
			return cc.answer(req, 421, errMisdirected, fmt.Sprintf("cordon proxy: this connection is to %s, not %s\n", d.dest(), printable(req.Host)))
		}
		return p.forward(cc, req, d, rt)
	}
	host, port, err := splitTarget(req.Method, req.RequestURI)
	if err != nil {
		return cc.answer(req, 400, errBadRequest, "cordon proxy: "+err.Error()+"\n")
	}
	proto := "http"
	if req.Method == "CONNECT" {
		proto = "connect"
	}
	d := p.decide(p.ctx, proto, host, port)
	if d.Allowed && proto == "connect" {
		d, _ = p.refuseTunnel(d)
	}
	if d.Allowed && proto == "http" {
		d = p.hostMatch(req, d)
	}
	if !d.Allowed {
		status, xerr, body := refusal(d)
		return cc.answerPhrase(req, status, refusalPhrase(d), xerr, body)
	}
	if req.Method == "CONNECT" {
		return p.connect(cc, req, d)
	}
	return p.forward(cc, req, d, rt)
}

// hostMatch is, under requireHostMatch, the refusal (reported) of an
// absolute-form request whose Host field names another host or port than
// its target; d otherwise.
func (p *Proxy) hostMatch(req *http.Request, d Decision) Decision {
	field := req.Header.Get("Host")
	if !p.cfg.RequireHostMatch || field == "" {
		return d
	}
	host, port, err := splitAuthority(field, 80)
	if err == nil {
		name, addr, nerr := normalizeHost(host)
		if addr.IsValid() {
			name = addr.String()
		}
		if nerr == nil && name == d.Host && port == d.Port {
			return d
		}
	}
	r := Decision{Run: d.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: ReasonHostMismatch,
		Rule: "requireHostMatch: the Host of a request to " + d.dest() + " is " + strconv.Quote(printable(field)), kind: kindHostMismatch}
	p.report(r)
	return r
}

// refusal is the answer to a refused destination: 403 and X-Proxy-Error
// with the reason, or 502 when the name did not resolve.
func refusal(d Decision) (status int, xerr, body string) {
	switch d.Reason {
	case "":
		return 502, errResolveFailed, d.Message()
	case ReasonHostMismatch:
		return 421, string(d.Reason), d.Message()
	case ReasonTooManyTunnels:
		return 503, string(d.Reason), d.Message()
	}
	return 403, string(d.Reason), d.Message()
}

// errorResponse is an answer of the proxy's own.
func errorResponse(status int, xerr, body string, close bool) []byte {
	return errorResponsePhrase(status, "", xerr, body, close)
}

// errorResponsePhrase is errorResponse with the status line's phrase
// ("": the status's own).
func errorResponsePhrase(status int, phrase, xerr, body string, close bool) []byte {
	if phrase == "" {
		phrase = http.StatusText(status)
	}
	b := fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Proxy-Error: %s\r\n"+
		"Cache-Control: no-store\r\nContent-Length: %d\r\n", status, phrase, xerr, len(body))
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// refusalPhrase is the status line's phrase of the refusal of a tunnel
// with a reason: the reason, which is what many clients of a tunnel print
// (as sandbox-runtime sends it); "" otherwise.
func refusalPhrase(d Decision) string {
	if d.Protocol != "connect" || d.Why == "" {
		return ""
	}
	return statusPhrase(d.Why)
}

// statusPhrase is a reason as a status line's phrase: ASCII (clients
// read other bytes there differently), at most 200 characters.
func statusPhrase(why string) string {
	b := []byte(strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f {
			return '?'
		}
		return r
	}, why))
	if len(b) > 200 {
		b = append(b[:197], "..."...)
	}
	return string(b)
}

// bodyKind is how a message's body is delimited.
type bodyKind int

const (
	bodyNone    bodyKind = iota // no body
	bodyLength                  // Content-Length bytes
	bodyChunked                 // chunked transfer coding
	bodyClose                   // until the connection closes (responses only)
)

// requestBody is how req's body is delimited.
func requestBody(req *http.Request) bodyKind {
	switch {
	case slices.Contains(req.TransferEncoding, "chunked"):
		return bodyChunked
	case req.ContentLength > 0:
		return bodyLength
	}
	return bodyNone
}

// responseBody is how resp's body, an answer to a request with method, is
// delimited.
func responseBody(resp *http.Response, method string) bodyKind {
	switch {
	case method == "HEAD" || resp.StatusCode < 200 || resp.StatusCode == 204 || resp.StatusCode == 304:
		return bodyNone
	case slices.Contains(resp.TransferEncoding, "chunked"):
		return bodyChunked
	case resp.ContentLength >= 0:
		return bodyLength
	}
	return bodyClose
}

// keepAlive reports whether the client may send another request on the
// connection. HTTP/1.0 clients are answered and closed: their keep-alive
// is an extension not worth its framing rules.
func keepAlive(req *http.Request) bool {
	return req.ProtoMinor >= 1 && !req.Close && !hasToken(req.Header, "Proxy-Connection", "close")
}

// upgrade returns the protocol a request asks to switch to (Connection:
// upgrade and Upgrade), or "".
func upgrade(req *http.Request) string {
	if !hasToken(req.Header, "Connection", "upgrade") {
		return ""
	}
	return req.Header.Get("Upgrade")
}

// answer writes an answer of the proxy's own to a request whose body
// nothing read, and reports whether the connection may serve another. A
// short body is read and dropped; a client that waits for 100 Continue
// before it sends its body gets none, and the connection ends.
func (cc *clientConn) answer(req *http.Request, status int, xerr, body string) bool {
	return cc.answerPhrase(req, status, "", xerr, body)
}

// answerPhrase is answer with the status line's phrase ("": the status's
// own).
func (cc *clientConn) answerPhrase(req *http.Request, status int, phrase, xerr, body string) bool {
	kind := requestBody(req)
	keep := keepAlive(req) &&
		!(kind != bodyNone && hasToken(req.Header, "Expect", "100-continue")) &&
		!(kind == bodyLength && req.ContentLength > maxDiscard)
	if _, err := cc.c.Write(errorResponsePhrase(status, phrase, xerr, body, !keep)); err != nil {
		return false
	}
	if !keep || kind == bodyNone {
		cc.linger = kind != bodyNone
		return keep
	}
	cc.c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer cc.c.SetReadDeadline(time.Time{})
	n, err := io.Copy(io.Discard, io.LimitReader(req.Body, maxDiscard+1))
	if err != nil || n > maxDiscard {
		cc.linger = true
		return false
	}
	return true
}

// fail answers 502 for an upstream that did not answer; bodyRead says
// whether the request's body was read to its end (or there was none).
func (cc *clientConn) fail(req *http.Request, bodyRead bool, d Decision, err error) bool {
	keep := bodyRead && keepAlive(req)
	if _, err := cc.c.Write(errorResponse(502, errUpstream, upstreamFailure(d, err), !keep)); err != nil {
		return false
	}
	cc.linger = !bodyRead
	return keep
}

// connect dials the destination, then answers 200 and relays bytes.
func (p *Proxy) connect(cc *clientConn, req *http.Request, d Decision) bool {
	if p.terminates(d) {
		release, r, ok := p.terminateSlot(d)
		if !ok {
			status, xerr, body := refusal(r)
			return cc.answer(req, status, xerr, body)
		}
		defer release()
		if _, err := io.WriteString(cc.c, "HTTP/1.1 200 Connection established\r\n\r\n"); err == nil {
			p.terminate(cc.c, cc.br, d)
		}
		return false
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	upstream, err := p.dialDest(ctx, d)
	cancel()
	if err != nil {
		return cc.unreachable(req, d, err)
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
	if _, ok := errors.AsType[*UpstreamError](err); ok {
		return fmt.Sprintf("cordon proxy: %s: %v. cordon reaches the network through it, never directly (its NO_PROXY names what goes directly).\n", d.dest(), err)
	}
	return fmt.Sprintf("cordon proxy: %s: %v\n", d.dest(), dialError(err))
}

// unreachable answers 502 to a request whose destination, or the
// upstream proxy on the way, could not be reached.
func (cc *clientConn) unreachable(req *http.Request, d Decision, err error) bool {
	xerr := errUpstream
	if _, ok := errors.AsType[*UpstreamError](err); ok {
		xerr = errUpstreamProxy
	}
	return cc.answer(req, 502, xerr, upstreamFailure(d, err))
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
func (p *Proxy) forward(cc *clientConn, req *http.Request, d Decision, rt route) bool {
	body := req.Body
	if rt.prepare != nil {
		if err := rt.prepare(req, d, rt.tls); err != nil {
			req.Body = body // what is left of the client's body is dropped
			return cc.answer(req, 403, errRequestRefused, "cordon proxy: "+err.Error()+"\n")
		}
	}
	out := outgoing{req: req, kind: requestBody(req), spliced: req.Body == body}
	if !out.spliced {
		switch {
		case req.ContentLength < 0:
			out.kind = bodyChunked
		case req.ContentLength > 0:
			out.kind = bodyLength
		default:
			out.kind = bodyNone
		}
	}
	head := requestHead(req, d, out.kind, nil, rt.tls)
	// A pooled connection the server closed while it was idle fails
	// before any answer; a request without a body whose method is
	// idempotent is then sent once more on a new connection, as net/http's
	// Transport does. Others get a 502.
	retry := out.kind == bodyNone && idempotent(req.Method)
	dial := p.dialDest
	key := d.dest()
	switch {
	case rt.dial != nil:
		dial = rt.dial
		key = rt.pool + " " + key
	case d.via != nil:
		// in absolute form to the upstream proxy, which makes the
		// connection to the destination
		via := d.via
		head = requestHead(req, d, out.kind, via, false)
		dial = func(ctx context.Context, _ Decision) (net.Conn, error) { return p.dialProxy(ctx, via) }
		key = "via " + via.String() + " " + key
	}
	uc := p.pool.get(key)
	for {
		if uc == nil {
			var err error
			if uc, err = p.dialUpstream(d, dial, key); err != nil {
				return cc.unreachable(req, d, err)
			}
		}
		keep, again := p.exchange(cc, out, d, uc, head, retry && uc.reused)
		if !again {
			if keep && !out.spliced {
				// the client's body, which prepare replaced, is read to
				// its end before the next request
				n, err := io.Copy(io.Discard, io.LimitReader(body, maxDiscard+1))
				keep = err == nil && n <= maxDiscard
				cc.linger = !keep
			}
			return keep
		}
		uc, retry = nil, false
	}
}

// outgoing is a request as it is sent upstream: its body, as it is
// delimited there, is spliced from the client connection, or read from
// req.Body when a prepare hook changed it.
type outgoing struct {
	req     *http.Request
	kind    bodyKind
	spliced bool
}

// dialUpstream connects to d with dial; key names the connection in the
// pool.
func (p *Proxy) dialUpstream(d Decision, dial func(context.Context, Decision) (net.Conn, error), key string) (*upConn, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	c, err := dial(ctx, d)
	if err != nil {
		return nil, err
	}
	hr := &headReader{r: c, large: p.largeHeads}
	return &upConn{c: c, br: bufio.NewReaderSize(hr, 4<<10), hr: hr, dest: key}, nil
}

// exchange sends one request on uc and relays the answer. again: uc
// failed before answering, and the request may be sent again (retry).
func (p *Proxy) exchange(cc *clientConn, out outgoing, d Decision, uc *upConn, head []byte, retry bool) (keep, again bool) {
	req := out.req
	if !p.track(uc.c) {
		uc.c.Close()
		return false, false
	}
	pooled := false
	defer func() {
		p.untrack(uc.c)
		uc.hr.release()
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
	bodyRead := out.kind == bodyNone
	if bodyRead {
		go watch()
	} else {
		bodyDone = make(chan error, 1)
		go func() {
			err := copyRequestBody(uc.c, cc, out)
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
	var resp *http.Response
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
		uc.hr.release() // of a 1xx head before
		resp, err = readResponseHead(uc.br, uc.hr, req)
		if err != nil {
			finish(0)
			if malformedBody(bodyErr) {
				cc.c.Write(errorResponse(400, errBadRequest, "cordon proxy: "+printable(bodyErr.Error())+"\n", true))
				cc.linger = true
				return false, false
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = errors.New("the server closed the connection without an answer")
			}
			return cc.fail(req, bodyRead, d, err), false
		}
		retry = false // an answer came: the request is not sent again
		if resp.StatusCode == 101 {
			finish(handshakeTimeout)
			want := upgrade(req)
			if want == "" || !strings.EqualFold(want, resp.Header.Get("Upgrade")) {
				return cc.fail(req, bodyRead, d, fmt.Errorf("the server switched protocols to %q when %q was asked for",
					printable(resp.Header.Get("Upgrade")), printable(want))), false
			}
			if !bodyRead {
				cc.linger = true
				return false, false
			}
			h := responseHead(resp, p.cfg.StripResponseHeaders)
			h = append(h, "Connection: Upgrade\r\nUpgrade: "...)
			h = append(h, resp.Header.Get("Upgrade")...)
			h = append(h, "\r\n\r\n"...)
			if _, err := cc.c.Write(h); err == nil {
				stopWatch()
				p.upgraded(cc, uc)
			}
			return false, false
		}
		if resp.StatusCode >= 200 {
			break
		}
		// 100 Continue, 103 Early Hints: HTTP/1.0 clients know none
		if req.ProtoMinor >= 1 {
			if _, err := cc.c.Write(append(responseHead(resp, p.cfg.StripResponseHeaders), "\r\n"...)); err != nil {
				finish(0)
				return false, false
			}
		}
	}
	keep = keepAlive(req)
	kind := responseBody(resp, req.Method)
	h := responseHead(resp, p.cfg.StripResponseHeaders)
	switch kind {
	case bodyNone:
		// a HEAD's or a 304's Content-Length describes what a GET would get
		if cl := resp.Header.Get("Content-Length"); cl != "" && resp.StatusCode != 204 {
			h = append(h, "Content-Length: "+cl+"\r\n"...)
		}
	case bodyLength:
		h = strconv.AppendInt(append(h, "Content-Length: "...), resp.ContentLength, 10)
		h = append(h, "\r\n"...)
	case bodyChunked:
		if req.ProtoMinor >= 1 {
			h = append(h, "Transfer-Encoding: chunked\r\n"...)
			h = announceTrailers(h, resp.Trailer)
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
	switch kind {
	case bodyLength:
		err = copyBody(cc.c, uc.c, uc.br, resp.ContentLength)
	case bodyClose:
		err = copyBody(cc.c, uc.c, uc.br, -1)
	case bodyChunked:
		rerr, werr := copyChunked(cc.c, resp.Body, req.ProtoMinor >= 1, func() http.Header { return resp.Trailer })
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
	if kind != bodyClose && resp.ProtoMinor >= 1 && !resp.Close && bodyRead {
		pooled = p.pool.put(uc)
	}
	return keep, false
}

// malformedBody reports an error reading a client's request body that is
// the body's fault (its chunked framing), not the connection's.
func malformedBody(err error) bool {
	return err != nil && !isNetError(err) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errWrite)
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

// errWrite marks an error writing a body upstream.
var errWrite = errors.New("write")

// copyRequestBody sends the body of a request from the client to the
// upstream.
func copyRequestBody(up net.Conn, cc *clientConn, out outgoing) error {
	req := out.req
	switch {
	case out.spliced && out.kind == bodyLength:
		return copyBody(up, cc.c, cc.br, req.ContentLength)
	case out.kind == bodyChunked:
		rerr, werr := copyChunked(up, req.Body, true, func() http.Header { return req.Trailer })
		if werr != nil {
			return fmt.Errorf("%w: %w", errWrite, werr)
		}
		return rerr
	}
	n, err := io.CopyBuffer(writerOnly{up}, readerOnly{io.LimitReader(req.Body, req.ContentLength)}, make([]byte, 32<<10))
	if err == nil && n < req.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// requestHead is the head sent upstream: origin-form, HTTP/1.1, Host the
// name that was checked (RFC 9112 3.2.2: a proxy replaces Host with the
// target's authority), end-to-end fields, the proxy's own framing. No
// X-Forwarded-For, no Via. To an upstream proxy (via), the target is in
// absolute form, with the proxy's credentials. tls: the request goes over
// TLS the proxy made (its default port is 443).
func requestHead(req *http.Request, d Decision, kind bodyKind, via *url.URL, tls bool) []byte {
	b := make([]byte, 0, 512)
	b = append(b, req.Method...)
	b = append(b, ' ')
	if via != nil {
		b = append(b, "http://"+d.hostHeader(false)...)
	}
	b = append(b, originForm(req.RequestURI)...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, d.hostHeader(tls)...)
	b = append(b, "\r\n"...)
	if via != nil {
		if a := proxyAuthorization(via); a != "" {
			b = append(b, "Proxy-Authorization: "+a+"\r\n"...)
		}
	}
	b = appendHeader(b, endToEnd(req.Header, "Host"))
	if hasToken(req.Header, "TE", "trailers") {
		b = append(b, "TE: trailers\r\n"...)
	}
	switch {
	case kind == bodyLength:
		b = strconv.AppendInt(append(b, "Content-Length: "...), req.ContentLength, 10)
		b = append(b, "\r\n"...)
	case kind == bodyChunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		b = announceTrailers(b, req.Trailer)
	case req.Header.Get("Content-Length") != "" || req.Method == "POST" || req.Method == "PUT" || req.Method == "PATCH":
		// as net/http's Transport: some servers want a length, even 0
		b = append(b, "Content-Length: 0\r\n"...)
	}
	if up := upgrade(req); up != "" {
		b = append(b, "Connection: Upgrade\r\nUpgrade: "...)
		b = append(b, up...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// announceTrailers names, in a Trailer field, the trailer fields to come
// after a chunked body that stays chunked (net/http's parser kept the
// names a Trailer field listed as trailer's keys).
func announceTrailers(b []byte, trailer http.Header) []byte {
	names := make([]string, 0, len(trailer))
	for k := range endToEnd(trailer, "Host") {
		names = append(names, k)
	}
	if len(names) == 0 {
		return b
	}
	slices.Sort(names)
	b = append(b, "Trailer: "...)
	b = append(b, strings.Join(names, ", ")...)
	return append(b, "\r\n"...)
}

// originForm is the path and query of an absolute-form http:// target
// (splitTarget checked it), or an origin-form one: "/" when it has none.
func originForm(target string) string {
	rest := target
	if _, after, ok := strings.Cut(target, "://"); ok {
		rest = after
		i := strings.IndexAny(rest, "/?")
		if i < 0 {
			return "/"
		}
		rest = rest[i:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
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
// HTTP/1.1, without the empty line that ends a head, and without the
// fields strip names (compared without case, '-', '_' and '.' alike).
func responseHead(resp *http.Response, strip []string) []byte {
	_, reason, _ := strings.Cut(resp.Status, " ")
	b := make([]byte, 0, 512)
	b = fmt.Appendf(b, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, reason)
	h := endToEnd(resp.Header)
	for k := range h {
		if slices.ContainsFunc(strip, func(s string) bool { return foldName(s) == foldName(k) }) {
			delete(h, k)
		}
	}
	return appendHeader(b, h)
}

// foldName is a field name as some servers read it: without case, and
// '_' and '.' taken for '-'.
func foldName(s string) string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(s))
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

// copyChunked copies a chunked body that net/http's reader decodes from
// body to dst, chunked again when rechunk (with the trailer fields, but
// hop-by-hop ones, that trailer returns once body has ended), or as plain
// bytes for a reader that reads until the connection closes.
func copyChunked(dst net.Conn, body io.Reader, rechunk bool, trailer func() http.Header) (readErr, writeErr error) {
	buf := bodyPool.Get().(*[bodyBufferSize]byte)
	defer bodyPool.Put(buf)
	var size [20]byte
	for {
		n, err := body.Read(buf[:])
		if n > 0 {
			var werr error
			if rechunk {
				hdr := strconv.AppendInt(size[:0], int64(n), 16)
				hdr = append(hdr, '\r', '\n')
				bufs := net.Buffers{hdr, buf[:n], []byte("\r\n")}
				_, werr = bufs.WriteTo(dst)
			} else {
				_, werr = dst.Write(buf[:n])
			}
			if werr != nil {
				return nil, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err, nil
		}
	}
	if !rechunk {
		return nil, nil
	}
	end := appendHeader([]byte("0\r\n"), endToEnd(trailer(), "Host"))
	end = append(end, "\r\n"...)
	_, err := dst.Write(end)
	return nil, err
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
// it is the scheme's (80; 443 over TLS), as clients write it: a server, or
// a signature over the Host (AWS SigV4), may take "host:443" for another.
func (d Decision) hostHeader(tls bool) string {
	if d.Port == 80 && !tls || d.Port == 443 && tls {
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
