package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// decideResolver maps the names of TestDecide.
var decideResolver = StaticResolver{
	"listed.test":       addrs("10.9.1.1"),
	"listed6.test":      addrs("fd99::1", "64:ff9b::a09:101"),
	"listed-carve.test": addrs("10.9.9.9"),
	"public.test":       addrs("198.51.100.1", "2001:db8::10"),
	"loop.test":         addrs("127.0.0.1"),
	"loop2.test":        addrs("127.0.0.2"),
	"v6loop.test":       addrs("::1"),
	"mapped.test":       addrs("::ffff:127.0.0.1"),
	"compat.test":       addrs("::7f00:1"),
	"nat64.test":        addrs("64:ff9b::a9fe:a9fe"),
	"sixtofour.test":    addrs("2002:7f00:1::1"),
	"meta.test":         addrs("169.254.169.254"),
	"meta6.test":        addrs("fd00:ec2::254"),
	"alibaba.test":      addrs("100.100.100.200"),
	"quad100.test":      addrs("100.100.100.100", "fd7a:115c:a1e0::53"),
	"linklocal6.test":   addrs("fe80::1"),
	"zero.test":         addrs("0.0.0.0"),
	"zero6.test":        addrs("::"),
	"mcast.test":        addrs("224.0.0.251"),
	"bcast.test":        addrs("255.255.255.255"),
	"own.test":          addrs("192.0.2.2"),
	"own6.test":         addrs("2001:db8:ffff::2"),
	"mixed.test":        addrs("127.0.0.1", "198.51.100.2", "169.254.169.254", "198.51.100.2"),
	"private.test":      addrs("10.1.2.3", "fd12::1"),
	"carve.test":        addrs("127.0.0.9"),
	"carveport.test":    addrs("127.0.0.10"),
	"denyaddr.test":     addrs("198.51.100.66"),
	"denyaddr6.test":    addrs("64:ff9b::c633:6442"), // 198.51.100.66 by NAT64
	"localhost":         addrs("127.0.0.1", "::1"),
	"app.localhost":     addrs("198.51.100.1"),
	"a.wild.test":       addrs("198.51.100.3"),
	"unlisted.test":     addrs("198.51.100.4"),
	"denied.test":       addrs("198.51.100.5"),
	"deny-and-ok.test":  addrs("198.51.100.66", "198.51.100.7"),
}

var decideAllow = []string{
	"public.test", "loop.test", "loop2.test", "v6loop.test", "mapped.test", "compat.test", "nat64.test",
	"sixtofour.test", "meta.test", "meta6.test", "alibaba.test", "quad100.test", "linklocal6.test", "zero.test",
	"zero6.test", "mcast.test", "bcast.test", "own.test", "own6.test", "mixed.test", "private.test",
	"carve.test", "127.0.0.9", "carveport.test", "127.0.0.10:8080", "denyaddr.test", "denyaddr6.test",
	"localhost", "app.localhost", "*.wild.test", "denied.test", "nxdomain.test", "192.0.2.50", "[2001:db8::50]",
	"deny-and-ok.test", "169.254.169.254:8080", "listed.test", "listed6.test", "listed-carve.test", "10.9.9.9",
}

var decideDeny = []string{"denied.test", "198.51.100.66"}

