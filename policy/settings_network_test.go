package policy

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProxyPorts: cordon.httpProxyPort and cordon.socksProxyPort are the
// ports of cordon's proxy inside the sandbox, and so is the old spelling in
// cordon's own files (with a notice); in sandbox-runtime's and Claude
// Code's files httpProxyPort and socksProxyPort name a proxy of the user's,
// which no workspace may set, nor anyone below managed settings that allow
// their domains only, and which a deny-all drops.
func TestProxyPorts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		files        map[string]string
		own, ext     [2]int
		notices, ign []string // substrings
	}{
		{name: "cordon's keys", files: map[string]string{"home/u/.config/cordon/settings.json": `{"cordon": {"httpProxyPort": 3129, "socksProxyPort": 1081}}`},
			own: [2]int{3129, 1081}},
		{name: "the old spelling in cordon's own file", files: map[string]string{"home/u/.config/cordon/settings.json": `{"sandbox": {"network": {"httpProxyPort": 3130}}}`},
			own: [2]int{3130, 0}, notices: []string{"sandbox.network.httpProxyPort in cordon's own settings (/home/u/.config/cordon/settings.json:1:43) is deprecated", "now cordon.httpProxyPort"}},
		{name: "Claude Code's: a proxy of the user's", files: map[string]string{"home/u/.claude/settings.json": `{"sandbox": {"network": {"allowedDomains": ["a.example"], "httpProxyPort": 8888, "socksProxyPort": 9050}}}`},
			ext: [2]int{8888, 9050}, notices: []string{"cordon starts no HTTP proxy of its own; the sandbox's HTTP port leads to your proxy at 127.0.0.1:8888", "no SOCKS proxy"}},
		{name: "sandbox-runtime's: a proxy of the user's", files: map[string]string{"home/u/.srt-settings.json": `{"network": {"allowedDomains": [], "deniedDomains": [], "httpProxyPort": 8888}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`},
			ext: [2]int{8888, 0}},
		{name: "not from an untrusted workspace", files: map[string]string{"ws/.claude/settings.json": `{"sandbox": {"network": {"httpProxyPort": 8888}}}`},
			ign: []string{"sandbox.network.httpProxyPort 8888 (/ws/.claude/settings.json:1:43): the workspace is not trusted"}},
		{name: "not below managed allowedDomains only", files: map[string]string{
			"etc/cordon/managed-settings.json": `{"cordon": {"allowManagedDomainsOnly": true}, "sandbox": {"network": {"allowedDomains": ["a.example"], "socksProxyPort": 1082}}}`,
			"home/u/.claude/settings.json":     `{"sandbox": {"network": {"httpProxyPort": 8888}}}`},
			ext: [2]int{0, 1082}, ign: []string{"sandbox.network.httpProxyPort 8888", "cordon.allowManagedDomainsOnly is set by the managed settings"}},
		{name: "not with a deny-all", files: map[string]string{"home/u/.claude/settings.json": `{"sandbox": {"network": {"deniedDomains": ["*"], "httpProxyPort": 8888}}}`},
			ign: []string{`deniedDomains "*"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys, ManagedFiles: []string{"/etc/cordon/managed-settings.json"}})
			if err != nil {
				t.Fatal(err)
			}
			n := p.Network
			if got := [2]int{n.HTTPProxyPort, n.SOCKSProxyPort}; got != tc.own {
				t.Errorf("cordon's ports %v; want %v", got, tc.own)
			}
			if got := [2]int{n.ExternalHTTPProxyPort, n.ExternalSOCKSProxyPort}; got != tc.ext {
				t.Errorf("the user's proxy ports %v; want %v", got, tc.ext)
			}
			notices := strings.Join(p.Report.Notices, "\n")
			for _, want := range tc.notices {
				if !strings.Contains(notices, want) {
					t.Errorf("notices %q lack %q", p.Report.Notices, want)
				}
			}
			if len(tc.notices) == 0 && tc.ext == [2]int{} && len(p.Report.Notices) > 0 {
				t.Errorf("notices %q", p.Report.Notices)
			}
			var ignored []string
			for _, i := range p.Report.Ignored {
				ignored = append(ignored, i.Key+" "+i.Value+" ("+i.Source+"): "+i.Reason)
			}
			for _, want := range tc.ign {
				if !strings.Contains(strings.Join(ignored, "\n"), want) {
					t.Errorf("ignored %q lack %q", ignored, want)
				}
			}
		})
	}
}

// TestNetworkKeyErrors: what cordon refuses in sandbox-runtime's network
// block, with the position and the reason.
func TestNetworkKeyErrors(t *testing.T) {
	for _, tc := range []struct{ data, err string }{
		{`{"network": {"deniedDomains": ["*:0"]}}`, `1:32: network.deniedDomains: "*:0": the port must be a number from 1 to 65535`},
		{`{"network": {"deniedDomains": ["*.*"]}}`, `1:32: network.deniedDomains`},
		{`{"network": {"deniedResolvedAddresses": ["10.0.0.0/33"]}}`, `"10.0.0.0/33" is not an IP address or CIDR range`},
		{`{"network": {"deniedResolvedAddresses": ["[::1]"]}}`, `IPv6 without brackets`},
		{`{"network": {"deniedDomainReasons": {"x.example": ""}}}`, `network.deniedDomainReasons.x.example must be a reason (a non-empty string)`},
		{`{"network": {"parentProxy": {"http": "ftp://p:21"}}}`, `network.parentProxy.http: an upstream proxy is http:// or https://, not ftp://`},
		{`{"network": {"parentProxy": {"http": "http://p:3128/path"}}}`, `no path or query`},
		{`{"network": {"parentProxy": {"hosts": "x"}}}`, `unknown key "hosts" in network.parentProxy`},
		{`{"network": {"mitmProxy": {"socketPath": "m.sock", "domains": ["a.example"]}}}`, `network.mitmProxy.socketPath must be an absolute path`},
		{`{"network": {"mitmProxy": {"socketPath": "/m.sock", "domains": []}}}`, `needs a socketPath and at least one entry in domains`},
		{`{"network": {"ambiguousRequestTarget": "sometimes"}}`, `must be "refuse", "asSpelled" or "normalize"`},
		{`{"network": {"stripResponseHeaders": ["set cookie"]}}`, `"set cookie" is not a header name`},
		{`{"network": {"filterRequest": {}}}`, `network.filterRequest is a function of sandbox-runtime's library`},
		{`{"network": {"httpProxyPort": 0}}`, `network.httpProxyPort must be a port number from 1 to 65535`},
		{`{"network": {"tlsTerminate": {"caCertPath": "/ca.pem"}}}`, `network.tlsTerminate: caCertPath and caKeyPath go together`},
		{`{"network": {"tlsTerminate": {"maxTunnels": 0}}}`, `network.tlsTerminate.maxTunnels must be a whole number from 1 to 65536`},
		{`{"network": {"tlsTerminate": {"handshakeTimeoutMs": 99}}}`, `from 100 to 600000`},
		{`{"network": {"tlsTerminate": {"excludeDomains": ["*"]}}}`, `network.tlsTerminate.excludeDomains`},
		{`{"network": {"tlsTerminate": {"extraCaCertPaths": "/x.pem"}}}`, `must be an array of paths`},
		{`{"network": {"tlsTerminate": {"caKeyPath": "/k", "caCertPath": "/c", "mode": 1}}}`, `unknown key "mode" in network.tlsTerminate`},
		{`{"network": {"allowMachLookup": ["com.*.x"]}}`, `network.allowMachLookup: "com.*.x": a wildcard is only a single trailing "*"`},
		{`{"network": {"allowMachLookup": ["**"]}}`, `a wildcard is only a single trailing "*"`},
		{`{"network": {"allowMachLookup": ["com.x y"]}}`, `"com.x y" is not a Mach service name`},
	} {
		_, err := readLayer("f.json", []byte(tc.data), ScopeUser, formatSRT, LoadOptions{Home: "/h", Cwd: "/w"}, "/h")
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want %q", tc.data, err, tc.err)
		}
	}
}

