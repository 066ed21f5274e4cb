package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/serve"
	"cordon.dev/cordon/spec"
)

// serveIdleOnDemand is how long a daemon that cordon run started waits for
// the next command before it exits.
const serveIdleOnDemand = 15 * time.Minute

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "keep sandboxes ready for cordon run: a per-user daemon on a unix socket (docs/protocol.md)",
		Description: "cordon run hands its command to the daemon, which runs it in a sandbox made ahead of time for the\n" +
			"same policy: a fresh sandbox per command, with the same isolation as a run of its own.\n" +
			"cordon run starts it when the settings say \"cordon\": {\"serve\": true}; or run it under systemd\n" +
			"(docs/performance.md). CORDON_SERVE=0 keeps a run from using it.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "pool", Value: 4, Usage: "sandboxes kept ready per policy (`N`)"},
			&cli.DurationFlag{Name: "idle", Usage: "exit after `DURATION` without a command (0: never)"},
			&cli.IntFlag{Name: "ready-fd", Hidden: true, Usage: "write \"ready\" on descriptor `N` once it listens, or why it cannot (cordon run's start on demand)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return fmt.Errorf("cordon serve takes no arguments")
			}
			// Every sandbox's setup process starts from this sealed copy
			// of cordon: libcontainer need not copy it for each.
			if err := runtime.SealSelf(); err != nil {
				fmt.Fprintf(stderr, "cordon serve: %v (each sandbox copies cordon's binary)\n", err)
			}
			ready := readyNotifier(cmd)
			root := runtime.StateRoot()
			ln, unlock, err := serveListener(root)
			if err != nil {
				ready(err.Error())
				return err
			}
			// Listening, or another daemon serves.
			ready(serveReady)
			if ln == nil {
				return nil
			}
			defer unlock()
			defer ln.Close()
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			defer stop()
			s := &serve.Server{
				Compile: compiler(policy.NewCache(policyCacheSize)),
				Pool:    int(cmd.Int("pool")),
				Idle:    cmd.Duration("idle"),
				Root:    root,
				Stale:   binaryChanged(),
				Binary:  binaryID(),
				Log:     stderr,
			}
			return s.Serve(ctx, ln)
		},
	}
}

// serveListener returns the daemon's socket: the one systemd passes
// (socket activation: LISTEN_FDS), or a new one at serve.Socket(root),
// owned by a lock next to it. A nil listener means another daemon holds
// the lock.
func serveListener(root string) (*net.UnixListener, func(), error) {
	if os.Getenv("LISTEN_PID") == strconv.Itoa(os.Getpid()) && os.Getenv("LISTEN_FDS") == "1" {
		f := os.NewFile(3, "systemd-socket")
		unix.CloseOnExec(3)
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("socket from systemd: %w", err)
		}
		ul, ok := l.(*net.UnixListener)
		if !ok {
			l.Close()
			return nil, nil, errors.New("socket from systemd: not a unix socket")
		}
		return ul, func() {}, nil
	}
	host, err := runtime.HostPaths(root)
	if err != nil {
		return nil, nil, err
	}
	// The state directory, owned by the caller and closed to others.
	if err := runtime.Prepare(host); err != nil {
		return nil, nil, err
	}
	lock, err := os.OpenFile(filepath.Join(root, "serve.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("serve lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, nil, nil
	}
	sock := serve.Socket(root)
	// A daemon that died left its socket: nobody listens on it.
	os.Remove(sock)
	old := unix.Umask(0o077)
	ln, err := serve.Listen(sock)
	unix.Umask(old)
	if err != nil {
		lock.Close()
		return nil, nil, fmt.Errorf("listen on %s: %w", sock, err)
	}
	return ln, func() {
		// Gone before the lock: a daemon that starts now makes its own.
		os.Remove(sock)
		lock.Close()
	}, nil
}

// binaryChanged reports, once it is called, whether cordon's binary on
// disk is no longer the one this daemon runs: the sandboxes bind the one
// on disk, whose init must speak this daemon's protocol.
func binaryChanged() func() bool {
	exe, err := runtime.Executable()
	if err != nil {
		return nil
	}
	var was unix.Stat_t
	if unix.Stat(exe, &was) != nil {
		return nil
	}
	return func() bool {
		var now unix.Stat_t
		if unix.Stat(exe, &now) != nil {
			return true
		}
		return now.Ino != was.Ino || now.Dev != was.Dev || now.Mtim != was.Mtim || now.Size != was.Size
	}
}

// binaryID is the serve.BinaryID of cordon's binary on disk, "" when it
// cannot be read (every request that names one is then declined).
func binaryID() string {
	exe, err := runtime.Executable()
	if err != nil {
		return ""
	}
	id, _ := serve.BinaryID(exe)
	return id
}

