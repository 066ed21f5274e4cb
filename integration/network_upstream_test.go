//go:build linux

package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
// (httpProxyPort) decides instead of cordon, as in sandbox-runtime.

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
	open, auth, external *syncBuffer
	externalPort         int
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
	u := &netUpstreams{}
	start := func(cmd *exec.Cmd) *syncBuffer {
		return f.startIn(t, cmd, "Starting main loop")
	}
	u.open = start(exec.Command("ip", "netns", "exec", f.ns, "tinyproxy", "-d", "-c", conf("open", netServerAddr, 8888, "")))
	user, pass, _ := strings.Cut(netUpstreamUser, ":")
	u.auth = start(exec.Command("ip", "netns", "exec", f.ns, "tinyproxy", "-d", "-c", conf("auth", netServerAddr, 8889, "BasicAuth "+user+" "+pass+"\n")))
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	u.externalPort = l.Addr().(*net.TCPAddr).Port
	l.Close()
	u.external = start(exec.Command("tinyproxy", "-d", "-c", conf("external", "127.0.0.1", u.externalPort, "")))
	return u
}

// netUpstreamCase is a netCase behind an upstream proxy: settings is the
// sandbox-runtime settings file's network block, and the upstream logs
// that must, or must not, show the case's token (which tinyproxy logs in
// a plain request's line; a tunnel's carries only the host: that a server
// saw it come from the servers' address says it went through the
// upstream).
type netUpstreamCase struct {
	netCase
	settings string   // JSON of the network block; {EXT} is the host proxy's port
	env      []string // cordon's own environment, beyond the box's
	logged   []string // "open", "auth", "external": have the token
	unlogged []string // must not have it
}

