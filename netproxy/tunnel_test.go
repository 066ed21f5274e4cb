package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// clientHello returns the first bytes a TLS client sends for serverName.
func clientHello(t *testing.T, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		c := tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Handshake()
		a.Close()
	}()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	b.Close()
	return append(hdr, body...)
}

// fragment splits one TLS handshake record into records of at most n bytes
// of payload each, as a client may to hide the server name from a reader
// of the first record.
func fragment(rec []byte, n int) []byte {
	var out []byte
	for body := rec[5:]; len(body) > 0; {
		k := min(n, len(body))
		out = append(out, 0x16, rec[1], rec[2], byte(k>>8), byte(k))
		out = append(out, body[:k]...)
		body = body[k:]
	}
	return out
}

func TestTunnelName(t *testing.T) {
	hello := clientHello(t, "Example.COM")
	for _, tc := range []struct {
		name      string
		in        []byte
		want      string
		proto     string
		wantError error
	}{
		{"a ClientHello", hello, "Example.COM", "tls", nil},
		{"a fragmented ClientHello", fragment(hello, 7), "Example.COM", "tls", nil},
		{"no server name", clientHello(t, ""), "", "tls", errNoName},
		{"an HTTP request", []byte("GET / HTTP/1.1\r\nHost: other.test:8080\r\nUser-Agent: x\r\n\r\nbody"), "other.test", "http", nil},
		{"ssh", []byte("SSH-2.0-OpenSSH_9.6\r\n"), "", "http", errNoName},
		{"a capital letter, no HTTP", []byte("HELO x\r\n"), "", "http", errNoName},
		{"binary", []byte{0, 1, 2, 3}, "", "", errNoName},
		{"empty lines first", []byte("\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n"), "other.test", "http", nil},
		{"a lower-case method, bare LFs", []byte("get / HTTP/1.1\nHost: other.test\n\n"), "other.test", "http", nil},
		{"every Host, the absolute-form host first", []byte("GET http://a.test:81/ HTTP/1.1\r\nHost: b.test\r\nhost: [::1]:82\r\n\r\n"), "a.test b.test ::1", "http", nil},
		{"no Host", []byte("GET / HTTP/1.0\r\n\r\n"), "", "http", errNoName},
		{"an invalid header line", []byte("GET / HTTP/1.1\r\nHost: a.test\r\nBad Header: x\r\n\r\n"), "a.test", "http", nil},
		{"a space before the colon", []byte("GET / HTTP/1.1\r\nHost : a.test\r\n\r\n"), "a.test", "http", nil},
		{"a malformed head", []byte("GET / HTTP/1.1\r\n Host: a.test\r\n\r\n"), "", "http", errors.New("malformed")},
		{"a digit first, no HTTP", []byte("1 2 3\r\n"), "", "http", errNoName},
		{"HTTP/2 with prior knowledge", h2cRequest(t, "other.test:8080"), "other.test", "http", nil},
		{"a cut HTTP/2 start", h2cRequest(t, "other.test")[:30], "", "http", io.EOF},
		{"a method, then binary", []byte("GET \x00\x01"), "", "http", errNoName},
		{"a cut ClientHello", hello[:40], "", "tls", io.EOF},
		{"garbage after a handshake header", []byte{0x16, 3, 1, 0, 4, 9, 0, 0, 0}, "", "tls", errors.New("not a ClientHello")},
		{"a long request line", []byte("GET /" + strings.Repeat("a", 30000) + " HTTP/1.1\r\nHost: a.test\r\n\r\n"), "a.test", "http", nil},
		{"many fields", []byte("GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 5000) + "Host: a.test\r\n\r\n"), "a.test", "http", nil},
		{"many empty lines first", []byte(strings.Repeat("\r\n", 10000) + "GET / HTTP/1.1\r\nHost: a.test\r\n\n"), "a.test", "http", nil},
		{"HTTP/2, many frames before HEADERS", h2cSettings(t, 2000, "other.test"), "other.test", "http", nil},
	} {
		// all at once, and as a client may send it, a byte at a time (the
		// reader must not wait for a byte more than the start holds)
		for _, trickle := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/trickled=%v", tc.name, trickle), func(t *testing.T) {
				var r io.Reader = bytes.NewReader(tc.in)
				if trickle {
					r = iotest.OneByteReader(r)
				}
				br := bufio.NewReaderSize(r, maxHello+tlsRecordMax)
				names, proto, err := tunnelName(br)
				name := strings.Join(names, " ")
				if name != tc.want || proto != tc.proto || (err == nil) != (tc.wantError == nil) ||
					errors.Is(tc.wantError, errNoName) && !errors.Is(err, errNoName) {
					t.Errorf("got %q %q %v, want %q %q %v", name, proto, err, tc.want, tc.proto, tc.wantError)
				}
				// Nothing is consumed: the server gets every byte.
				if rest, _ := io.ReadAll(br); !bytes.Equal(rest, tc.in) {
					t.Errorf("the bytes read were consumed")
				}
			})
		}
	}
}

