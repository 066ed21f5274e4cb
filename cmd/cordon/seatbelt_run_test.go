//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
)

// fakeMac is a macOS for seatbeltRun: its sandbox-exec is a function, its
// unified log a callback the function may report to.
type fakeMac struct {
	t       *testing.T
	profile string
	argv    []string
	opts    darwin.Options
	tag     string
	report  func(darwin.Violation)
	stopped time.Duration
	stops   int
	// run is what the command does; it returns its result.
	run      func(f *fakeMac) (darwin.Result, error)
	check    error
	monitorE error
	files    fstest.MapFS
}

func (f *fakeMac) system() seatbeltSystem {
	return seatbeltSystem{
		run: func(_ context.Context, profile string, argv []string, o darwin.Options) (darwin.Result, error) {
			f.profile, f.argv, f.opts = profile, argv, o
			return f.run(f)
		},
		check: func(context.Context, string) error { return f.check },
		startMonitor: func(_ context.Context, tag string, report func(darwin.Violation)) (func(time.Duration), error) {
			if f.monitorE != nil {
				return nil, f.monitorE
			}
			f.tag, f.report = tag, report
			return func(d time.Duration) { f.stopped = d; f.stops++ }, nil
		},
		openPTY: func() (*darwin.PTY, error) { return nil, errors.ErrUnsupported },
		stat: func(p string) (fs.FileInfo, error) {
			return fs.Stat(f.files, strings.TrimPrefix(p, "/"))
		},
		boot:    func() probe.Result { return probe.Result{} },
		usage:   func(*os.ProcessState, time.Duration) runtime.Usage { return runtime.Usage{} },
		tempDir: f.t.TempDir(),
	}
}

