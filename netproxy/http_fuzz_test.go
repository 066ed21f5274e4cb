package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// forwarded is a request as the upstream behind the proxy read it, or as
// net/http read it from what the client sent.
type forwarded struct {
	Method, URI, Body string
	Trailer           http.Header
}

// fuzzProxy is a Proxy whose every upstream connection is a pipe to a
// server run by answer, which records each whole request it reads
// (net/http's parser, after the proxy's own checks of the head as it
// came: what the proxy sends must pass them) and answers it; tunnels go
// to a sink. One serves one client connection (exchange).
type fuzzProxy struct {
	p    *Proxy
	wg   sync.WaitGroup // the upstream servers
	mu   sync.Mutex
	got  []forwarded
	errs []string
}

func newFuzzProxy(t *testing.T, answer func(c net.Conn, req *http.Request) bool) *fuzzProxy {
	fp := &fuzzProxy{}
	p, err := New(Config{
		AllowedDomains: []string{"a.test"},
		Resolver:       StaticResolver{"a.test": addrs("192.0.2.1")},
		InterfaceAddrs: func() []netip.Addr { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p.dialDest = func(_ context.Context, d Decision) (net.Conn, error) {
		c, s := net.Pipe()
		fp.wg.Add(1)
		if d.Protocol == "connect" {
			go func() {
				defer fp.wg.Done()
				io.Copy(io.Discard, s)
			}()
			return c, nil
		}
		go fp.serve(s, answer)
		return c, nil
	}
	fp.p = p
	return fp
}

func (fp *fuzzProxy) serve(s net.Conn, answer func(c net.Conn, req *http.Request) bool) {
	defer fp.wg.Done()
	defer s.Close()
	hr := &headReader{r: s}
	br := bufio.NewReader(hr)
	for {
		req, err := readRequestHead(br, hr)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				fp.mu.Lock()
				fp.errs = append(fp.errs, err.Error())
				fp.mu.Unlock()
			}
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return // not a whole request
		}
		fp.mu.Lock()
		fp.got = append(fp.got, forwarded{req.Method, req.RequestURI, string(body), req.Trailer})
		fp.mu.Unlock()
		if !answer(s, req) {
			return
		}
	}
}

// exchange serves one client connection that sends data and reads an
// answer (with any 1xx before it) to a request of each of methods, in
// turn, unless the proxy ends the connection first; then it closes. It
// returns the answers, what the upstream read, the heads it refused, and
// the error that ended the reading if any.
func (fp *fuzzProxy) exchange(t *testing.T, data []byte, methods []string) ([]answerRead, []forwarded, []string, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer s.Close()
		fp.p.serveHTTP(s, s, route{})
	}()
	go c.Write(data)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	hr := &headReader{r: c}
	br := bufio.NewReader(hr)
	var answers []answerRead
	var readErr error
	for _, m := range methods {
		var as []answerRead
		as, readErr = readAnswers(br, hr, &http.Request{Method: m})
		answers = append(answers, as...)
		if errors.Is(readErr, os.ErrDeadlineExceeded) {
			t.Fatalf("no answer in 10 s (a hang): %q", data)
		}
		if readErr != nil {
			break
		}
	}
	c.Close()
	<-done
	fp.p.Close()
	fp.wg.Wait()
	return answers, fp.got, fp.errs, readErr
}

// reference is what net/http reads from data as a client's requests: the
// method of each, up to the first it cannot read or the one after which
// the proxy ends the connection (HTTP/1.0, Connection: close, CONNECT,
// Upgrade); and of them, the requests to a.test, which the proxy forwards
// (unless it refuses what net/http settles silently, and then the rest).
func reference(data []byte) (methods []string, fwd []forwarded) {
	br := bufio.NewReader(bytes.NewReader(data))
	for {
		for {
			b, err := br.Peek(1)
			if err != nil || b[0] != '\r' && b[0] != '\n' {
				break
			}
			br.Discard(1)
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return methods, fwd
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return methods, fwd
		}
		methods = append(methods, req.Method)
		host, _, err := splitTarget(req.Method, req.RequestURI)
		if err == nil && strings.EqualFold(strings.TrimSuffix(host, "."), "a.test") && req.Method != "CONNECT" {
			fwd = append(fwd, forwarded{req.Method, originForm(req.RequestURI), string(body), req.Trailer})
		}
		if req.Method == "CONNECT" || req.Close || req.ProtoMinor == 0 || upgrade(req) != "" {
			return methods, fwd
		}
	}
}