// h2cSettings is an HTTP/2 start with n SETTINGS frames before the
// request's HEADERS.
func h2cSettings(t testing.TB, n int, authority string) []byte {
	t.Helper()
	req := h2cRequest(t, authority)
	var b bytes.Buffer
	b.WriteString(h2Preface)
	fr := http2.NewFramer(&b, nil)
	for range n {
		if err := fr.WriteSettings(); err != nil {
			t.Fatal(err)
		}
	}
	b.Write(req[len(h2Preface):])
	return b.Bytes()
}

// BenchmarkTunnelNameTrickled reads the names of starts of about 60 KiB
// that come a byte at a time: what a pass of the reader looks at must be
// the new bytes, or the time grows with the square of the length (0.6-0.9 s
// a start before 2026-11-25 22:40).
func BenchmarkTunnelNameTrickled(b *testing.B) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"request head", []byte("GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 10000) + "Host: a.test\r\n\r\n")},
		{"request line", []byte("GET /" + strings.Repeat("a", 60000) + " HTTP/1.1\r\nHost: a.test\r\n\r\n")},
		{"HTTP/2 frames", h2cSettings(b, 6500, "a.test")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				br := bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(tc.in)), maxHello+tlsRecordMax)
				if _, _, err := tunnelName(br); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTunnelFronting: a tunnel to an allowed name whose ClientHello or