// deny reports a denial as the unified log would, through the parser.
func (f *fakeMac) deny(process string, pid int, op, target string) {
	line, err := json.Marshal(map[string]any{
		"processID":       0,
		"senderImagePath": "/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox",
		"eventMessage":    fmt.Sprintf("Sandbox: %s(%d) deny(1) %s %s\ncordon:%s", process, pid, op, target, f.tag),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	v, ok := darwin.ParseViolation(line)
	if !ok {
		f.t.Fatalf("does not parse: %s", line)
	}
	f.report(v)
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// seatbeltSetup returns a policy for a workspace, a request to run argv
// in it, a fake macOS whose /bin/sh exists, and the notes cordon writes.
func seatbeltSetup(t *testing.T, argv ...string) (*policy.Policy, seatbeltRequest, *fakeMac, *strings.Builder) {
	t.Helper()
	ws := t.TempDir()
	pol, err := policy.Default(ws, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pol.Limits = policy.Limits{}
	notes := &strings.Builder{}
	old := stderr
	stderr = notes
	t.Cleanup(func() { stderr = old })
	f := &fakeMac{t: t, files: fstest.MapFS{"bin/sh": {Mode: 0o755}}}
	req := seatbeltRequest{
		policy: pol, args: argv, cwd: ws, self: "/usr/local/bin/cordon",
		environ: []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=secret", "HOME=/Users/u"},
		store:   t.TempDir(),
	}
	return pol, req, f, notes
}

func TestSeatbeltRun(t *testing.T) {
	_, req, f, notes := seatbeltSetup(t, "sh", "-c", "echo x > /etc/hosts")
	f.run = func(f *fakeMac) (darwin.Result, error) {
		f.deny("sh", 42, "file-write-create", "/private/etc/hosts")
		f.deny("sh", 42, "file-write-create", "/private/etc/hosts") // a repeat
		f.deny("sh", 42, "mach-lookup", "com.apple.diagnosticd")    // noise
		f.deny("sh", 42, "mach-lookup", "com.apple.FontServer")
		return darwin.Result{Status: 1}, nil
	}
	status, err := seatbeltRun(context.Background(), f.system(), req)
	if err != nil || status != 1 {
		t.Fatalf("status %d, %v", status, err)
	}
	// What sandbox-exec got.
	if diff := cmp.Diff(req.args, f.argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if !strings.Contains(f.profile, `(deny default (with message "cordon:`+f.tag+`"))`) {
		t.Errorf("the profile is not tagged with the monitor's tag %q", f.tag)
	}
	if f.opts.Dir != req.cwd || envValue(f.opts.Env, "CORDON_SANDBOX") != "1" || envValue(f.opts.Env, "GITHUB_TOKEN") != "" {
		t.Errorf("options: dir %s, env %q", f.opts.Dir, f.opts.Env)
	}
	tmp := envValue(f.opts.Env, "TMPDIR")
	if !strings.Contains(tmp, "cordon-"+f.tag) || !strings.Contains(f.profile, tmp) {
		t.Errorf("TMPDIR %q is not the run's, in the profile", tmp)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the run's temporary directory is still there: %v", err)
	}
	if envValue(f.opts.Env, "HTTPS_PROXY") != "" || strings.Contains(f.profile, "localhost:") {
		t.Error("no domain allowed: no proxy")
	}
	// A failed command: the log is given time to catch up, once.
	if f.stops != 1 || f.stopped != logFlush(1) {
		t.Errorf("monitor stopped %d times, last with %s", f.stops, f.stopped)
	}
	// The note, and the store.
	wantNotes := "cordon: blocked write to /private/etc/hosts by sh (read-only outside the workspace; allow with --allow-write /private/etc)\n" +
		"cordon: blocked mach-lookup com.apple.FontServer by sh (a Mach service not on the sandbox's list; sandbox.network.allowMachLookup adds one)\n"
	if diff := cmp.Diff(wantNotes, notes.String()); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	vs, err := runtime.ReadViolations(req.store, runtime.Filter{Run: f.tag})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, v := range vs {
		kinds = append(kinds, v.Kind+" "+v.Target())
		if v.PID != 42 || v.Command != "sh" || v.Workspace != req.policy.Workspace {
			t.Errorf("record %+v", v)
		}
	}
	if diff := cmp.Diff([]string{"write /private/etc/hosts", "operation mach-lookup com.apple.FontServer"}, kinds); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestSeatbeltRunProxy(t *testing.T) {
	pol, req, f, notes := seatbeltSetup(t, "sh", "-c", "curl https://evil.example")
	pol.Network.AllowedDomains = []string{"allowed.example"}
	f.run = func(f *fakeMac) (darwin.Result, error) {
		// The command asks the proxy the environment names for a domain
		// the policy does not allow.
		proxy, err := url.Parse(envValue(f.opts.Env, "HTTPS_PROXY"))
		if err != nil {
			return darwin.Result{}, err
		}
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 10 * time.Second}
		if _, err := client.Get("https://evil.example/"); err == nil {
			f.t.Error("the proxy let a connection to evil.example through")
		}
		return darwin.Result{Status: 6}, nil
	}
	status, err := seatbeltRun(context.Background(), f.system(), req)
	if err != nil || status != 6 {
		t.Fatalf("status %d, %v", status, err)
	}
	proxy, _ := url.Parse(envValue(f.opts.Env, "HTTPS_PROXY"))
	socks, _ := url.Parse(envValue(f.opts.Env, "SOCKS_PROXY"))
	for _, u := range []*url.URL{proxy, socks} {
		if u.Hostname() != "127.0.0.1" || !strings.Contains(f.profile, `(remote ip "localhost:`+u.Port()+`")`) {
			t.Errorf("the profile does not open the proxy's port %s", u)
		}
	}
	if proxy.Port() == socks.Port() {
		t.Error("one port for both")
	}
	if !strings.Contains(notes.String(), "cordon: blocked connection to evil.example:443 (not in allowedDomains; allow with --allow-domain evil.example or sandbox.network.allowedDomains)\n") {
		t.Errorf("notes: %s", notes)
	}
}

func TestSeatbeltRunStatuses(t *testing.T) {
	t.Run("not found", func(t *testing.T) {
		_, req, f, notes := seatbeltSetup(t, "nope")
		f.run = func(*fakeMac) (darwin.Result, error) { t.Error("ran"); return darwin.Result{}, nil }
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err != nil || status != 127 || notes.String() != "cordon: nope: command not found\n" {
			t.Errorf("status %d, %v, notes %q", status, err, notes)
		}
	})
	t.Run("not executable", func(t *testing.T) {
		_, req, f, notes := seatbeltSetup(t, "/bin/data")
		f.files["bin/data"] = &fstest.MapFile{Mode: 0o644}
		f.run = func(*fakeMac) (darwin.Result, error) { t.Error("ran"); return darwin.Result{}, nil }
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err != nil || status != 126 || notes.String() != "cordon: /bin/data: permission denied\n" {
			t.Errorf("status %d, %v, notes %q", status, err, notes)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		pol, req, f, notes := seatbeltSetup(t, "sh")
		pol.Limits.Timeout = 90 * time.Second
		f.run = func(f *fakeMac) (darwin.Result, error) {
			if f.opts.Timeout != 90*time.Second {
				t.Errorf("timeout %s", f.opts.Timeout)
			}
			return darwin.Result{Status: darwin.ExitTimedOut, TimedOut: true}, nil
		}
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err != nil || status != 124 || notes.String() != "cordon: timed out after 1m30s: the command and everything it started were ended\n" {
			t.Errorf("status %d, %v, notes %q", status, err, notes)
		}
	})
	t.Run("profile refused", func(t *testing.T) {
		_, req, f, _ := seatbeltSetup(t, "sh")
		f.run = func(*fakeMac) (darwin.Result, error) { return darwin.Result{Status: darwin.ExitProfileRefused}, nil }
		f.check = errors.New("sandbox-exec refused the profile: exit status 65: unbound variable")
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err == nil || status != exitCordonFailed {
			t.Errorf("status %d, %v: want cordon's failure", status, err)
		}
	})
	t.Run("the command's own 65", func(t *testing.T) {
		_, req, f, _ := seatbeltSetup(t, "sh")
		f.run = func(*fakeMac) (darwin.Result, error) { return darwin.Result{Status: darwin.ExitProfileRefused}, nil }
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err != nil || status != 65 {
			t.Errorf("status %d, %v", status, err)
		}
	})
	t.Run("cordon fails to start it", func(t *testing.T) {
		_, req, f, _ := seatbeltSetup(t, "sh")
		f.run = func(*fakeMac) (darwin.Result, error) {
			return darwin.Result{Status: darwin.ExitCordonFailed}, errors.New("start /usr/bin/sandbox-exec: no such file")
		}
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err == nil || status != exitCordonFailed {
			t.Errorf("status %d, %v", status, err)
		}
	})
	t.Run("success waits little for the log", func(t *testing.T) {
		_, req, f, notes := seatbeltSetup(t, "sh")
		f.run = func(*fakeMac) (darwin.Result, error) { return darwin.Result{}, nil }
		status, err := seatbeltRun(context.Background(), f.system(), req)
		if err != nil || status != 0 || notes.Len() != 0 || f.stopped != logFlush(0) || f.stops != 1 {
			t.Errorf("status %d, %v, notes %q, stopped %s (%d)", status, err, notes, f.stopped, f.stops)
		}
	})
}

func TestSeatbeltRunLimits(t *testing.T) {
	pol, req, f, notes := seatbeltSetup(t, "sh")
	pol.Limits = policy.Limits{FileSize: 1 << 20, OpenFiles: 128, Pids: 10, OutputLimit: 4096}
	f.run = func(*fakeMac) (darwin.Result, error) { return darwin.Result{}, nil }
	if _, err := seatbeltRun(context.Background(), f.system(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]darwin.Rlimit{{Name: "fsize", Value: 1 << 20}, {Name: "nofile", Value: 128}}, f.opts.Rlimits); diff != "" {
		t.Errorf("rlimits (-want +got):\n%s", diff)
	}
	if f.opts.Self != req.self || f.opts.OutputLimit != 4096 {
		t.Errorf("options %+v", f.opts)
	}
	if notes.String() != "cordon: warning: pids 10: not enforced on macOS (said once per boot)\n" {
		t.Errorf("notes %q", notes)
	}
}

func TestSeatbeltRunWithoutMonitor(t *testing.T) {
	_, req, f, notes := seatbeltSetup(t, "sh")
	f.monitorE = errors.New("/usr/bin/log stream did not start filtering")
	f.run = func(*fakeMac) (darwin.Result, error) { return darwin.Result{Status: 2}, nil }
	status, err := seatbeltRun(context.Background(), f.system(), req)
	if err != nil || status != 2 {
		t.Fatalf("status %d, %v: a run without its monitor still runs", status, err)
	}
	if !strings.Contains(notes.String(), "cordon: warning: refusals are not recorded: /usr/bin/log stream did not start filtering") {
		t.Errorf("notes %q", notes)
	}
}

func TestSeatbeltRunIgnore(t *testing.T) {
	pol, req, f, notes := seatbeltSetup(t, "npm", "install")
	f.files["usr/bin/npm"] = &fstest.MapFile{Mode: 0o755}
	pol.Sandbox.IgnoreViolations = map[string][]string{"npm": {"/usr/lib/node_modules"}}
	f.run = func(f *fakeMac) (darwin.Result, error) {
		f.deny("node", 5, "file-write-create", "/usr/lib/node_modules/x")
		return darwin.Result{Status: 1}, nil
	}
	if _, err := seatbeltRun(context.Background(), f.system(), req); err != nil {
		t.Fatal(err)
	}
	if notes.Len() != 0 {
		t.Errorf("an ignored refusal was noted: %q", notes)
	}
	entries, _ := os.ReadDir(req.store)
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "violations.jsonl" }) {
		t.Error("an ignored refusal was stored")
	}
}

// The package caches on macOS: redirected through the tools' variables to
// the directories cordon keeps per workspace, which the profile lets the
// command write; the caller's own caches untouched; nothing with the
// caches off.
func TestSeatbeltRunCaches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
	}{
		{"on", true},
		{"off", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, req, f, _ := seatbeltSetup(t, "sh", "-c", "npm install")
			if !pol.Caches.Enabled {
				t.Fatal("the default policy has the caches off")
			}
			pol.Caches.Enabled = tc.enabled
			xdg := t.TempDir()
			req.environ = append(req.environ, "XDG_CACHE_HOME="+xdg, "npm_config_cache=/Users/u/.npm-own")
			f.run = func(f *fakeMac) (darwin.Result, error) { return darwin.Result{}, nil }
			if status, err := seatbeltRun(context.Background(), f.system(), req); err != nil || status != 0 {
				t.Fatalf("status %d, %v", status, err)
			}
			npm, gopath := envValue(f.opts.Env, "npm_config_cache"), envValue(f.opts.Env, "GOPATH")
			if !tc.enabled {
				if npm != "/Users/u/.npm-own" || gopath != "" || strings.Contains(f.profile, xdg) {
					t.Errorf("caches off: npm_config_cache=%q GOPATH=%q, profile mentions %s: %v", npm, gopath, xdg, strings.Contains(f.profile, xdg))
				}
				return
			}
			root := filepath.Join(xdg, "cordon", "caches")
			for name, dir := range map[string]string{"npm_config_cache": npm, "GOPATH": gopath} {
				if !strings.HasPrefix(dir, root+"/") || !strings.HasSuffix(dir, "/redirect/"+filepath.Base(dir)) {
					t.Errorf("%s=%q, want a redirect under %s", name, dir, root)
					continue
				}
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					t.Errorf("%s: %s was not made: %v", name, dir, err)
				}
				// (Seatbelt sees /tmp as /private/tmp.)
				if !strings.Contains(f.profile, `(subpath "`+dir+`")`) && !strings.Contains(f.profile, `(subpath "/private`+dir+`")`) {
					t.Errorf("%s: the profile does not open %s", name, dir)
				}
			}
			ws, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(npm)), "workspace"))
			if err != nil || strings.TrimSpace(string(ws)) != pol.Workspace {
				t.Errorf("the caches' workspace: %q, %v", ws, err)
			}
		})
	}
}
