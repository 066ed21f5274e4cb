package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// The HTTP proxy reads request and response heads with net/http's parser
// (http.ReadRequest, http.ReadResponse) and its bodies with net/http's
// readers. On top of it, as a proxy must (RFC 9112 6.3, 5.2), a head is
// also checked as it came on the wire: net/http settles some framing that
// two parsers could read differently (both Content-Length and
// Transfer-Encoding, a folded line, Transfer-Encoding in HTTP/1.0) before
// the proxy sees the parsed head, and such a head is refused rather than
// forwarded (request smuggling). Every head that is forwarded is written
// anew, with the framing the proxy chose; nothing of the peer's bytes
// passes verbatim but the field names and values, which are checked.

// maxHead bounds a request or response head, start line and fields: 1 MiB,
// net/http's server default (DefaultMaxHeaderBytes). The trailer section
// of a chunked body is bounded by net/http's reader (its 4 KiB buffer).
const maxHead = 1 << 20

// maxFields bounds the fields of one head. net/http has no such bound, but
// a head of 1 MiB of three-byte fields is some 350,000 of them and
// megabytes of the proxy's memory, for each of the run's connections; real
// clients and servers send tens.
const maxFields = 4096

// largeHead is the size past which a head counts as large: a run's proxy
// reads and holds at most maxLargeHeads of them at once (431 beyond). Its
// heads are held in cordon, on the host, outside the sandbox's memory
// limit: 1024 connections of 1 MiB heads were 1.8 GB of cordon's memory.
const (
	largeHead     = 64 << 10
	maxLargeHeads = 16
)

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

// headReader is what a connection's bufio.Reader reads from. While a head
// is read (from begin to its empty line) it counts the head's bytes and
// lines against maxHead and maxFields, takes a large head slot past
// largeHead, and keeps the head's bytes for check; otherwise it passes
// bytes through.
type headReader struct {
	r io.Reader
	// large, when not nil, holds a slot for each head past largeHead; the
	// head is refused when none is free. held: this head has one, until
	// release.
	large chan struct{}
	held  bool

	on    bool      // reading a head
	state headState // where in it
	raw   []byte    // the head so far
	lines int
	// err is the head's refusal, returned to every read after it:
	// net/http's parser may drop an error of a Peek
	err error
}

// headState is where a headReader is in a head.
type headState int

const (
	inBlank headState = iota // empty lines before the start line
	inLine                   // a line
	atEOL                    // just after a line's LF
	atEOLCR                  // just after a line's LF and a CR
)

func (h *headReader) Read(b []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.r.Read(b)
	if h.on && n > 0 {
		if h.err = h.scan(b[:n]); h.err != nil {
			return 0, h.err
		}
	}
	return n, err
}

// begin starts a head: the bytes br holds already are its first.
func (h *headReader) begin(br *bufio.Reader) error {
	h.release()
	h.on, h.state, h.raw, h.lines = true, inBlank, nil, 0
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		h.err = h.scan(b)
	}
	return h.err
}

// end returns the bytes of the head that was read, or an error when they
// do not make a whole head.
func (h *headReader) end() ([]byte, error) {
	raw := h.raw
	h.raw = nil
	if h.on {
		h.on = false
		return nil, badHead("a head without its end")
	}
	return raw, nil
}

// release gives back the large head slot the last head holds, if any.
func (h *headReader) release() {
	if h != nil && h.held {
		<-h.large
		h.held = false
	}
}

// scan follows b through the head, up to the empty line that ends it.
func (h *headReader) scan(b []byte) error {
	for i, c := range b {
		done := false
		switch h.state {
		case inBlank:
			if c != '\r' && c != '\n' {
				h.state = inLine
			}
		case inLine:
			if c == '\n' {
				h.state = atEOL
				h.lines++
			}
		case atEOL:
			switch c {
			case '\n':
				done = true
			case '\r':
				h.state = atEOLCR
			default:
				h.state = inLine
			}
		case atEOLCR:
			if c == '\n' {
				done = true
			} else {
				h.state = inLine
			}
		}
		if done {
			h.raw = append(h.raw, b[:i+1]...)
			h.on = false
			return h.limits()
		}
	}
	h.raw = append(h.raw, b...)
	return h.limits()
}

// limits checks the head so far against maxHead, maxFields and the large
// head slots.
func (h *headReader) limits() error {
	switch {
	case len(h.raw) > maxHead:
		return &headError{status: 431, msg: "head too large"}
	case h.lines > maxFields+1:
		return &headError{status: 431, msg: "too many header fields"}
	case h.large != nil && !h.held && len(h.raw) > largeHead:
		select {
		case h.large <- struct{}{}:
			h.held = true
		default:
			return &headError{status: 431, msg: "head too large: other large heads are being read"}
		}
	}
	return nil
}

// headFraming is what checkHead found of a head's framing fields and
// its Host fields (net/http's parser keeps the last in Request.Host, or
// none).
type headFraming struct {
	lengths, codings, hosts int
	host                    string
}

