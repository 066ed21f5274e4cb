package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"cordon.dev/cordon/caches"
	"cordon.dev/cordon/internal/access"
	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
	"cordon.dev/cordon/spec"
)

// policyFlags are the flags that load a policy.
func policyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the command may write to (default: the current directory)"},
		&cli.StringSliceFlag{Name: "settings", Usage: "a settings `FILE` (cordon's, Claude Code's or sandbox-runtime's), above the discovered ones; repeatable"},
		&cli.StringFlag{Name: "mode", Usage: "permission mode: read-only, workspace-write, danger-full-access, prompt, allow (or Claude Code's names)"},
		&cli.StringSliceFlag{Name: "allow-write", Usage: "also let the command write `PATH`; repeatable"},
		&cli.StringSliceFlag{Name: "allow-read", Usage: "re-open `PATH` inside a denied one; repeatable"},
		&cli.StringSliceFlag{Name: "deny-read", Usage: "hide `PATH`; repeatable"},
		&cli.StringSliceFlag{Name: "deny-write", Usage: "make `PATH` read-only; repeatable"},
		&cli.StringSliceFlag{Name: "allow-domain", Usage: "let the command reach `DOMAIN` (example.com, *.example.com, with :port); repeatable"},
		&cli.StringSliceFlag{Name: "deny-domain", Usage: "never let the command reach `DOMAIN`; repeatable"},
		&cli.StringFlag{Name: "memory", Usage: "memory limit, swap off (`SIZE`: 512M, 2G, or a share of the machine: 25%)"},
		&cli.StringFlag{Name: "pids", Usage: "most processes and threads at once (`N`)"},
		&cli.StringFlag{Name: "cpus", Usage: "CPU quota (`N`: 2, 0.5)"},
		&cli.StringFlag{Name: "timeout", Usage: "end the command and everything it started after `DURATION` (90s, 10m); exit 124"},
		&cli.StringFlag{Name: "output-limit", Usage: "keep the first `SIZE` of stdout and of stderr, drop the rest with a marker"},
		&cli.StringFlag{Name: "file-size", Usage: "the largest file the command may write (`SIZE`)"},
		&cli.StringFlag{Name: "open-files", Usage: "most open files per process (`N`)"},
		&cli.StringFlag{Name: "tmp-size", Usage: "size of the private /tmp (`SIZE`)"},
	}
}

// sandboxFlags are the flags of every command that compiles a sandbox.
func sandboxFlags() []cli.Flag {
	return append(policyFlags(),
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the command a terminal of its own (default: when stdin and stdout are terminals)"},
		&cli.BoolFlag{Name: "record-writes", Usage: "also record the writes the sandbox refuses (each write then costs some 10-20µs)"},
		&cli.BoolFlag{Name: "record-reads", Usage: "also record opens of hidden paths, and the refused writes (every open then costs some 10-20µs)"},
	)
}

// runID names a new run: the one a detached run was started for, or a
// fresh one.
func runID() string {
	if id := detachedID(); id != "" {
		return id
	}
	return runtime.NewID()
}

// invocation is where a command line comes from: this process, or a
// client of cordon serve, which runs it on the client's behalf.
type invocation struct {
	cwd string
	env []string
	// stdin and stdout decide whether the command gets a terminal;
	// warnings go to stderr.
	stdin, stdout *os.File
	stderr        io.Writer
	// policies, when set, loads the policy (cordon serve's cache).
	policies *policy.Cache
	// session is the agent's session (cordon run --session): warnings
	// are said once in it.
	session string
}

// here is this process's invocation.
func here() (invocation, error) {
	// A detached run's id is not the command's to see (detachedID drops
	// it from the environment).
	detachedID()
	cwd, err := os.Getwd()
	if err != nil {
		return invocation{}, fmt.Errorf("working directory: %w", err)
	}
	return invocation{cwd: cwd, env: os.Environ(), stdin: os.Stdin, stdout: os.Stdout, stderr: stderr}, nil
}

// homeDir is $HOME in the environment getenv reads, else the caller's
// home in the password database (as sandbox-runtime's os.homedir() takes
// it: a service or an "env -i" has no $HOME). The home decides what is
// protected (~/.ssh, ...), so there is no run without one.
func homeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("home directory: $HOME is not set, and %w", err)
	}
	if u.HomeDir == "" {
		return "", fmt.Errorf("home directory: $HOME is not set, and user %s has none in the password database", u.Uid)
	}
	return u.HomeDir, nil
}

