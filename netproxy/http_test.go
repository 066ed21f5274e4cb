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
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadRequestHead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		head   string
		status int // 0: accepted
		body   bodyKind
		length int64
	}{
		{"get", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 0, bodyNone, 0},
		{"empty lines first", "\r\n\r\nGET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 0, bodyNone, 0},
		{"bare LF line ends", "GET http://a.test/ HTTP/1.1\nHost: a.test\n\n", 0, bodyNone, 0},
		{"length", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n", 0, bodyLength, 12},
		{"length 0", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 0, bodyNone, 0},
		{"same length twice", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 0, bodyLength, 3},
		{"chunked", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n", 0, bodyChunked, -1},
		{"HTTP/1.0 without Host", "GET http://a.test/ HTTP/1.0\r\n\r\n", 0, bodyNone, 0},
		{"CONNECT without Host", "CONNECT a.test:443 HTTP/1.1\r\n\r\n", 0, bodyNone, 0},
		{"obs-text in a value", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\r\n\r\n", 0, bodyNone, 0},
		// request smuggling: what two parsers could frame differently
		{"length and chunked", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400, 0, 0},
		{"differing lengths", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400, 0, 0},
		{"length list", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400, 0, 0},
		{"signed length", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400, 0, 0},
		{"hex length", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\n", 400, 0, 0},
		{"huge length", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, 0, 0},
		{"chunked twice", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400, 0, 0},
		{"a coding list", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, 0, 0},
		{"a coding not chunked", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", 400, 0, 0},
		{"chunked in HTTP/1.0", "POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, 0, 0},
		{"space before the colon", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n", 400, 0, 0},
		{"space in a name", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX Y: 1\r\n\r\n", 400, 0, 0},
		{"obs-fold", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", 400, 0, 0},
		{"bare CR in a value", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: 1\rTransfer-Encoding: chunked\r\n\r\n", 400, 0, 0},
		{"bare CR ending a line", "GET http://a.test/ HTTP/1.1\rHost: a\r\n\r\n", 400, 0, 0},
		{"bare CR after a line", "GET http://a.test/ HTTP/1.1\r\nHost: a\n\rX: 1\r\n\r\n", 400, 0, 0},
		{"NUL in a value", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: 1\x002\r\n\r\n", 400, 0, 0},
		{"no colon", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX\r\n\r\n", 400, 0, 0},
		{"two Hosts", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, 0, 0},
		{"no Host", "GET http://a.test/ HTTP/1.1\r\n\r\n", 400, 0, 0},
		{"double space", "GET  http://a.test/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, 0},
		{"space in the target", "GET http://a.test/a b HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, 0},
		{"bad method", "G(T http://a.test/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, 0},
		{"HTTP/2.0", "GET http://a.test/ HTTP/2.0\r\nHost: a\r\n\r\n", 505, 0, 0},
		{"not HTTP", "GET http://a.test/ FTP/1.1\r\nHost: a\r\n\r\n", 400, 0, 0},
		{"too large", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("x", maxHead) + "\r\n\r\n", 431, 0, 0},
		{"too many fields", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("a:\r\n", maxFields) + "\r\n", 431, 0, 0},
		{"as many fields as allowed", "GET http://a.test/ HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("a:\r\n", maxFields-1) + "\r\n", 0, 0, 0},
		{"a body full of lines after a short head", "POST http://a.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 8200\r\n\r\n" + strings.Repeat("\n", 8200), 0, bodyLength, 8200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := readHead(tc.head)
			var he *headError
			switch {
			case tc.status == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.status != 0 && !errors.As(err, &he):
				t.Fatalf("accepted (%v); want %d", err, tc.status)
			case tc.status != 0 && he.status != tc.status:
				t.Fatalf("%d %v; want %d", he.status, err, tc.status)
			case tc.status == 0 && (requestBody(req) != tc.body || tc.body != bodyNone && req.ContentLength != tc.length):
				t.Fatalf("body %v %d; want %v %d", requestBody(req), req.ContentLength, tc.body, tc.length)
			}
		})
	}
}

// readHead reads one request head from s as the proxy does.
func readHead(s string) (*http.Request, error) {
	hr := &headReader{r: strings.NewReader(s)}
	return readRequestHead(bufio.NewReaderSize(hr, 4<<10), hr)
}

// TestChunkedBody: net/http's reader decodes a request's chunked body
// strictly: CRLF line ends only, a size of hexadecimal digits, CRLF right
// after the data. A bare LF or CR there is what lets a lenient server and
// a strict one see different bodies (CVE-2025-22871).
func TestChunkedBody(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		body     string
		trailer  http.Header
		bad      bool
	}{
		{"two chunks", "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "abcde", nil, false},
		{"upper-case hex and an extension", "A;name=v\r\n0123456789\r\n0\r\n\r\n", "0123456789", nil, false},
		{"trailers", "1\r\nx\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", "x", http.Header{"X-Sum": {"1"}, "X-Other": {"2"}}, false},
		{"bare LF after the size", "3\nabc\r\n0\r\n\r\n", "", nil, true},
		{"bare LF after the data", "3\r\nabc\n0\r\n\r\n", "abc", nil, true},
		{"bare CR in the size line", "3\rx\r\nabc\r\n0\r\n\r\n", "", nil, true},
		{"data longer than its size", "3\r\nabcd\r\n0\r\n\r\n", "abc", nil, true},
		{"not hex", "g\r\n", "", nil, true},
		{"a sign", "+3\r\nabc\r\n0\r\n\r\n", "", nil, true},
		{"0x", "0x3\r\nabc\r\n0\r\n\r\n", "", nil, true},
		{"too large", "fffffffffffffffff\r\n", "", nil, true},
		{"overflow", "ffffffffffffffff\r\n", "", nil, true},
		{"empty size", "\r\n", "", nil, true},
		// unfolded by net/http, and passed on unfolded
		{"folded trailer", "0\r\nX: 1\r\n 2\r\n\r\n", "", http.Header{"X": {"1 2"}}, false},
		{"truncated", "5\r\nab", "ab", nil, true},
		{"no last chunk", "3\r\nabc\r\n", "abc", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := readHead("POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(req.Body)
			if (err != nil) != tc.bad {
				t.Fatalf("error %v; want an error: %v", err, tc.bad)
			}
			if !tc.bad && string(got) != tc.body {
				t.Errorf("body %q; want %q", got, tc.body)
			}
			if !tc.bad {
				if diff := cmp.Diff(tc.trailer, req.Trailer); diff != "" {
					t.Errorf("trailer (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadResponseHead(t *testing.T) {
	for _, tc := range []struct {
		name, head, method string
		body               bodyKind
		bad                bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "GET", bodyLength, false},
		{"no reason", "HTTP/1.1 200\r\nContent-Length: 3\r\n\r\n", "GET", bodyLength, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", bodyChunked, false},
		{"until close", "HTTP/1.0 200 OK\r\n\r\n", "GET", bodyClose, false},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "HEAD", bodyNone, false},
		{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n", "GET", bodyNone, false},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", "GET", bodyNone, false},
		{"100", "HTTP/1.1 100 Continue\r\n\r\n", "POST", bodyNone, false},
		{"length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", 0, true},
		{"differing lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "GET", 0, true},
		{"a coding not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "GET", 0, true},
		{"chunked in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", 0, true},
		{"obs-fold", "HTTP/1.1 200 OK\r\nX: 1\r\n\t2\r\n\r\n", "GET", 0, true},
		{"bare CR", "HTTP/1.1 200 OK\r\nX: 1\rContent-Length: 0\r\n\r\n", "GET", 0, true},
		{"control character in the reason", "HTTP/1.1 200 O\x01K\r\n\r\n", "GET", 0, true},
		{"two-digit status", "HTTP/1.1 20 OK\r\n\r\n", "GET", 0, true},
		{"status 000", "HTTP/1.1 000 OK\r\n\r\n", "GET", 0, true},
		{"HTTP/2", "HTTP/2 200\r\n\r\n", "GET", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &headReader{r: strings.NewReader(tc.head)}
			resp, err := readResponseHead(bufio.NewReader(hr), hr, &http.Request{Method: tc.method})
			var he *headError
			switch {
			case tc.bad && (!errors.As(err, &he) || he.status != 502):
				t.Fatalf("%v; want a 502", err)
			case !tc.bad && err != nil:
				t.Fatal(err)
			case !tc.bad && responseBody(resp, tc.method) != tc.body:
				t.Fatalf("body %v; want %v", responseBody(resp, tc.method), tc.body)
			}
		})
	}
}

// rawUpstream is a TCP server on 127.0.0.1 that runs handle for each
// request it reads (net/http's parser), on the connection itself.
type rawUpstream struct {
	port  int
	conns atomic.Int32
}

func newRawUpstream(t *testing.T, handle func(c net.Conn, br *bufio.Reader, req *http.Request, n int) bool) *rawUpstream {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	u := &rawUpstream{port: l.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u.conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if !handle(c, br, req, n) {
						return
					}
				}
			}()
		}
	}()
	return u
}

// exchange sends raw bytes to the proxy and reads until it closes the
// connection or wait passes.
func exchangeRaw(t *testing.T, proxyAddr, send string, wait time.Duration) string {
	t.Helper()
	got, _ := exchangeRawClosed(t, proxyAddr, send, wait)
	return got
}

// exchangeRawClosed is exchangeRaw that also says whether the proxy closed
// the connection (the read ended at EOF, not at the deadline).
func exchangeRawClosed(t *testing.T, proxyAddr, send string, wait time.Duration) (string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, send)
	c.SetReadDeadline(time.Now().Add(wait))
	got, err := io.ReadAll(c)
	return string(got), err == nil
}

// TestSmuggling: requests that two parsers could frame differently are
// refused (400), and none of their bytes reach the server whole.
func TestSmuggling(t *testing.T) {
	r := newE2E(t)
	var seen atomic.Int32
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return false
		}
		seen.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	target := fmt.Sprintf("http://allowed.test:%d/", up.port)
	smuggled := "GET http://allowed.test/admin HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
	for _, tc := range []struct{ name, req string }{
		{"length and chunked", "POST " + target + " HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
		{"differing lengths", "POST " + target + " HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 71\r\n\r\n" + smuggled},
		{"chunked, obfuscated", "POST " + target + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-encoding: x\r\n\r\n0\r\n\r\n" + smuggled},
		{"space before the colon", "POST " + target + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled},
		{"obs-fold", "POST " + target + " HTTP/1.1\r\nHost: a\r\nX: 1\r\n Transfer-Encoding: chunked\r\n\r\n" + smuggled},
		{"bare LF in a chunk size", "POST " + target + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;\nxx\r\n47\r\n0\r\n\r\n" + smuggled},
		{"bad chunk size", "POST " + target + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n" + smuggled},
		{"chunk data too long", "POST " + target + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxx\r\n0\r\n\r\n" + smuggled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := seen.Load()
			got := exchangeRaw(t, r.http, tc.req, 5*time.Second)
			if !strings.HasPrefix(got, "HTTP/1.1 400 ") || strings.Count(got, "HTTP/1.1") != 1 {
				t.Errorf("answer %q; want one 400", got)
			}
			if n := seen.Load() - before; n != 0 {
				t.Errorf("the server read %d whole requests", n)
			}
		})
	}
}

// TestForwardFraming: how each kind of answer is framed back to clients
// of HTTP/1.1 and HTTP/1.0, and whether the connection stays.
func TestForwardFraming(t *testing.T) {
	r := newE2E(t)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/length":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello")
		case "/chunked":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nhel\r\n2;ext=1\r\nlo\r\n0\r\nX-Sum: 5\r\n\r\n")
		case "/close":
			io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\nhello")
			return false
		case "/head":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
		case "/304":
			io.WriteString(c, "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")
		case "/hints":
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
		case "/bad":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello")
		}
		return true
	})
	base := fmt.Sprintf("http://allowed.test:%d", up.port)
	for _, tc := range []struct {
		name, method, path, version string
		want                        []string // in the answer, in order
		absent                      []string
		closes                      bool // the proxy ends the client connection
	}{
		{"length", "GET", "/length", "1.1", []string{"200 OK", "Content-Length: 5\r\n", "\r\nhello"}, []string{"Connection:", "keep-alive"}, false},
		{"chunked, trailers", "GET", "/chunked", "1.1", []string{"Transfer-Encoding: chunked", "Trailer: X-Sum", "\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\n"}, nil, false},
		{"chunked to HTTP/1.0", "GET", "/chunked", "1.0", []string{"200 OK", "Connection: close", "\r\n\r\nhello"}, []string{"Transfer-Encoding", "X-Sum", "Trailer"}, true},
		{"until close", "GET", "/close", "1.1", []string{"HTTP/1.1 200 OK", "Connection: close", "\r\n\r\nhello"}, nil, true},
		{"HEAD", "HEAD", "/head", "1.1", []string{"200 OK", "Content-Length: 1000\r\n\r\n"}, nil, false},
		{"304", "GET", "/304", "1.1", []string{"304 Not Modified", "Etag: \"x\""}, []string{"Content-Length"}, false},
		{"103", "GET", "/hints", "1.1", []string{"103 Early Hints", "Link: </s.css>", "200 OK", "hello"}, nil, false},
		{"103 to HTTP/1.0", "GET", "/hints", "1.0", []string{"200 OK", "hello"}, []string{"103"}, true},
		{"a response that smuggles", "GET", "/bad", "1.1", []string{"502 Bad Gateway", "X-Proxy-Error: upstream-error", "malformed response"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, closed := exchangeRawClosed(t, r.http, fmt.Sprintf("%s %s%s HTTP/%s\r\nHost: x\r\n\r\n", tc.method, base, tc.path, tc.version), time.Second)
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("answer %q: no %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("answer %q has %q", got, a)
				}
			}
			if tc.closes != closed {
				t.Errorf("closed %v; want %v", closed, tc.closes)
			}
		})
	}
}

// TestForwardClientCloses: a keep-alive connection stays for the next
// request unless the answer is read until the upstream closes, or the
// client is HTTP/1.0.
func TestForwardKeepsClient(t *testing.T) {
	r := newE2E(t)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		if req.URL.Path == "/close" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\nbye")
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	for _, tc := range []struct {
		path, version string
		keep          bool
	}{
		{"/", "1.1", true}, {"/close", "1.1", false}, {"/", "1.0", false},
	} {
		c := dialProxy(t, r.http)
		fmt.Fprintf(c, "GET http://allowed.test:%d%s HTTP/%s\r\nHost: x\r\n\r\n", up.port, tc.path, tc.version)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		_, err = br.ReadByte()
		if closed := errors.Is(err, io.EOF); closed == tc.keep {
			t.Errorf("%s HTTP/%s: closed %v (%v); want %v", tc.path, tc.version, closed, err, !tc.keep)
		}
		c.Close()
	}
}

// TestUpgrade: a 101 to an Upgrade request relays both ways, the bytes
// each side sent with the heads included; a 101 nobody asked for is 502.
func TestUpgrade(t *testing.T) {
	r := newE2E(t)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		if req.Header.Get("Upgrade") != "echo" || req.Header.Get("Connection") != "Upgrade" {
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
			return false
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nserver first;")
		io.Copy(c, br)
		return false
	})
	c := dialProxy(t, r.http)
	fmt.Fprintf(c, "GET http://allowed.test:%d/ws HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: echo\r\n\r\nearly;", up.port)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" {
		t.Fatalf("%v %v", resp, err)
	}
	io.WriteString(c, "late")
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(br)
	if string(got) != "server first;early;late" {
		t.Errorf("relayed %q, %v", got, err)
	}
	got2 := exchangeRaw(t, r.http, fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up.port), 2*time.Second)
	if !strings.HasPrefix(got2, "HTTP/1.1 502 ") {
		t.Errorf("an unasked-for 101: %q", got2)
	}
}

// TestExpectContinue: a client that waits for 100 Continue gets it from
// the server, not after its own timeout.
func TestExpectContinue(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, func(w http.ResponseWriter, req *http.Request) {
		n, _ := io.Copy(io.Discard, req.Body) // net/http sends 100 Continue here
		fmt.Fprintf(w, "%d", n)
	})
	c := proxyClient(r.http)
	c.Transport.(*http.Transport).ExpectContinueTimeout = 5 * time.Second
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://allowed.test:%d/", up.port), bytes.NewReader(make([]byte, 1<<20)))
	req.Header.Set("Expect", "100-continue")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "1048576" || time.Since(start) > 3*time.Second {
		t.Errorf("answer %q after %v", body, time.Since(start))
	}
	// refused: no 100, and the connection ends rather than wait for a
	// body that will not come
	got := exchangeRaw(t, r.http, "POST http://unlisted.test/ HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n", 5*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 403 ") || !strings.Contains(got, "Connection: close") {
		t.Errorf("refused: %q", got)
	}
}

// TestChunkedRequestTrailers: a chunked request body reaches the server
// chunked, its trailers with it.
func TestChunkedRequestTrailers(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		fmt.Fprintf(w, "%s %s %v", b, req.Trailer.Get("X-Sum"), req.TransferEncoding)
	})
	got := exchangeRaw(t, r.http, fmt.Sprintf("POST http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\nConnection: close\r\n\r\n"+
		"4\r\nbody\r\n0\r\nX-Sum: 4\r\n\r\n", up.port), 5*time.Second)
	if !strings.HasSuffix(got, "body 4 [chunked]") {
		t.Errorf("answer %q", got)
	}
}

// TestPool: upstream connections are reused by destination name and
// closed when idle too long and on Close.
func TestPool(t *testing.T) {
	r := newE2E(t)
	var mu sync.Mutex
	closed := 0
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed++
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	up := struct{ port int }{srv.Listener.Addr().(*net.TCPAddr).Port}
	c := proxyClient(r.http)
	get := func(host string) {
		t.Helper()
		resp, err := c.Get(fmt.Sprintf("http://%s:%d/", host, up.port))
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	for _, h := range []string{"allowed.test", "allowed.test", "a.wild.test", "a.wild.test", "allowed.test"} {
		get(h)
	}
	if n := opened.Load(); n != 2 {
		t.Errorf("%d upstream connections for two names; want 2", n)
	}
	// The proxy pools the upstream connection once the answer is passed
	// on, which can be just after the client has read it.
	var keys string
	if !eventually(func() bool {
		r.p.pool.mu.Lock()
		defer r.p.pool.mu.Unlock()
		keys = fmt.Sprint(len(r.p.pool.idle), len(r.p.pool.idle[fmt.Sprintf("allowed.test:%d", up.port)]), len(r.p.pool.idle[fmt.Sprintf("a.wild.test:%d", up.port)]))
		return keys == "2 1 1"
	}) {
		t.Errorf("idle destinations, allowed.test's and a.wild.test's: %s; want 2 1 1", keys)
	}
	r.p.pool.mu.Lock()
	r.p.pool.timeout = 200 * time.Millisecond
	r.p.pool.mu.Unlock()
	// idle too long: closed (the two pooled before were given 90 s)
	get("127.0.0.1")
	waitFor(t, func() bool {
		r.p.pool.mu.Lock()
		defer r.p.pool.mu.Unlock()
		return r.p.pool.n == 2
	})
	r.p.Close()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return closed == 3 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if !eventually(cond) {
		t.Fatal("timed out")
	}
}

// eventually reports whether cond holds within 5 s.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestPoolRetry: a pooled connection that the server closes instead of
// answering is replaced once for a GET; a POST with a body gets a 502.
func TestPoolRetry(t *testing.T) {
	r := newE2E(t)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, n int) bool {
		io.Copy(io.Discard, req.Body)
		if n > 0 {
			return false // the second request on a connection: closed unanswered
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	c := dialProxy(t, r.http)
	br := bufio.NewReader(c)
	var got []int
	for _, req := range []string{
		"GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx",
	} {
		fmt.Fprintf(c, req, up.port)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		got = append(got, resp.StatusCode)
	}
	if fmt.Sprint(got) != "[200 200 502]" {
		t.Errorf("statuses %v; want [200 200 502]", got)
	}
	if n := up.conns.Load(); n != 2 {
		t.Errorf("%d upstream connections; want 2", n)
	}
}

// TestBadHeadAnswers: what net/http's server would answer to heads it
// cannot take, and the idle client's end.
func TestBadHeadAnswers(t *testing.T) {
	r := newE2E(t)
	for _, tc := range []struct{ name, send, want string }{
		{"too large", "GET http://allowed.test/ HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("x", maxHead) + "\r\n\r\n", "HTTP/1.1 431 "},
		{"version", "GET http://allowed.test/ HTTP/3.0\r\nHost: x\r\n\r\n", "HTTP/1.1 505 "},
		{"garbage", "GET\r\n\r\n", "HTTP/1.1 400 "},
		{"h2c prior knowledge", h2Preface, "HTTP/1.1 400 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := exchangeRaw(t, r.http, tc.send, 5*time.Second)
			if !strings.HasPrefix(got, tc.want) || !strings.Contains(got, "Connection: close") {
				t.Errorf("answer %q; want %q and a close", got, tc.want)
			}
		})
	}
}

// TestHeaderCase: field values pass as written, in order; names are
// compared without case, and pass in net/http's canonical form.
func TestHeaderCase(t *testing.T) {
	r := newE2E(t)
	var head atomic.Value
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		head.Store(fmt.Sprint(req.Header["X-Mixed"], req.Header["Accept-Encoding"]))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nx-lower: v\r\nContent-Length: 0\r\n\r\n")
		return true
	})
	got := exchangeRaw(t, r.http, fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nx-MIXED: a\r\nX-Mixed: b\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n", up.port), 5*time.Second)
	if h, _ := head.Load().(string); h != "[a b] [gzip]" {
		t.Errorf("upstream got %q", h)
	}
	tp := textproto.NewReader(bufio.NewReader(strings.NewReader(got)))
	tp.ReadLine()
	hdr, _ := tp.ReadMIMEHeader()
	if hdr.Get("Content-Encoding") != "gzip" || hdr.Get("X-Lower") != "v" {
		t.Errorf("client got %q", got)
	}
}

// TestHTTPAccounting: every kind of HTTP client connection is counted
// while it is served and uncounted when it ends, and Close ends one
// waiting for an answer that does not come.
func TestHTTPAccounting(t *testing.T) {
	r := newE2E(t)
	hang, arrived := make(chan struct{}), make(chan struct{}, 1)
	t.Cleanup(func() { close(hang) })
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		switch req.URL.Path {
		case "/hang":
			arrived <- struct{}{}
			<-hang
			return false
		case "/ws":
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
			io.Copy(c, br)
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	echo := echoServer(t, "tcp4", "127.0.0.1:0")
	active := func() int {
		r.p.mu.Lock()
		defer r.p.mu.Unlock()
		return r.p.active
	}
	var conns []net.Conn
	for _, send := range []string{
		fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", up.port),
		fmt.Sprintf("GET http://allowed.test:%d/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n", up.port),
		fmt.Sprintf("CONNECT allowed.test:%d HTTP/1.1\r\n\r\n", echo),
		"GET http://unlisted.test/ HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		c := dialProxy(t, r.http)
		conns = append(conns, c)
		io.WriteString(c, send)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := active(); n != 4 {
		t.Errorf("%d connections counted; want 4", n)
	}
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, func() bool { return active() == 0 })

	c := dialProxy(t, r.http)
	fmt.Fprintf(c, "GET http://allowed.test:%d/hang HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not reach the server")
	}
	done := make(chan struct{})
	go func() { r.p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on a request waiting for its answer")
	}
	if n := active(); n != 0 {
		t.Errorf("%d connections counted after Close", n)
	}
}

func TestOriginForm(t *testing.T) {
	for target, want := range map[string]string{
		"http://a.test":               "/",
		"http://a.test/":              "/",
		"http://a.test?q=1":           "/?q=1",
		"HTTP://a.test:8080/p/q?r#s":  "/p/q?r%23s",
		"http://a.test/caf\xc3\xa9?x": "/caf%C3%A9?x",
		"http://a.test//x#y":          "//x%23y",
		"http://[::1]:80/a%2Fb":       "/a%2Fb",
	} {
		if got := originForm(target); got != want {
			t.Errorf("originForm(%q) = %q; want %q", target, got, want)
		}
	}
}

// TestHTTPClientGone: a client that goes away while its answer is awaited
// or passed on ends the exchange and the upstream connection, as net/http's
// server cancelled the request of a connection that closed: an upstream
// that does not answer must not hold the client's slot and two
// descriptors until it does.
func TestHTTPClientGone(t *testing.T) {
	r := newE2E(t)
	arrived, ended := make(chan string, 1), make(chan string, 1)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		io.Copy(io.Discard, req.Body)
		if req.URL.Path == "/cut" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc")
		}
		arrived <- req.URL.Path
		br.ReadByte() // until the proxy closes the connection
		ended <- req.URL.Path
		return false
	})
	active := func() int {
		r.p.mu.Lock()
		defer r.p.mu.Unlock()
		return r.p.active
	}
	for _, tc := range []struct{ name, send string }{
		{"no answer", "GET http://allowed.test:%d/none HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"no answer to a body", "POST http://allowed.test:%d/body HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"},
		{"no answer to a chunked body", "POST http://allowed.test:%d/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
		{"answer cut short", "GET http://allowed.test:%d/cut HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialProxy(t, r.http)
			fmt.Fprintf(c, tc.send, up.port)
			var path string
			select {
			case path = <-arrived:
			case <-time.After(5 * time.Second):
				t.Fatal("the request did not reach the server")
			}
			c.Close()
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the upstream connection stays after the client went away", path)
			}
			waitFor(t, func() bool { return active() == 0 })
		})
	}
}

// TestConnectionNamesMany: a head whose Connection names many fields, with
// many fields, is passed on in time linear in its size: checking every
// field against every name took minutes of the proxy's CPU for one head
// of 600 KB.
func TestConnectionNamesMany(t *testing.T) {
	r := newE2E(t)
	// k names in one Connection field (the head near its 1 MiB), and as
	// many other fields as a head may hold (maxFields) but a few: looked up
	// name by field, 4-5 s of CPU a head here; as a set, milliseconds
	const k, n = 450000, maxFields - 8
	names := "Connection: " + strings.Repeat("a,", k) + "x-gone\r\nX-Gone: 1\r\n"
	fields := strings.Repeat("b:\r\n", n)
	var got atomic.Value
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		io.Copy(io.Discard, req.Body)
		got.Store(fmt.Sprint(len(req.Header["B"]), req.Header["X-Gone"], req.Trailer["X-Gone"]))
		if req.URL.Path == "/response" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+names+fields+"Content-Length: 2\r\n\r\nok")
			return true
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	for _, tc := range []struct {
		name, send, upstream string
		status               int
	}{
		{"request", "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n" + names + fields + "\r\n", fmt.Sprintf("%d [] []", n), 200},
		{"response", "GET http://allowed.test:%d/response HTTP/1.1\r\nHost: x\r\n\r\n", "0 [] []", 200},
		// net/http's reader bounds a trailer section by its buffer (4 KiB)
		{"trailer", "POST http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Gone\r\n\r\n1\r\nx\r\n0\r\n" + names + fields + "\r\n", "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got.Store("")
			c := dialProxy(t, r.http)
			fmt.Fprintf(c, tc.send, up.port)
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			if tc.status != 200 {
				if resp.StatusCode != tc.status {
					t.Errorf("%d; want %d", resp.StatusCode, tc.status)
				}
				return
			}
			if resp.StatusCode != 200 || resp.Header.Get("X-Gone") != "" || got.Load() != tc.upstream {
				t.Errorf("%d, X-Gone %q, upstream got %q; want 200, none, %q", resp.StatusCode, resp.Header.Get("X-Gone"), got.Load(), tc.upstream)
			}
		})
	}
}

// TestHTTPClientGoneNoRetry: a request on a pooled connection whose client
// went away is not sent again on a new one.
func TestHTTPClientGoneNoRetry(t *testing.T) {
	r := newE2E(t)
	var second atomic.Int32
	arrived := make(chan struct{}, 2)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		if req.URL.Path == "/second" {
			second.Add(1)
			arrived <- struct{}{}
			br.ReadByte() // no answer, until the proxy closes the connection
			return false
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	c := dialProxy(t, r.http)
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET http://allowed.test:%d/first HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	waitFor(t, func() bool { r.p.pool.mu.Lock(); defer r.p.pool.mu.Unlock(); return r.p.pool.n == 1 })
	fmt.Fprintf(c, "GET http://allowed.test:%d/second HTTP/1.1\r\nHost: x\r\n\r\n", up.port)
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request did not reach the server")
	}
	c.Close()
	waitFor(t, func() bool { r.p.mu.Lock(); defer r.p.mu.Unlock(); return r.p.active == 0 })
	select {
	case <-arrived:
	case <-time.After(500 * time.Millisecond):
	}
	if n := second.Load(); n != 1 {
		t.Errorf("the server got the request %d times; want once", n)
	}
}

// TestForwardedHead: what reaches the server of fields that could reframe
// or redirect a request: Host and the framing are the proxy's own whatever
// Connection or a trailer names, and a pipelined request for a refused
// name behind an allowed one does not reach it.
func TestForwardedHead(t *testing.T) {
	r := newE2E(t)
	heads := make(chan string, 4)
	up := newRawUpstream(t, func(c net.Conn, br *bufio.Reader, req *http.Request, _ int) bool {
		b, _ := io.ReadAll(req.Body)
		var buf bytes.Buffer
		req.Header.Write(&buf)
		heads <- fmt.Sprintf("%s %s %s %q %v %q %v", req.Method, req.Host, req.RequestURI, b, req.TransferEncoding, buf.String(), req.Trailer)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	tgt := fmt.Sprintf("http://allowed.test:%d/p", up.port)
	host := fmt.Sprintf("allowed.test:%d", up.port)
	for _, tc := range []struct {
		name, send string
		statuses   string
		upstream   []string
	}{
		{"Connection names the framing and Host", "POST " + tgt + " HTTP/1.1\r\nHost: unlisted.test\r\nConnection: Host, Content-Length, Transfer-Encoding, X-A\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc",
			"[200]", []string{`POST ` + host + ` /p "abc" [] "Content-Length: 3\r\nX-B: 2\r\n" map[]`}},
		{"a trailer names Host and the framing", "POST " + tgt + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n0\r\nHost: unlisted.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nX-T: 1\r\n\r\n",
			"[200]", []string{`POST ` + host + ` /p "abc" [chunked] "" map[X-T:[1]]`}},
		{"a refused request behind an allowed one", "GET " + tgt + " HTTP/1.1\r\nHost: x\r\n\r\nGET " + strings.Replace(tgt, "allowed", "unlisted", 1) + " HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			"[200 403]", []string{`GET ` + host + ` /p "" [] "" map[]`}},
		{"a body that holds a request", "POST " + tgt + " HTTP/1.1\r\nHost: x\r\nContent-Length: 39\r\n\r\nGET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n",
			"[200]", []string{`POST ` + host + ` /p "GET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n" [] "Content-Length: 39\r\n" map[]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialProxy(t, r.http)
			io.WriteString(c, tc.send)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			var statuses []int
			for range strings.Count(tc.statuses, " ") + 1 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				statuses = append(statuses, resp.StatusCode)
			}
			if got := fmt.Sprint(statuses); got != tc.statuses {
				t.Errorf("answers %s; want %s", got, tc.statuses)
			}
			var got []string
			for range tc.upstream {
				got = append(got, <-heads)
			}
			select {
			case h := <-heads:
				got = append(got, h)
			default:
			}
			if diff := cmp.Diff(tc.upstream, got); diff != "" {
				t.Errorf("the server got (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPinnedRoute: a client connection whose destination was decided
// before (as a tunnel whose TLS the proxy ends) sends origin-form requests,
// each sent to that destination with the Host it names, after the route's
// prepare hook saw it, which may change its header and body or refuse it.
func TestPinnedRoute(t *testing.T) {
	r := newE2E(t)
	up := newUpstream(t, false, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		fmt.Fprintf(w, "%s %s %s %q %q", req.Method, req.Host, req.RequestURI, req.Header.Get("X-Added"), b)
	})
	d := r.p.decide(context.Background(), "connect", "allowed.test", up.port)
	if !d.Allowed {
		t.Fatal(d)
	}
	rt := route{dest: &d, prepare: func(req *http.Request, got Decision, _ bool) error {
		if got.dest() != d.dest() {
			t.Errorf("prepare got %s", got.dest())
		}
		switch req.URL.Path {
		case "/refuse":
			return errors.New("refused by the hook")
		case "/replace":
			req.Body, req.ContentLength = io.NopCloser(strings.NewReader("replaced")), 8
		case "/chunk":
			req.Body, req.ContentLength = io.NopCloser(strings.NewReader("chunked")), -1
		}
		req.Header.Set("X-Added", "1")
		return nil
	}}
	c, s := tcpPair(t)
	go r.p.serveHTTP(s, s, rt)
	host := fmt.Sprintf("allowed.test:%d", up.port)
	br := bufio.NewReader(c)
	for _, tc := range []struct{ send, want string }{
		{"GET /a?b HTTP/1.1\r\nHost: " + host + "\r\n\r\n", `200 GET ` + host + ` /a?b "1" ""`},
		{"POST /p HTTP/1.1\r\nHost: ALLOWED.test.:1\r\nContent-Length: 4\r\n\r\nbody", `200 POST ` + host + ` /p "1" "body"`},
		{"POST /replace HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 4\r\n\r\nbody", `200 POST ` + host + ` /replace "1" "replaced"`},
		{"POST /chunk HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 4\r\n\r\nbody", `200 POST ` + host + ` /chunk "1" "chunked"`},
		{"GET /refuse HTTP/1.1\r\nHost: " + host + "\r\n\r\n", "403 request-refused cordon proxy: refused by the hook\n"},
		{"GET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n", "421 misdirected-request cordon proxy: this connection is to " + host + ", not unlisted.test\n"},
		{"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "400 bad-request cordon proxy: not an origin-form request\n"},
	} {
		io.WriteString(c, tc.send)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.send, err)
		}
		b, _ := io.ReadAll(resp.Body)
		got := fmt.Sprintf("%d %s", resp.StatusCode, b)
		if xerr := resp.Header.Get("X-Proxy-Error"); xerr != "" {
			got = fmt.Sprintf("%d %s %s", resp.StatusCode, xerr, b)
		}
		if got != tc.want {
			t.Errorf("%q: %q; want %q", tc.send, got, tc.want)
		}
	}
}