// okAnswer answers every request with a short 200.
func okAnswer(c net.Conn, _ *http.Request) bool {
	_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	return err == nil
}

// FuzzRequestHead: whatever a client sends, the proxy never panics or
// hangs; each request the upstream reads passes the proxy's own checks of
// a head as it came (no framing two parsers could read differently
// reaches it), and the requests it reads are, in order, those net/http
// reads from what the client sent (the same method, target and body):
// the proxy forwards no request net/http would not see, nor another body.
// It may stop sooner: it refuses what net/http settles silently.
func FuzzRequestHead(f *testing.F) {
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte("POST http://a.test/x?y HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: x-hop\r\nX-Hop: 1\r\n\r\nabc"))
	f.Add([]byte("POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n0\r\n\r\n"))
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"))
	f.Add([]byte("GET http://a.test/1 HTTP/1.1\r\nHost: a\r\n\r\nGET http://b.test/ HTTP/1.1\r\nHost: a\r\n\r\nPUT http://a.test/2 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		methods, want := reference(data)
		_, got, errs, _ := newFuzzProxy(t, okAnswer).exchange(t, data, methods)
		if len(errs) > 0 {
			t.Fatalf("the upstream refused what the proxy sent: %q", errs)
		}
		if len(got) > len(want) {
			t.Fatalf("the upstream read %d requests, net/http %d:\n%+v\n%+v", len(got), len(want), got, want)
		}
		if diff := cmp.Diff(want[:len(got)], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the upstream read other requests than net/http (-net/http +upstream):\n%s", diff)
		}
	})
}

// FuzzResponseHead: whatever an upstream answers, the proxy never panics
// or hangs; what the client gets is an answer that passes the proxy's own
// checks of a head as it came, and unless the proxy refused the answer
// (502), it has the status and the body net/http reads from what the
// upstream sent.
func FuzzResponseHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"), "GET")
	f.Add([]byte("HTTP/1.0 200\r\nConnection: x\r\nX: 1\r\n\r\n"), "GET")
	f.Add([]byte("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"), "HEAD")
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 3\r\n\r\n"), "POST")
	f.Fuzz(func(t *testing.T, data []byte, method string) {
		if !isToken(method) || method == "CONNECT" {
			return
		}
		fp := newFuzzProxy(t, func(c net.Conn, _ *http.Request) bool {
			c.Write(data)
			return false
		})
		got, _, _, err := fp.exchange(t, []byte(method+" http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"), []string{method})
		if err != nil {
			t.Fatalf("the client cannot read the answer: %v (%+v)", err, got)
		}
		if final := got[len(got)-1]; final.status == 502 && final.proxyError != "" {
			return // refused by the proxy
		}
		hr := &headReader{r: bytes.NewReader(data)}
		want, err := readAnswers(bufio.NewReader(hr), hr, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("the proxy passed on an answer net/http does not read: %v (%+v)", err, got)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(answerRead{})); diff != "" {
			t.Fatalf("the client read another answer than net/http (-net/http +client):\n%s", diff)
		}
	})
}

// answerRead is an answer as a client reads it.
type answerRead struct {
	status     int
	proxyError string
	body       string
	bodyErr    bool
}

// readAnswers reads the 1xx answers and the final answer to req from br,
// which reads through hr, with net/http's parser and the proxy's own
// checks of each head.
func readAnswers(br *bufio.Reader, hr *headReader, req *http.Request) ([]answerRead, error) {
	var out []answerRead
	for {
		resp, err := readResponseHead(br, hr, req)
		if err != nil {
			return out, err
		}
		body, err := io.ReadAll(resp.Body)
		a := answerRead{status: resp.StatusCode, proxyError: resp.Header.Get("X-Proxy-Error"), body: string(body), bodyErr: err != nil}
		if a.bodyErr {
			// a body cut short: what of it came may differ
			a.body = ""
		}
		out = append(out, a)
		if resp.StatusCode >= 200 || resp.StatusCode == 101 {
			return out, nil
		}
	}
}