// policyCacheSize is how many policies (workspaces, settings, flags)
// cordon serve keeps loaded.
const policyCacheSize = 64

// compiler compiles clients' command lines as cordon run compiles its
// own, in the client's working directory and environment, with the
// policies loaded through policies (every settings file is still read for
// every command: an edit takes effect on the next one).
func compiler(policies *policy.Cache) serve.Compiler {
	return func(ctx context.Context, req *serve.Request, files []*os.File) (*serve.Run, error) {
		return compileRequest(ctx, req, files, policies)
	}
}

// firstOfEach is env without the entries whose name came before.
func firstOfEach(env []string) []string {
	seen := map[string]bool{}
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !seen[name] {
			seen[name] = true
			out = append(out, kv)
		}
	}
	return out
}

// compileHook answers a client's cordon hook claude (serve.HookClaude) as
// that process would, in the client's environment and working directory,
// without starting one: an agent's every tool call pays for the hook. It
// leaves the call to the client (serve.Declined) where the settings turn
// cordon serve off and where the answer could differ: flags it does not
// take, and a policy that runs a program of the user's to decide
// (hooks.preDecision), which runs with the hook's environment.
func compileHook(ctx context.Context, req *serve.Request, files []*os.File, policies *policy.Cache) (*serve.Run, error) {
	if len(files) != 3 {
		return nil, &serve.Declined{Reason: "a hook's request has three descriptors"}
	}
	var parsed *cli.Command
	hc := &cli.Command{
		Name: "claude", Flags: policyFlags(), Writer: io.Discard, ErrWriter: io.Discard,
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error { return err },
		Action: func(_ context.Context, cmd *cli.Command) error {
			parsed = cmd
			return nil
		},
	}
	if err := hc.Run(ctx, append([]string{"cordon hook claude"}, req.Args...)); err != nil || parsed == nil || parsed.Args().Len() > 0 {
		// The process says what is wrong, and blocks the call.
		return nil, &serve.Declined{Reason: "the hook's command line"}
	}
	self, err := runtime.Executable()
	if err != nil {
		return nil, &serve.Declined{Reason: "cordon's own path"}
	}
	var out, errOut bytes.Buffer
	var input []byte
	inv := invocation{env: req.Env}
	he := hookEnv{getenv: inv.getenv, cwd: req.Cwd, self: self, stdout: &out, load: policies.Load, served: true}
	status := 0
	if err := claudeHook(ctx, parsed, files[0], &input, he); err != nil {
		if errors.Is(err, errNotServed) {
			return nil, &serve.Declined{Reason: "cordon.serve is off, or hooks.preDecision runs a program of the user's"}
		}
		_ = hookFailed(&out, &errOut, input, err)
		status = exitHookBlocked
	}
	return &serve.Run{Direct: func(context.Context) int {
		_, _ = files[2].Write(errOut.Bytes())
		if _, err := files[1].Write(out.Bytes()); err != nil {
			// Unanswered, the call would go on unsandboxed.
			fmt.Fprintf(files[2], "cordon hook: write the answer: %v\n", err)
			return exitHookBlocked
		}
		return status
	}}, nil
}

// unservable says why the daemon does not run sb, "" when it does.
func unservable(sb *sandbox) string {
	switch {
	case !sb.policy.Serve:
		// Settings changed since the daemon started: the command's own
		// settings decide, for every command.
		return "cordon.serve is not enabled in the settings"
	case sb.spec.Process.Terminal:
		return "the command gets a terminal"
	case spec.Contained(sb.spec):
		// Nothing to make ahead: the container mode's init costs a fork.
		return "the container mode"
	}
	return ""
}

