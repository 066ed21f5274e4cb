package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for cordon's proxy-connect, so
// that ssh runs the very ProxyCommand Env gives git.
func TestMain(m *testing.M) {
	if len(os.Args) == 6 && os.Args[1] == "proxy-connect" && os.Args[2] == "--proxy" {
		port, _ := strconv.Atoi(os.Args[5])
		c, err := DialConnect(context.Background(), os.Args[3], os.Args[4], port)
		if err == nil {
			err = Pipe(c, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "proxy-connect: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// toolEnv is the caller's environment without proxy settings, plus the
// proxy environment a sandboxed command gets.
func toolEnv(t *testing.T, r *rig, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(k), "_proxy") || k == "GIT_SSH_COMMAND" || strings.HasPrefix(k, "GIT_CONFIG") {
			continue
		}
		env = append(env, kv)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, Env(portOf(t, r.http), portOf(t, r.socks), exe)...)
	env = append(env, "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

func portOf(t *testing.T, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func runTool(t *testing.T, env []string, dir string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return res
}

// tlsFor is a certificate for names, signed by itself, and its PEM file.
func tlsFor(t *testing.T, names ...string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pemFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pemFile
}

// servers are an HTTP and an HTTPS server on 127.0.0.1 with h, the HTTPS
// one with a certificate for allowed.test; ca is that certificate's file.
func servers(t *testing.T, h http.Handler) (httpPort, httpsPort int, ca string) {
	t.Helper()
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	cert, ca := tlsFor(t, "allowed.test", "a.wild.test")
	secure := httptest.NewUnstartedServer(h)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	return portOf(t, plain.Listener.Addr().String()), portOf(t, secure.Listener.Addr().String()), ca
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello %s", r.URL.Path)
})

func TestCurl(t *testing.T) {
	curl := requireTool(t, "curl")
	r := newE2E(t)
	hp, sp, ca := servers(t, hello)
	env := toolEnv(t, r)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{name: "http via http_proxy", args: []string{fmt.Sprintf("http://allowed.test:%d/a", hp)}, stdout: "hello /a"},
		{name: "https via CONNECT", args: []string{"--cacert", ca, fmt.Sprintf("https://allowed.test:%d/b", sp)}, stdout: "hello /b"},
		{name: "https wildcard", args: []string{"--cacert", ca, fmt.Sprintf("https://a.wild.test:%d/c", sp)}, stdout: "hello /c"},
		{name: "socks5-hostname", args: []string{"--socks5-hostname", r.socks, fmt.Sprintf("http://allowed.test:%d/d", hp)}, stdout: "hello /d"},
		{name: "socks5h https", args: []string{"-x", "socks5h://" + r.socks, "--cacert", ca, fmt.Sprintf("https://allowed.test:%d/e", sp)}, stdout: "hello /e"},
		{name: "refused http", args: []string{"-i", fmt.Sprintf("http://unlisted.test:%d/", hp)},
			stdout: "X-Proxy-Error: blocked-by-allowlist"},
		{name: "refused http body", args: []string{fmt.Sprintf("http://denied.test:%d/", hp)},
			stdout: "deny list wins"},
		{name: "refused apex", args: []string{"-f", fmt.Sprintf("http://wild.test:%d/", hp)}, code: 22},
		{name: "refused CONNECT", args: []string{"--cacert", ca, fmt.Sprintf("https://unlisted.test:%d/", sp)},
			code: 56, stderr: "403"},
		{name: "refused rebinding", args: []string{"--cacert", ca, fmt.Sprintf("https://rebind.test:%d/", sp)},
			code: 56, stderr: "403"},
		{name: "refused IP literal", args: []string{"-i", fmt.Sprintf("http://127.0.0.3:%d/", hp)},
			stdout: "IP addresses are refused unless listed literally"},
		{name: "refused socks5-hostname", args: []string{"--socks5-hostname", r.socks, fmt.Sprintf("http://unlisted.test:%d/", hp)},
			code: 97},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, env, "", append([]string{curl, "-sS", "--max-time", "20"}, tc.args...)...)
			if res.code != tc.code || !strings.Contains(res.stdout, tc.stdout) || !strings.Contains(res.stderr, tc.stderr) {
				t.Errorf("curl %v:\n%s", tc.args, res)
			}
		})
	}
}