// TestDeniedDomainReasonsKeys: a reason's key is the deniedDomains entry
// as cordon writes it (lower case, IDNA), so it finds its entry however it
// was spelt; a later file's reason replaces an earlier one's.
func TestDeniedDomainReasonsKeys(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.claude/settings.json":     {Data: []byte(`{"sandbox": {"network": {"deniedDomains": ["GitHub.com:22", "*:23", "bücher.example"], "deniedDomainReasons": {"github.com:22": "user", "*:23": "telnet", "BÜCHER.example": "books"}}}}`)},
		"etc/cordon/managed-settings.json": {Data: []byte(`{"sandbox": {"network": {"deniedDomainReasons": {"GITHUB.COM:22": "managed: use https"}}}}`)},
	}
	p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys, ManagedFiles: []string{"/etc/cordon/managed-settings.json"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"github.com:22": "managed: use https", "*:23": "telnet", "xn--bcher-kva.example": "books"}
	if diff := cmp.Diff(want, p.Network.DeniedDomainReasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"github.com:22", "*:23", "xn--bcher-kva.example"}, p.Network.DeniedDomains); diff != "" {
		t.Errorf("deniedDomains (-want +got):\n%s", diff)
	}
}

// TestAllowMachLookup: allowMachLookup's services reach the policy from
// the user's files, never from a workspace that is not trusted (they
// widen the macOS sandbox).
func TestAllowMachLookup(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.srt-settings.json": {Data: []byte(`{"network": {"allowedDomains": [], "deniedDomains": [], "allowMachLookup": ["2BUA8C4S2C.com.1password.*", "*"]}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)},
		"ws/.claude/settings.json":  {Data: []byte(`{"sandbox": {"network": {"allowMachLookup": ["com.evil"]}}}`)},
	}
	p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"2BUA8C4S2C.com.1password.*", "*"}, p.Network.AllowMachLookup); diff != "" {
		t.Errorf("AllowMachLookup (-want +got):\n%s", diff)
	}
	var ignored []string
	for _, i := range p.Report.Ignored {
		ignored = append(ignored, i.Key+" "+i.Value)
	}
	if !slices.Contains(ignored, "sandbox.network.allowMachLookup com.evil") {
		t.Errorf("ignored %q; want the workspace's com.evil", ignored)
	}
}

