//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The network proxy end to end (issue 5): real clients inside the sandbox
// (curl over HTTP, CONNECT and SOCKS5, python's urllib, git, ssh) against
// servers the host reaches only through a veth pair into a network
// namespace of the test's own, at addresses that are neither loopback nor
// the host's. The test names resolve through /etc/hosts entries the test
// adds for its duration (the proxy resolves with Go's resolver). Every
// case is judged by what the servers recorded, not only by what the client
// printed.

// netWant is a request a server must have received.
type netWant struct {
	via  string // "http" or "https"
	host string // the Host header (and for https the TLS server name)
}

// netCase is one client run in the sandbox and what must come of it.
type netCase struct {
	name  string
	needs []string // tools inside
	flags []string // of cordon run; nil: netPolicy
	// script is run by sh inside, with {T} (the case's token, which every
	// request carries), {CA}, {DIR}, {HELPER}, {REBIND} and {OWN} (the
	// ports of the host's traps) replaced.
	script string
	code   int      // the command's exit status
	stdout []string // substrings
	stderr []string // substrings of cordon's and the command's stderr
	// seen is what the servers must have received with the token; when
	// empty, nothing with the token may have reached anything.
	seen []netWant
	// unseen are tokens ({T}-...) nothing may have received, when seen
	// is not empty.
	unseen []string
	// blocked are the "host:port" cordon must say it blocked; when empty,
	// it may say it blocked nothing.
	blocked []string
	// from is the address the servers must see every request come from
	// ("": cordon's proxy on the host, netHostAddr).
	from string
}

// netCurl is the client line of most cases.
const netCurl = "curl -sS --max-time 20 "