func netUpstreamCases() []netUpstreamCase {
	const curl = netCurl
	open := `"parentProxy": {"http": "` + netUpstreamOpen + `", "https": "` + netUpstreamOpen + `"}`
	allow := `"allowedDomains": ["upstream.cordon-test", "allowed.cordon-test"], "deniedDomains": ["denied.cordon-test"]`
	viaUp := []netWant{{"http", "upstream.cordon-test"}}
	return []netUpstreamCase{
		{netCase: netCase{name: "curl http through the upstream",
			script: curl + "-D - http://upstream.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 200 OK", "cordon-it-server: GET /{T} host upstream.cordon-test"},
			seen:   viaUp, from: netServerAddr},
			settings: allow + ", " + open, logged: []string{"open"}},
		{netCase: netCase{name: "curl https through the upstream with CONNECT",
			script: curl + "--cacert {CA} https://upstream.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host upstream.cordon-test"},
			seen:   []netWant{{"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow + ", " + open},
		{netCase: netCase{name: "curl socks5h through the upstream",
			script: curl + "--socks5-hostname 127.0.0.1:1080 http://upstream.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host upstream.cordon-test"},
			seen:   viaUp, from: netServerAddr},
			settings: allow + ", " + open},
		{netCase: netCase{name: "python urllib https through the upstream", needs: []string{"python3"},
			script: `python3 -c "import ssl, urllib.request; print(urllib.request.urlopen('https://upstream.cordon-test/{T}', context=ssl.create_default_context(cafile='{CA}')).read().decode())"`,
			stdout: []string{"cordon-it-server: GET /{T} host upstream.cordon-test"},
			seen:   []netWant{{"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow + ", " + open},
		// the host reaches allowed.cordon-test itself, and still does not
		{netCase: netCase{name: "a name the host could reach goes through the upstream too",
			script: curl + "http://allowed.cordon-test/{T} && " + curl + "--cacert {CA} https://allowed.cordon-test/{T}",
			seen:   []netWant{{"http", "allowed.cordon-test"}, {"https", "allowed.cordon-test"}}, from: netServerAddr},
			settings: allow + ", " + open, logged: []string{"open"}},
		{netCase: netCase{name: "refused names never reach the upstream",
			script: curl + "-i http://upstream-unlisted.cordon-test/{T}; " + curl + "-i http://denied.cordon-test/{T}; " +
				curl + "--cacert {CA} https://upstream-unlisted.cordon-test/{T}; " + curl + "--socks5-hostname 127.0.0.1:1080 http://upstream-unlisted.cordon-test/{T}",
			code:    97, // curl's SOCKS5 refusal, the last
			stdout:  []string{"X-Proxy-Error: blocked-by-allowlist", "X-Proxy-Error: blocked-by-denylist"},
			stderr:  []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"upstream-unlisted.cordon-test:80", "denied.cordon-test:80", "upstream-unlisted.cordon-test:443"}},
			settings: allow + ", " + open, unlogged: []string{"open"}},
		{netCase: netCase{name: "NO_PROXY goes directly",
			script: curl + "http://allowed.cordon-test/{T}",
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
			settings: allow + `, "parentProxy": {"http": "` + netUpstreamOpen + `", "noProxy": ".cordon-test"}`, unlogged: []string{"open"}},
		{netCase: netCase{name: "the upstream's credentials from its URL",
			script: curl + "http://upstream.cordon-test/{T} && " + curl + "--cacert {CA} https://upstream.cordon-test/{T}",
			seen:   []netWant{{"http", "upstream.cordon-test"}, {"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow + `, "parentProxy": {"http": "http://` + netUpstreamUser + "@" + strings.TrimPrefix(netUpstreamAuth, "http://") + `"}`, logged: []string{"auth"}},
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
		{netCase: netCase{name: "cordon's own HTTP_PROXY when the settings name none",
			script: curl + "http://upstream.cordon-test/{T} && " + curl + "--cacert {CA} https://upstream.cordon-test/{T}",
			seen:   []netWant{{"http", "upstream.cordon-test"}, {"https", "upstream.cordon-test"}}, from: netServerAddr},
			settings: allow, env: []string{"HTTP_PROXY=" + netUpstreamOpen}, logged: []string{"open"}},
		// sandbox-runtime's httpProxyPort: the user's proxy decides what
		// the HTTP port reaches; the SOCKS port stays cordon's
		{netCase: netCase{name: "httpProxyPort: a proxy of the user's decides",
			script:  curl + "http://unlisted.cordon-test/{T}; " + curl + "--socks5-hostname 127.0.0.1:1080 http://unlisted.cordon-test/{T}-socks",
			code:    97,
			stdout:  []string{"cordon-it-server: GET /{T} host unlisted.cordon-test"},
			seen:    []netWant{{"http", "unlisted.cordon-test"}},
			unseen:  []string{"{T}-socks"},
			blocked: []string{"unlisted.cordon-test:80"}},
			settings: allow + `, "httpProxyPort": {EXT}`, logged: []string{"external"}},
		{netCase: netCase{name: "deniedDomainReasons: the refusal and the record say why",
			script:  curl + "-i http://allowed.cordon-test:81/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-denylist", "port 81 is for the test's traps; use port 80"},
			blocked: []string{"allowed.cordon-test:81"}},
			settings: `"allowedDomains": ["allowed.cordon-test"], "deniedDomains": ["*:81"], "deniedDomainReasons": {"*:81": "port 81 is for the test's traps; use port 80"}`},
	}
}

// TestNetworkUpstream runs the cases behind the upstream proxies.
func TestNetworkUpstream(t *testing.T) {
	t.Parallel()
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"), needTool("tinyproxy"))
	f := newNetFixture(t)
	ups := f.startUpstreams(t)
	logs := map[string]*syncBuffer{"open": ups.open, "auth": ups.auth, "external": ups.external}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netUpstreamCases() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var needs []need
				for _, tool := range tc.needs {
					needs = append(needs, needTool(tool))
				}
				requires(t, needs...)
				b := newBox(t, c)
				settings := filepath.Join(b.dir, "srt-settings.json")
				block := strings.ReplaceAll(tc.settings, "{EXT}", strconv.Itoa(ups.externalPort))
				// deniedDomains is in most blocks; sandbox-runtime wants it
				if !strings.Contains(block, `"deniedDomains"`) {
					block += `, "deniedDomains": []`
				}
				must(t, os.WriteFile(settings, []byte(`{"network": {`+block+`}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644))
				b.chown()
				token := "t" + randomHex(6)
				r := b.runSpec(runSpec{flags: []string{"--settings", settings}, env: tc.env, args: []string{"sh", "-c", f.expand(tc.script, token)}})
				f.judge(t, r, tc.netCase, token)
				time.Sleep(100 * time.Millisecond) // tinyproxy's log line of the last request
				for _, name := range tc.logged {
					if !strings.Contains(logs[name].String(), token) {
						t.Errorf("the %s upstream proxy did not see %s", name, token)
					}
				}
				for _, name := range tc.unlogged {
					if strings.Contains(logs[name].String(), token) {
						t.Errorf("the %s upstream proxy saw %s", name, token)
					}
				}
				if strings.HasPrefix(tc.name, "deniedDomainReasons") {
					v, ok := findViolation(b.violations(), func(v violation) bool { return v.Kind == "network" && v.Port == 81 })
					if !ok || !strings.Contains(v.Reason, "port 81 is for the test's traps; use port 80") {
						t.Errorf("cordon violations: %+v, %v; want the reason", v, ok)
					}
				}
			})
		}
	})
}