// getenv is os.Getenv in the invocation's environment: the first entry
// of the name, as Go's runtime keeps it (a cold run's environment has no
// other; a client's of cordon serve may).
func (inv invocation) getenv(name string) string {
	for _, kv := range inv.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// loadPolicy loads the effective policy for the command line.
func loadPolicy(cmd *cli.Command) (*policy.Policy, error) {
	inv, err := here()
	if err != nil {
		return nil, err
	}
	return loadPolicyFor(cmd, inv)
}

// loadPolicyFor loads the effective policy for the command line given
// by inv.
func loadPolicyFor(cmd *cli.Command, inv invocation) (*policy.Policy, error) {
	cwd := inv.cwd
	workspace := cwd
	if w := cmd.String("workspace"); w != "" {
		if !filepath.IsAbs(w) {
			w = filepath.Join(cwd, w)
		}
		workspace = filepath.Clean(w)
	}
	home, err := homeDir(inv.getenv)
	if err != nil {
		return nil, err
	}
	load := policy.Load
	if inv.policies != nil {
		load = inv.policies.Load
	}
	return load(policy.LoadOptions{
		Workspace:       workspace,
		Cwd:             cwd,
		Home:            home,
		ConfigHome:      inv.getenv("XDG_CONFIG_HOME"),
		ClaudeConfigDir: inv.getenv("CLAUDE_CONFIG_DIR"),
		Settings:        cmd.StringSlice("settings"),
		Flags: policy.Flags{
			AllowWrite:  cmd.StringSlice("allow-write"),
			AllowRead:   cmd.StringSlice("allow-read"),
			DenyRead:    cmd.StringSlice("deny-read"),
			DenyWrite:   cmd.StringSlice("deny-write"),
			AllowDomain: cmd.StringSlice("allow-domain"),
			DenyDomain:  cmd.StringSlice("deny-domain"),
			Mode:        cmd.String("mode"),
			Memory:      cmd.String("memory"),
			Pids:        cmd.String("pids"),
			CPUs:        cmd.String("cpus"),
			Timeout:     cmd.String("timeout"),
			OutputLimit: cmd.String("output-limit"),
			FileSize:    cmd.String("file-size"),
			OpenFiles:   cmd.String("open-files"),
			TmpSize:     cmd.String("tmp-size"),
			Serve:       map[bool]string{true: "true"}[cmd.Bool("serve")],
		},
	})
}

// sandbox is one compiled command.
type sandbox struct {
	policy *policy.Policy
	req    spec.Request
	spec   *specs.Spec
	// mask are the masked credentials, nil when there are none; close
	// removes their fakes once the run is over.
	mask *masking
	// caches are the run's package caches: close them when it is over.
	caches *runtime.Caches
	// proxy is the run's network proxy (nil: no network)
	proxy *netproxy.Config
	// probe is what the machine can do; session the agent's session
	// (cordon run --session): for the warnings said once (sayOnce).
	probe   probe.Result
	session string
}

// close removes what the run's compilation left on the host.
func (sb *sandbox) close() {
	sb.mask.close()
	sb.caches.Close()
}

// compile loads the policy and compiles the command line into a spec.
func compile(ctx context.Context, cmd *cli.Command) (*sandbox, error) {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return nil, fmt.Errorf("no command given (usage: cordon %s [flags] -- COMMAND [ARGS...])", cmd.Name)
	}
	inv, err := here()
	if err != nil {
		return nil, err
	}
	return compileFor(ctx, cmd, inv, runID())
}

