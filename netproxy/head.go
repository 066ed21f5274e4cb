package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The HTTP/1.1 proxy parses heads itself (RFC 9112), strictly: a message
// that a server behind the proxy could frame differently from the proxy
// (request smuggling) is refused rather than forwarded. Every head that is
// forwarded is written anew, one field a line, CRLF line ends, with the
// framing the proxy chose; nothing of the client's bytes passes verbatim
// but the field names and values, which are checked.

// maxHead bounds a request or response head, start line and fields, and
// the trailer section of a chunked body: 1 MiB, net/http's server default
// (DefaultMaxHeaderBytes), so that every head that passed before passes.
const maxHead = 1 << 20

// maxFields bounds the fields of one head (or trailer section). net/http
// has no such bound, but a head of 1 MiB of three-byte fields is some
// 350,000 of them and about 9 MB of memory in the proxy, for each of the
// run's connections; real clients and servers send tens.
const maxFields = 4096

// largeHead is the size past which a head counts as large: a run's proxy
// reads and holds at most maxLargeHeads of them at once (431 beyond). Its
// heads are held in cordon, on the host, outside the sandbox's memory
// limit: 1024 connections of 1 MiB heads were 1.8 GB of cordon's memory.
const (
	largeHead     = 64 << 10
	maxLargeHeads = 16
)

// field is one header field, its name as the sender wrote it.
type field struct{ name, value string }

// header is the fields of a head in the order they came.
type header []field

// values returns the values of every field named name.
func (h header) values(name string) []string {
	var vs []string
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			vs = append(vs, f.value)
		}
	}
	return vs
}

// get returns the value of the first field named name, or "".
func (h header) get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// hasToken reports whether a comma-separated list in the fields named
// name holds token (case-insensitive), as Connection: keep-alive, close.
func (h header) hasToken(name, token string) bool {
	for _, v := range h.values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// hopByHop are the fields that concern one connection (RFC 9110 7.6.1),
// with the framing fields the proxy writes itself.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length"}

// endToEnd appends to b, as "name: value\r\n" lines, the fields of h that
// are not hop-by-hop: not those above, not those Connection names, not
// those in drop.
func (h header) endToEnd(b []byte, drop ...string) []byte {
	// The names Connection lists are a set, in lower case: a head may
	// list many and have many fields, and checking each field against
	// each name would take minutes of CPU for one head of 1 MiB.
	var named map[string]bool
	for _, v := range h.values("Connection") {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				if named == nil {
					named = map[string]bool{}
				}
				named[strings.ToLower(t)] = true
			}
		}
	}
	for _, f := range h {
		if containsFold(hopByHop, f.name) || containsFold(drop, f.name) || named[strings.ToLower(f.name)] {
			continue
		}
		b = append(b, f.name...)
		b = append(b, ": "...)
		b = append(b, f.value...)
		b = append(b, "\r\n"...)
	}
	return b
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return true
		}
	}
	return false
}

// headError is a head the proxy refuses; status is the answer (400, 431,
// 505; 502 when the head came from upstream).
type headError struct {
	status int
	msg    string
}

func (e *headError) Error() string { return e.msg }

func badHead(format string, args ...any) error {
	return &headError{status: 400, msg: fmt.Sprintf(format, args...)}
}

// lineReader reads the lines of one head from br within maxHead bytes.
type lineReader struct {
	br     *bufio.Reader
	budget int
	// crlf requires CRLF line ends; otherwise a bare LF ends a line too,
	// as net/http accepts (the head is written anew with CRLF, so the
	// server behind cannot read the lines otherwise).
	crlf bool
	read int // bytes read so far
	// large, when not nil, holds a slot for each head past largeHead;
	// the head is refused when none is free. held: this head has one,
	// until release.
	large chan struct{}
	held  bool
}

// release gives back the large head slot the head holds, if any.
func (r *lineReader) release() {
	if r != nil && r.held {
		<-r.large
		r.held = false
	}
}