func netCases() []netCase {
	const refusedBody = "cordon: the sandbox's network policy refused "
	return []netCase{
		// The three ways in, from the environment variables and flags.
		{name: "curl http via http_proxy", script: netCurl + "-D - http://allowed.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 200 OK", "cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "curl https via CONNECT", script: netCurl + "--cacert {CA} https://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"https", "allowed.cordon-test"}}},
		{name: "curl socks5-hostname", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "curl https via SOCKS_PROXY", script: netCurl + `-x "$SOCKS_PROXY" --cacert {CA} https://allowed.cordon-test/{T}`,
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"https", "allowed.cordon-test"}}},
		{name: "SOCKS5 on the HTTP port", script: netCurl + "--socks5-hostname 127.0.0.1:3128 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "HTTP on the SOCKS port", script: netCurl + "-x http://127.0.0.1:1080 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},

		// The matching rules.
		{name: "wildcard subdomain", script: netCurl + "--cacert {CA} https://sub.wild.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host sub.wild.cordon-test"},
			seen:   []netWant{{"https", "sub.wild.cordon-test"}}},
		{name: "wildcard deeper subdomain", script: netCurl + "http://deep.sub.wild.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host deep.sub.wild.cordon-test"},
			seen:   []netWant{{"http", "deep.sub.wild.cordon-test"}}},
		{name: "names are case-insensitive", script: netCurl + "http://ALLOWED.Cordon-Test./{T}",
			stdout: []string{"cordon-it-server: GET /{T}"},
			// the proxy forwards the canonical name
			seen: []netWant{{"http", "allowed.cordon-test"}}},
		{name: "a port in the allow list", flags: []string{"--allow-domain", "allowed.cordon-test:443"}, script: `
` + netCurl + `--cacert {CA} https://allowed.cordon-test/{T}-443
` + netCurl + `-i http://allowed.cordon-test/{T}-80`,
			stdout:  []string{"cordon-it-server: GET /{T}-443 host allowed.cordon-test", "HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist"},
			seen:    []netWant{{"https", "allowed.cordon-test"}},
			unseen:  []string{"{T}-80"},
			blocked: []string{"allowed.cordon-test:80"}},
		// curl sends the three requests on one connection to the proxy.
		{name: "each request on a kept-alive connection is decided", script: netCurl + "-i -w 'connects=%{num_connects}\\n' http://allowed.cordon-test/{T}-1 http://unlisted.cordon-test/{T}-2 http://allowed.cordon-test/{T}-3",
			stdout: []string{"cordon-it-server: GET /{T}-1 host allowed.cordon-test\nconnects=1\n",
				"X-Proxy-Error: blocked-by-allowlist", "sandbox.network.allowedDomains.\nconnects=0\n",
				"cordon-it-server: GET /{T}-3 host allowed.cordon-test\n"},
			seen:    []netWant{{"http", "allowed.cordon-test"}},
			unseen:  []string{"{T}-2"},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "wildcard apex refused", script: netCurl + "-i http://wild.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist", refusedBody + "wild.cordon-test:80", "wild.cordon-test is not in the allowed domains", "--allow-domain wild.cordon-test"},
			blocked: []string{"wild.cordon-test:80"}},
		{name: "deny wins", script: netCurl + "-i http://denied.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-denylist", `The denied domains contain "denied.cordon-test", and the deny list wins`},
			blocked: []string{"denied.cordon-test:80"}},
		{name: "deny wins over a wildcard", script: netCurl + "--cacert {CA} https://deny.wild.cordon-test/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"deny.wild.cordon-test:443"}},
		{name: "unlisted refused", script: netCurl + "-i http://unlisted.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist",
				refusedBody + "unlisted.cordon-test:80 (blocked-by-allowlist).",
				"unlisted.cordon-test is not in the allowed domains.",
				`To allow it, run cordon with --allow-domain unlisted.cordon-test, or add "unlisted.cordon-test" to the settings key sandbox.network.allowedDomains.`},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "unlisted refused CONNECT", script: netCurl + "--cacert {CA} https://unlisted.cordon-test/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"unlisted.cordon-test:443"}},
		{name: "unlisted refused SOCKS5", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://unlisted.cordon-test/{T}",
			code: 97, blocked: []string{"unlisted.cordon-test:80"}},
		{name: "IP literal refused", script: netCurl + "-i http://" + netServerAddr + "/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist", "IP addresses are refused unless listed literally"},
			blocked: []string{netServerAddr + ":80"}},
		{name: "IP literal refused SOCKS5", script: netCurl + "--socks5 127.0.0.1:1080 http://" + netServerAddr + "/{T}",
			code: 97, blocked: []string{netServerAddr + ":80"}},
		{name: "IP literal listed", flags: append(slices.Clone(netPolicy), "--allow-domain", netServerAddr),
			script: netCurl + "http://" + netServerAddr + "/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host " + netServerAddr},
			seen:   []netWant{{"http", netServerAddr}}},
		{name: "name resolving to loopback refused", script: netCurl + "-i http://rebind.cordon-test:{REBIND}/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "rebind.cordon-test resolves to a loopback address"},
			blocked: []string{"rebind.cordon-test:{REBIND}"}},
		{name: "name resolving to loopback refused CONNECT", script: netCurl + "--cacert {CA} https://rebind.cordon-test:{REBIND}/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"rebind.cordon-test:{REBIND}"}},
		{name: "name resolving to the host refused", script: netCurl + "-i http://own.cordon-test:{OWN}/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "own.cordon-test resolves to one of this host's addresses"},
			blocked: []string{"own.cordon-test:{OWN}"}},
		{name: "metadata address refused", script: netCurl + "-i http://metadata.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "metadata.cordon-test resolves to a link-local address"},
			blocked: []string{"metadata.cordon-test:80"}},
		{name: "cloud metadata address refused SOCKS5", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://alibaba-metadata.cordon-test/{T}",
			code: 97, blocked: []string{"alibaba-metadata.cordon-test:80"}},
		// Resolved by the host's DNS: nothing under cordon-test exists.
		// The policy allows the name: cordon must not say it blocked it.
		{name: "allowed name that does not resolve", script: netCurl + "-i http://nx.wild.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 502", "X-Proxy-Error: resolve-failed", "cordon: cannot connect to nx.wild.cordon-test:80: the name does not resolve"}},
		// Nothing listens on port 82 of the test network.
		{name: "allowed destination that refuses the connection", script: netCurl + "-i http://allowed.cordon-test:82/{T}",
			stdout: []string{"HTTP/1.1 502", "X-Proxy-Error: upstream-error"}},
		{name: "cloud metadata address refused", script: netCurl + "-i http://alibaba-metadata.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "alibaba-metadata.cordon-test resolves to a cloud metadata address"},
			blocked: []string{"alibaba-metadata.cordon-test:80"}},

		// What does not go through the proxy does not go anywhere.
		{name: "noproxy direct connection", needs: []string{"bash"}, script: `
` + netCurl + `--noproxy '*' http://allowed.cordon-test/{T}-curl; echo "curl=$?"
` + netCurl + `--noproxy '*' http://` + netServerAddr + `/{T}-ip; echo "ip=$?"
bash -c 'echo {T}-tcp > /dev/tcp/` + netServerAddr + `/81'; echo "tcp=$?"`,
			stdout: []string{"curl=7", "ip=7", "tcp=1"},
			stderr: []string{"Failed to connect to allowed.cordon-test port 80", "/dev/tcp/" + netServerAddr + "/81: Network is unreachable"}},
		{name: "UDP and DNS", needs: []string{"bash", "getent"}, script: `
getent hosts allowed.cordon-test; echo "hosts=$?"
getent hosts {T}.cordon-test; echo "lookup=$?"
bash -c 'echo {T}-udp > /dev/udp/` + netServerAddr + `/53'; echo "udp53=$?"
bash -c 'echo {T}-udp > /dev/udp/` + netServerAddr + `/9999'; echo "udp9999=$?"
` + netServerEnv + `=dns {HELPER} ` + netServerAddr + `:53 {T}.allowed.cordon-test`,
			stdout: []string{netServerAddr + "      allowed.cordon-test\nhosts=0", "lookup=2", "udp53=1", "udp9999=1", "udp: ENETUNREACH\ntcp: ENETUNREACH"},
			stderr: []string{"/dev/udp/" + netServerAddr + "/53: Network is unreachable"}},

		// Other clients, from the environment variables alone.
		{name: "python urllib", needs: []string{"python3"}, script: `python3 - <<'EOF'
import ssl, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile="{CA}")
for url in ["http://allowed.cordon-test/{T}-http", "https://sub.wild.cordon-test/{T}-https", "http://unlisted.cordon-test/{T}-refused"]:
    try:
        print(urllib.request.urlopen(url, context=ctx, timeout=20).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.headers.get("X-Proxy-Error"))
EOF`,
			stdout: []string{
				"cordon-it-server: GET /{T}-http host allowed.cordon-test\n",
				"cordon-it-server: GET /{T}-https host sub.wild.cordon-test\n",
				"403 blocked-by-allowlist\n"},
			seen:    []netWant{{"http", "allowed.cordon-test"}, {"https", "sub.wild.cordon-test"}},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "git clone http", needs: []string{"git"},
			script: "git clone -q http://allowed.cordon-test/git/{T}/repo.git clone && cat clone/README",
			stdout: []string{"served by the test network"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "git clone https", needs: []string{"git"},
			script: "GIT_SSL_CAINFO={CA} git clone -q https://sub.wild.cordon-test/git/{T}/repo.git clone && cat clone/README",
			stdout: []string{"served by the test network"},
			seen:   []netWant{{"https", "sub.wild.cordon-test"}}},
		{name: "git clone refused", needs: []string{"git"},
			script: "git clone -q http://unlisted.cordon-test/git/{T}/repo.git clone",
			code:   128, stderr: []string{"The requested URL returned error: 403"},
			blocked: []string{"unlisted.cordon-test:80"}},
	}
}