// gitServer serves the bare repository repo.git over smart HTTP with
// git http-backend (CGI), on HTTP and HTTPS.
func gitServer(t *testing.T) (httpPort, httpsPort int, ca string) {
	t.Helper()
	git := requireTool(t, "git")
	backend := strings.TrimSpace(runTool(t, nil, "", git, "--exec-path").stdout) + "/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		requireTool(t, "git-http-backend")
	}
	root, work := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	for _, argv := range [][]string{
		{git, "init", "-q", "-b", "main", work},
		{"sh", "-c", "echo 'through the proxy' > " + filepath.Join(work, "README")},
		{git, "-C", work, "add", "README"},
		{git, "-C", work, "commit", "-q", "-m", "first"},
		{git, "clone", "-q", "--bare", work, filepath.Join(root, "repo.git")},
	} {
		if res := runTool(t, env, "", argv...); res.code != 0 {
			t.Fatalf("%v:\n%s", argv, res)
		}
	}
	h := &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	return servers(t, h)
}

func TestGitClone(t *testing.T) {
	git := requireTool(t, "git")
	r := newE2E(t)
	hp, sp, ca := gitServer(t)
	for _, tc := range []struct {
		name, url string
		extra     []string
	}{
		{"http", fmt.Sprintf("http://allowed.test:%d/git/repo.git", hp), nil},
		{"https", fmt.Sprintf("https://allowed.test:%d/git/repo.git", sp), []string{"GIT_SSL_CAINFO=" + ca}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "clone")
			res := runTool(t, toolEnv(t, r, tc.extra...), "", git, "clone", "-q", tc.url, dest)
			if res.code != 0 {
				t.Fatalf("git clone %s:\n%s", tc.url, res)
			}
			if b, err := os.ReadFile(filepath.Join(dest, "README")); err != nil || string(b) != "through the proxy\n" {
				t.Errorf("clone has README %q, %v", b, err)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		url := fmt.Sprintf("http://unlisted.test:%d/git/repo.git", hp)
		res := runTool(t, toolEnv(t, r), "", git, "clone", "-q", url, filepath.Join(t.TempDir(), "clone"))
		if res.code == 0 || !strings.Contains(res.stderr, "403") {
			t.Errorf("git clone %s:\n%s", url, res)
		}
	})
}

func TestPythonURLLib(t *testing.T) {
	python := requireTool(t, "python3")
	r := newE2E(t)
	hp, sp, ca := servers(t, hello)
	const script = `
import ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile=sys.argv[2])
try:
    print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=20).read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("X-Proxy-Error"))
except urllib.error.URLError as e:
    print("URLError", e.reason)
`
	for _, tc := range []struct{ url, want string }{
		{fmt.Sprintf("http://allowed.test:%d/py", hp), "hello /py"},
		{fmt.Sprintf("https://allowed.test:%d/pys", sp), "hello /pys"},
		{fmt.Sprintf("http://unlisted.test:%d/", hp), "403 blocked-by-allowlist"},
		{fmt.Sprintf("http://denied.test:%d/", hp), "403 blocked-by-denylist"},
		{fmt.Sprintf("https://rebind.test:%d/", sp), "URLError Tunnel connection failed: 403 Forbidden"},
	} {
		res := runTool(t, toolEnv(t, r), "", python, "-c", script, tc.url, ca)
		if res.code != 0 || strings.TrimSpace(res.stdout) != tc.want {
			t.Errorf("urllib %s: want %q\n%s", tc.url, tc.want, res)
		}
	}
}