// FuzzChunked: a chunked request body reaches the upstream as net/http's
// reader decodes it from what the client sent, with its trailers (but the
// hop-by-hop ones); one it cannot decode does not reach it whole.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("a;x=\"y\"\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n"))
	f.Add([]byte("3\nabc\r\n0\r\n\r\n"))
	const head = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
	f.Fuzz(func(t *testing.T, data []byte) {
		methods, want := reference(append([]byte(head), data...))
		_, got, errs, _ := newFuzzProxy(t, okAnswer).exchange(t, append([]byte(head), data...), methods)
		if len(errs) > 0 {
			t.Fatalf("the upstream refused what the proxy sent: %q", errs)
		}
		for i := range want {
			// net/http writes no field whose name is not a token
			want[i].Trailer = endToEnd(want[i].Trailer, "Host")
			maps.DeleteFunc(want[i].Trailer, func(k string, _ []string) bool { return !isToken(k) })
		}
		if len(got) > len(want) {
			t.Fatalf("the upstream read a body net/http does not: %+v", got)
		}
		if diff := cmp.Diff(want[:len(got)], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the upstream read another body than net/http (-net/http +upstream):\n%s", diff)
		}
	})
}

// FuzzH2HostNames: the HTTP/2 frame reader never panics, finds the same
// whether the bytes come at once or as it asks for them, and when it and
// x/net/http2's Framer (which it replaced) both read a complete start,
// they find the same names.
func FuzzH2HostNames(f *testing.F) {
	f.Add(h2cRequest(f, "a.test")[len(h2Preface):])
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 6, 1, 0x28, 0, 0, 0, 1, 1, 0, 0, 0, 0, 16, 0x41}) // PADDED and PRIORITY
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxHello {
			return
		}
		var whole h2Start
		names, done, need, err := whole.hostNames(data)
		if !done && need <= len(data) {
			// the reader would wait for bytes it has, forever
			t.Fatalf("not done with %d bytes, and needs %d", len(data), need)
		}
		// read as the bytes come, each time as many as it needs, it
		// finds what it finds in all of them at once
		var trickled h2Start
		for k := 0; ; {
			tNames, tDone, tNeed, tErr := trickled.hostNames(data[:k])
			if tDone || k == len(data) {
				if tDone != done || !slices.Equal(tNames, names) || (tErr == nil) != (err == nil) {
					t.Fatalf("as they came: %q, %v, %v; at once: %q, %v, %v", tNames, tDone, tErr, names, done, err)
				}
				break
			}
			if tNeed <= k {
				t.Fatalf("not done with %d bytes, and needs %d", k, tNeed)
			}
			k = min(tNeed, len(data))
		}
		oldNames, oldDone, oldErr := framerHostNames(data)
		if done && oldDone && err == nil && oldErr == nil && !slices.Equal(names, oldNames) {
			t.Fatalf("names %q; the Framer found %q", names, oldNames)
		}
		if done && err == nil && len(names) == 0 {
			t.Fatal("no names and no error")
		}
	})
}

// framerHostNames is the reader h2Start replaced, on x/net/http2's
// Framer.
func framerHostNames(b []byte) (names []string, done bool, err error) {
	fr := http2.NewFramer(io.Discard, bytes.NewReader(b))
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = maxHello
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, false, nil
		}
		if err != nil {
			return nil, true, err
		}
		h, ok := f.(*http2.MetaHeadersFrame)
		if !ok {
			continue
		}
		if h.Truncated {
			return nil, true, errors.New("truncated")
		}
		for _, hf := range h.Fields {
			if (hf.Name == ":authority" || hf.Name == "host") && hf.Value != "" {
				names = append(names, withoutPort(hf.Value))
			}
		}
		if len(names) == 0 {
			return nil, true, errNoName
		}
		return names, true, nil
	}
}