// compileFor loads the policy and compiles the command line given by inv
// into a spec for the run id.
func compileFor(ctx context.Context, cmd *cli.Command, inv invocation, id string) (_ *sandbox, err error) {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return nil, fmt.Errorf("no command given (usage: cordon %s [flags] -- COMMAND [ARGS...])", cmd.Name)
	}
	if cmd.IsSet("cwd-fd") {
		if args, err = cwdArgs(args); err != nil {
			return nil, err
		}
	}
	pol, err := loadPolicyFor(cmd, inv)
	if err != nil {
		return nil, err
	}
	cwd := inv.cwd
	host, err := runtime.HostPaths(runtime.StateRoot())
	if err != nil {
		return nil, err
	}
	req := spec.Request{
		ID:     id,
		Args:   args,
		Cwd:    cwd,
		Env:    inv.env,
		UID:    uint32(os.Getuid()),
		GID:    uint32(os.Getgid()),
		Groups: access.Groups(),
		Host:   host,
		Record: spec.Record{Writes: cmd.Bool("record-writes"), Reads: cmd.Bool("record-reads")},
	}
	if cmd.Bool("debug") {
		req.Debug = func(msg string) { fmt.Fprintf(inv.stderr, "cordon: debug: %s\n", msg) }
	}
	req.Terminal = term.IsTerminal(int(inv.stdin.Fd())) && term.IsTerminal(int(inv.stdout.Fd()))
	if cmd.IsSet("tty") {
		req.Terminal = cmd.Bool("tty")
	}
	if req.Terminal {
		if w, h, err := term.GetSize(int(inv.stdin.Fd())); err == nil {
			req.ConsoleSize = &specs.Box{Width: uint(w), Height: uint(h)}
		}
	}
	inv.session = cmd.String("session")
	pr, m, err := machine(ctx, pol, inv.stderr, inv.session)
	if err != nil {
		return nil, err
	}
	for _, n := range append(slices.Clone(pol.Report.Notices), tracked(pol).notice()) {
		if n != "" && sayOnce(pr, inv.session, []string{n}) {
			fmt.Fprintf(inv.stderr, "cordon: warning: %s (said %s)\n", n, once(inv.session))
		}
	}
	px, err := proxyConfig(pol, inv.env, inv.stderr)
	if err != nil {
		return nil, err
	}
	req.Mode, req.HostProc = m.mode, m.hostProc
	var mk *masking
	if m.mode == spec.ModeFull {
		if mk, err = maskCredentials(pol, inv.env, host.State, id, inv.stderr); err != nil {
			return nil, err
		}
	} else {
		if len(pol.Credentials.Masked) > 0 {
			// No mount namespace to bind a fake in: the policy's deny of
			// each masked secret stands.
			fmt.Fprintf(inv.stderr, "cordon: warning: the %s mode cannot mask credentials; the masked ones are hidden from the command instead\n", m.mode)
		}
		if pol.Network.TLSTerminate != nil && spec.Proxied(pol) {
			// nor a trust bundle to bind at /.cordon/trust.pem
			fmt.Fprintf(inv.stderr, "cordon: warning: the %s mode cannot end TLS (sandbox.network.tlsTerminate): every tunnel stays opaque\n", m.mode)
		}
	}
	if mk != nil {
		req.Masked = mk.spec
	}
	cs := openCaches(pol, req, inv, cmd.Name == "spec")
	req.Caches = cs.Views
	s, err := spec.Compile(pol, req, pr)
	if err != nil {
		mk.close()
		cs.Close()
		return nil, err
	}
	if lost := unenforcedLimits(s); len(lost) > 0 && sayOnce(pr, inv.session, lost) {
		fmt.Fprintf(inv.stderr, "cordon: warning: %s (said %s; cordon doctor shows why)\n", strings.Join(lost, "; "), once(inv.session))
	}
	if px != nil && mk != nil {
		px.CA = mk.ca
		if mk.set.Len() > 0 {
			px.Mask = mk.set
		}
	}
	return &sandbox{policy: pol, req: req, spec: s, mask: mk, caches: cs, proxy: px, probe: pr, session: inv.session}, nil
}

// openCaches returns the views of the package caches for the run of req
// (runtime.OpenCaches), or none: off in the settings, an unconfined run,
// or one that cannot have them (said under --debug; the caches stay
// read-only, as the rest of the home). cordon spec makes nothing.
func openCaches(pol *policy.Policy, req spec.Request, inv invocation, dryRun bool) *runtime.Caches {
	if !pol.Caches.Enabled || req.Mode == spec.ModeUnconfined {
		return &runtime.Caches{}
	}
	cs, err := runtime.OpenCaches(runtime.CacheRequest{
		Root:      runtime.CacheRoot(pol.Home, inv.env),
		Workspace: pol.Workspace,
		RunID:     req.ID,
		List:      caches.For(pol.Home, inv.env, goruntime.GOOS),
		Home:      pol.Home,
		Env:       inv.env,
		Overlay:   req.Mode == spec.ModeFull,
		DryRun:    dryRun,
	})
	if err != nil {
		if req.Debug != nil {
			req.Debug(err.Error())
		}
		return &runtime.Caches{}
	}
	return cs
}

// mode is how a run is confined on this machine (see machine).
type mode struct {
	mode     string // spec.ModeFull or spec.ModeContainer
	hostProc bool   // the full sandbox with the host's /proc
}