func TestDecide(t *testing.T) {
	p, err := New(Config{
		Run: "r", AllowedDomains: decideAllow, DeniedDomains: decideDeny,
		Resolver: decideResolver, InterfaceAddrs: func() []netip.Addr { return ownAddrs },
		DeniedAddresses: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16"), netip.MustParsePrefix("fd99::/16")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		host   string
		port   int
		reason Reason // "" allowed
		rule   string // substring of Rule
		addrs  []netip.Addr
		err    bool
	}{
		{host: "public.test", port: 443, rule: "allowedDomains: public.test", addrs: addrs("198.51.100.1", "2001:db8::10")},
		{host: "a.wild.test", port: 443, rule: "*.wild.test", addrs: addrs("198.51.100.3")},
		{host: "wild.test", port: 443, reason: ReasonAllowlist, rule: "not in allowedDomains"},
		{host: "unlisted.test", port: 80, reason: ReasonAllowlist, rule: "not in allowedDomains"},
		{host: "denied.test", port: 80, reason: ReasonDenylist, rule: "deniedDomains: denied.test"},
		{host: "192.0.2.50", port: 80, rule: "allowedDomains: 192.0.2.50", addrs: addrs("192.0.2.50")},
		{host: "192.0.2.51", port: 80, reason: ReasonAllowlist, rule: "IP address not listed"},
		{host: "2001:db8::50", port: 80, addrs: addrs("2001:db8::50")},
		{host: "2001:db8::51", port: 80, reason: ReasonAllowlist, rule: "IP address not listed"},
		{host: "198.51.100.66", port: 80, reason: ReasonDenylist, rule: "deniedDomains: 198.51.100.66"},
		// a literal entry is an explicit choice: no class check
		{host: "169.254.169.254", port: 8080, addrs: addrs("169.254.169.254")},
		{host: "169.254.169.254", port: 80, reason: ReasonAllowlist, rule: "IP address not listed"},
		// DNS rebinding: allowed names that resolve where they must not
		{host: "loop.test", port: 80, reason: ReasonPrivate, rule: "a loopback address", addrs: addrs("127.0.0.1")},
		{host: "loop2.test", port: 80, reason: ReasonPrivate, rule: "a loopback address"},
		{host: "v6loop.test", port: 80, reason: ReasonPrivate, rule: "a loopback address"},
		{host: "mapped.test", port: 80, reason: ReasonPrivate, rule: "a loopback address", addrs: addrs("127.0.0.1")},
		{host: "compat.test", port: 80, reason: ReasonPrivate, rule: "a loopback address"},
		{host: "nat64.test", port: 80, reason: ReasonPrivate, rule: "a link-local address"},
		{host: "sixtofour.test", port: 80, reason: ReasonPrivate, rule: "a loopback address"},
		{host: "meta.test", port: 80, reason: ReasonPrivate, rule: "a link-local address"},
		{host: "meta6.test", port: 80, reason: ReasonPrivate, rule: "a cloud metadata address"},
		{host: "alibaba.test", port: 80, reason: ReasonPrivate, rule: "a cloud metadata address"},
		{host: "quad100.test", port: 80, reason: ReasonPrivate, rule: "a local service address"},
		{host: "linklocal6.test", port: 80, reason: ReasonPrivate, rule: "a link-local address"},
		{host: "zero.test", port: 80, reason: ReasonPrivate, rule: "an unspecified address"},
		{host: "zero6.test", port: 80, reason: ReasonPrivate, rule: "an unspecified address"},
		{host: "mcast.test", port: 80, reason: ReasonPrivate, rule: "a multicast address"},
		{host: "bcast.test", port: 80, reason: ReasonPrivate, rule: "the broadcast address"},
		{host: "own.test", port: 80, reason: ReasonPrivate, rule: "one of this host's addresses"},
		{host: "own6.test", port: 80, reason: ReasonPrivate, rule: "one of this host's addresses"},
		// only the addresses that passed are dialled, each once
		{host: "mixed.test", port: 80, addrs: addrs("198.51.100.2")},
		// private ranges are not refused: intranet names are legitimate
		{host: "private.test", port: 80, addrs: addrs("10.1.2.3", "fd12::1")},
		// an address listed literally decides for names resolving to it
		{host: "carve.test", port: 80, addrs: addrs("127.0.0.9")},
		{host: "carveport.test", port: 8080, addrs: addrs("127.0.0.10")},
		{host: "carveport.test", port: 8081, reason: ReasonPrivate, rule: "a loopback address"},
		{host: "denyaddr.test", port: 80, reason: ReasonDenylist, rule: "a deny-listed address"},
		{host: "denyaddr6.test", port: 80, reason: ReasonDenylist, rule: "a deny-listed address"},
		{host: "deny-and-ok.test", port: 80, addrs: addrs("198.51.100.7")},
		// deniedResolvedAddresses: names may not resolve there either, but
		// for an address listed literally; addresses themselves are not
		// judged by it
		{host: "listed.test", port: 80, reason: ReasonPrivate, rule: "resolves to an address of deniedResolvedAddresses"},
		{host: "listed6.test", port: 80, reason: ReasonPrivate, rule: "deniedResolvedAddresses", addrs: addrs("fd99::1", "64:ff9b::a09:101")},
		{host: "listed-carve.test", port: 80, addrs: addrs("10.9.9.9")},
		{host: "10.9.9.9", port: 80, addrs: addrs("10.9.9.9")},
		// localhost names may resolve to loopback, and only there
		{host: "localhost", port: 3000, addrs: addrs("127.0.0.1", "::1")},
		{host: "app.localhost", port: 3000, reason: ReasonPrivate, rule: "a non-loopback address"},
		{host: "nxdomain.test", port: 80, rule: "not resolved", err: true},
		{host: "127.1", port: 80, reason: ReasonAllowlist, rule: "invalid destination"},
		{host: "public.test", port: 0, reason: ReasonAllowlist, rule: "invalid destination"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s:%d", tc.host, tc.port), func(t *testing.T) {
			d := p.decideQuietly(context.Background(), "connect", tc.host, tc.port)
			if d.Allowed != (tc.reason == "" && !tc.err) || d.Reason != tc.reason || !strings.Contains(d.Rule, tc.rule) || (d.Err != nil) != tc.err {
				t.Fatalf("decide(%s:%d) = %s; want reason %q rule %q err %v", tc.host, tc.port, d, tc.reason, tc.rule, tc.err)
			}
			if tc.addrs != nil {
				if diff := cmp.Diff(tc.addrs, d.Addrs, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
					t.Errorf("decide(%s:%d) addresses (-want +got):\n%s", tc.host, tc.port, diff)
				}
			}
			if d.Run != "r" || d.Protocol != "connect" || d.Port != tc.port {
				t.Errorf("decision %+v does not carry run, protocol and port", d)
			}
		})
	}
}

