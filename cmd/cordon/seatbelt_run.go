//go:build unix

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"cordon.dev/cordon/caches"
	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

// seatbeltSystem is what a macOS run takes from the system: the darwin
// package's sandbox-exec and unified log on macOS (run_darwin.go), and
// stand-ins in the tests, which run on every Unix.
type seatbeltSystem struct {
	run          func(ctx context.Context, profile string, argv []string, o darwin.Options) (darwin.Result, error)
	check        func(ctx context.Context, profile string) error
	startMonitor func(ctx context.Context, tag string, report func(darwin.Violation)) (stop func(flush time.Duration), err error)
	openPTY      func() (*darwin.PTY, error)
	stat         func(string) (fs.FileInfo, error)
	fsys         fs.FS               // the host's file system, rooted at "/"
	boot         func() probe.Result // for warnings said once per boot
	usage        func(*os.ProcessState, time.Duration) runtime.Usage
	tempDir      string // "" for os.TempDir
}

// seatbeltRequest is one `cordon run` on macOS.
type seatbeltRequest struct {
	policy   *policy.Policy
	args     []string
	cwd      string
	self     string // cordon's binary
	environ  []string
	terminal bool
	stats    bool
	store    string // the violation store ("" for runtime.StoreDir)
	session  string // the agent's session (see sayOnce)
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
}