// line returns the next line without its end. A CR anywhere but before
// the LF is an error: a server that ends lines at a bare CR would see
// other fields than the proxy.
func (r *lineReader) line() (string, error) {
	var acc []byte
	for {
		b, err := r.br.ReadSlice('\n')
		r.read += len(b)
		if r.read > r.budget {
			return "", &headError{status: 431, msg: "head too large"}
		}
		if r.large != nil && !r.held && r.read > largeHead {
			select {
			case r.large <- struct{}{}:
				r.held = true
			default:
				return "", &headError{status: 431, msg: "head too large: other large heads are being read"}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, b...)
			continue
		}
		if err != nil {
			if err == io.EOF && (len(acc) > 0 || len(b) > 0 || r.read > 0) {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if acc != nil {
			b = append(acc, b...)
		}
		b = b[:len(b)-1]
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		} else if r.crlf {
			return "", badHead("a line ends in a bare LF")
		}
		if bytes.IndexByte(b, '\r') >= 0 {
			return "", badHead("a bare CR in a line")
		}
		return string(b), nil
	}
}

// fields reads header fields up to the empty line that ends them.
func (r *lineReader) fields() (header, error) {
	var h header
	for {
		l, err := r.line()
		if err != nil {
			return nil, err
		}
		if l == "" {
			return h, nil
		}
		if len(h) == maxFields {
			return nil, &headError{status: 431, msg: "too many header fields"}
		}
		f, err := parseField(l)
		if err != nil {
			return nil, err
		}
		h = append(h, f)
	}
}

// parseField parses "name: value". A line that starts with white space
// (obs-fold, RFC 9112 5.2) and white space before the colon are errors,
// as RFC 9112 5.1 requires of a proxy.
func parseField(l string) (field, error) {
	if l[0] == ' ' || l[0] == '\t' {
		return field{}, badHead("a folded header line")
	}
	name, value, ok := strings.Cut(l, ":")
	if !ok {
		return field{}, badHead("a header line without a colon")
	}
	if !isToken(name) {
		return field{}, badHead("invalid header name %q", printable(name))
	}
	value = strings.Trim(value, " \t")
	if !validValue(value) {
		return field{}, badHead("invalid value of header %s", name)
	}
	return field{name, value}, nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// validValue: visible characters, spaces, tabs and obs-text; no control
// characters (RFC 9110 5.5).
func validValue(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// bodyKind is how a message's body is delimited.
type bodyKind int

const (
	bodyNone    bodyKind = iota // no body
	bodyLength                  // Content-Length bytes
	bodyChunked                 // chunked transfer coding
	bodyClose                   // until the connection closes (responses only)
)

// request is a parsed request head.
type request struct {
	method, target string
	minor          int // HTTP/1.minor
	header         header
	body           bodyKind
	length         int64 // when body is bodyLength
}

// keepAlive reports whether the client may send another request on the
// connection. HTTP/1.0 clients are answered and closed: their keep-alive
// is an extension not worth its framing rules.
func (r *request) keepAlive() bool {
	return r.minor >= 1 && !r.header.hasToken("Connection", "close") && !r.header.hasToken("Proxy-Connection", "close")
}

// upgrade returns the protocol a request asks to switch to (Connection:
// upgrade and Upgrade), or "".
func (r *request) upgrade() string {
	if !r.header.hasToken("Connection", "upgrade") {
		return ""
	}
	return r.header.get("Upgrade")
}

// readRequestHead reads a request head. It returns io.EOF when the client
// closed the connection between requests, and a *headError for a head the
// proxy refuses.
func readRequestHead(br *bufio.Reader) (*request, error) {
	return parseRequest(&lineReader{br: br, budget: maxHead})
}

// parseRequest reads a request head through lr.
func parseRequest(lr *lineReader) (*request, error) {
	var line string
	for {
		l, err := lr.line()
		if err != nil {
			return nil, err
		}
		// empty lines before a request are ignored (RFC 9112 2.2)
		if l != "" {
			line = l
			break
		}
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, version, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isToken(method) || !validTarget(target) {
		return nil, badHead("malformed request line %q", printable(line))
	}
	req := &request{method: method, target: target}
	minor, ok := http1Minor(version)
	switch {
	case ok:
		req.minor = minor
	case version == "HTTP/2.0" && method == "PRI" && target == "*":
		// HTTP/2 with prior knowledge: refused as not a proxy request
		req.minor = 1
	case len(version) == 8 && strings.HasPrefix(version, "HTTP/") && version[6] == '.':
		return nil, &headError{status: 505, msg: "unsupported protocol version " + version}
	default:
		return nil, badHead("malformed request line %q", printable(line))
	}
	h, err := lr.fields()
	if err != nil {
		return nil, err
	}
	req.header = h
	hosts := h.values("Host")
	switch {
	case len(hosts) > 1:
		return nil, badHead("too many Host headers")
	case len(hosts) == 0 && req.minor >= 1 && method != "CONNECT":
		return nil, badHead("missing required Host header")
	case len(hosts) == 1 && strings.ContainsAny(hosts[0], " \t"):
		return nil, badHead("malformed Host header")
	}
	req.body, req.length, err = framing(h, req.minor, true)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// validTarget: a request-target without white space or control
// characters.
func validTarget(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// framing returns how a message's body is delimited by its fields (RFC
// 9112 6), refusing what two parsers could read differently: both
// Content-Length and Transfer-Encoding, a transfer coding other than
// chunked alone, Transfer-Encoding in HTTP/1.0, Content-Lengths that
// differ or are not a number. A request without either has no body; a
// response, unless its status or method says it has none, is read until
// the connection closes.
func framing(h header, minor int, isRequest bool) (bodyKind, int64, error) {
	te := h.values("Transfer-Encoding")
	cl := h.values("Content-Length")
	switch {
	case len(te) > 0 && len(cl) > 0:
		return 0, 0, badHead("both Transfer-Encoding and Content-Length")
	case len(te) > 0 && minor == 0:
		return 0, 0, badHead("Transfer-Encoding in HTTP/1.0")
	case len(te) > 1 || len(te) == 1 && !strings.EqualFold(te[0], "chunked"):
		return 0, 0, badHead("unsupported Transfer-Encoding %q", printable(strings.Join(te, ", ")))
	case len(te) == 1:
		return bodyChunked, 0, nil
	case len(cl) > 0:
		n, err := parseLength(cl[0])
		if err != nil {
			return 0, 0, err
		}
		for _, v := range cl[1:] {
			if v != cl[0] {
				return 0, 0, badHead("differing Content-Length headers")
			}
		}
		if n == 0 && isRequest {
			return bodyNone, 0, nil
		}
		return bodyLength, n, nil
	case isRequest:
		return bodyNone, 0, nil
	}
	return bodyClose, 0, nil
}

// parseLength parses a Content-Length: decimal digits only (no sign, no
// space, no list: strconv.ParseUint takes none of them in base 10).
func parseLength(s string) (int64, error) {
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, badHead("invalid Content-Length %q", printable(s))
	}
	return int64(n), nil
}

// http1Minor returns x of an "HTTP/1.x" version.
func http1Minor(version string) (int, bool) {
	if len(version) != 8 || !strings.HasPrefix(version, "HTTP/1.") || version[7] < '0' || version[7] > '9' {
		return 0, false
	}
	return int(version[7] - '0'), true
}

// response is a parsed response head.
type response struct {
	status int
	reason string
	minor  int
	header header
	body   bodyKind
	length int64
}

// readResponseHead reads a response head to a request with method. A head
// the proxy refuses is a *headError with status 502.
func readResponseHead(br *bufio.Reader, method string) (*response, error) {
	return readResponseHeadIn(&lineReader{br: br, budget: maxHead}, method)
}

// readResponseHeadIn is readResponseHead through lr.
func readResponseHeadIn(lr *lineReader, method string) (*response, error) {
	resp, err := parseResponse(lr, method)
	var he *headError
	if errors.As(err, &he) {
		return nil, &headError{status: 502, msg: "malformed response: " + he.msg}
	}
	return resp, err
}

func parseResponse(lr *lineReader, method string) (*response, error) {
	line, err := lr.line()
	if err != nil {
		return nil, err
	}
	version, rest, _ := strings.Cut(line, " ")
	code, reason, _ := strings.Cut(rest, " ")
	minor, ok := http1Minor(version)
	if !ok || len(code) != 3 || code[0] < '1' || code[0] > '9' || code[1] < '0' || code[1] > '9' || code[2] < '0' || code[2] > '9' ||
		!validValue(reason) {
		return nil, badHead("malformed status line %q", printable(line))
	}
	resp := &response{minor: minor, reason: reason}
	resp.status, _ = strconv.Atoi(code)
	if resp.header, err = lr.fields(); err != nil {
		return nil, err
	}
	kind, n, err := framing(resp.header, resp.minor, false)
	if err != nil {
		return nil, err
	}
	// RFC 9112 6.3: these have no body, whatever their fields say
	if method == "HEAD" || resp.status < 200 || resp.status == 204 || resp.status == 304 {
		kind, n = bodyNone, 0
	}
	resp.body, resp.length = kind, n
	return resp, nil
}

// statusText is the reason phrase of the statuses the proxy answers
// with itself.
func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 431:
		return "Request Header Fields Too Large"
	case 502:
		return "Bad Gateway"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status " + strconv.Itoa(code)
}
