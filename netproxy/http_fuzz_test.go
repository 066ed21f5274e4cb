package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzRequestHead: the request parser never panics; a head it accepts is
// written upstream as a head it accepts again, with the same framing, and
// net/http's server, when it accepts the head too, frames its body the
// same way (a difference would be a smuggling gap).
func FuzzRequestHead(f *testing.F) {
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte("POST http://a.test/x?y HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: x-hop\r\nX-Hop: 1\r\n\r\nabc"))
	f.Add([]byte("POST http://a.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n0\r\n\r\n"))
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := readRequestHead(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		out := requestHead(req, Decision{Host: "a.test", Port: 80})
		again, err := readRequestHead(bufio.NewReader(bytes.NewReader(out)))
		if err != nil {
			t.Fatalf("the head sent upstream does not parse: %v\n%q", err, out)
		}
		if again.method != req.method || again.body != req.body || again.length != req.length {
			t.Fatalf("sent upstream as %q", out)
		}
		std, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		want := int64(0)
		switch req.body {
		case bodyLength:
			want = req.length
		case bodyChunked:
			want = -1
		}
		if std.ContentLength != want {
			t.Fatalf("net/http frames a body of %d, the proxy %v %d", std.ContentLength, req.body, req.length)
		}
	})
}

// FuzzResponseHead: the response parser never panics, and a head it
// accepts is passed on as one it accepts again, with the same status.
func FuzzResponseHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"), "GET")
	f.Add([]byte("HTTP/1.0 200\r\nConnection: x\r\nX: 1\r\n\r\n"), "GET")
	f.Add([]byte("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"), "HEAD")
	f.Fuzz(func(t *testing.T, data []byte, method string) {
		resp, err := readResponseHead(bufio.NewReader(bytes.NewReader(data)), method)
		if err != nil {
			return
		}
		out := append(responseHead(resp), "\r\n"...)
		again, err := readResponseHead(bufio.NewReader(bytes.NewReader(out)), method)
		if err != nil || again.status != resp.status || len(again.header) > len(resp.header) {
			t.Fatalf("passed on as %q: %v", out, err)
		}
	})
}

// FuzzChunked: the chunked decoder never panics; what it decodes, encoded
// again, decodes to the same; net/http's decoder, more lenient, reads the
// same bytes from what it accepts.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("a;x=\"y\"\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n"))
	f.Add([]byte("3\nabc\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr := &chunkedReader{br: bufio.NewReader(bytes.NewReader(data))}
		body, err := io.ReadAll(cr)
		if err != nil {
			return
		}
		var enc bytes.Buffer
		if len(body) > 0 {
			fmt.Fprintf(&enc, "%x\r\n%s\r\n", len(body), body)
		}
		enc.WriteString("0\r\n")
		enc.Write(cr.trailer.endToEnd(nil))
		enc.WriteString("\r\n")
		cr2 := &chunkedReader{br: bufio.NewReader(&enc)}
		body2, err := io.ReadAll(cr2)
		if err != nil || !bytes.Equal(body, body2) {
			t.Fatalf("encoded again: %q, %v", body2, err)
		}
		std, _ := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(data)))
		if !bytes.Equal(std, body) {
			t.Fatalf("net/http decodes %q, the proxy %q", std, body)
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
