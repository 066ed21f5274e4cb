package netproxy

import (
	"io"
	"net"
	"testing"
	"time"
)

func TestExploreSOCKS(t *testing.T) {
	r := newE2E(t)
	port := echoServer(t, "tcp4", "127.0.0.1:0")
	ph, pl := byte(port>>8), byte(port)
	dom := func(s string) []byte { return append([]byte{5, 1, 0, 3, byte(len(s))}, append([]byte(s), ph, pl)...) }
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"no methods", []byte{5, 0}},
		{"userpass only", []byte{5, 1, 2}},
		{"noauth+domain", append([]byte{5, 1, 0}, dom("allowed.test")...)},
		{"v4 of allowed", append([]byte{5, 1, 0}, 5, 1, 0, 1, 127, 0, 0, 2, ph, pl)},
		{"mapped v6", append([]byte{5, 1, 0}, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 2, ph, pl)},
		{"bind", append([]byte{5, 1, 0}, 5, 2, 0, 3, 12, 'a', 'l', 'l', 'o', 'w', 'e', 'd', '.', 't', 'e', 's', 't', ph, pl)},
		{"udp", append([]byte{5, 1, 0}, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0)},
		{"domain with port", append([]byte{5, 1, 0}, dom("allowed.test:80")...)},
		{"domain nul", append([]byte{5, 1, 0}, dom("allowed.test\x00")...)},
		{"domain ip", append([]byte{5, 1, 0}, dom("127.0.0.1")...)},
		{"domain ip mapped", append([]byte{5, 1, 0}, dom("::ffff:127.0.0.2")...)},
		{"domain [v6]", append([]byte{5, 1, 0}, dom("[::1]")...)},
		{"port 0", append([]byte{5, 1, 0}, 5, 1, 0, 3, 12, 'a', 'l', 'l', 'o', 'w', 'e', 'd', '.', 't', 'e', 's', 't', 0, 0)},
		{"truncated", []byte{5, 1}},
	} {
		c, _ := net.Dial("tcp", r.socks)
		c.Write(tc.in)
		c.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
		got, err := io.ReadAll(c)
		c.Close()
		n := r.count(); t.Logf("%-20s %x %v | %d", tc.name, got, err, n); if n > 0 { t.Logf("   %s", r.last(t)) }
	}
}
