package darwin

import (
	"strings"
	"testing"
)

// The evaluator's own tests: its regex dialect, its rules of decision on
// small profiles written for them, what it refuses, and its reader fuzzed.

func TestAppleRegex(t *testing.T) {
	for _, tc := range []struct {
		re      string
		match   []string
		noMatch []string
	}{
		{`^/a/b$`, []string{"/a/b"}, []string{"/a/bc", "x/a/b"}},
		{`^/a(/.*)?$`, []string{"/a", "/a/b/c"}, []string{"/ab"}},
		{`^/[Uu]sers/[^/]*$`, []string{"/Users/u", "/users/é"}, []string{"/Users/u/x"}},
		{`^/x/[^/]$`, []string{"/x/a"}, []string{"/x/é"}}, // é is two bytes
		{`^/x/..$`, []string{"/x/é"}, []string{"/x/a"}},
		{`^/a\.b$`, []string{"/a.b"}, []string{"/aXb"}},
		{`/com\.apple\.sandbox($|/)`, []string{"/x/com.apple.sandbox", "/com.apple.sandbox/y"}, []string{"/com.apple.sandboxes"}},
		{`^/[]a-]$`, []string{"/]", "/a", "/-"}, []string{"/b"}},
		{`^/(a|bc)+$`, []string{"/abca"}, []string{"/"}},
		{`^/é$`, []string{"/é"}, []string{"/e"}},
	} {
		re, err := appleRegex(tc.re)
		if err != nil {
			t.Errorf("%q: %v", tc.re, err)
			continue
		}
		for _, s := range tc.match {
			if !re.MatchString(latin1(s)) {
				t.Errorf("%q does not match %q", tc.re, s)
			}
		}
		for _, s := range tc.noMatch {
			if re.MatchString(latin1(s)) {
				t.Errorf("%q matches %q", tc.re, s)
			}
		}
	}
	for _, bad := range []string{`a{2}`, `\d`, `\w+`, `[[:alpha:]]`, `[\]]`, `[é]`, `(a|)`, `*a`, `a**`, `a*?`, `(a`, `a)`, `[a`, `\`, `a|`, `[z-a]`, "a\nb"} {
		if _, err := appleRegex(bad); err == nil {
			t.Errorf("appleRegex(%q) accepted it", bad)
		}
	}
}

// TestEvaluatorModel: the rules of decision the evaluator implements, on
// small profiles written for them.
func TestEvaluatorModel(t *testing.T) {
	const head = "(version 1)\n(deny default)\n"
	for _, tc := range []struct {
		name, profile string
		a             access
		want          bool
		flat          bool // decideFlat's answer
		err           string
		flatErr       string
	}{
		{name: "last match wins within an operation",
			profile: `(allow file-write* (subpath "/w")) (deny file-write* (subpath "/w/x")) (allow file-write* (literal "/w/x/ok"))`,
			a:       file("file-write-data", "/w/x/ok"), want: true, flat: true},
		{name: "a specific operation's rule beats a later wildcard",
			profile: `(deny file-write-unlink (subpath "/w")) (allow file-write* (subpath "/w"))`,
			a:       file("file-write-unlink", "/w/f"), want: false, flat: true},
		{name: "a wildcard's rules apply when the specific operation's do not match",
			profile: `(deny file-write-unlink (subpath "/other")) (allow file-write* (subpath "/w"))`,
			a:       file("file-write-unlink", "/w/f"), want: true, flat: true},
		{name: "an unfiltered rule decides only when no filtered rule matched",
			profile: `(deny file-read* (subpath "/secret")) (allow file-read*)`,
			a:       file("file-read-data", "/secret/k"), want: false, flat: true},
		{name: "an unfiltered rule of an operation cuts it from the more general one",
			profile: `(allow file-read*) (deny file-read* (subpath "/s")) (allow file-read-data)`,
			a:       file("file-read-data", "/s/k"), want: true, flat: true},
		{name: "the default",
			profile: `(allow file-read* (subpath "/a"))`,
			a:       file("file-read-data", "/b"), want: false, flat: false},
		{name: "several filters are any of them",
			profile: `(allow file-read* (literal "/a") (literal "/b"))`,
			a:       file("file-read-data", "/b"), want: true, flat: true},
		{name: "require-all and require-not",
			profile: `(allow file-write* (require-all (subpath "/w") (require-not (literal "/w/k"))))`,
			a:       file("file-write-data", "/w/k"), want: false, flat: false},
		{name: "a vnode type that is not given is refused when it decides",
			profile: `(allow file-write* (subpath "/w")) (deny file-write* (require-all (literal "/w/.git") (vnode-type REGULAR-FILE)))`,
			a:       access{op: "file-write-data", path: "/w/.git"}, err: "vnode type", flatErr: "vnode type"},
		{name: "a vnode type that is not given is not needed elsewhere",
			profile: `(allow file-write* (subpath "/w")) (deny file-write* (require-all (literal "/w/.git") (vnode-type REGULAR-FILE)))`,
			a:       access{op: "file-write-data", path: "/w/x"}, want: true, flat: true},
		{name: "a filter not understood is refused when it decides",
			profile: `(allow file-read* (xattr "com.apple.x"))`,
			a:       file("file-read-data", "/a"), err: "not understood", flatErr: "not understood"},
		{name: "a regex not understood is refused when it decides",
			profile: `(allow file-read* (regex "^/a{2}$"))`,
			a:       file("file-read-data", "/aa"), err: "regex", flatErr: "regex"},
		{name: "a filter not understood whose action agrees is not needed",
			profile: `(deny file-read* (xattr "com.apple.x"))`,
			a:       file("file-read-data", "/a"), want: false, flat: false},
		{name: "an extension the object may carry is refused when it decides",
			profile: `(allow file-read* (extension "com.apple.sandbox.pty"))`,
			a:       file("file-read-data", "/dev/ttys1"), err: "carries", flatErr: "carries"},
		{name: "an object that carries no extension",
			profile: `(allow file-read* (extension "com.apple.sandbox.pty"))`,
			a:       access{op: "file-read-data", path: "/dev/ttys1", vnode: "CHARACTER-DEVICE", plain: true}, want: false, flat: false},
		{name: "an operation whose place is not known is refused when it matters",
			profile: `(allow file-read*)`,
			a:       file("file-test-existence", "/a"), err: "depends on where", flatErr: "depends on where"},
		{name: "an operation named explicitly does not depend on its place",
			profile: `(allow file-read* file-test-existence) (deny file-read* file-test-existence (subpath "/s"))`,
			a:       file("file-test-existence", "/s/k"), want: false, flat: false},
		{name: "process-exec is process-exec*",
			profile: `(allow process-exec)`,
			a:       file("process-exec*", "/bin/sh"), want: true, flat: true},
		{name: "a connection to the proxy",
			profile: `(allow network-outbound (remote ip "localhost:3128"))`,
			a:       access{op: "network-outbound", remote: "tcp [::1]:3128"}, want: true, flat: true},
		{name: "another port",
			profile: `(allow network-outbound (remote ip "localhost:3128"))`,
			a:       access{op: "network-outbound", remote: "tcp 127.0.0.1:22"}, want: false, flat: false},
		{name: "an IPv4-mapped loopback address is not localhost",
			profile: `(allow network-outbound (remote ip "localhost:*"))`,
			a:       access{op: "network-outbound", remote: "tcp [::ffff:127.0.0.1]:80"}, want: false, flat: false},
		{name: "bind is below inbound",
			profile: `(allow network-inbound (local ip "*:*"))`,
			a:       access{op: "network-bind", local: "tcp 0.0.0.0:8080"}, want: true, flat: true},
		{name: "a unix socket by path",
			profile: `(allow network-outbound (remote unix-socket (subpath "/var/run")))`,
			a:       access{op: "network-outbound", socket: "/var/run/docker.sock"}, want: true, flat: true},
		{name: "a unix socket by a bare path filter",
			profile: `(allow network-outbound (literal "/private/var/run/syslog"))`,
			a:       access{op: "network-outbound", socket: "/private/var/run/syslog"}, want: true, flat: true},
		{name: "a Mach service",
			profile: `(allow mach-lookup (global-name "com.apple.logd"))`,
			a:       access{op: "mach-lookup", name: "com.apple.trustd.agent"}, want: false, flat: false},
		{name: "sysctl-write is sysctl*",
			profile: `(allow sysctl-write (sysctl-name "kern.x"))`,
			a:       access{op: "sysctl-read", name: "kern.x"}, want: true, flat: true},
		{name: "a param",
			profile: `(allow file-read* (subpath (param "ROOT")))`,
			a:       file("file-read-data", "/r/x"), want: true, flat: true},
		{name: "libsandbox's implicit rules are not guessed",
			profile: `(allow file-read*)`,
			a:       file("file-write-data", "/x/com.apple.sandbox/y"), err: "implicit", flatErr: "implicit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := loadSBPL(head+tc.profile, map[string]string{"ROOT": "/r"})
			if err != nil {
				t.Fatal(err)
			}
			check := func(how string, v verdict, err error, want bool, wantErr string) {
				t.Helper()
				switch {
				case wantErr != "":
					if err == nil || !strings.Contains(err.Error(), wantErr) {
						t.Errorf("%s: %v, %v; want an error about %q", how, v, err, wantErr)
					}
				case err != nil:
					t.Errorf("%s: %v", how, err)
				case v.allow != want:
					t.Errorf("%s: allowed %v (line %d), want %v", how, v.allow, v.line, want)
				}
			}
			v, err := p.decide(tc.a)
			check("decide", v, err, tc.want, tc.err)
			v, err = p.decideFlat(tc.a)
			check("decideFlat", v, err, tc.flat, tc.flatErr)
		})
	}
}

func TestLoadSBPLRefuses(t *testing.T) {
	for _, src := range []string{
		`(allow file-read*)`,
		"(version 1)\n(import \"system.sb\")",
		"(version 1)\n(debug deny)",
		"(version 1)\n(allow file-frobnicate)",
		"(version 1)\n(allow file-read* (subpath \"/a/\"))",
		"(version 1)\n(allow file-read* (subpath (param \"X\")))",
		"(version 1)\n(allow network-outbound (remote unix-socket \"^/x\"))",
		"(version 1)\n(deny (with message \"x\"))",
	} {
		if _, err := loadSBPL(src, nil); err == nil {
			t.Errorf("loadSBPL(%q) accepted it", src)
		}
	}
}

// FuzzSBPLReader: whatever the input, the reader either refuses it or reads
// forms that print back to text it reads the same; the evaluator either
// refuses a profile or answers without panicking.
func FuzzSBPLReader(f *testing.F) {
	for _, s := range []string{
		"(version 1)\n(deny default (with message \"cordon:t\"))\n(allow file-read*)",
		`(allow file-read* (regex #"^/a\.b$") (subpath "/x\"y\\z"))`,
		"(allow network-outbound (remote ip \"localhost:3128\")) ; comment",
		`(allow file-write* (require-all (literal "/w/.git") (require-not (vnode-type DIRECTORY))))`,
		`(version 1) (allow mach-lookup (global-name "a") (global-name-prefix "b"))`,
		`(`, `)`, `"`, `#"`, `(a "\q")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		forms, err := parseSBPL(src)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, fm := range forms {
			b.WriteString(fm.sbpl() + "\n")
		}
		again, err := parseSBPL(b.String())
		if err != nil {
			t.Fatalf("printed forms do not read back: %v\n%s", err, b.String())
		}
		if len(again) != len(forms) {
			t.Fatalf("%d forms read back as %d", len(forms), len(again))
		}
		for i := range forms {
			if forms[i].sbpl() != again[i].sbpl() {
				t.Fatalf("form %d: %s read back as %s", i, forms[i].sbpl(), again[i].sbpl())
			}
		}
		p, err := loadSBPL(src, nil)
		if err != nil {
			return
		}
		for _, a := range []access{file("file-read-data", "/a/b"), dir("file-write-create", "/w/.git"),
			{op: "network-outbound", remote: "tcp 127.0.0.1:80"}, {op: "mach-lookup", name: "a"}} {
			p.decide(a)
			p.decideFlat(a)
		}
	})
}
