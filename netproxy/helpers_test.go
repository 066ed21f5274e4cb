package netproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// ownAddrs stands for this host's interface addresses in tests.
var ownAddrs = addrs("192.0.2.2", "2001:db8:ffff::2")

// rig is a Proxy serving on two loopback listeners, recording decisions.
type rig struct {
	p           *Proxy
	http, socks string // listener addresses
	mu          sync.Mutex
	decisions   []Decision
	serveErr    chan error
}

// newRig starts a proxy. Unless cfg says otherwise, names resolve through
// a StaticResolver over res and the host's own addresses are ownAddrs.
func newRig(t *testing.T, cfg Config, res StaticResolver) *rig {
	t.Helper()
	r := &rig{serveErr: make(chan error, 2)}
	if cfg.Resolver == nil {
		cfg.Resolver = res
	}
	if cfg.InterfaceAddrs == nil {
		cfg.InterfaceAddrs = func() []netip.Addr { return ownAddrs }
	}
	if cfg.Run == "" {
		cfg.Run = "run-1"
	}
	next := cfg.OnDecision
	cfg.OnDecision = func(d Decision) {
		r.mu.Lock()
		r.decisions = append(r.decisions, d)
		r.mu.Unlock()
		if next != nil {
			next(d)
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.p = p
	for _, addr := range []*string{&r.http, &r.socks} {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		*addr = l.Addr().String()
		go func() { r.serveErr <- p.Serve(l) }()
	}
	t.Cleanup(func() { p.Close() })
	return r
}

// last returns the last decision reported.
func (r *rig) last(t *testing.T) Decision {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.decisions) == 0 {
		t.Fatal("no decision reported")
	}
	return r.decisions[len(r.decisions)-1]
}

func (r *rig) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.decisions)
}

// echoServer accepts on 127.0.0.1 (or addr) and echoes each connection,
// passing the end of the stream on.
func echoServer(t *testing.T, network, addr string) (port int) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// requireTool skips a test whose tool is missing, or fails it with
// CORDON_INTEGRATION=1 (as the integration suite does).
func requireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CORDON_INTEGRATION") == "1" {
			t.Fatalf("needs %s (CORDON_INTEGRATION=1: a missing need is a failure)", name)
		}
		t.Skipf("needs %s", name)
	}
	return path
}

// countingResolver counts lookups and answers from a list of answers, one
// per call (the last repeats): a name whose records change between lookups.
type countingResolver struct {
	mu      sync.Mutex
	calls   int
	answers [][]netip.Addr
}

func (r *countingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(r.calls, len(r.answers)-1)
	r.calls++
	if i < 0 {
		return nil, errors.New("no answers")
	}
	return r.answers[i], nil
}

func (r *countingResolver) n() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

func readAllTimeout(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, b)
	}
	return string(b)
}

// dialProxy connects to the proxy's port addr; the connection is closed
// when the test ends.
func dialProxy(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tcpPair returns the two ends of a loopback TCP connection, closed when
// the test ends.
func tcpPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err = net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = l.Accept()
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client, server
}