// machine returns what this kernel and user can do (probed once per boot)
// and how a run is confined, best first: the full sandbox; the full
// sandbox with the host's /proc where only a fresh one is refused and
// sandbox.enableWeakerNestedSandbox accepts that; the container mode
// (Landlock and seccomp, no namespaces) unless the settings require the
// full sandbox; with no confinement at all only where the settings accept
// it (cordon.acceptUnconfined). Anything less than the full sandbox is
// said on stderr (once per boot, or per session: see sayOnce). A sandbox
// that lacks a core protection never runs, one that lacks others runs with
// a warning, or not at all under failIfUnavailable.
func machine(ctx context.Context, pol *policy.Policy, stderr io.Writer, session string) (probe.Result, mode, error) {
	full := mode{mode: spec.ModeFull}
	// The binary on disk: cordon serve runs from a sealed copy in memory.
	exe, _ := runtime.Executable()
	pr, err := probe.Load(ctx, probe.Options{Executable: exe})
	if err != nil {
		return pr, full, fmt.Errorf("probe what this machine can do: %w", err)
	}
	v := probe.Assess(pr)
	requireFull := pol.FailIfUnavailable || pol.Sandbox.RequireFull
	switch {
	case pol.Sandbox.ContainerMode && v.Level != probe.Unavailable && !requireFull:
		if !pr.Seccomp.Available || pr.LandlockABI() == 0 {
			return pr, full, fmt.Errorf("%w: cordon.containerMode asks for the container mode, which needs Landlock and seccomp (cordon doctor)", probe.ErrUnavailable)
		}
		return pr, mode{mode: spec.ModeContainer}, nil
	case v.Level == probe.Unavailable || v.Level == probe.ContainerMode:
		if v.HostProc && pol.Sandbox.EnableWeakerNestedSandbox {
			if sayOnce(pr, session, []string{"host /proc"}) {
				fmt.Fprintf(stderr, "cordon: warning: the full sandbox with the host's /proc (sandbox.enableWeakerNestedSandbox): the command sees the host's processes (said %s; cordon doctor)\n", once(session))
			}
			return pr, mode{mode: spec.ModeFull, hostProc: true}, nil
		}
		if v.Level == probe.Unavailable {
			if pol.Sandbox.AcceptUnconfined && !requireFull {
				// Every run says it, but in an agent's session.
				if session == "" || sayOnce(pr, session, []string{"unconfined"}) {
					fmt.Fprintf(stderr, "cordon: warning: no sandbox: neither namespaces nor Landlock here; running unconfined (cordon.acceptUnconfined)\n")
				}
				return pr, mode{mode: spec.ModeUnconfined}, nil
			}
			return pr, full, v.Err()
		}
		if requireFull {
			key := "cordon.requireFullSandbox"
			if pol.FailIfUnavailable {
				key = "sandbox.failIfUnavailable"
			}
			return pr, full, fmt.Errorf("%w: %s (%s is set, and only the container mode could run here; cordon doctor shows the fix)", probe.ErrUnavailable, v.Problems[0].Message, key)
		}
		if sayOnce(pr, session, v.Lost) {
			fmt.Fprintf(stderr, "cordon: warning: container mode: no namespaces here (%s), commands are confined by Landlock and seccomp (said %s; cordon doctor shows what that loses and how to get the full sandbox)\n", v.Problems[0].Message, once(session))
		}
		return pr, mode{mode: spec.ModeContainer}, nil
	}
	if v.Level == probe.Degraded {
		if pol.FailIfUnavailable {
			return pr, full, fmt.Errorf("%w: %s (sandbox.failIfUnavailable is set; cordon doctor shows the fix)", probe.ErrUnavailable, strings.Join(v.Lost, "; "))
		}
		if sayOnce(pr, session, v.Lost) {
			fmt.Fprintf(stderr, "cordon: warning: degraded sandbox: %s (said %s; cordon doctor shows the fix)\n", strings.Join(v.Lost, "; "), once(session))
		}
	}
	return pr, full, nil
}

// sayOnce reports whether the warning about these lost protections is to
// be said now, and records that it is: an agent runs thousands of
// commands, reads every byte of their output, and a warning on each would
// drown it. Once per agent session when the run names one (cordon run
// --session, which cordon hook claude passes: a new session hears it
// too), once per boot otherwise (pr's boot id; without one, every time).
// The records are empty files in cordon's state directory, which no
// sandbox can write: a command cannot silence a warning of a later one.
func sayOnce(pr probe.Result, session string, lost []string) bool {
	dir := runtime.StateRoot()
	sum := sha256.Sum256([]byte(strings.Join(lost, "\n")))
	name := "warned-" + pr.BootID[:min(len(pr.BootID), 8)] + "-" + hex.EncodeToString(sum[:6])
	if session != "" {
		// The session's id is the agent's: only its hash names a file.
		s := sha256.Sum256([]byte(session))
		dir, name = filepath.Join(dir, runtime.SaidDir, hex.EncodeToString(s[:12])), hex.EncodeToString(sum[:6])
	} else if pr.BootID == "" {
		return true
	}
	if os.MkdirAll(dir, 0o700) != nil {
		return true
	}
	stamp := filepath.Join(dir, name)
	f, err := os.OpenFile(stamp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		// Already there: said before. Any other error: say it again.
		return !errors.Is(err, fs.ErrExist)
	}
	f.Close()
	return true
}

// once says how often a warning is said (see sayOnce).
func once(session string) string {
	if session != "" {
		return "once per session"
	}
	return "once per boot"
}

// unenforcedLimits lists the limits the compiled sandbox does not enforce
// fully on this machine.
func unenforcedLimits(s *specs.Spec) []string {
	var ls []spec.Limit
	if raw := s.Annotations[spec.AnnotationLimits]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &ls)
	}
	return spec.Unenforced(ls)
}