// TestNetworkProxy: with allowed domains, real clients in the sandbox
// reach exactly the allowed destinations through cordon's proxy, from
// the environment variables cordon sets, and nothing else: not refused
// names, not the host, not a metadata address, not a direct connection,
// not UDP. Judged by what the servers received.
func TestNetworkProxy(t *testing.T) {
	// Not parallel: it holds the test network (see newNetFixture).
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"))
	start := time.Now()
	f := newNetFixture(t)
	t.Cleanup(func() { t.Logf("the network proxy tests took %v", time.Since(start).Round(time.Millisecond)) })
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netCases() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				requires(t, needTools(tc.needs...)...)
				f.runCase(t, newBox(t, c), tc)
			})
		}
		t.Run("ssh through the ProxyCommand", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("ssh"), needTool("sshd"), needTool("ssh-keygen"))
			f.testSSH(t, newBox(t, c))
		})
		t.Run("proxy environment and listeners", func(t *testing.T) {
			t.Parallel()
			f.testProxyInside(t, newBox(t, c))
		})
		t.Run("no allowed domain: no proxy, no network", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			f.testNoProxy(t, newBox(t, c))
		})
		t.Run("runs keep their own policies", func(t *testing.T) {
			t.Parallel()
			f.testTwoRuns(t, c)
		})
	})
}