// compileRequest compiles a client's command line as cordon run compiles
// its own, in the client's working directory and environment. files are
// the client's stdin, stdout and stderr, and with --cwd-fd, the
// descriptor the directory goes to.
func compileRequest(ctx context.Context, req *serve.Request, files []*os.File, policies *policy.Cache) (*serve.Run, error) {
	// As Go's runtime keeps a process's environment: the first entry of
	// each name (a cold run sees no other).
	req.Env = firstOfEach(req.Env)
	if req.Hook == serve.HookClaude {
		return compileHook(ctx, req, files, policies)
	}
	stdio := files[:3]
	for _, kv := range req.Env {
		if len(kv) > len(detachedEnv) && kv[:len(detachedEnv)+1] == detachedEnv+"=" {
			return nil, &serve.Declined{Reason: "a detached run's own process"}
		}
	}
	for _, a := range req.Args {
		if a == "--" {
			break
		}
		// cordon run prints its help and runs nothing; here the help
		// lookup would take the command for a topic and fail.
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); a != name && (name == "help" || name == "h") {
			return nil, &serve.Declined{Reason: "--help"}
		}
	}
	var parsed *cli.Command
	rc := runCommand()
	rc.Writer, rc.ErrWriter = stdio[2], stdio[2]
	rc.OnUsageError = func(_ context.Context, _ *cli.Command, err error, _ bool) error { return err }
	rc.Action = func(_ context.Context, cmd *cli.Command) error {
		parsed = cmd
		return nil
	}
	if err := rc.Run(ctx, append([]string{"cordon run"}, req.Args...)); err != nil {
		return nil, err
	}
	if parsed == nil {
		// --help and the like: cordon run says it itself.
		return nil, &serve.Declined{Reason: "no command to run"}
	}
	if parsed.Bool("detach") {
		return nil, &serve.Declined{Reason: "--detach"}
	}
	if parsed.IsSet("cwd-fd") != (len(files) == 4) {
		return nil, fmt.Errorf("--cwd-fd and the descriptors that came with the request (%d) do not agree", len(files))
	}
	inv := invocation{cwd: req.Cwd, env: req.Env, stdin: stdio[0], stdout: stdio[1], stderr: stdio[2], policies: policies}
	sb, err := compileFor(ctx, parsed, inv, runtime.NewID())
	if err != nil {
		return nil, err
	}
	if reason := unservable(sb); reason != "" {
		sb.close()
		return nil, &serve.Declined{Reason: reason}
	}
	rep := newRunReport(sb)
	rep.w = stdio[2]
	o := runOptions(parsed, sb, rep, stdio[0], stdio[1], stdio[2], stdio[2])
	r := &serve.Run{
		Spec:    sb.spec,
		Options: o,
		Sandbox: runtime.Options{Root: o.Root, Proxy: o.Proxy},
		Bind: func(id string) {
			rep.mu.Lock()
			rep.r.ID = id
			rep.mu.Unlock()
		},
		Done: func(status int, err error) {
			sb.close()
			rep.done(ctx, sb.policy, status, err)
		},
		Abandon: sb.close,
	}
	if len(files) == 4 {
		// Last: nothing fails after it, and Done is sure to come.
		cwd, err := newCwdReport(files[3])
		if err != nil {
			return nil, err
		}
		r.Options.Fd3 = cwd.w
		r.Abandon = func() {
			sb.close()
			cwd.close()
		}
		r.Done = func(status int, err error) {
			ended := status
			if err != nil {
				ended = exitCordonFailed
			}
			sb.close()
			cwd.done(sb.spec, ended)
			rep.done(ctx, sb.policy, status, err)
		}
	}
	if o.Proxy != nil {
		// The proxy is the sandbox's: one made ahead serves a run whose
		// proxy would decide and route alike. One with the run's own
		// (a program asked on this client's stderr, the fakes and
		// secrets of masked credentials, which are bound into the
		// sandbox too) is made for the run, under its id: its files go
		// with it (runtime.RunFilesDir).
		key, ok := o.Proxy.Key()
		r.Key, r.Alone = key, !ok
	}
	if sb.mask != nil {
		r.Alone = true
	}
	if r.Alone {
		r.Sandbox.ID = sb.req.ID
	}
	return r, nil
}

// serveStartWait bounds how long the run that starts cordon serve waits,
// once its own command is over, for the daemon to listen: the next run
// then finds it, and a daemon that cannot start is said at once.
const serveStartWait = time.Second

// serveRetry is how long a daemon that could not start keeps runs from
// starting another: each attempt costs a process start.
const serveRetry = time.Minute

// serveFailed names the record of the last daemon that could not start:
// why, in one line.
const serveFailed = "serve.failed"

// startServe starts cordon serve in the background for the runs after
// this one, unless one listens already or one could not start in the
// last serveRetry. It waits for nothing: the run goes on cold, and calls
// the returned function once its command is over, which waits (at most
// serveStartWait) for the daemon to listen and returns why it could not,
// "" when it listens or is still starting.
func startServe() (wait func() string) {
	none := func() string { return "" }
	if serve.Disabled() {
		return none
	}
	root := runtime.StateRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if c, err := serve.Dial(ctx, serve.Socket(root)); err == nil {
		c.Close()
		return none
	}
	failed := filepath.Join(root, serveFailed)
	if fi, err := os.Stat(failed); err == nil && time.Since(fi.ModTime()) < serveRetry {
		why, _ := os.ReadFile(failed)
		return func() string { return strings.TrimSpace(string(why)) }
	}
	exe, err := runtime.Executable()
	if err != nil {
		return none
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return none
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return none
	}
	defer w.Close()
	cmd := exec.Command(exe, "serve", "--idle", serveIdleOnDemand.String(), "--ready-fd", "3")
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{w}
	// Its own session: the caller's terminal and its signals are not
	// the daemon's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Nor any descriptor this run was given: a caller waiting for the end
	// of a pipe of its own (Claude Code's output, the command
	// substitution of a rewritten Bash call) would wait for the daemon.
	_ = runtime.CloseOnExecFrom(3)
	if err := cmd.Start(); err != nil {
		r.Close()
		return recordServeFailed(failed, err.Error())
	}
	_ = cmd.Process.Release()
	return func() string {
		defer r.Close()
		_ = r.SetReadDeadline(time.Now().Add(serveStartWait))
		buf := make([]byte, 512)
		n, err := io.ReadFull(r, buf)
		said := strings.TrimSpace(string(buf[:n]))
		switch {
		case said == serveReady:
			_ = os.Remove(failed)
			return ""
		case errors.Is(err, os.ErrDeadlineExceeded):
			return "" // still starting: the next run finds it, or starts it
		case said == "":
			said = "it exited before it listened"
		}
		return recordServeFailed(failed, said)()
	}
}

