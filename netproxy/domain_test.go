package netproxy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParsePattern(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // substring; "" for valid
	}{
		{in: "example.com"},
		{in: "Example.COM."},
		{in: "*.example.com"},
		{in: "*.co.uk"},
		{in: "example.com:443"},
		{in: "*.example.com:8080"},
		{in: "localhost"},
		{in: "intranet"},
		{in: "192.0.2.1"},
		{in: "192.0.2.1:80"},
		{in: "[2001:db8::1]"},
		{in: "[2001:db8::1]:443"},
		{in: "[::ffff:192.0.2.1]"},
		{in: "bücher.example"},
		{in: "*.bücher.example"},
		{in: "xn--bcher-kva.example"},
		{in: "r3---sn-abc.googlevideo.com"},
		{in: "_dmarc.example.com"},
		{in: "", wantErr: "empty"},
		{in: "*", wantErr: "wildcard"},
		{in: "*.", wantErr: "empty"},
		{in: "*.com", wantErr: "too broad"},
		{in: "**.example.com", wantErr: "wildcard"},
		{in: "a.*.example.com", wantErr: "wildcard"},
		{in: "*example.com", wantErr: "wildcard"},
		{in: "https://example.com", wantErr: "no scheme"},
		{in: "example.com/path", wantErr: "no scheme"},
		{in: "user@example.com", wantErr: "no scheme"},
		{in: "example .com", wantErr: "no scheme"},
		{in: "example.com:0", wantErr: "bad port"},
		{in: "example.com:65536", wantErr: "bad port"},
		{in: "example.com:080", wantErr: "bad port"},
		{in: "example.com:http", wantErr: "bad port"},
		{in: "example.com:", wantErr: "bad port"},
		{in: "2001:db8::1", wantErr: "brackets"},
		{in: "::1", wantErr: "brackets"},
		{in: "[192.0.2.1]", wantErr: "IPv6"},
		{in: "[fe80::1%eth0]", wantErr: "IPv6"},
		{in: "[::1", wantErr: "missing ]"},
		{in: "[::1]x", wantErr: "junk"},
		{in: "*.192.0.2.1", wantErr: "wildcard"},
		{in: "127.1", wantErr: "numeric"},
		{in: "0x7f000001", wantErr: "numeric"},
		{in: "a..b", wantErr: "empty label"},
		{in: ".example.com", wantErr: "empty label"},
		{in: "exa%mple.com", wantErr: "not allowed"},
		{in: strings.Repeat("a", 64) + ".com", wantErr: "63"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParsePattern(tc.in)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ParsePattern(%q): %v", tc.in, err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("ParsePattern(%q) accepted; want an error with %q", tc.in, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("ParsePattern(%q): %v; want %q in it", tc.in, err, tc.wantErr)
			case err != nil && !errors.Is(err, ErrPattern):
				t.Fatalf("ParsePattern(%q): %v is not ErrPattern", tc.in, err)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	allow := []string{
		"example.com", "*.wild.test", "api.ports.test:443", "*.ports.test:8443",
		"192.0.2.1", "198.51.100.7:80", "[2001:db8::1]", "[2001:db8::2]:443",
		"bücher.example", "*.straße.example", "Upper.Case.TEST.", "deny-wins.test", "*.both.test",
	}
	deny := []string{"deny-wins.test", "bad.both.test", "*.evil.wild.test", "ports.test:22", "203.0.113.5", "*.straße.example:25"}
	r, err := NewRules(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		host    string
		port    int
		want    Verdict
		pattern string
	}{
		{"exact", "example.com", 443, Allowed, "example.com"},
		{"exact any port", "example.com", 8080, Allowed, "example.com"},
		{"subdomain of exact", "www.example.com", 443, Unlisted, ""},
		{"suffix is not a subdomain", "badexample.com", 443, Unlisted, ""},
		{"wildcard", "a.wild.test", 443, Allowed, "*.wild.test"},
		{"wildcard deep", "a.b.c.wild.test", 443, Allowed, "*.wild.test"},
		{"wildcard apex", "wild.test", 443, Unlisted, ""},
		{"wildcard lookalike", "notwild.test", 443, Unlisted, ""},
		{"deny wins over exact", "deny-wins.test", 443, Denied, "deny-wins.test"},
		{"deny wins over wildcard", "bad.both.test", 443, Denied, "bad.both.test"},
		{"wildcard sibling still allowed", "good.both.test", 443, Allowed, "*.both.test"},
		{"deny wildcard inside allow wildcard", "x.evil.wild.test", 443, Denied, "*.evil.wild.test"},
		{"deny wildcard apex not denied", "evil.wild.test", 443, Allowed, "*.wild.test"},
		{"unlisted", "unlisted.test", 80, Unlisted, ""},
		{"case", "EXAMPLE.Com", 443, Allowed, "example.com"},
		{"pattern case", "upper.case.test", 80, Allowed, "Upper.Case.TEST."},
		{"trailing dot", "example.com.", 443, Allowed, "example.com"},
		{"IDNA unicode", "bücher.example", 443, Allowed, "bücher.example"},
		{"IDNA upper unicode", "BÜCHER.example", 443, Allowed, "bücher.example"},
		{"IDNA punycode", "xn--bcher-kva.example", 443, Allowed, "bücher.example"},
		{"IDNA punycode upper", "XN--BCHER-KVA.EXAMPLE", 443, Allowed, "bücher.example"},
		{"IDNA wildcard", "www.xn--strae-oqa.example", 443, Allowed, "*.straße.example"},
		{"IDNA wildcard deny port", "mx.straße.example", 25, Denied, "*.straße.example:25"},
		{"IDNA fullwidth", "ｅｘａｍｐｌｅ.com", 443, Allowed, "example.com"},
		{"port pattern match", "api.ports.test", 443, Allowed, "api.ports.test:443"},
		{"port pattern other port", "api.ports.test", 80, Unlisted, ""},
		{"wildcard port match", "x.ports.test", 8443, Allowed, "*.ports.test:8443"},
		{"wildcard port other", "x.ports.test", 443, Unlisted, ""},
		{"deny port only", "ports.test", 22, Denied, "ports.test:22"},
		{"deny port only other port", "ports.test", 23, Unlisted, ""},
		{"IPv4 listed", "192.0.2.1", 443, Allowed, "192.0.2.1"},
		{"IPv4 unlisted", "192.0.2.2", 443, Unlisted, ""},
		{"IPv4 listed with port", "198.51.100.7", 80, Allowed, "198.51.100.7:80"},
		{"IPv4 listed other port", "198.51.100.7", 81, Unlisted, ""},
		{"IPv4 denied", "203.0.113.5", 80, Denied, "203.0.113.5"},
		{"IPv4-mapped IPv6 is the IPv4", "::ffff:192.0.2.1", 443, Allowed, "192.0.2.1"},
		{"IPv4-mapped IPv6 in brackets", "[::ffff:192.0.2.1]", 443, Allowed, "192.0.2.1"},
		{"IPv6 listed", "2001:db8::1", 443, Allowed, "[2001:db8::1]"},
		{"IPv6 listed, brackets", "[2001:db8::1]", 443, Allowed, "[2001:db8::1]"},
		{"IPv6 long form", "2001:0db8:0000::0001", 443, Allowed, "[2001:db8::1]"},
		{"IPv6 port", "2001:db8::2", 443, Allowed, "[2001:db8::2]:443"},
		{"IPv6 port other", "2001:db8::2", 80, Unlisted, ""},
		{"IPv6 unlisted", "2001:db8::3", 443, Unlisted, ""},
		{"numeric first label is still a name", "1.wild.test", 443, Allowed, "*.wild.test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := r.Match(tc.host, tc.port)
			if err != nil {
				t.Fatalf("Match(%q, %d): %v", tc.host, tc.port, err)
			}
			if m.Verdict != tc.want || m.Pattern != tc.pattern {
				t.Errorf("Match(%q, %d) = %v by %q; want %v by %q", tc.host, tc.port, m.Verdict, m.Pattern, tc.want, tc.pattern)
			}
		})
	}
}