// expand fills in a case's placeholders.
func (f *netFixture) expand(s, token string) string {
	return strings.NewReplacer(
		"{T}", token, "{CA}", f.ca, "{DIR}", f.dir, "{HELPER}", helperBin,
		"{REBIND}", strconv.Itoa(f.trapPort["rebind"]), "{OWN}", strconv.Itoa(f.trapPort["own"]),
	).Replace(s)
}

func (f *netFixture) runCase(t *testing.T, b *box, tc netCase) {
	token := "t" + randomHex(6)
	flags := tc.flags
	if flags == nil {
		flags = netPolicy
	}
	r := b.runSpec(runSpec{flags: flags, args: []string{"sh", "-c", f.expand(tc.script, token)}})
	f.judge(t, r, tc, token)
}

// judge checks what a case's run did against what it wants.
func (f *netFixture) judge(t *testing.T, r result, tc netCase, token string) {
	t.Helper()
	if r.code != tc.code {
		t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r)
	}
	for _, s := range tc.stdout {
		if s := f.expand(s, token); !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q\n%s", s, r)
		}
	}
	for _, s := range tc.stderr {
		if s := f.expand(s, token); !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q\n%s", s, r)
		}
	}
	f.checkBlocked(t, r, tc.blocked, token)
	f.checkSeenFrom(t, token, tc.seen, tc.from)
	for _, u := range tc.unseen {
		for _, s := range f.seen(t, f.expand(u, token)) {
			t.Errorf("the test network received %+v", s)
		}
	}
}

