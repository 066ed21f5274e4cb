package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// TestRefusals: what an HTTP client is told, for every kind of refusal
// (testdata/refusals.golden): status, X-Proxy-Error, and a body naming the
// destination, the rule and how to allow it, never a resolved address.
func TestRefusals(t *testing.T) {
	p, err := New(Config{
		AllowedDomains:  []string{"rebind.test", "metadata.test", "denyaddr.test", "gone.test", "[2001:db8::9]:443", "intranet.test", "github.com"},
		DeniedDomains:   []string{"*.evil.test", "203.0.113.66", "github.com:22", "*:23"},
		DeniedReasons:   map[string]string{"github.com:22": "SSH pushes to GitHub are blocked;\n use an https:// remote (git remote set-url origin https://github.com/…)."},
		DeniedAddresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Resolver: StaticResolver{
			"rebind.test":   addrs("127.0.0.2"),
			"metadata.test": addrs("169.254.169.254"),
			"denyaddr.test": addrs("203.0.113.66"),
			"ask-no.test":   addrs("198.51.100.1"),
			"ask-err.test":  addrs("198.51.100.1"),
			"ask-why.test":  addrs("198.51.100.1"),
			"intranet.test": addrs("10.1.2.3"),
		},
		InterfaceAddrs: func() []netip.Addr { return nil },
		Ask: askReplies(func(q Question) (Reply, error) {
			switch q.Host {
			case "ask-err.test":
				return Reply{}, errors.New("ask command /usr/local/bin/ask: exit status 2")
			case "ask-why.test":
				return Reply{Reason: "the team's policy keeps ask-why.test out; use the internal mirror"}, nil
			}
			return Reply{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	noAsk, err := New(Config{AllowedDomains: []string{"example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	defer noAsk.Close()
	var b strings.Builder
	render := func(proto, host string, d Decision) { renderRefusal(t, &b, proto, host, d) }
	for _, c := range []struct{ proto, host string }{
		{"connect", "unlisted.test:443"},
		{"http", "ask-no.test:80"},
		{"connect", "www.evil.test:443"},
		{"http", "rebind.test:80"},
		{"connect", "metadata.test:443"},
		{"http", "denyaddr.test:80"},
		{"connect", "192.0.2.1:443"},
		{"connect", "[2001:db8::9]:80"},
		{"http", "ask-err.test:80"},
		{"connect", "127.1:443"},
		{"http", "gone.test:80"},
		{"connect", "github.com:22"},
		{"http", "github.com:22"},
		{"connect", "anything.test:23"},
		{"http", "intranet.test:80"},
		{"connect", "ask-why.test:443"},
	} {
		host, port, err := splitAuthority(c.host, 0)
		if err != nil {
			t.Fatal(err)
		}
		px := p
		if host == "unlisted.test" {
			px = noAsk
		}
		d := px.decideQuietly(context.Background(), c.proto, host, port)
		if d.Allowed {
			t.Fatalf("%s allowed", c.host)
		}
		render(c.proto, c.host, d)
	}
	// the refusals of an allowed destination: how it is reached
	for _, d := range []Decision{
		{Protocol: "connect", Host: "api.example.com", Port: 443, Reason: ReasonTunnel, Rule: "refuseOpaqueTunnels: a tunnel the proxy cannot see into", kind: kindTunnel},
		{Protocol: "http", Host: "api.example.com", Port: 80, Reason: ReasonHostMismatch, Rule: `requireHostMatch: the Host of a request to api.example.com:80 is "other.example"`, kind: kindHostMismatch},
		{Protocol: "connect", Host: "api.example.com", Port: 443, Reason: ReasonTooManyTunnels, Rule: "256 tunnels whose TLS cordon ends are open at once (sandbox.network.tlsTerminate.maxTunnels)", kind: kindTooManyTunnels},
	} {
		render(d.Protocol, d.dest(), d)
	}
	golden(t, "refusals.golden", b.String())
}

// renderRefusal appends to b what a client is told of the refusal d of
// proto to host.
func renderRefusal(t *testing.T, b *strings.Builder, proto, host string, d Decision) {
	t.Helper()
	{
		c := struct{ proto, host string }{proto, host}
		status, xerr, msg := refusal(d)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(errorResponsePhrase(status, refusalPhrase(d), xerr, msg, false))), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		fmt.Fprintf(b, "== %s %s\n%s\nX-Proxy-Error: %s\n%s\n", c.proto, c.host, resp.Status, resp.Header.Get("X-Proxy-Error"), body)
		for _, a := range d.Addrs {
			if strings.Contains(string(body), a.String()) {
				t.Errorf("the refusal of %s names the address %s", c.host, a)
			}
		}
	}
}

// askReplies adapts a function to Asker.
type askReplies func(Question) (Reply, error)

func (f askReplies) Ask(_ context.Context, q Question) (Reply, error) { return f(q) }

// TestAllowEntry: the advice names an entry that would allow the
// destination, and none when the allow list is not what refused it (an
// unreadable tunnel start to an allowed address was advised
// "--allow-domain 127.0.0.1") or no entry can name it.
func TestAllowEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Decision
		want string
	}{
		{"unlisted", Decision{Host: "evil.example", Reason: ReasonAllowlist, kind: kindUnlisted}, "evil.example"},
		{"ip", Decision{Host: "2001:db8::1", Reason: ReasonAllowlist, kind: kindIPUnlisted}, "[2001:db8::1]"},
		{"ask refused", Decision{Host: "a.example", Reason: ReasonAllowlist, kind: kindAskRefused}, "a.example"},
		{"unreadable tunnel", Decision{Host: "127.0.0.1", Reason: ReasonAllowlist, kind: kindInvalid}, ""},
		{"invalid", Decision{Host: "$(id).example", Reason: ReasonAllowlist, kind: kindInvalid}, ""},
		{"shell chars", Decision{Host: "$(id).example", Reason: ReasonAllowlist, kind: kindUnlisted}, ""},
		{"denied", Decision{Host: "evil.example", Reason: ReasonDenylist, kind: kindDenied}, ""},
		{"private", Decision{Host: "evil.example", Reason: ReasonPrivate, kind: kindPrivate}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.AllowEntry(); got != tc.want {
				t.Errorf("AllowEntry() = %q; want %q", got, tc.want)
			}
		})
	}
}
