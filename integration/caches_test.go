//go:build linux

package integration

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The package caches (package caches): an install inside the sandbox
// writes the caller's cache directory never, whatever it tries; the
// second install in the same workspace is served from cordon's copy.
// Real npm against the registry this machine's npm is configured with,
// real go against its GOPROXY, both through cordon's proxy; root and
// unprivileged; with the cache on the host already (seen through an
// overlay) and without (redirected).

// installTimeout bounds an install: the registries are on the network.
const installTimeout = 3 * time.Minute

// npmRegistry is the registry URL and host of this machine's npm.
func npmRegistry(t *testing.T) (reg, host string) {
	t.Helper()
	out, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		t.Fatalf("npm config get registry: %v", err)
	}
	reg = strings.TrimSpace(string(out))
	u, err := url.Parse(reg)
	if err != nil || u.Hostname() == "" {
		t.Fatalf("npm's registry %q is not a URL", reg)
	}
	return reg, u.Hostname()
}

// goProxy is the first proxy of this machine's GOPROXY and its host.
func goProxy(t *testing.T) (proxy, host string) {
	t.Helper()
	out, err := exec.Command(goBin(t), "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	proxy, _, _ = strings.Cut(strings.TrimSpace(string(out)), ",")
	proxy, _, _ = strings.Cut(proxy, "|")
	u, err := url.Parse(proxy)
	if err != nil || u.Hostname() == "" {
		t.Skipf("GOPROXY %q names no proxy to reach", proxy)
	}
	return proxy, u.Hostname()
}

func goBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		requires(t, func() string { return "go on PATH" })
	}
	return p
}

