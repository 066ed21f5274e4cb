//go:build linux

package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cordon.dev/cordon/integration/claudecode"
)

// undiciVersion is the undici release a user of a Node before 24 (Debian
// 12's is 18) installs to send fetch through the proxy variables with its
// EnvHttpProxyAgent: the latest 6 (the 7s want Node 20.18.1 or later).
const undiciVersion = "6.29.1"

var (
	undiciOnce sync.Once
	undiciDir  string
	undiciErr  error
)

// needUndici: the npm package undici, installed into the machine's cache
// once (one package of about 1.5 MB, no dependencies); undiciDir is its
// package directory.
func needUndici() need {
	return func() string {
		undiciOnce.Do(func() {
			var pkgJSON string
			pkgJSON, undiciErr = claudecode.NPMInstall(claudecode.CacheDir(), "undici", undiciVersion, filepath.Join("node_modules", "undici", "package.json"))
			undiciDir = filepath.Dir(pkgJSON)
		})
		if undiciErr != nil {
			return fmt.Sprintf("undici %s from npm (%v)", undiciVersion, undiciErr)
		}
		return ""
	}
}

// Masked credentials end to end (issue 25): real clients in the sandbox
// hold fakes of a token (an environment variable) and of two credential
// files, and use them against the HTTPS server of the test network, which
// has a CA of its own that cordon's proxy verifies. Judged by what the
// server received: the real value for the credential's host, the fake for
// any other; and by what the sandbox can read: never the real value.
func TestMaskedCredentials(t *testing.T) {
	// Not parallel: it holds the test network (see newNetFixture).
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"), needTool("git"), needTool("python3"), needTool("node"), needUndici())
	f := newNetFixture(t)
	roots := f.roots

	// the token, which the git server takes as its password
	real := "ghp_" + randomHex(18)
	must(t, os.WriteFile(filepath.Join(f.dir, "git-password"), []byte(real), 0o644))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		settings := filepath.Join(b.dir, "settings.json")
		must(t, os.WriteFile(settings, []byte(`{
  "sandbox": {
    "credentials": {
      "envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["allowed.cordon-test"]}],
      "files": [
        {"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+)"},
        {"path": "~/.aws/credentials", "mode": "mask", "extract": "aws_secret_access_key = (\\S+)", "injectHosts": ["allowed.cordon-test"]}
      ]
    }
  }
}`), 0o644))
		flags := append([]string{"--settings", settings}, netPolicy...)
		netrcReal := "secret-netrc-" + b.token
		awsReal := "secret-aws-" + b.token
		run := func(t *testing.T, script string) result {
			t.Helper()
			r := b.runSpec(runSpec{flags: flags, env: []string{"GH_TOKEN=" + real, "SSL_CERT_FILE=" + roots}, args: []string{"sh", "-c", script}})
			for _, secret := range []string{real, netrcReal, awsReal} {
				if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
					t.Errorf("the real value %q was printed\n%s", secret, r)
				}
			}
			return r
		}
		// seenOnce is the one request the server got with the token.
		seenOnce := func(t *testing.T, token string) netSeen {
			t.Helper()
			seen := f.seen(t, token)
			if len(seen) != 1 {
				t.Fatalf("the server got %d requests with %s, want 1: %+v", len(seen), token, seen)
			}
			return seen[0]
		}

		// node's https over a CONNECT tunnel of its own, and node's fetch
		// as a user of a Node before 24 sends it through a proxy, with
		// undici's EnvHttpProxyAgent as the global dispatcher: that Node's
		// own http and fetch read no proxy variable (NODE_USE_ENV_PROXY is
		// 24's and 22.21's)
		node := `const http = require("http"), https = require("https"), tls = require("tls");
const p = new URL(process.env.HTTPS_PROXY), host = process.argv[2];
http.request({host: p.hostname, port: p.port, method: "CONNECT", path: host + ":443"}).on("connect", (res, sock) => {
  if (res.statusCode !== 200) { console.error("CONNECT " + res.statusCode); process.exit(1); }
  https.get({host, path: process.argv[3], headers: {Authorization: "Bearer " + process.env.GH_TOKEN},
    createConnection: () => tls.connect({socket: sock, servername: host})}, r => {
    let b = ""; r.on("data", d => b += d); r.on("end", () => console.log("node " + r.statusCode));
  }).on("error", e => { console.error(e.message); process.exit(1); });
}).end();`
		fetch := `const { setGlobalDispatcher, EnvHttpProxyAgent } = require("undici");
setGlobalDispatcher(new EnvHttpProxyAgent());
fetch("https://" + process.argv[2] + process.argv[3], {headers: {Authorization: "Bearer " + process.env.GH_TOKEN}})
  .then(async r => { await r.text(); console.log("fetch " + r.status); })
  .catch(e => { console.error(e.message, e.cause ? e.cause.message : ""); process.exit(1); });`
		t.Run("curl, node and fetch: the real value for its host, the fake elsewhere", func(t *testing.T) {
			tok := "t" + randomHex(6)
			must(t, os.WriteFile(filepath.Join(b.ws, "get.js"), []byte(node), 0o644))
			must(t, os.WriteFile(filepath.Join(b.ws, "fetch.js"), []byte(fetch), 0o644))
			// the project's node_modules/undici, as npm install undici
			// makes it: here a link to the one installed in the cache
			must(t, os.MkdirAll(filepath.Join(b.ws, "node_modules"), 0o755))
			must(t, os.Symlink(undiciDir, filepath.Join(b.ws, "node_modules", "undici")))
			b.chown()
			r := run(t, fmt.Sprintf(`echo "fake=$GH_TOKEN"
curl -sS --max-time 20 -H "Authorization: Bearer $GH_TOKEN" https://allowed.cordon-test/%[1]s-own &&
curl -sS --max-time 20 -H "Authorization: Bearer $GH_TOKEN" https://sub.wild.cordon-test/%[1]s-other &&
node get.js allowed.cordon-test /%[1]s-nodeown && node get.js sub.wild.cordon-test /%[1]s-nodeother &&
node fetch.js allowed.cordon-test /%[1]s-fetchown && node fetch.js sub.wild.cordon-test /%[1]s-fetchother`, tok))
			if r.code != 0 || strings.Count(r.stdout, "node 200") != 2 || strings.Count(r.stdout, "fetch 200") != 2 {
				t.Fatalf("%s", r)
			}
			fake := strings.TrimPrefix(strings.Split(r.stdout, "\n")[0], "fake=")
			if !strings.HasPrefix(fake, "ghp_") || len(fake) != len(real) || fake == real {
				t.Errorf("the command's GH_TOKEN is %q, want a fake of the real one's form", fake)
			}
			for suffix, want := range map[string]string{"-own": real, "-other": fake, "-nodeown": real, "-nodeother": fake, "-fetchown": real, "-fetchother": fake} {
				if got := seenOnce(t, tok+suffix).Auth; got != "Bearer "+want {
					t.Errorf("%s%s: the server got %q, want %q", tok, suffix, got, "Bearer "+want)
				}
			}
		})
		// A served run masks as a cold one does: its sandbox is made for
		// it, with its fakes bound and its proxy holding its secrets.
		t.Run("cordon serve masks as a cold run", func(t *testing.T) {
			sb := newServeBox(t, c)
			sb.daemonEnv = []string{"SSL_CERT_FILE=" + roots} // the daemon verifies the servers
			sb.serve()
			tok := "t" + randomHex(6)
			r := sb.run(runSpec{flags: flags, env: []string{"GH_TOKEN=" + real}, args: []string{"sh", "-c", whoRuns + `
echo "fake=$GH_TOKEN"; cat ~/.netrc
curl -sS --max-time 20 -H "Authorization: Bearer $GH_TOKEN" https://allowed.cordon-test/` + tok + `-served`}})
			if r.code != 0 || !strings.HasPrefix(r.stdout, "warm\n") {
				t.Fatalf("not a served run, or it failed\n%s", r)
			}
			if strings.Contains(r.stdout, real) || strings.Contains(r.stdout, "secret-netrc-"+sb.token) || !strings.Contains(r.stdout, "machine example.com login me password ") {
				t.Errorf("the served run read a real value, or not the fake file\n%s", r)
			}
			if got := seenOnce(t, tok+"-served").Auth; got != "Bearer "+real {
				t.Errorf("the server got %q, want the real value", got)
			}
			if left, _ := filepath.Glob(filepath.Join(sb.root, "files-*")); len(left) > 0 {
				t.Errorf("the served run's fakes are left: %q", left)
			}
		})
		// The fakes of a cordon killed with its run are removed by the
		// next GC.
		t.Run("a killed cordon's fakes go with cordon gc", func(t *testing.T) {
			gb := newBox(t, c)
			root, stateEnv := privateState(t, gb)
			rr := gb.start(runSpec{flags: flags, env: []string{"GH_TOKEN=" + real, stateEnv}, args: []string{"sh", "-c", "echo ready; sleep 60"}})
			rr.waitStdout("ready\n")
			files, _ := filepath.Glob(filepath.Join(root, "files-*"))
			if len(files) != 1 {
				t.Fatalf("the run's fakes: %q, want one directory", files)
			}
			_ = rr.cmd.Process.Kill()
			rr.wait()
			if _, err := os.Stat(files[0]); err != nil {
				t.Fatalf("the killed run's fakes went without GC (%v): the test shows nothing", err)
			}
			if g := gb.cordon(runSpec{env: []string{stateEnv}}, "gc"); g.code != 0 {
				t.Fatalf("cordon gc: %s", g)
			}
			if _, err := os.Stat(files[0]); err == nil {
				t.Errorf("cordon gc left %s", files[0])
			}
		})
		t.Run("git over HTTPS with the token", func(t *testing.T) {
			tok := "t" + randomHex(6)
			r := run(t, fmt.Sprintf(`git clone -q "https://x-access-token:$GH_TOKEN@allowed.cordon-test/auth-git/%s/repo.git" clone && cat clone/README`, tok))
			if r.code != 0 || !strings.Contains(r.stdout, "served by the test network") {
				t.Fatalf("%s", r)
			}
			for _, s := range f.seen(t, tok) {
				if s.Auth != "" && s.Auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+real)) {
					t.Errorf("git sent %q", s.Auth)
				}
			}
		})
		t.Run("python urllib, a masked file's secret in the body", func(t *testing.T) {
			tok := "t" + randomHex(6)
			r := run(t, fmt.Sprintf(`python3 -c '
import os, re, urllib.request
pw = re.search(r"aws_secret_access_key = (\S+)", open(os.path.expanduser("~/.aws/credentials")).read()).group(1)
req = urllib.request.Request("https://allowed.cordon-test/%s-py", data=("secret=" + pw).encode(), headers={"Authorization": "token " + os.environ["GH_TOKEN"]})
print(urllib.request.urlopen(req, timeout=20).read().decode())'`, tok))
			if r.code != 0 {
				t.Fatalf("%s", r)
			}
			s := seenOnce(t, tok+"-py")
			if s.Auth != "token "+real || s.Body != "secret="+awsReal {
				t.Errorf("the server got %q and %q, want the real values", s.Auth, s.Body)
			}
		})
		t.Run("plain HTTP: the fake, unless allowPlaintextInject", func(t *testing.T) {
			plainSettings := filepath.Join(b.dir, "plaintext.json")
			must(t, os.WriteFile(plainSettings, []byte(`{"sandbox": {"credentials": {"allowPlaintextInject": true}}}`), 0o644))
			for _, tc := range []struct {
				name  string
				flags []string
				want  func(fake string) string
			}{
				{"without", nil, func(fake string) string { return fake }},
				{"with", []string{"--settings", plainSettings}, func(string) string { return real }},
			} {
				tok := "t" + randomHex(6)
				r := b.runSpec(runSpec{flags: append(append([]string{}, flags...), tc.flags...), env: []string{"GH_TOKEN=" + real},
					args: []string{"sh", "-c", `echo "$GH_TOKEN"; curl -sS --max-time 20 -H "Authorization: Bearer $GH_TOKEN" http://allowed.cordon-test/` + tok + `-plain`}})
				if r.code != 0 {
					t.Fatalf("%s: %s", tc.name, r)
				}
				fake := strings.Split(r.stdout, "\n")[0]
				if got := seenOnce(t, tok+"-plain").Auth; got != "Bearer "+tc.want(fake) {
					t.Errorf("%s allowPlaintextInject: allowed.cordon-test got %q over plain HTTP, want %q", tc.name, got, "Bearer "+tc.want(fake))
				}
			}
		})
		t.Run("records: where each went, never a value", func(t *testing.T) {
			// a box of its own: its store holds this run's records alone
			rb := newBox(t, c)
			r := rb.runSpec(runSpec{flags: flags, env: []string{"GH_TOKEN=" + real, "SSL_CERT_FILE=" + roots}, args: []string{"sh", "-c", `echo "$GH_TOKEN"
for i in 1 2; do curl -sS --max-time 20 -o /dev/null -H "Authorization: Bearer $GH_TOKEN" https://allowed.cordon-test/rec-own || exit 1; done
curl -sS --max-time 20 -o /dev/null -d "token=$GH_TOKEN" https://sub.wild.cordon-test/rec-other &&
curl -sS --max-time 20 -o /dev/null -H "X-Token: $GH_TOKEN" http://allowed.cordon-test/rec-plain`}})
			if r.code != 0 {
				t.Fatalf("%s", r)
			}
			fake := strings.Split(r.stdout, "\n")[0]
			var got []string
			for _, v := range rb.violations("--kind", "credential") {
				if v.Kind != "credential" || v.Run == "" || v.Time.IsZero() {
					t.Errorf("record %+v", v)
				}
				got = append(got, fmt.Sprintf("%s %s:%d substituted=%v count=%d", v.Credential, v.Host, v.Port, v.Substituted, v.Count))
			}
			want := []string{
				"env GH_TOKEN allowed.cordon-test:443 substituted=true count=2",
				"env GH_TOKEN sub.wild.cordon-test:443 substituted=false count=1",
				"env GH_TOKEN allowed.cordon-test:80 substituted=false count=1",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("cordon violations --kind credential:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !strings.Contains(r.stderr, "cordon: kept env GH_TOKEN from sub.wild.cordon-test:443 (not among its injectHosts") ||
				strings.Contains(r.stderr, "real value to") {
				t.Errorf("the note names the fakes kept from a host, never a substitution:\n%s", r.stderr)
			}
			if vs := rb.violations("--kind", "network"); len(vs) != 0 {
				t.Errorf("--kind network: %+v", vs)
			}
			// The records name the credential, never a value. (Other
			// records keep a refused process's command line as it was
			// written, a fake with it: a fake is worth nothing outside its
			// run.)
			store, _ := filepath.Glob(filepath.Join(rb.dir, "state", "cordon", "violations.jsonl*"))
			if len(store) == 0 {
				t.Fatal("no record store")
			}
			for _, f := range store {
				b, err := os.ReadFile(f)
				must(t, err)
				if strings.Contains(string(b), real) {
					t.Errorf("%s holds the real value:\n%s", f, b)
				}
				for _, l := range strings.Split(string(b), "\n") {
					if strings.Contains(l, `"kind":"credential"`) && strings.Contains(l, fake) {
						t.Errorf("%s: a record holds the fake:\n%s", f, l)
					}
				}
			}
		})
		// sandbox-runtime's tlsTerminate, without a masked credential: a
		// CA of the user's ends the TLS of every allowed host but the
		// excluded ones, and the sandbox trusts the extra roots too;
		// under refuseOpaqueTunnels HTTPS still works.
		t.Run("tlsTerminate with the user's CA", func(t *testing.T) {
			tb := newBox(t, c)
			caCert, caKey := writeUserCA(t, tb.dir, "cordon-it user CA")
			extra, _ := writeUserCA(t, tb.dir, "cordon-it extra root")
			tt := filepath.Join(tb.dir, "tls.json")
			must(t, os.WriteFile(tt, []byte(fmt.Sprintf(`{"sandbox": {"network": {"refuseOpaqueTunnels": true, "tlsTerminate": {"caCertPath": %q, "caKeyPath": %q,
  "excludeDomains": ["sub.wild.cordon-test"], "extraCaCertPaths": [%q]}}}}`, caCert, caKey, extra)), 0o644))
			tb.chown()
			tok := "t" + randomHex(6)
			r := tb.runSpec(runSpec{flags: append([]string{"--settings", tt}, netPolicy...), env: []string{"SSL_CERT_FILE=" + roots},
				args: []string{"sh", "-c", `curl -sS -v --max-time 20 https://allowed.cordon-test/` + tok + ` 2>&1 | grep -i "issuer:"
curl -sS --max-time 20 https://sub.wild.cordon-test/` + tok + `-x; echo "excluded: $?"
grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE" >/dev/null && echo "bundle: $SSL_CERT_FILE"; python3 -c '
import ssl, sys
names = [c["subject"] for c in ssl.create_default_context(cafile=sys.argv[1]).get_ca_certs()]
print("extra root trusted:", any(("commonName", "cordon-it extra root") in n for n in map(lambda s: [x for r in s for x in r], names)))' "$SSL_CERT_FILE"`}})
			if !strings.Contains(r.stdout, "cordon-it user CA") {
				t.Errorf("allowed.cordon-test was not issued by the user's CA\n%s", r)
			}
			if !strings.Contains(r.stdout, "excluded: 56") || !strings.Contains(r.stderr, "sub.wild.cordon-test:443") {
				t.Errorf("the excluded host, opaque, was not refused under refuseOpaqueTunnels\n%s", r)
			}
			if !strings.Contains(r.stdout, "bundle: /.cordon/trust.pem") || !strings.Contains(r.stdout, "extra root trusted: True") {
				t.Errorf("the trust bundle lacks the extra root\n%s", r)
			}
			if s := seenOnce(t, tok); s.Via != "https" || s.SNI != "allowed.cordon-test" {
				t.Errorf("the server got %+v", s)
			}
		})
		t.Run("never readable inside", func(t *testing.T) {
			// The environment, the masked files (a fake bound over each,
			// the rest of the file kept), /proc, and a core dump of a
			// process that read them all.
			r := run(t, `cat ~/.netrc ~/.aws/credentials; env; cat /proc/1/environ /proc/self/environ | tr '\0' '\n'
python3 -c '
import os, resource
resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
held = [open(os.path.expanduser(p)).read() for p in ("~/.netrc", "~/.aws/credentials")] + [os.environ["GH_TOKEN"]]
os.chdir(os.environ["PWD"])
os.abort()' 2>/dev/null
for c in core*; do test -f "$c" && echo "core: $c" && grep -a -c -e "`+netrcReal+`" -e "`+awsReal+`" -e "`+real+`" "$c"; done; true`)
			if !strings.Contains(r.stdout, "machine example.com login me password ") || !strings.Contains(r.stdout, "[default]\naws_secret_access_key = ") {
				t.Errorf("the masked files lost their form\n%s", r)
			}
			if !strings.Contains(r.stdout, "SSL_CERT_FILE=/.cordon/trust.pem") {
				t.Errorf("the trust bundle is not named\n%s", r)
			}
			if pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.HasPrefix(string(pattern), "core") && !strings.Contains(r.stdout, "core: ") {
				t.Errorf("no core dump was written (core_pattern %q)\n%s", pattern, r)
			}
			if strings.Contains(r.stdout, "core: ") && !strings.Contains(r.stdout, "\n0\n") {
				t.Errorf("a core dump holds a real value\n%s", r)
			}
		})
	})
}

// writeUserCA writes a CA of a user's, its certificate and its key, into
// dir, readable by everyone (the test's callers).
func writeUserCA(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	must(t, err)
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	must(t, err)
	base := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
	must(t, os.WriteFile(base+".pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	must(t, os.WriteFile(base+".key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o644))
	return base + ".pem", base + ".key"
}