// seatbeltRun runs a command the macOS way: the policy compiled into a
// Seatbelt profile, the command run under sandbox-exec with the filtered
// environment, the proxy on loopback ports only the profile opens, and the
// run's denials read from the unified log into the violation store and
// the end-of-run note. It returns the exit status as on Linux (the
// command's, 128+N for signal N, 124 for the timeout, 126 and 127 when the
// command cannot be executed), or an error for cordon's own failure
// (status 125).
func seatbeltRun(ctx context.Context, sys seatbeltSystem, r seatbeltRequest) (int, error) {
	pol := r.policy
	id := seatbeltID()
	rlimits, lost := darwin.Limits(pol.Limits)
	if len(lost) > 0 && sayOnce(sys.boot(), r.session, lost) {
		fmt.Fprintf(stderr, "cordon: warning: %s (said %s)\n", strings.Join(lost, "; "), once(r.session))
	}
	if n := tracked(pol).notice(); n != "" && sayOnce(sys.boot(), r.session, []string{n}) {
		fmt.Fprintf(stderr, "cordon: warning: %s (said %s)\n", n, once(r.session))
	}

	// The command's TMPDIR: private, writable, removed after the run.
	tmp, err := os.MkdirTemp(sys.tempDir, "cordon-"+id+"-")
	if err != nil {
		return exitCordonFailed, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	req := darwin.Request{Cwd: r.cwd, Home: pol.Home, TempDir: tmp, Tag: id, Terminal: r.terminal, Executable: r.self, FS: sys.fsys}
	// The package caches: no overlays on macOS, so each tool with a
	// variable is pointed at a directory of cordon's, kept per workspace.
	if pol.Caches.Enabled {
		cs, err := runtime.OpenCaches(runtime.CacheRequest{
			Root:      runtime.CacheRoot(pol.Home, r.environ),
			Workspace: pol.Workspace,
			RunID:     id,
			List:      caches.For(pol.Home, r.environ, "darwin"),
			Home:      pol.Home,
			Env:       r.environ,
		})
		// As on Linux, caches that cannot be opened stay read-only.
		if err == nil {
			defer cs.Close()
		} else {
			cs = &runtime.Caches{}
		}
		for _, v := range cs.Views {
			req.Caches = append(req.Caches, darwin.Cache{Dir: v.Dir, Env: v.Env})
		}
	}

	rep := newRunReport(&sandbox{policy: pol, req: spec.Request{ID: id, Args: r.args, Cwd: r.cwd}})
	rec := runtime.NewRecorder(runtime.Options{
		ID:     id,
		Meta:   runtime.Meta{Args: r.args, Workspace: pol.Workspace},
		Notify: rep.note,
		Ignore: runtime.Ignore(pol.Sandbox.IgnoreViolations),
		Store:  r.store,
	})

	// The proxy listens on loopback ports of the host, the only network
	// destinations the profile opens.
	proxied := spec.Proxied(pol)
	var px *netproxy.Proxy
	if proxied {
		c, err := proxyConfig(pol, r.environ, stderr)
		if err != nil {
			return exitCordonFailed, err
		}
		cfg := *c
		cfg.Run, cfg.OnDecision = id, rec.Decision
		if pol.Network.TLSTerminate != nil {
			// no CA: the macOS sandbox has no trust bundle of its own
			fmt.Fprintln(stderr, "cordon: warning: cordon does not end TLS on macOS (sandbox.network.tlsTerminate): every tunnel stays opaque")
		}
		if px, err = netproxy.New(cfg); err != nil {
			return exitCordonFailed, fmt.Errorf("proxy: %w", err)
		}
		defer px.Close()
		for i, port := range []*int{&req.HTTPProxyPort, &req.SOCKSProxyPort} {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				return exitCordonFailed, fmt.Errorf("proxy: %w", err)
			}
			*port = ln.Addr().(*net.TCPAddr).Port
			socks := i == 1
			go func() {
				_ = px.ServePort(ln, socks)
				ln.Close() // a Close before Serve leaves it open
			}()
		}
	}

	env := seatbeltEnv(pol, req, r.environ, proxied, r.self)
	// sandbox-exec would report a missing command as its own failure.
	if _, err := darwin.LookCommand(r.args[0], env, r.cwd, sys.stat); err != nil {
		fmt.Fprintf(stderr, "cordon: %v\n", err)
		return darwin.LookStatus(err), nil
	}

	explain, err := darwin.NewExplainer(pol, req)
	if err != nil {
		return exitCordonFailed, err
	}
	// The log's stream starts while the profile compiles.
	type started struct {
		stop func(time.Duration)
		err  error
	}
	monitor := make(chan started, 1)
	go func() {
		stop, err := sys.startMonitor(ctx, id, func(v darwin.Violation) {
			if !v.Noise() {
				rec.Add(seatbeltViolation(v, explain.Explain(v)))
			}
		})
		monitor <- started{stop, err}
	}()
	var stopStream func(time.Duration)
	waitMonitor := sync.OnceFunc(func() {
		s := <-monitor
		stopStream = s.stop
		if s.err != nil {
			if warn := []string{"refusals are not recorded: " + s.err.Error()}; sayOnce(sys.boot(), r.session, warn) {
				fmt.Fprintf(stderr, "cordon: warning: %s (said %s)\n", warn[0], once(r.session))
			}
		}
	})
	var stopOnce sync.Once
	stop := func(flush time.Duration) {
		stopOnce.Do(func() {
			waitMonitor()
			if stopStream != nil {
				stopStream(flush)
			}
		})
	}
	defer stop(0)

	var pty *darwin.PTY
	if r.terminal {
		if pty, err = sys.openPTY(); err != nil {
			return exitCordonFailed, err
		}
		defer pty.Close()
		req.TTY = pty.Name()
	}
	profile, err := darwin.Profile(pol, req)
	if err != nil {
		return exitCordonFailed, err
	}
	waitMonitor()

	start := time.Now()
	res, runErr := sys.run(ctx, profile, r.args, darwin.Options{
		Dir:         r.cwd,
		Env:         env,
		Stdin:       r.stdin,
		Stdout:      r.stdout,
		Stderr:      r.stderr,
		PTY:         pty,
		Timeout:     pol.Limits.Timeout,
		OutputLimit: pol.Limits.OutputLimit,
		Rlimits:     rlimits,
		Self:        r.self,
	})
	wall := time.Since(start)
	status := res.Status
	if runErr == nil && status == darwin.ExitProfileRefused {
		// sandbox-exec's own status, or the command's: ask sandbox-exec.
		if err := sys.check(ctx, profile); err != nil {
			runErr, status = err, exitCordonFailed
		}
	}
	// What the sandbox refused is all in once the log is read and the
	// proxy closed.
	stop(logFlush(status))
	if px != nil {
		px.Close()
	}
	if res.TimedOut {
		rep.note(fmt.Sprintf("timed out after %s: the command and everything it started were ended", pol.Limits.Timeout))
	}
	rec.Finish()
	if r.stats && res.State != nil {
		fmt.Fprintf(stderr, "cordon: %s\n", sys.usage(res.State, wall))
	}
	rep.done(ctx, pol, status, runErr)
	if runErr != nil {
		return exitCordonFailed, runErr
	}
	return status, nil
}

// seatbeltID names a run, and tags its profile's denials (a
// darwin.Request tag).
func seatbeltID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}