func TestEmbeddedIPv4(t *testing.T) {
	for in, want := range map[string]string{
		"::7f00:1":           "127.0.0.1",
		"::ffff:0:a9fe:a9fe": "169.254.169.254",
		"64:ff9b::a9fe:a9fe": "169.254.169.254",
		"2002:a9fe:a9fe::1":  "169.254.169.254",
		"::1":                "",
		"::":                 "",
		"2001:db8::1":        "",
		// RFC 8215's local-use prefix, /96 translators inside it
		"64:ff9b:1::a9fe:a9fe":     "169.254.169.254",
		"64:ff9b:1:ab12::7f00:1":   "127.0.0.1",
		"64:ff9b:1:ab12:1::7f00:1": "",
		"64:ff9b:2::a9fe:a9fe":     "",
		"198.51.100.1":             "",
	} {
		got, ok := embeddedIPv4(netip.MustParseAddr(in))
		if ok != (want != "") || ok && got.String() != want {
			t.Errorf("embeddedIPv4(%s) = %v, %v; want %q", in, got, ok, want)
		}
	}
}

// TestInterfaceAddrs: the default lists this host's own addresses, which
// include loopback on any Linux machine.
func TestInterfaceAddrs(t *testing.T) {
	got := (&interfaceAddrs{}).get()
	if !slices.Contains(got, netip.MustParseAddr("127.0.0.1")) {
		t.Errorf("interface addresses %v lack 127.0.0.1", got)
	}
}