// checkBlocked: cordon's note on stderr names exactly the refused
// destinations.
func (f *netFixture) checkBlocked(t *testing.T, r result, blocked []string, token string) {
	t.Helper()
	const note = "cordon: blocked connection to "
	var want, got []string
	for _, b := range blocked {
		want = append(want, f.expand(b, token))
	}
	for _, l := range lines(r.stderr) {
		if rest, ok := strings.CutPrefix(l, note); ok {
			dest, _, _ := strings.Cut(rest, " ")
			got = append(got, dest)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("cordon's %q notes name %q, want %q\n%s", note, got, want, r)
	}
	// The note's advice must be one that would work: a destination
	// refused by the deny list, for where its name resolves or because it
	// does not resolve is refused whatever the allow list says (the
	// proxy's answer says what to do).
	for _, l := range lines(r.stderr) {
		rest, ok := strings.CutPrefix(l, note)
		if !ok {
			continue
		}
		dest, why, _ := strings.Cut(rest, " ")
		host := dest[:strings.LastIndexByte(dest, ':')]
		if (strings.HasPrefix(why, "(deniedDomains:") || strings.HasPrefix(why, "(resolves to") || strings.HasPrefix(why, "(allowedDomains:")) &&
			strings.Contains(why, "allow with --allow-domain "+host+" ") {
			t.Errorf("cordon's note advises --allow-domain %s, which cannot allow a destination refused for this reason: %q", host, l)
		}
	}
}

// checkSeen: the servers received exactly the wanted requests with the
// token, or nothing at all.
func (f *netFixture) checkSeen(t *testing.T, token string, want []netWant) {
	t.Helper()
	f.checkSeenFrom(t, token, want, "")
}

// checkSeenFrom is checkSeen with the requests coming from the address
// from ("": netHostAddr, cordon's proxy on the host).
func (f *netFixture) checkSeenFrom(t *testing.T, token string, want []netWant, from string) {
	t.Helper()
	if from == "" {
		from = netHostAddr
	}
	if len(want) == 0 {
		// Refusals are synchronous; this is for a packet or a connection
		// that would still be on its way.
		time.Sleep(100 * time.Millisecond)
	}
	seen := f.seen(t, token)
	if len(want) == 0 {
		for _, s := range seen {
			t.Errorf("the test network received %+v", s)
		}
		return
	}
	for _, w := range want {
		found := false
		for _, s := range seen {
			if s.Via == w.via && s.Host == w.host && (w.via != "https" || strings.EqualFold(s.SNI, strings.TrimSuffix(w.host, "."))) {
				found = true
			}
		}
		if !found {
			t.Errorf("the server did not receive a %s request for %s with %s; it received %+v", w.via, w.host, token, seen)
		}
	}
	for _, s := range seen {
		if (s.Via != "http" && s.Via != "https") || !strings.HasPrefix(s.Remote, from+":") {
			t.Errorf("unexpected arrival (the requests come from %s): %+v", from, s)
		}
	}
}

// testSSH: ssh with the ProxyCommand of GIT_SSH_COMMAND, and plain ssh
// with `cordon proxy-connect`, log in to the test network's ssh server; a
// refused name is explained on stderr.
func (f *netFixture) testSSH(t *testing.T, b *box) {
	if !f.sshd {
		t.Fatal("the test network has no ssh server (sshd or ssh-keygen missing when it was set up)")
	}
	token := "t" + randomHex(6)
	key := filepath.Join(b.ws, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", token, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	b.chown()
	pub, err := os.ReadFile(key + ".pub")
	must(t, err)
	f.keysMu.Lock()
	ak, err := os.OpenFile(filepath.Join(f.dir, "authorized_keys"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = ak.Write(pub)
		ak.Close()
	}
	f.keysMu.Unlock()
	must(t, err)

	const opts = "-i ./id_ed25519 -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
	script := f.expand(`
eval "set -- $GIT_SSH_COMMAND"
"$@" `+opts+` root@allowed.cordon-test 'echo {T}-git-ssh-command > {DIR}/ssh-seen/{T}-git-ssh-command; echo logged-in-1'; echo "git-ssh-command=$?"
ssh -o ProxyCommand='/.cordon/cordon proxy-connect %h %p' `+opts+` root@sub.wild.cordon-test 'echo {T}-proxy-connect > {DIR}/ssh-seen/{T}-proxy-connect; echo logged-in-2'; echo "proxy-connect=$?"
ssh -o ProxyCommand='/.cordon/cordon proxy-connect %h %p' `+opts+` root@unlisted.cordon-test 'echo {T}-refused > {DIR}/ssh-seen/{T}-refused'; echo "refused=$?"
`, token)
	r := b.runSpec(runSpec{flags: netPolicy, args: []string{"sh", "-c", script}})
	for _, want := range []string{"logged-in-1\ngit-ssh-command=0", "logged-in-2\nproxy-connect=0", "refused=255"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r)
		}
	}
	if want := "--allow-domain unlisted.cordon-test"; !strings.Contains(r.stderr, want) {
		t.Errorf("the refusal does not say %q on ssh's stderr\n%s", want, r)
	}
	for name, want := range map[string]bool{"git-ssh-command": true, "proxy-connect": true, "refused": false} {
		got := readFile(filepath.Join(f.dir, "ssh-seen", token+"-"+name))
		if want && got != token+"-"+name+"\n" {
			t.Errorf("the ssh server did not run the command of %s: %s\nsshd: %s", name, got, f.sshdLog.String())
		}
		if !want && exists(filepath.Join(f.dir, "ssh-seen", token+"-"+name)) {
			t.Errorf("the ssh server ran the command of %s", name)
		}
	}
	f.checkBlocked(t, r, []string{"unlisted.cordon-test:22"}, token)
}

// netListeners is an awk program printing the listening TCP sockets of
// the sandbox's network namespace.
const netListeners = `awk 'FNR > 1 && $4 == "0A" { print "listen " $2 }' /proc/net/tcp /proc/net/tcp6 | sort`

// testProxyInside: with allowed domains the command gets the proxy's
// variables and two listening sockets on 127.0.0.1, and nothing else
// listens.
func (f *netFixture) testProxyInside(t *testing.T, b *box) {
	r := b.runSpec(runSpec{flags: netPolicy, args: []string{"sh", "-c",
		`env | grep -E '^(HTTPS?_PROXY|https?_proxy|ALL_PROXY|all_proxy|SOCKS_PROXY|socks_proxy|NO_PROXY|no_proxy|GIT_SSH_COMMAND)=' | sort; ` + netListeners}})
	want := `ALL_PROXY=http://127.0.0.1:3128
GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='/.cordon/cordon proxy-connect --proxy 127.0.0.1:3128 %h %p'
HTTPS_PROXY=http://127.0.0.1:3128
HTTP_PROXY=http://127.0.0.1:3128
NO_PROXY=localhost,127.0.0.1,::1
SOCKS_PROXY=socks5h://127.0.0.1:1080
all_proxy=http://127.0.0.1:3128
http_proxy=http://127.0.0.1:3128
https_proxy=http://127.0.0.1:3128
no_proxy=localhost,127.0.0.1,::1
socks_proxy=socks5h://127.0.0.1:1080
listen 0100007F:0438
listen 0100007F:0C38
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("want exactly:\n%s\n%s", want, r)
	}
}

// testNoProxy: without allowed domains there is no proxy at all: no
// variables, nothing listening inside, and no way out.
func (f *netFixture) testNoProxy(t *testing.T, b *box) {
	token := "t" + randomHex(6)
	r := b.runSpec(runSpec{args: []string{"sh", "-c", f.expand(`
env | grep -i -E '_proxy=|^GIT_SSH_COMMAND=' ; echo "env=$?"
`+netListeners+`
`+netCurl+`http://allowed.cordon-test/{T}-direct; echo "direct=$?"
`+netCurl+`-x http://127.0.0.1:3128 http://allowed.cordon-test/{T}-proxy; echo "proxy=$?"
`+netCurl+`--socks5-hostname 127.0.0.1:1080 http://allowed.cordon-test/{T}-socks; echo "socks=$?"
bash -c 'echo {T}-udp > /dev/udp/`+netServerAddr+`/53'; echo "udp=$?"
`, token)}})
	if want := "env=1\ndirect=7\nproxy=7\nsocks=7\nudp=1\n"; r.code != 0 || r.stdout != want {
		t.Errorf("want exactly:\n%s\n%s", want, r)
	}
	for _, want := range []string{"Failed to connect to 127.0.0.1 port 3128", "Network is unreachable"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	f.checkBlocked(t, r, nil, token)
	f.checkSeen(t, token, nil)
	// The spec of such a run starts no proxy either.
	r = b.cordon(runSpec{}, "spec", "--", "true")
	if r.code != 0 || strings.Contains(r.stdout, "--proxy-fd") || strings.Contains(r.stdout, "dev.cordon.proxy") {
		t.Errorf("cordon spec without allowed domains mentions a proxy:\n%s", r)
	}
}

// testTwoRuns: two runs at once, each with its own allowed domain, on the
// same ports inside: each run's connections are decided by its own policy.
func (f *netFixture) testTwoRuns(t *testing.T, c *caller) {
	type run struct {
		allow, other string
		token        string
		r            *running
	}
	runs := []*run{
		{allow: "allowed.cordon-test", other: "sub.wild.cordon-test"},
		{allow: "sub.wild.cordon-test", other: "allowed.cordon-test"},
	}
	// Both wait for each other inside, so that they overlap: each marks
	// its own workspace and waits for the other's mark (visible read-only).
	boxes := []*box{newBox(t, c), newBox(t, c)}
	for i, x := range runs {
		x.token = "t" + randomHex(6)
		script := f.expand(fmt.Sprintf(`
touch ready
end=$(( $(date +%%s) + 15 ))
until [ -e %[1]s/ready ]; do [ $(date +%%s) -gt $end ] && exit 99; sleep 0.05; done
curl -s -o /dev/null -w 'allowed=%%{http_code}\n' http://%[2]s/{T}-allowed
curl -s -o /dev/null -w 'other=%%{http_code}\n' http://%[3]s/{T}-other
`, boxes[1-i].ws, x.allow, x.other), x.token)
		x.r = boxes[i].start(runSpec{flags: []string{"--allow-domain", x.allow}, args: []string{"sh", "-c", script}})
	}
	for _, x := range runs {
		r := x.r.wait()
		if want := "allowed=200\nother=403\n"; r.code != 0 || r.stdout != want {
			t.Errorf("run allowing %s: want %q\n%s", x.allow, want, r)
		}
		var got []string
		for _, s := range f.seen(t, x.token) {
			got = append(got, s.Host+s.Path)
		}
		if want := []string{x.allow + "/" + x.token + "-allowed"}; !slices.Equal(got, want) {
			t.Errorf("run allowing %s: the server received %q, want %q", x.allow, got, want)
		}
		if want := "cordon: blocked connection to " + x.other + ":80 ("; !strings.Contains(r.stderr, want) {
			t.Errorf("run allowing %s: stderr lacks %q\n%s", x.allow, want, r)
		}
	}
}