// recordServeFailed records why a daemon could not start, for the runs
// of the next serveRetry, and returns it.
func recordServeFailed(path, why string) func() string {
	_ = os.WriteFile(path, []byte(why+"\n"), 0o600)
	return func() string { return why }
}

// serveReady is what cordon serve --ready-fd writes once it listens.
const serveReady = "ready"

// readyNotifier returns what tells the process that started cordon serve
// (--ready-fd N) that it listens, or why it cannot: one line, once.
func readyNotifier(cmd *cli.Command) func(string) {
	if !cmd.IsSet("ready-fd") {
		return func(string) {}
	}
	f := os.NewFile(uintptr(cmd.Int("ready-fd")), "ready-fd")
	unix.CloseOnExec(int(f.Fd()))
	var once sync.Once
	return func(msg string) {
		once.Do(func() {
			_, _ = f.WriteString(msg + "\n")
			f.Close()
		})
	}
}

// runServed runs cordon run's command through cordon serve, when one
// listens and takes it: ok is false when the command did not run (no
// daemon, or the daemon declined it: the settings do not enable it, it
// runs another binary, the command needs a terminal), and the caller runs
// it cold. Nothing weaker than a cold run ever runs: the daemon compiles
// the command line as cordon run would, from the same settings, and a
// sandbox made for another spec is never used.
func runServed(ctx context.Context, cmd *cli.Command, cwdOut *os.File) (status int, ok bool, err error) {
	// The C client (serve/client.c) asked already: the daemon declined.
	if serve.Disabled() || serve.DeclinedEarly() || cmd.Bool("detach") || detachedID() != "" {
		return 0, false, nil
	}
	// A terminal is a cold run's: the daemon's sandboxes have none.
	if cmd.IsSet("tty") {
		if cmd.Bool("tty") {
			return 0, false, nil
		}
	} else if term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())) {
		return 0, false, nil
	}
	sock := serve.Socket(runtime.StateRoot())
	if _, err := os.Lstat(sock); err != nil {
		return 0, false, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false, nil
	}
	exe, err := runtime.Executable()
	if err != nil {
		return 0, false, nil
	}
	bin, err := serve.BinaryID(exe)
	if err != nil {
		return 0, false, nil
	}
	req := serve.Request{Args: runArgv(cmd), Cwd: cwd, Env: os.Environ(), Binary: bin}
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs)
	defer signal.Stop(sigs)
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	if cwdOut != nil {
		files = append(files, cwdOut)
	}
	status, err = serve.Call(ctx, sock, req, files, sigs)
	var declined *serve.Declined
	var failed *serve.Failed
	switch {
	case err == nil:
		return status, true, nil
	case errors.As(err, &failed):
		// Said on the command's stderr by the daemon already.
		return failed.Status, true, exitStatus(failed.Status)
	case errors.Is(err, serve.ErrGone):
		return exitCordonFailed, true, err
	case errors.As(err, &declined):
		return 0, false, nil
	case errors.Is(err, serve.ErrForeign):
		// Nothing was sent; the run is a cold one.
		fmt.Fprintf(os.Stderr, "cordon: warning: %v: not used\n", err)
		return 0, false, nil
	default:
		// Unreachable, or gone before the command started: it did not run.
		return 0, false, nil
	}
}

// runArgv is cordon run's command line as parsed into cmd: the flags set,
// "--", the command and its arguments.
func runArgv(cmd *cli.Command) []string {
	var argv []string
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if !cmd.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.StringSliceFlag:
			for _, v := range cmd.StringSlice(name) {
				argv = append(argv, "--"+name+"="+v)
			}
		case *cli.BoolFlag:
			argv = append(argv, "--"+name+"="+strconv.FormatBool(cmd.Bool(name)))
		case *cli.StringFlag:
			argv = append(argv, "--"+name+"="+cmd.String(name))
		case *cli.IntFlag:
			argv = append(argv, "--"+name+"="+strconv.Itoa(cmd.Int(name)))
		}
	}
	return append(append(argv, "--"), cmd.Args().Slice()...)
}