// TestDenyEveryHost: a deny list may hold "*" and "*:PORT" (every host,
// names and addresses, on that port), as sandbox-runtime's deniedDomains;
// an allow list may not.
func TestDenyEveryHost(t *testing.T) {
	r, err := NewRules([]string{"*.example.com", "192.0.2.1"}, []string{"*:22", "api.example.com:8443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		port int
		want Verdict
	}{
		{"a.example.com", 22, Denied},
		{"192.0.2.1", 22, Denied},
		{"a.example.com", 443, Allowed},
		{"api.example.com", 8443, Denied},
		{"unlisted.test", 22, Denied},
	} {
		if m, err := r.Match(tc.host, tc.port); err != nil || m.Verdict != tc.want {
			t.Errorf("Match(%s, %d) = %+v, %v; want %v", tc.host, tc.port, m, err, tc.want)
		}
	}
	all, err := NewRules([]string{"a.test"}, []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := all.Match("a.test", 443); m.Verdict != Denied || m.Pattern != "*" {
		t.Errorf(`deny "*": %+v`, m)
	}
	for _, bad := range []string{"*:0", "*:x", "*:70000"} {
		if _, err := ParseDenyPattern(bad); err == nil {
			t.Errorf("ParseDenyPattern(%q) accepted", bad)
		}
	}
	if _, err := NewRules([]string{"*:22"}, nil); err == nil {
		t.Error(`an allow list took "*:22"`)
	}
}

func TestMatchRejectsBadHosts(t *testing.T) {
	r, err := NewRules([]string{"example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{
		"", ".", "..", "a..b", "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433", "1.2.3.04",
		"fe80::1%eth0", "[fe80::1%25eth0]", "exa mple.com", "example.com/x", "ex\x00ample.com",
		"[example.com]", "[192.0.2.1]", strings.Repeat("a.", 127) + "com",
	} {
		if m, err := r.Match(h, 443); err == nil {
			t.Errorf("Match(%q) = %+v; want an error", h, m)
		} else if !errors.Is(err, ErrHost) {
			t.Errorf("Match(%q): %v is not ErrHost", h, err)
		}
	}
}

func TestEmptyAllowListAllowsNothing(t *testing.T) {
	r, err := NewRules(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"example.com", "localhost", "127.0.0.1", "::1"} {
		if m, _ := r.Match(h, 80); m.Verdict != Unlisted {
			t.Errorf("Match(%q) with no rules = %v", h, m.Verdict)
		}
	}
}

func TestNewRulesNamesEveryBadEntry(t *testing.T) {
	_, err := NewRules([]string{"ok.test", "*", "https://x.test"}, []string{"a..b"})
	if err == nil {
		t.Fatal("NewRules accepted bad entries")
	}
	for _, want := range []string{`"*"`, `"https://x.test"`, `"a..b"`, "allowed domains", "denied domains"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// FuzzMatch checks the matcher's invariants on arbitrary patterns and
// hosts: no panic; a canonical host is stable under normalisation; the
// deny list wins; a wildcard never matches its apex; an IP address matches
// only an address pattern.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"example.com", "example.com"}, {"*.example.com", "a.example.com"}, {"*.example.com", "example.com"},
		{"192.0.2.1", "192.0.2.1"}, {"[2001:db8::1]:443", "2001:db8::1"}, {"bücher.example", "XN--BCHER-KVA.example."},
		{"example.com:443", "Example.COM."}, {"*.x.test", "127.1"}, {"a.test", "[::ffff:1.2.3.4]"},
	} {
		f.Add(s[0], s[1], uint16(443))
	}
	f.Fuzz(func(t *testing.T, pattern, host string, port uint16) {
		p, perr := ParsePattern(pattern)
		name, addr, herr := normalizeHost(host)
		if herr == nil {
			if !addr.IsValid() {
				if !utf8.ValidString(name) || strings.ToLower(name) != name || strings.HasSuffix(name, ".") || name == "" {
					t.Fatalf("normalizeHost(%q) = %q: not canonical", host, name)
				}
				n2, a2, err := normalizeHost(name)
				if err != nil || n2 != name || a2.IsValid() {
					t.Fatalf("normalizeHost not idempotent: %q -> %q -> %q, %v", host, name, n2, err)
				}
				if _, err := netip.ParseAddr(name); err == nil {
					t.Fatalf("normalizeHost(%q) returned the address %q as a name", host, name)
				}
			}
		}
		if perr != nil || herr != nil {
			return
		}
		matched := p.matches(name, addr, int(port))
		if matched && addr.IsValid() != p.addr.IsValid() {
			t.Fatalf("%q matched %q across name and address", pattern, host)
		}
		if matched && p.wildcard && name == p.name {
			t.Fatalf("wildcard %q matched its apex %q", pattern, host)
		}
		if matched && p.port != 0 && p.port != int(port) {
			t.Fatalf("%q matched port %d", pattern, port)
		}
		r := &Rules{allow: []Pattern{p}, deny: []Pattern{p}}
		if m := r.match(name, addr, int(port)); matched && m.Verdict != Denied || !matched && m.Verdict != Unlisted {
			t.Fatalf("with %q on both lists, %q:%d is %v", pattern, host, port, m.Verdict)
		}
	})
}