// TestSSHProxyCommand: git's ssh, with the GIT_SSH_COMMAND of Env, reaches
// an ssh server through the proxy's CONNECT (the server records the
// client's version line), and is refused for an unlisted host.
func TestSSHProxyCommand(t *testing.T) {
	git := requireTool(t, "git")
	requireTool(t, "ssh")
	r := newE2E(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	banners := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte("SSH-2.0-cordon_test\r\n"))
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				banners <- line
			}()
		}
	}()
	port := portOf(t, l.Addr().String())
	env := toolEnv(t, r)
	res := runTool(t, env, "", git, "ls-remote", fmt.Sprintf("ssh://git@allowed.test:%d/repo.git", port))
	select {
	case b := <-banners:
		if !strings.HasPrefix(b, "SSH-2.0-OpenSSH") {
			t.Errorf("the server got %q", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("ssh never reached the server:\n%s", res)
	}
	res = runTool(t, env, "", git, "ls-remote", fmt.Sprintf("ssh://git@unlisted.test:%d/repo.git", port))
	if res.code == 0 || !strings.Contains(res.stderr, "--allow-domain unlisted.test") {
		t.Errorf("ssh to an unlisted host:\n%s", res)
	}
}

// registry serves a package index for npm (a packument), pip (a simple
// index page) and go (a module proxy's version list).
var registry = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/demo-pkg":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"demo-pkg","dist-tags":{"latest":"1.2.3"},"versions":{"1.2.3":{"name":"demo-pkg","version":"1.2.3",`+
			`"dist":{"tarball":"http://allowed.test/demo-pkg-1.2.3.tgz","shasum":"0000000000000000000000000000000000000000"}}}}`)
	case "/simple/demo-pkg/":
		io.WriteString(w, `<!DOCTYPE html><html><body><a href="demo_pkg-1.2.3-py3-none-any.whl">demo_pkg-1.2.3-py3-none-any.whl</a></body></html>`)
	case "/example.test/m/@v/list":
		io.WriteString(w, "v1.0.0\nv1.2.3\n")
	case "/example.test/m/@v/v1.2.3.info":
		io.WriteString(w, `{"Version":"v1.2.3","Time":"2026-01-01T00:00:00Z"}`)
	case "/example.test/m/@v/v1.2.3.mod":
		io.WriteString(w, "module example.test/m\n")
	default:
		http.NotFound(w, r)
	}
})

// TestPackageManagers: npm, pip and go find a package index through the
// proxy from the environment variables alone.
func TestPackageManagers(t *testing.T) {
	r := newE2E(t)
	hp, _, _ := servers(t, registry)
	base := fmt.Sprintf("http://allowed.test:%d", hp)
	home := t.TempDir()
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		argv []string
		env  []string
		dir  string
		want string
	}{
		{"npm", []string{"npm", "view", "demo-pkg", "version", "--registry", base + "/", "--cache", filepath.Join(home, "npm")}, nil, "", "1.2.3"},
		{"pip3", []string{"pip3", "index", "versions", "demo-pkg", "--index-url", base + "/simple/", "--trusted-host", "allowed.test"},
			[]string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_CACHE_DIR=1"}, "", "demo-pkg (1.2.3)"},
		{"go", []string{"go", "list", "-m", "-versions", "example.test/m"},
			[]string{"GOPROXY=" + base, "GOFLAGS=-mod=mod", "GONOSUMDB=*", "GOSUMDB=off", "GOMODCACHE=" + filepath.Join(home, "mod"), "GOTOOLCHAIN=local",
				// its telemetry writes to the home after the test removed it
				"GOTELEMETRY=off"}, mod, "example.test/m v1.0.0 v1.2.3"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			tc.argv[0] = requireTool(t, tc.tool)
			res := runTool(t, toolEnv(t, r, tc.env...), tc.dir, tc.argv...)
			if res.code != 0 || !strings.Contains(res.stdout, tc.want) {
				t.Errorf("%v: want %q\n%s", tc.argv, tc.want, res)
			}
			if d := r.last(t); !d.Allowed || d.Host != "allowed.test" {
				t.Errorf("last decision %s", d)
			}
		})
	}
}