// checkHead checks a head as it came, after net/http parsed it: no bare
// CR, no control character, no folded line (RFC 9112 5.2, which a proxy
// must refuse or unfold; net/http unfolds), and it counts the
// Content-Length and Transfer-Encoding fields, which net/http reconciles
// silently.
func checkHead(raw []byte) (headFraming, error) {
	var f headFraming
	start := true
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if start && len(line) == 0 {
			continue // empty lines before a request are ignored (RFC 9112 2.2)
		}
		if bytes.IndexByte(line, '\r') >= 0 {
			return f, badHead("a bare CR in a line")
		}
		if slices.ContainsFunc(line, func(c byte) bool { return c < ' ' && c != '\t' || c == 0x7f }) {
			return f, badHead("a control character in the head")
		}
		if !start && len(line) > 0 {
			if line[0] == ' ' || line[0] == '\t' {
				return f, badHead("a folded header line")
			}
			name, _, _ := bytes.Cut(line, []byte{':'})
			if !isToken(string(name)) {
				// net/http takes "Transfer-Encoding : chunked" as a
				// field of another name; a server behind may not
				return f, badHead("invalid header name %q", printable(string(name)))
			}
			switch {
			case strings.EqualFold(string(name), "Content-Length"):
				f.lengths++
			case strings.EqualFold(string(name), "Transfer-Encoding"):
				f.codings++
			case strings.EqualFold(string(name), "Host"):
				f.hosts++
				f.host = string(bytes.Trim(line[len(name)+1:], " \t"))
			}
		}
		start = false
	}
	return f, nil
}

// isToken reports whether s is an HTTP token (RFC 9110 5.6.2): a method,
// a field name.
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

// readRequestHead reads a request head from br, which reads from hr, with
// net/http's parser and the proxy's checks. It returns io.EOF when the
// client closed the connection between requests, and a *headError for a
// head the proxy refuses.
func readRequestHead(br *bufio.Reader, hr *headReader) (*http.Request, error) {
	if err := hr.begin(br); err != nil {
		return nil, err
	}
	// empty lines before a request are ignored (RFC 9112 2.2)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF && len(hr.raw) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if b[0] != '\r' && b[0] != '\n' {
			break
		}
		br.Discard(1)
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		var he *headError
		if errors.As(err, &he) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || isNetError(err) {
			return nil, err
		}
		return nil, badHead("%s", printable(err.Error()))
	}
	raw, err := hr.end()
	if err != nil {
		return nil, err
	}
	f, err := checkHead(raw)
	switch {
	case err != nil:
		return nil, err
	case req.ProtoMajor != 1 && req.Method == "PRI" && req.RequestURI == "*":
		// HTTP/2 with prior knowledge: not a proxy request
		return nil, badHead("HTTP/2 with prior knowledge")
	case req.ProtoMajor != 1:
		return nil, &headError{status: 505, msg: "unsupported protocol version " + printable(req.Proto)}
	case f.codings > 0 && f.lengths > 0:
		return nil, badHead("both Transfer-Encoding and Content-Length")
	case f.codings > 0 && req.ProtoMinor == 0:
		return nil, badHead("Transfer-Encoding in HTTP/1.0")
	case f.hosts == 0 && req.ProtoMinor >= 1 && req.Method != "CONNECT":
		return nil, badHead("missing required Host header")
	case strings.ContainsAny(f.host, " \t"):
		return nil, badHead("malformed Host header")
	}
	if f.hosts > 0 {
		// net/http keeps the target's authority in Host and drops the
		// field; requireHostMatch compares them
		req.Header["Host"] = []string{f.host}
	}
	return req, nil
}

// readResponseHead reads the head of an answer to req from br, which
// reads from hr. A head the proxy refuses is a *headError with status 502.
func readResponseHead(br *bufio.Reader, hr *headReader, req *http.Request) (*http.Response, error) {
	resp, err := parseResponseHead(br, hr, req)
	var he *headError
	if errors.As(err, &he) {
		return nil, &headError{status: 502, msg: "malformed response: " + he.msg}
	}
	return resp, err
}

func parseResponseHead(br *bufio.Reader, hr *headReader, req *http.Request) (*http.Response, error) {
	if err := hr.begin(br); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		var he *headError
		if errors.As(err, &he) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || isNetError(err) {
			return nil, err
		}
		return nil, badHead("%s", printable(err.Error()))
	}
	raw, err := hr.end()
	if err != nil {
		return nil, err
	}
	f, err := checkHead(raw)
	switch {
	case err != nil:
		return nil, err
	case resp.ProtoMajor != 1:
		return nil, badHead("unsupported protocol version %s", printable(resp.Proto))
	case resp.StatusCode < 100:
		return nil, badHead("status %d", resp.StatusCode)
	case f.codings > 0 && f.lengths > 0:
		return nil, badHead("both Transfer-Encoding and Content-Length")
	case f.codings > 0 && resp.ProtoMinor == 0:
		return nil, badHead("Transfer-Encoding in HTTP/1.0")
	}
	return resp, nil
}

// hasToken reports whether a comma-separated list in the fields named
// name holds token (case-insensitive), as Connection: keep-alive, close.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
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
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length"}

// endToEnd returns the fields of h that are not hop-by-hop: not those
// above, not those Connection names, not those in drop (canonical names).
func endToEnd(h http.Header, drop ...string) http.Header {
	// The names Connection lists are a set: a head may list many and
	// have many fields, and checking each field against each name would
	// take minutes of CPU for one head of 1 MiB.
	var named map[string]bool
	for _, v := range h["Connection"] {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				if named == nil {
					named = map[string]bool{}
				}
				named[http.CanonicalHeaderKey(t)] = true
			}
		}
	}
	out := make(http.Header, len(h))
	for k, v := range h {
		if slices.Contains(hopByHop, k) || slices.Contains(drop, k) || named[k] {
			continue
		}
		out[k] = v
	}
	return out
}

// appendHeader appends h to b as "Name: value\r\n" lines, sorted by name.
func appendHeader(b []byte, h http.Header) []byte {
	var buf bytes.Buffer
	h.Write(&buf)
	return append(b, buf.Bytes()...)
}

// isNetError reports an error of the connection itself (not of what came
// on it): the peer went away, a deadline passed, the proxy closed it.
func isNetError(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