// hostRun runs a command on the host, unsandboxed, as the box's caller in
// the workspace with the box's environment.
func (b *box) hostRun(env []string, name string, args ...string) string {
	b.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = b.ws
	cmd.Env = b.env(env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("%s %s (unsandboxed): %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// snapshots are the snapshots of several directories (nil for one that
// does not exist).
func snapshots(t *testing.T, dirs ...string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, d := range dirs {
		if exists(d) {
			out[d] = snapshot(t, d)
		} else {
			out[d] = nil
		}
	}
	return out
}

func TestCachesNpm(t *testing.T) {
	requires(t, needHostRoot, needTool("npm"))
	reg, host := npmRegistry(t)
	for _, warm := range []bool{true, false} {
		name := "host cache absent"
		if warm {
			name = "host cache present"
		}
		t.Run(name, func(t *testing.T) {
			eachCaller(t, func(t *testing.T, c *caller) {
				b := newBox(t, c)
				env := []string{"npm_config_registry=" + reg, "npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false"}
				must(t, os.WriteFile(filepath.Join(b.ws, "package.json"), []byte(`{"name":"ws","version":"1.0.0"}`), 0o644))
				b.chown()
				cache := filepath.Join(b.home, ".npm")
				if warm {
					// The caller's own cache, filled by the host's npm.
					b.hostRun(env, "npm", "cache", "add", "is-number@7.0.0")
				}
				before := snapshots(t, cache)
				// Install, and try to plant a package in the cache the
				// host's npm trusts.
				r := b.runSpec(runSpec{timeout: installTimeout, flags: []string{"--allow-domain", host}, env: env, args: []string{"sh", "-c", `
					npm install is-odd@3.0.1 >/dev/null 2>&1 || { echo install failed; npm install is-odd@3.0.1; exit 1; }
					mkdir -p ~/.npm/_cacache/index-v5/00 && echo poison > ~/.npm/_cacache/index-v5/00/poison
					echo poison > ~/.npm/_cacache/content-v2/poison
					ls ~/.npm/_cacache | head -3 >/dev/null && echo planted`}})
				if r.code != 0 || !exists(filepath.Join(b.ws, "node_modules/is-odd/package.json")) {
					t.Fatalf("npm install in the sandbox:\n%s", r)
				}
				if !strings.Contains(r.stdout, "planted") {
					t.Errorf("the cache was not writable inside:\n%s", r)
				}
				if diff := cmp.Diff(before, snapshots(t, cache)); diff != "" {
					t.Errorf("the host's %s changed (-before +after):\n%s", cache, diff)
				}
				// The same install again, with no network: from
				// cordon's copy of the cache.
				must(t, os.RemoveAll(filepath.Join(b.ws, "node_modules")))
				must(t, os.Remove(filepath.Join(b.ws, "package-lock.json")))
				r = b.runSpec(runSpec{timeout: installTimeout, env: env, args: []string{"npm", "install", "--offline", "is-odd@3.0.1"}})
				if r.code != 0 || !exists(filepath.Join(b.ws, "node_modules/is-number/package.json")) {
					t.Fatalf("the second install, offline, was not served from the workspace's cache:\n%s", r)
				}
				if diff := cmp.Diff(before, snapshots(t, cache)); diff != "" {
					t.Errorf("the host's %s changed (-before +after):\n%s", cache, diff)
				}
			})
		})
	}
}

func TestCachesGo(t *testing.T) {
	requires(t, needHostRoot)
	gobin := goBin(t)
	proxy, host := goProxy(t)
	for _, warm := range []bool{true, false} {
		name := "host cache absent"
		if warm {
			name = "host cache present"
		}
		t.Run(name, func(t *testing.T) {
			eachCaller(t, func(t *testing.T, c *caller) {
				b := newBox(t, c)
				env := []string{"PATH=" + filepath.Dir(gobin) + ":" + sandboxPath, "GOTOOLCHAIN=local", "GOPROXY=" + proxy, "GOFLAGS=-buildvcs=false"}
				must(t, os.WriteFile(filepath.Join(b.ws, "go.mod"), []byte("module example.com/ws\n\ngo 1.21\n"), 0o644))
				must(t, os.WriteFile(filepath.Join(b.ws, "main.go"), []byte("package main\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc main() { println(cmp.Equal(1, 1)) }\n"), 0o644))
				b.chown()
				gopath, gocache := filepath.Join(b.home, "go"), filepath.Join(b.home, ".cache/go-build")
				if warm {
					// The caller's own caches, filled by the host's go.
					b.hostRun(env, gobin, "mod", "download", "github.com/google/go-cmp@v0.5.9")
					b.hostRun(env, "sh", "-c", "mkdir -p \"$(go env GOCACHE)\" && echo host > \"$(go env GOCACHE)/README\"")
				}
				before := snapshots(t, gopath, gocache)
				r := b.runSpec(runSpec{timeout: installTimeout, flags: []string{"--allow-domain", host}, env: env, args: []string{"sh", "-c", `
					go get github.com/google/go-cmp@v0.6.0 && go list -deps . >/dev/null && echo fetched || exit 1
					echo poison > "$(go env GOMODCACHE)/cache/download/poison"
					echo poison > "$(go env GOCACHE)/poison" && echo planted`}})
				if r.code != 0 || !strings.Contains(r.stdout, "fetched") {
					t.Fatalf("go get in the sandbox:\n%s", r)
				}
				if !strings.Contains(r.stdout, "planted") {
					t.Errorf("the caches were not writable inside:\n%s", r)
				}
				if diff := cmp.Diff(before, snapshots(t, gopath, gocache)); diff != "" {
					t.Errorf("the host's go caches changed (-before +after):\n%s", diff)
				}
				// Again, with no proxy at all: the module comes from
				// cordon's copy of the cache.
				r = b.runSpec(runSpec{timeout: installTimeout, env: append(env, "GOPROXY=off"), args: []string{"sh", "-c", "go mod download -json github.com/google/go-cmp@v0.6.0 && go list -deps . | grep -x github.com/google/go-cmp/cmp"}})
				if r.code != 0 || !strings.Contains(r.stdout, "github.com/google/go-cmp/cmp\n") {
					t.Fatalf("the second build, GOPROXY=off, was not served from the workspace's cache:\n%s", r)
				}
				if diff := cmp.Diff(before, snapshots(t, gopath, gocache)); diff != "" {
					t.Errorf("the host's go caches changed (-before +after):\n%s", diff)
				}
			})
		})
	}
}