// first request names another site is closed, the refusal reported; one
// that names its own or another allowed name passes.
func TestTunnelFronting(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	target := fmt.Sprintf("allowed.test:%d", port)
	for _, tc := range []struct {
		name  string
		first []byte
		pass  bool
	}{
		{"its own server name", clientHello(t, "ALLOWED.test."), true},
		{"another allowed name", clientHello(t, "a.wild.test"), true},
		{"no server name", clientHello(t, ""), true},
		{"an unlisted server name", clientHello(t, "unlisted.test"), false},
		{"a denied server name, fragmented", fragment(clientHello(t, "denied.test"), 5), false},
		{"an unlisted Host", []byte("GET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n"), false},
		{"its own Host", []byte("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), true},
		// Servers skip empty lines before a request (RFC 9112 2.2), take
		// any token as a method, and line ends of a bare LF.
		{"an unlisted Host after empty lines", []byte("\r\n\nGET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n"), false},
		{"an unlisted Host, a lower-case method", []byte("get / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n"), false},
		{"an unlisted Host, a method of symbols", []byte("_GET / HTTP/1.1\r\nHost: unlisted.test\r\n\r\n"), false},
		{"an unlisted Host, bare LFs", []byte("GET / HTTP/1.1\nHost: unlisted.test\n\n"), false},
		// A server that ignores invalid header lines still routes by Host.
		{"an unlisted Host, an invalid header line", []byte("GET / HTTP/1.1\r\nHost: unlisted.test\r\nBad Header: x\r\n\r\n"), false},
		{"an unlisted Host, a space before the colon", []byte("GET / HTTP/1.1\r\nHost : unlisted.test\r\n\r\n"), false},
		{"an unlisted second Host", []byte("GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: unlisted.test\r\n\r\n"), false},
		{"an unlisted absolute-form target", []byte("GET http://unlisted.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), false},
		// HTTP/2 with prior knowledge: servers route by :authority
		{"an unlisted :authority, h2c", h2cRequest(t, "unlisted.test"), false},
		{"its own :authority, h2c", h2cRequest(t, "allowed.test"), true},
		// an allowed name that is itself a proxy
		{"an unlisted CONNECT authority", []byte("CONNECT unlisted.test:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), false},
		{"its own absolute-form target", []byte("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), true},
	} {
		for _, via := range []string{"connect", "connect early", "socks5"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				var conn net.Conn
				var br *bufio.Reader
				switch via {
				case "socks5":
					c, err := socksDialer(t, r.socks).DialContext(context.Background(), "tcp", target)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					conn, br = c, bufio.NewReader(c)
					conn.Write(tc.first)
				case "connect early":
					var resp interface{ Close() error }
					c, b, rs := connectRaw(t, r.http, target, string(tc.first))
					resp = rs.Body
					defer resp.Close()
					conn, br = c, b
				default:
					c, b, rs := connectRaw(t, r.http, target, "")
					if rs.StatusCode != 200 {
						t.Fatalf("CONNECT: %s", rs.Status)
					}
					conn, br = c, b
					conn.Write(tc.first)
				}
				conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				got := make([]byte, len(tc.first))
				_, err := io.ReadFull(br, got)
				passed := err == nil && bytes.Equal(got, tc.first)
				if passed != tc.pass {
					t.Errorf("passed %v (%v), want %v", passed, err, tc.pass)
				}
				if d := r.last(t); !tc.pass && (d.Allowed || !strings.Contains(d.Rule, "in a tunnel to allowed.test")) {
					t.Errorf("the refusal was not reported: last decision %s", d)
				}
			})
		}
	}
}

// FuzzTunnelName: the reader of a tunnel's first bytes never panics, never
// consumes what it reads, and returns only names that are in the bytes
// (unless HTTP/2's encoding hides them).
func FuzzTunnelName(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: b.test:80\r\nHost : c.test\r\n\r\n"))
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Add(h2cRequest(f, "a.test"))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), maxHello+tlsRecordMax)
		names, _, err := tunnelName(br)
		if err == nil && len(names) == 0 {
			t.Fatal("no names and no error")
		}
		// HTTP/2 header fields may be Huffman-coded
		h2 := bytes.HasPrefix(data, []byte(http2.ClientPreface))
		for _, n := range names {
			if !h2 && !bytes.Contains(data, []byte(n)) {
				t.Fatalf("name %q is not in the input", n)
			}
		}
		if rest, _ := io.ReadAll(br); !bytes.Equal(rest, data) {
			t.Fatal("the bytes read were consumed")
		}
	})
}

// h2cRequest returns what an HTTP/2 client with prior knowledge sends
// first for a request to authority: the preface, SETTINGS, HEADERS.
func h2cRequest(t testing.TB, authority string) []byte {
	t.Helper()
	var b, hb bytes.Buffer
	b.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&b, nil)
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0}); err != nil {
		t.Fatal(err)
	}
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", authority}, {":path", "/"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTunnelClientGoesAway: a client that leaves an allowed tunnel before
// or while it sends its first bytes — closing, or resetting the connection
// as npm and browsers do when they cancel a request — is not refused: no
// refusal is reported for a destination that was allowed.
func TestTunnelClientGoesAway(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	target := fmt.Sprintf("allowed.test:%d", port)
	hello := clientHello(t, "allowed.test")
	for _, tc := range []struct {
		name  string
		sent  []byte
		reset bool
	}{
		{"closes before sending", nil, false},
		{"resets before sending", nil, true},
		{"resets in the middle of its ClientHello", hello[:len(hello)/2], true},
		{"resets in the middle of a request head", []byte("GET / HTTP/1.1\r\nHo"), true},
	} {
		for _, via := range []string{"connect", "socks5"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				var conn net.Conn
				if via == "socks5" {
					// by hand: the client's library hides the TCP connection
					conn = dialProxy(t, r.socks)
					req := append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len("allowed.test"))}, "allowed.test"...)
					conn.Write(append(req, byte(port>>8), byte(port)))
					reply := make([]byte, 12)
					conn.SetReadDeadline(time.Now().Add(10 * time.Second))
					if _, err := io.ReadFull(conn, reply); err != nil || reply[3] != 0 {
						t.Fatalf("SOCKS5 CONNECT: %v %v", reply, err)
					}
				} else {
					c, _, resp := connectRaw(t, r.http, target, "")
					if resp.StatusCode != 200 {
						t.Fatalf("CONNECT: %s", resp.Status)
					}
					conn = c
				}
				before := r.count()
				conn.Write(tc.sent)
				if tc.reset {
					// SO_LINGER 0: close sends a reset instead of a FIN
					conn.(*net.TCPConn).SetLinger(0)
				}
				conn.Close()
				waitIdle(t, r.p)
				r.mu.Lock()
				after := slices.Clone(r.decisions[before:])
				r.mu.Unlock()
				for _, d := range after {
					if !d.Allowed {
						t.Errorf("a client leaving an allowed tunnel was reported as refused: %s", d)
					}
				}
			})
		}
	}
}

// waitIdle waits until p holds no connection.
func waitIdle(t *testing.T, p *Proxy) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.conns)
		p.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy still holds %d connections after 10s", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
