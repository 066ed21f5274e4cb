package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzSettings feeds arbitrary bytes to the settings loader in each
// dialect: it must never panic, must reject what encoding/json rejects, and
// every error must be a SettingsError.
func FuzzSettings(f *testing.F) {
	for _, seed := range []string{
		string(defaultSettings),
		`{"sandbox": {"filesystem": {"denyRead": ["~/.ssh", "/**/.env"]}}}`,
		`{"permissions": {"allow": ["Bash(npm run test:*)", "Read(//etc/**)"], "deny": ["WebFetch(domain:x.com)"]}}`,
		`{"permissions": {"allow": ["mcp__github__*", "*", "bash(ls)", "WebFetch(domain:*)"], "deny": ["mcp__*", "WebFetch(domain:*)", "Bash(a\\(b\\))"]}}`,
		`{"network": {"allowedDomains": ["*.github.com:443"]}, "filesystem": {"denyRead": [{"path": "/a[b]", "literal": true}]}}`,
		`{"cordon": {"limits": {"memory": "1.5G", "timeout": "90s"}, "env": {"set": {"A": "b"}}}}`,
		`{"network": {"allowedDomains": ["github.com"]}, "credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["github.com"]}, {"name": "J", "mode": "mask", "decode": "jwt", "maskClaims": ["s"]}], "files": [{"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+)", "maskDuplicates": true, "onExtractNoMatch": "error"}], "awsPairs": [{"accessKeyIdVar": "A", "secretAccessKeyVar": "B"}], "sigv4": {"streaming": "passthrough"}, "allowPlaintextInject": true}}`,
		`{"cordon": {"limits": {"memory": "1.5G", "timeout": "90s"}, "env": {"set": {"A": "b"}}, "httpProxyPort": 3129}}`,
		`{"network": {"allowedDomains": ["a.example"], "deniedDomains": ["*:22", "b.example:8443"], "deniedDomainReasons": {"*:22": "no ssh"},
			"deniedResolvedAddresses": ["10.0.0.0/8", "fc00::/7", "192.0.2.1"], "httpProxyPort": 8888, "socksProxyPort": 1081,
			"parentProxy": {"http": "http://u:p@proxy:3128", "https": "proxy:3129", "noProxy": "*.corp,10.0.0.0/8"},
			"mitmProxy": {"socketPath": "/run/m.sock", "domains": ["*.inspect.example"]}, "stripResponseHeaders": ["set-cookie"],
			"requireHostMatch": true, "refuseOpaqueTunnels": true, "allowPlaintextHeaderSet": false, "ambiguousRequestTarget": "refuse",
			"allowMachLookup": ["com.1password.*", "*", "a*b"],
			"tlsTerminate": {"caCertPath": "~/ca.pem", "caKeyPath": "ca.key", "excludeDomains": ["bank.example"], "extraCaCertPaths": ["/etc/r.pem"], "maxTunnels": 8, "handshakeTimeoutMs": 500}}}`,
		`{"sandbox": {"network": {"parentProxy": {"https": "socks5://x"}, "filterRequest": null, "deniedDomainReasons": {"x": ""}}}}`,
		`{"a": [1, 2.5e3, -0, true, null, "\u00e9\ud83d\ude00"]}`,
		`{"x": "\ud800"}`, `[]`, `{`, `{"a":1,}`, `{"a" 1}`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(seed))
	}
	o := LoadOptions{Workspace: "/w", Cwd: "/w", Home: "/h"}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, perr := parseJSON(data)
		if perr == nil && !json.Valid(data) && !(len(data) >= 3 && string(data[:3]) == "\xef\xbb\xbf") {
			t.Fatalf("parseJSON accepted invalid JSON %q", data)
		}
		if perr != nil && json.Valid(data) {
			var se *syntaxError
			if !errors.As(perr, &se) {
				t.Fatalf("parseJSON error without a position: %v", perr)
			}
			// Only duplicate keys, invalid UTF-8 and excessive depth may
			// refuse what encoding/json takes.
			if !strings.HasPrefix(se.msg, "duplicate") && se.msg != "nested too deeply" && se.msg != "invalid UTF-8 in a string" {
				t.Fatalf("parseJSON refused valid JSON %q: %v", data, perr)
			}
		}
		_ = root
		for _, fm := range []format{formatCordon, formatClaude, formatSRT} {
			for _, sc := range []Scope{ScopeUser, ScopeProject, ScopeManaged} {
				_, err := readLayer("f.json", data, sc, fm, o, "/w")
				var se *SettingsError
				if err != nil && !errors.As(err, &se) {
					t.Fatalf("error is not a SettingsError: %v", err)
				}
			}
		}
	})
}

// FuzzParseRule: no rule panics, and a rule cordon reads is read back the
// same from what it writes.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"Bash", "Bash(npm run test:*)", "Bash(*)", `Bash(python -c "print\(1\)")`, `Bash(a\\)`, "Read(~/.ssh/**)",
		"mcp__github__*", "*", "mcp__*", "WebFetch(domain:*)", "WebFetch(domain:example.*)", "Task(Explore)",
		"bash(ls)", "Bash(ls", "Bash()", "Write(src/**)", "  Bash ( ls )  ", `Read(a\(b)`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		again, err := ParseRule(r.String())
		if err != nil || again.Tool != r.Tool || again.Specifier != r.Specifier || again.HasSpecifier != r.HasSpecifier {
			t.Fatalf("%q read as %+v, written %q, read back %+v (%v)", s, r, r.String(), again, err)
		}
	})
}