// TestTLSTerminate: tlsTerminate loads with its paths made absolute as
// sandbox-runtime's are (~ is the home, the rest relative to the current
// directory) and its limits; a workspace that is
// not trusted may not set it (a CA of its choosing would see the
// traffic; the files it names are read on the host).
func TestTLSTerminate(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.srt-settings.json": {Data: []byte(`{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {"caCertPath": "~/ca/cert.pem", "caKeyPath": "ca/key.pem",
			"excludeDomains": ["pinned.example", "*.mtls.example"], "extraCaCertPaths": ["/etc/corp/root.pem"], "maxTunnels": 64, "handshakeTimeoutMs": 2500}},
			"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)},
		"ws/.claude/settings.json": {Data: []byte(`{"sandbox": {"network": {"tlsTerminate": {"caCertPath": "/ws/evil.pem", "caKeyPath": "/ws/evil.key"}}}}`)},
	}
	p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	want := &TLSTerminate{CACertPath: "/home/u/ca/cert.pem", CAKeyPath: "/ws/ca/key.pem", ExcludeDomains: []string{"pinned.example", "*.mtls.example"},
		ExtraCACertPaths: []string{"/etc/corp/root.pem"}, MaxTunnels: 64, HandshakeTimeout: 2500 * time.Millisecond}
	if diff := cmp.Diff(want, p.Network.TLSTerminate); diff != "" {
		t.Errorf("TLSTerminate (-want +got):\n%s", diff)
	}
	var ignored []string
	for _, i := range p.Report.Ignored {
		ignored = append(ignored, i.Key+" "+i.Value)
	}
	if !slices.Contains(ignored, "sandbox.network.tlsTerminate /ws/evil.pem") {
		t.Errorf("ignored %q; want the workspace's tlsTerminate", ignored)
	}
}
