//go:build linux

package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Behind an upstream (corporate) proxy (issue 23): real tinyproxy servers
// in the test network's namespace are the only way to the names of
// netUpstreamHosts, which the host cannot resolve; a request that reached
// a server through one comes from the servers' own address, one that came
// from cordon directly from netHostAddr. Real clients in the sandbox
// (curl over HTTP, CONNECT and SOCKS5, python's urllib) reach every
// allowed name through it and nothing else; refused names never reach
// it; credentials in its URL are sent; one that is down is said, and
// nothing goes directly instead. A proxy of the user's on the host
// (httpProxyPort) decides instead of cordon, as in sandbox-runtime. The
// reasons of deny entries and of an ask command reach the command and
// cordon violations. Each run checks several things: the cases share the
// servers and the proxies, and every case runs twice (root, cordon-test).

// The upstream proxies: in the servers' namespace an open one, one that
// wants credentials, and a port where none listens.
const (
	netUpstreamOpen = "http://" + netServerAddr + ":8888"
	netUpstreamAuth = "http://" + netServerAddr + ":8889"
	netUpstreamDown = "http://" + netServerAddr + ":8899"
	netUpstreamUser = "build:s3cret-pass"
)

// netUpstreams are the running upstream proxies and their logs (tinyproxy
// logs every request line).
type netUpstreams struct {
	logs         map[string]*syncBuffer // "open", "auth", "external"
	addrs        map[string]string      // where each listens
	externalPort int
}