func TestAsk(t *testing.T) {
	res := StaticResolver{"asked.test": addrs("198.51.100.9"), "no.test": addrs("198.51.100.10"),
		"loop.test": addrs("127.0.0.1"), "fail.test": addrs("198.51.100.11")}
	var mu sync.Mutex
	var asked []Question
	failing := true
	p, err := New(Config{
		Run: "run-7", AllowedDomains: []string{"allowed.test"}, DeniedDomains: []string{"denied.test"},
		Resolver: res, InterfaceAddrs: func() []netip.Addr { return nil },
		Ask: AskFunc(func(_ context.Context, q Question) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, q)
			if q.Host == "fail.test" && failing {
				failing = false
				return false, errors.New("agent went away")
			}
			return q.Host != "no.test", nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	steps := []struct {
		host    string
		port    int
		allowed bool
		rule    string
		asks    int // questions asked so far
	}{
		{"asked.test", 443, true, "asked: allowed", 1},
		{"ASKED.test.", 443, true, "asked before: allowed", 1},
		{"asked.test", 80, true, "asked: allowed", 2}, // per port
		{"no.test", 443, false, "asked: refused", 3},
		{"no.test", 443, false, "asked before: refused", 3},
		{"loop.test", 443, false, "a loopback address", 4}, // an answer does not lift the rebinding check
		{"fail.test", 443, false, "asking failed", 5},
		{"fail.test", 443, true, "asked: allowed", 6}, // failures are not remembered
		{"198.51.100.12", 443, false, "IP address not listed", 6},
		{"denied.test", 443, false, "deniedDomains", 6},
	}
	for _, s := range steps {
		d := p.decideQuietly(ctx, "socks5", s.host, s.port)
		mu.Lock()
		n := len(asked)
		mu.Unlock()
		if d.Allowed != s.allowed || !strings.Contains(d.Rule, s.rule) || n != s.asks {
			t.Errorf("%s:%d: %s after %d questions; want allowed=%v rule %q after %d", s.host, s.port, d, n, s.allowed, s.rule, s.asks)
		}
	}
	if want := (Question{Run: "run-7", Host: "asked.test", Port: 443}); asked[0] != want {
		t.Errorf("first question %+v; want %+v", asked[0], want)
	}
}

// TestAskOnce: concurrent connections to the same unlisted name share one
// question.
func TestAskOnce(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	p, err := New(Config{
		Resolver: StaticResolver{"slow.test": addrs("198.51.100.9")},
		Ask: AskFunc(func(ctx context.Context, q Question) (bool, error) {
			calls.Add(1)
			<-release
			return true, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	results := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			results <- p.decideQuietly(context.Background(), "http", "slow.test", 80).Allowed
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	close(results)
	for ok := range results {
		if !ok {
			t.Error("a waiting connection was refused")
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("asked %d times; want once", n)
	}
}

// TestAskTimeout: an asker that does not answer in time refuses.
func TestAskTimeout(t *testing.T) {
	p, err := New(Config{
		Resolver:   StaticResolver{"slow.test": addrs("198.51.100.9")},
		AskTimeout: 50 * time.Millisecond,
		Ask: AskFunc(func(ctx context.Context, q Question) (bool, error) {
			<-ctx.Done()
			return true, nil // too late: ignored
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	d := p.decideQuietly(context.Background(), "http", "slow.test", 80)
	if d.Allowed || d.Reason != ReasonAllowlist || !errors.Is(d.Err, context.DeadlineExceeded) {
		t.Errorf("decision %s; want a refusal by timeout", d)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
	if !strings.Contains(d.Message(), "fails closed") {
		t.Errorf("message %q does not say the proxy fails closed", d.Message())
	}
}

// TestInvalidHostIsPrintable: a host the client chose reaches the host's
// log and the refusal without control characters.
func TestInvalidHostIsPrintable(t *testing.T) {
	p, err := New(Config{AllowedDomains: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, host := range []string{
		"evil\x1b[2J\x1b]0;pwned\x07\xff.test" + strings.Repeat("a", 300),
		// bidi overrides and isolates reorder what a terminal shows after
		// them ("Trojan Source"); zero-width and line separators hide text
		"moc.elpmaxe\u202e.test", "a\u2066b\u2069\u200b\ufeff\u2028\u2029.test",
	} {
		d := p.decideQuietly(context.Background(), "socks5", host, 80)
		for _, s := range []string{d.Host, d.String(), d.Message()} {
			if strings.ContainsAny(s, "\x1b\x07\u202e\u2066\u2069\u200b\ufeff\u2028\u2029") || !utf8.ValidString(s) || len(s) > 1000 {
				t.Errorf("not printable: %q", s)
			}
		}
	}
}

// TestAskFlood: a sandboxed command that asks for many unlisted names at
// once (each an ask command on the host, a prompt to a person) gets at
// most maxAsking questions running; the rest are refused at once, and not
// remembered.
func TestAskFlood(t *testing.T) {
	release := make(chan struct{})
	var running, most atomic.Int32
	r := newRig(t, Config{
		AllowedDomains: []string{"allowed.test"},
		Ask: AskFunc(func(ctx context.Context, q Question) (bool, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return false, nil
		}),
	}, StaticResolver{})
	const n = 3 * maxAsking
	refused := make(chan string, n)
	for i := range n {
		go func() {
			c, err := net.Dial("tcp", r.http)
			if err != nil {
				refused <- err.Error()
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "CONNECT q%d.flood.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", i)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
			if err != nil {
				refused <- err.Error()
				return
			}
			resp.Body.Close()
			refused <- resp.Status
		}()
	}
	// the questions beyond the limit are refused without waiting
	for range n - maxAsking {
		select {
		case s := <-refused:
			if !strings.HasPrefix(s, "403") {
				t.Errorf("an extra question got %q; want 403", s)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the questions beyond %d were not refused at once (%d asks running)", maxAsking, running.Load())
		}
	}
	close(release)
	for range maxAsking {
		<-refused
	}
	if m := most.Load(); m > maxAsking {
		t.Errorf("%d questions ran at once; want at most %d", m, maxAsking)
	}
	if d := r.last(t); d.Allowed {
		t.Errorf("last decision %s", d)
	}
}

// recordingResolver answers every name with one public address and
// records the names it was asked.
type recordingResolver struct {
	mu    sync.Mutex
	names []string
}

func (r *recordingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, host)
	return addrs("198.51.100.7"), nil
}

// TestResolvedAsWritten: a name with a dot is resolved as it is, not
// through the host's search domains (resolv.conf "search corp.example"):
// an allowed name, or any under an allowed wildcard, that does not exist
// must not become nosuch.example.com.corp.example, an intranet host. A
// single label ("intranet") is meant to be found through them.
func TestResolvedAsWritten(t *testing.T) {
	res := &recordingResolver{}
	p, err := New(Config{AllowedDomains: []string{"*.example.com", "intranet"}, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, h := range []string{"nosuch.example.com", "Other.Example.COM.", "intranet"} {
		if d := p.decideQuietly(context.Background(), "http", h, 80); !d.Allowed {
			t.Fatalf("%s: %s", h, d)
		}
	}
	if want := []string{"nosuch.example.com.", "other.example.com.", "intranet"}; !slices.Equal(res.names, want) {
		t.Errorf("resolved %q, want %q", res.names, want)
	}
}

// TestAskedBounded: the answers of a run are remembered for at most
// maxAsked destinations; a new one beyond is refused without asking. A
// sandboxed command asking for ever new names (n1.x.test, n2.x.test, ...)
// had the host run the ask command (or prompt a person) for each, and
// cordon remember every answer, without end.
func TestAskedBounded(t *testing.T) {
	var calls atomic.Int32
	r := newRig(t, Config{
		Ask: AskFunc(func(ctx context.Context, q Question) (bool, error) {
			calls.Add(1)
			return q.Host == "n0.x.test", nil
		}),
	}, StaticResolver{})
	for i := range maxAsked + 10 {
		_, _, err := r.p.ask(context.Background(), fmt.Sprintf("n%d.x.test", i), 443)
		if (err != nil) != (i >= maxAsked) {
			t.Fatalf("question %d: %v", i, err)
		}
	}
	if n := calls.Load(); n != maxAsked {
		t.Errorf("asked %d times; want %d", n, maxAsked)
	}
	if reply, remembered, err := r.p.ask(context.Background(), "n0.x.test", 443); !reply.Allow || !remembered || err != nil {
		t.Errorf("a remembered answer: %+v %v %v; want it allowed, remembered", reply, remembered, err)
	}
}