// startUpstreams gives the servers' namespace its own hosts file, with
// the names only it resolves, and starts the tinyproxy servers there, and
// one on the host's loopback (a proxy of the user's).
func (f *netFixture) startUpstreams(t *testing.T) *netUpstreams {
	t.Helper()
	dir := filepath.Join("/etc/netns", f.ns)
	must(t, os.MkdirAll(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	hosts := "127.0.0.1 localhost\n::1 localhost\n"
	for _, h := range append(netHosts, netUpstreamHosts...) {
		hosts += h.addr + " " + h.name + "\n"
	}
	must(t, os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts), 0o644))
	conf := func(name, listen string, port int, extra string) string {
		path := filepath.Join(f.dir, name+".conf")
		must(t, os.WriteFile(path, []byte(fmt.Sprintf("Port %d\nListen %s\nTimeout 30\nMaxClients 100\nDisableViaHeader Yes\nLogLevel Info\n%s", port, listen, extra)), 0o644))
		return path
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	ext := l.Addr().(*net.TCPAddr).Port
	l.Close()
	user, pass, _ := strings.Cut(netUpstreamUser, ":")
	u := &netUpstreams{logs: map[string]*syncBuffer{}, addrs: map[string]string{}, externalPort: ext}
	for _, p := range []struct {
		name, listen string
		port         int
		extra        string
	}{
		{"open", netServerAddr, 8888, ""},
		{"auth", netServerAddr, 8889, "BasicAuth " + user + " " + pass + "\n"},
		{"external", "127.0.0.1", ext, ""},
	} {
		cmd := exec.Command("tinyproxy", "-d", "-c", conf(p.name, p.listen, p.port, p.extra))
		if p.listen == netServerAddr {
			cmd = exec.Command("ip", append([]string{"netns", "exec", f.ns}, cmd.Args...)...)
		}
		u.logs[p.name] = f.startIn(t, cmd, "Starting main loop")
		u.addrs[p.name] = net.JoinHostPort(p.listen, strconv.Itoa(p.port))
	}
	return u
}

// settled returns once the proxy's log holds every line of the requests
// it received so far: it asks the proxy for a marker of its own and
// waits for that request's line, which tinyproxy writes after theirs.
func (u *netUpstreams) settled(t *testing.T, name string) {
	t.Helper()
	marker := "marker-" + randomHex(6)
	c, err := net.DialTimeout("tcp", u.addrs[name], 5*time.Second)
	must(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://%s.cordon-test/ HTTP/1.0\r\n\r\n", marker)
	u.waitLogged(t, name, marker)
}

// waitLogged waits until the proxy's log has s.
func (u *netUpstreams) waitLogged(t *testing.T, name, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(u.logs[name].String(), s); {
		if time.Now().After(deadline) {
			t.Fatalf("the %s upstream proxy's log has no %q:\n%s", name, s, u.logs[name])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// netLogged is a token, with a case's placeholders, that a proxy's log
// has (or must not have).
type netLogged struct{ proxy, token string }

// netUpstreamCase is a netCase behind an upstream proxy: settings is the
// sandbox-runtime settings file's network block, and the upstream logs
// that must, or must not, show a token (which tinyproxy logs in a plain
// request's line; a tunnel's carries only the host: that a server saw it
// come from the servers' address says it went through the upstream).
type netUpstreamCase struct {
	netCase
	settings string   // JSON of the network block; {EXT} is the host proxy's port
	cordon   string   // JSON of a cordon settings file beside it; {DIR} is the box's
	env      []string // cordon's own environment, beyond the box's
	// direct are the requests with the token {D} that went directly from
	// cordon (from netHostAddr); seen's, with {T}, from from.
	direct   []netWant
	logged   []netLogged
	unlogged []netLogged
	// violations are reasons cordon violations must list
	violations []string
	// credentials is the settings' credentials block: GH_TOKEN, a real
	// token the case makes, is masked; auth is, by the suffix of {T} of
	// a request, whether the server must get its "real" value or the
	// "fake" (the script's first line is "fake=$GH_TOKEN")
	credentials string
	auth        map[string]string
}

func netUpstreamCases() []netUpstreamCase {
	const curl = netCurl
	allow := `"allowedDomains": ["upstream.cordon-test", "allowed.cordon-test"], "deniedDomains": ["denied.cordon-test"]`
	python := `python3 -c "import ssl, urllib.request; print(urllib.request.urlopen('https://upstream.cordon-test/{T}-p', context=ssl.create_default_context(cafile='{CA}')).read().decode())"`
	return []netUpstreamCase{
		// The names the host cannot resolve, and one it could reach
		// itself, all through the upstream; what is refused never reaches
		// it; deniedResolvedAddresses applies to what goes directly (the
		// NO_PROXY name), not to what the upstream resolves.
		{netCase: netCase{name: "every allowed name through the upstream, nothing else",
			needs: []string{"python3"},
			script: curl + "-D - http://upstream.cordon-test/{T}-h && " + curl + "--cacert {CA} https://upstream.cordon-test/{T}-s && " +
				curl + "--socks5-hostname 127.0.0.1:1080 http://upstream.cordon-test/{T}-5 && " + python + " && " +
				curl + "http://allowed.cordon-test/{T}-a && " + curl + "--cacert {CA} https://allowed.cordon-test/{T}-b && echo ALL-REACHED; " +
				curl + "-i http://upstream-unlisted.cordon-test/{T}-x; " + curl + "-i http://denied.cordon-test/{T}-x; " +
				curl + "-i http://sub.wild.cordon-test/{T}-x; " + curl + "--cacert {CA} https://upstream-unlisted.cordon-test/{T}-x; " +
				curl + "--socks5-hostname 127.0.0.1:1080 http://upstream-unlisted.cordon-test/{T}-x",
			code: 97, // curl's SOCKS5 refusal, the last
			stdout: []string{"HTTP/1.1 200 OK", "ALL-REACHED",
				"cordon-it-server: GET /{T}-h host upstream.cordon-test", "cordon-it-server: GET /{T}-s host upstream.cordon-test",
				"cordon-it-server: GET /{T}-5 host upstream.cordon-test", "cordon-it-server: GET /{T}-p host upstream.cordon-test",
				"X-Proxy-Error: blocked-by-allowlist", "X-Proxy-Error: blocked-by-denylist",
				"X-Proxy-Error: blocked-private-address", "deniedResolvedAddresses"},
			stderr: []string{"CONNECT tunnel failed, response 403"},
			seen: []netWant{{"http", "upstream.cordon-test"}, {"https", "upstream.cordon-test"}, {"https", "upstream.cordon-test"},
				{"http", "allowed.cordon-test"}, {"https", "allowed.cordon-test"}},
			unseen:  []string{"{T}-x"},
			blocked: []string{"upstream-unlisted.cordon-test:80", "denied.cordon-test:80", "sub.wild.cordon-test:80", "upstream-unlisted.cordon-test:443"},
			from:    netServerAddr},
			settings: `"allowedDomains": ["upstream.cordon-test", "allowed.cordon-test", "*.wild.cordon-test"], "deniedDomains": ["denied.cordon-test"], ` +
				`"deniedResolvedAddresses": ["10.231.0.0/24"], "parentProxy": {"http": "` + netUpstreamOpen + `", "https": "` + netUpstreamOpen + `", "noProxy": "sub.wild.cordon-test"}`,
			logged: []netLogged{{"open", "{T}-h"}, {"open", "{T}-a"}}, unlogged: []netLogged{{"open", "{T}-x"}}},
		// cordon's own environment when the settings name no upstream:
		// HTTP_PROXY for both, NO_PROXY goes directly
		{netCase: netCase{name: "cordon's own HTTP_PROXY and NO_PROXY",
			script: curl + "http://upstream.cordon-test/{T} && " + curl + "--cacert {CA} https://upstream.cordon-test/{T} && " + curl + "http://allowed.cordon-test/{D}",
			seen:   []netWant{{"http", "upstream.cordon-test"}, {"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow, env: []string{"HTTP_PROXY=" + netUpstreamOpen, "NO_PROXY=allowed.cordon-test"},
			direct: []netWant{{"http", "allowed.cordon-test"}},
			logged: []netLogged{{"open", "{T}"}}, unlogged: []netLogged{{"open", "{D}"}}},
		{netCase: netCase{name: "the upstream's credentials from its URL",
			script: curl + "http://upstream.cordon-test/{T} && " + curl + "--cacert {CA} https://upstream.cordon-test/{T}",
			seen:   []netWant{{"http", "upstream.cordon-test"}, {"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow + `, "parentProxy": {"http": "http://` + netUpstreamUser + "@" + strings.TrimPrefix(netUpstreamAuth, "http://") + `"}`,
			logged:   []netLogged{{"auth", "{T}"}}},
		{netCase: netCase{name: "without the credentials the upstream wants",
			script: curl + "-i http://upstream.cordon-test/{T}; " + curl + "--cacert {CA} https://upstream.cordon-test/{T}",
			code:   56,
			stdout: []string{"HTTP/1.1 407 "}, stderr: []string{"CONNECT tunnel failed, response 502"}},
			settings: allow + `, "parentProxy": {"http": "` + netUpstreamAuth + `"}`},
		{netCase: netCase{name: "an upstream that is down is said, and nothing goes directly",
			script: curl + "-i http://allowed.cordon-test/{T}; " + curl + "--cacert {CA} https://allowed.cordon-test/{T}; " + curl + "--socks5-hostname 127.0.0.1:1080 http://allowed.cordon-test/{T}",
			code:   97,
			stdout: []string{"HTTP/1.1 502 Bad Gateway", "X-Proxy-Error: upstream-proxy-error",
				"cordon proxy: allowed.cordon-test:80: the upstream proxy " + netUpstreamDown + " did not answer: connect: connection refused. cordon reaches the network through it, never directly"},
			stderr: []string{"CONNECT tunnel failed, response 502", "SOCKS5"}},
			settings: allow + `, "parentProxy": {"http": "` + netUpstreamDown + `"}`},
		// sandbox-runtime's httpProxyPort: the user's proxy decides what
		// the HTTP port reaches; the SOCKS port stays cordon's
		{netCase: netCase{name: "httpProxyPort: a proxy of the user's decides",
			script:  curl + "http://unlisted.cordon-test/{T}; " + curl + "--socks5-hostname 127.0.0.1:1080 http://unlisted.cordon-test/{T}-socks",
			code:    97,
			stdout:  []string{"cordon-it-server: GET /{T} host unlisted.cordon-test"},
			seen:    []netWant{{"http", "unlisted.cordon-test"}},
			unseen:  []string{"{T}-socks"},
			blocked: []string{"unlisted.cordon-test:80"}},
			settings: allow + `, "httpProxyPort": {EXT}`, logged: []netLogged{{"external", "{T}"}}},
		// The reasons of deny entries ("*:PORT", "host:PORT") and of an
		// ask command's refusal: in the answer, in the status phrase of a
		// refused CONNECT, in cordon violations.
		{netCase: netCase{name: "the reasons of a refusal",
			script: curl + "-i http://allowed.cordon-test:81/{T}; " + curl + "-v --cacert {CA} https://allowed.cordon-test/{T}; " +
				curl + "-i http://unlisted.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-denylist", "port 81 is for the test's traps; use port 80",
				"X-Proxy-Error: blocked-by-allowlist", "the ask command says no: use allowed.cordon-test"},
			stderr:  []string{"< HTTP/1.1 403 https to this host is refused; use http"},
			blocked: []string{"allowed.cordon-test:81", "allowed.cordon-test:443", "unlisted.cordon-test:80"}},
			settings: `"allowedDomains": ["allowed.cordon-test"], "deniedDomains": ["*:81", "Allowed.cordon-test:443"], ` +
				`"deniedDomainReasons": {"*:81": "port 81 is for the test's traps; use port 80", "allowed.cordon-test:443": "https to this host is refused; use http"}`,
			cordon:     `{"cordon": {"askCommand": "{DIR}/ask"}}`,
			violations: []string{"port 81 is for the test's traps; use port 80", "https to this host is refused; use http", "the ask command says no: use allowed.cordon-test"}},
		// A masked credential's host is reached through the upstream too:
		// the TLS cordon ends goes on over a CONNECT to it; the other
		// hosts' tunnels stay opaque, and plain HTTP keeps the fake.
		{netCase: netCase{name: "masked credentials through the upstream",
			script: `echo "fake=$GH_TOKEN"; ` + curl + `-H "Authorization: Bearer $GH_TOKEN" https://upstream.cordon-test/{T}-own && ` +
				curl + `-H "Authorization: Bearer $GH_TOKEN" https://allowed.cordon-test/{T}-other && ` +
				curl + `-H "Authorization: Bearer $GH_TOKEN" http://upstream.cordon-test/{T}-plain`,
			seen: []netWant{{"https", "upstream.cordon-test"}, {"https", "allowed.cordon-test"}, {"http", "upstream.cordon-test"}}, from: netServerAddr},
			settings:    allow + `, "parentProxy": {"http": "` + netUpstreamOpen + `"}`,
			credentials: `{"envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["upstream.cordon-test"]}]}`,
			auth:        map[string]string{"-own": "real", "-other": "fake", "-plain": "fake"},
			logged:      []netLogged{{"open", "{T}-plain"}}},
	}
}

// TestNetworkUpstream runs the cases behind the upstream proxies.
func TestNetworkUpstream(t *testing.T) {
	// Not parallel: it holds the test network (see newNetFixture).
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"), needTool("tinyproxy"))
	f := newNetFixture(t)
	ups := f.startUpstreams(t)
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netUpstreamCases() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				requires(t, needTools(tc.needs...)...)
				b := newBox(t, c)
				settings := filepath.Join(b.dir, "srt-settings.json")
				block := strings.ReplaceAll(tc.settings, "{EXT}", strconv.Itoa(ups.externalPort))
				// sandbox-runtime wants every key of its schema
				if !strings.Contains(block, `"deniedDomains"`) {
					block += `, "deniedDomains": []`
				}
				creds, env, real := "", tc.env, ""
				if tc.credentials != "" {
					real = "ghp_" + randomHex(18)
					creds = `, "credentials": ` + tc.credentials
					// cordon's proxy verifies the server it ends TLS for
					env = append(slices.Clone(env), "GH_TOKEN="+real, "SSL_CERT_FILE="+f.roots)
				}
				must(t, os.WriteFile(settings, []byte(`{"network": {`+block+`}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}`+creds+`}`), 0o644))
				flags := []string{"--settings", settings}
				if tc.cordon != "" {
					ask := filepath.Join(b.dir, "ask")
					must(t, os.WriteFile(ask, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"allow\": false, \"reason\": \"the ask command says no: use allowed.cordon-test\"}'\n"), 0o755))
					own := filepath.Join(b.dir, "cordon-settings.json")
					must(t, os.WriteFile(own, []byte(strings.ReplaceAll(tc.cordon, "{DIR}", b.dir)), 0o644))
					flags = append(flags, "--settings", own)
				}
				b.chown()
				token, direct := "t"+randomHex(6), "d"+randomHex(6)
				expand := func(s string) string { return strings.ReplaceAll(f.expand(s, token), "{D}", direct) }
				r := b.runSpec(runSpec{flags: flags, env: env, args: []string{"sh", "-c", expand(tc.script)}})
				f.judge(t, r, tc.netCase, token)
				if real != "" {
					fake, _ := strings.CutPrefix(strings.SplitN(r.stdout, "\n", 2)[0], "fake=")
					if fake == "" || fake == real || strings.Contains(r.stdout+r.stderr, real) {
						t.Errorf("the command's GH_TOKEN is %q: not a fake, or the real value was printed\n%s", fake, r)
					}
					for suffix, which := range tc.auth {
						want := map[string]string{"real": real, "fake": fake}[which]
						if seen := f.seen(t, token+suffix); len(seen) != 1 || seen[0].Auth != "Bearer "+want {
							t.Errorf("%s: the server got %+v, want one request with the %s value", suffix, seen, which)
						}
					}
				}
				if len(tc.direct) > 0 {
					f.checkSeenFrom(t, direct, tc.direct, netHostAddr)
				}
				for _, l := range tc.logged {
					ups.waitLogged(t, l.proxy, expand(l.token))
				}
				for _, l := range tc.unlogged {
					ups.settled(t, l.proxy)
					if s := expand(l.token); strings.Contains(ups.logs[l.proxy].String(), s) {
						t.Errorf("the %s upstream proxy saw %s", l.proxy, s)
					}
				}
				if len(tc.violations) > 0 {
					var reasons []string
					for _, v := range b.violations() {
						if v.Kind == "network" {
							reasons = append(reasons, v.Reason)
						}
					}
					for _, want := range tc.violations {
						if !strings.Contains(strings.Join(reasons, "\n"), want) {
							t.Errorf("cordon violations: %q; want one with %q", reasons, want)
						}
					}
				}
			})
		}
	})
}
