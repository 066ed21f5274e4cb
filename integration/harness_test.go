//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// sandboxPath is the PATH every run gets, and where requires looks for
// tools the command needs inside.
const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// runTimeout bounds one cordon invocation: a hang fails the test.
const runTimeout = 30 * time.Second

// caller is who runs cordon: root, or an unprivileged user.
type caller struct {
	name     string // "root" or "user": the subtest's name
	uid, gid int
	username string
	// cred is set when the suite switches to this user to run cordon.
	cred *syscall.Credential
	// missing says why this caller is unavailable.
	missing string

	userNSOnce sync.Once
	userNSErr  error

	// cacheDir is this caller's XDG_CACHE_HOME for every run: the fake
	// homes change per test, the probe cache need not.
	cacheDir string
}

var callers = map[string]*caller{}

// stateRoot is where cordon keeps this caller's run state (see
// runtime.StateRoot; the suite sets neither XDG_RUNTIME_DIR nor TMPDIR).
func (c *caller) stateRoot() string {
	if c.uid == 0 {
		return "/run/cordon"
	}
	return fmt.Sprintf("/tmp/cordon-%d", c.uid)
}

// need is one thing a test needs; it returns what is missing, or "".
type need func() string

// requires skips the test when a need is missing, or fails it when
// CORDON_INTEGRATION=1 is set.
func requires(t testing.TB, needs ...need) {
	t.Helper()
	for _, n := range needs {
		if missing := n(); missing != "" {
			if os.Getenv("CORDON_INTEGRATION") == "1" {
				t.Fatalf("needs %s (CORDON_INTEGRATION=1: a missing need is a failure)", missing)
			}
			t.Skipf("needs %s", missing)
		}
	}
}

// needCaller: the caller exists and may make user namespaces.
func needCaller(c *caller) need {
	return func() string {
		if c.missing != "" {
			return c.missing
		}
		c.userNSOnce.Do(func() {
			// The helper switches to the caller first, then makes the
			// namespace, as cordon will.
			cmd := exec.Command(helperBin)
			cmd.Env = []string{helperEnv + "=userns"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
			if out, err := cmd.CombinedOutput(); err != nil {
				c.userNSErr = fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
				return
			}
			// Probe once, and let the once-per-boot warning about a
			// degraded sandbox (no cgroup limits for an unprivileged user
			// on cgroup v1) be said here, not in the first test that
			// checks a run's stderr.
			if err := c.warmUp(); err != nil {
				c.userNSErr = err
			}
		})
		if c.userNSErr != nil {
			return fmt.Sprintf("user namespaces for %s (uid %d): %v", c.username, c.uid, c.userNSErr)
		}
		return ""
	}
}

// needTool: an executable on the sandbox's PATH (the host's, read-only).
func needTool(name string) need {
	return func() string {
		if toolPath(name) == "" {
			return fmt.Sprintf("%s on %s", name, sandboxPath)
		}
		return ""
	}
}

// needTools is needTool of each name.
func needTools(names ...string) []need {
	var out []need
	for _, n := range names {
		out = append(out, needTool(n))
	}
	return out
}

func toolPath(name string) string {
	for _, dir := range filepath.SplitList(sandboxPath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// eachCaller runs f as parallel subtests "root" and "user".
func eachCaller(t *testing.T, f func(t *testing.T, c *caller)) {
	t.Helper()
	forCallers(t, true, f)
}

// eachCallerInTurn runs f as subtests "root" and "user", one after the
// other: for a test that takes the machine (TestManyRunsAtOnce).
func eachCallerInTurn(t *testing.T, f func(t *testing.T, c *caller)) {
	t.Helper()
	forCallers(t, false, f)
}

func forCallers(t *testing.T, parallel bool, f func(t *testing.T, c *caller)) {
	t.Helper()
	for _, name := range []string{"root", "user"} {
		t.Run(name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			c := callers[name]
			requires(t, needCaller(c))
			f(t, c)
		})
	}
}

// box is one test's fixture: a fresh workspace and a fake home outside it,
// owned by the caller, with credentials planted where the default policy
// hides them.
type box struct {
	t     *testing.T
	c     *caller
	dir   string // holds ws and home; the workspace's parent
	ws    string
	home  string
	token string // boxEnv's value in every run of this box
	// secrets maps a file under home to its content, which must never be
	// seen inside.
	secrets map[string]string
	// userHome: the home is a user's own (see userHome).
	userHome bool
	// ctr, when set, is the container cordon runs in (b.cordon, b.start).
	ctr *dockerLike
}

type boxOpt func(*boxConfig)

type boxConfig struct{ underTmp, userHome bool }

// underTmp puts the workspace under /tmp, which the sandbox replaces with
// a private tmpfs: the workspace is bound on top of it.
func underTmp(c *boxConfig) { c.underTmp = true }

// userHome makes the home as useradd makes one (see makeUserHome), and
// leaves the tools' caches in it: XDG_CACHE_HOME is not set, so go, pip
// and cordon itself start from an empty ~/.cache. With underTmp, the home
// is not the workspace's sibling but outside /tmp.
func userHome(c *boxConfig) { c.userHome = true }

func newBox(t *testing.T, c *caller, opts ...boxOpt) *box {
	t.Helper()
	var cfg boxConfig
	for _, o := range opts {
		o(&cfg)
	}
	root := wsRootOutside
	if cfg.underTmp {
		root = wsRootTmp
	}
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	dir, err := os.MkdirTemp(root, name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &box{
		t: t, c: c, dir: dir,
		ws:       filepath.Join(dir, "ws"),
		home:     filepath.Join(dir, "home"),
		token:    randomHex(8),
		userHome: cfg.userHome,
	}
	if cfg.userHome && cfg.underTmp {
		// A user's home is never under /tmp, which the sandbox replaces:
		// it stays outside, in a directory of its own.
		hdir, err := os.MkdirTemp(wsRootOutside, name+"-home-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(hdir) })
		must(t, os.Chmod(hdir, 0o755))
		b.home = filepath.Join(hdir, "home")
	}
	b.secrets = map[string]string{
		".ssh/id_ed25519":  "-----BEGIN OPENSSH PRIVATE KEY----- secret-ssh-" + b.token,
		".aws/credentials": "[default]\naws_secret_access_key = secret-aws-" + b.token,
		".netrc":           "machine example.com login me password secret-netrc-" + b.token,
	}
	must(t, os.Chmod(dir, 0o755))
	must(t, os.Mkdir(b.ws, 0o755))
	must(t, os.Mkdir(b.home, 0o755))
	for rel, content := range b.secrets {
		p := filepath.Join(b.home, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content+"\n"), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(b.home, "outside.txt"), []byte("original\n"), 0o644))
	if cfg.userHome {
		makeUserHome(t, b.home)
	}
	b.chown()
	return b
}

// makeUserHome gives a home what a user's has before any tool ran: the
// files of /etc/skel, a git identity (git commit needs one), mode 0700. The
// caller chowns it.
func makeUserHome(t testing.TB, home string) {
	t.Helper()
	must(t, os.MkdirAll(home, 0o700))
	must(t, os.Chmod(home, 0o700))
	skel, err := os.ReadDir("/etc/skel")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range skel {
		if e.Type().IsRegular() {
			must(t, copyFile(filepath.Join("/etc/skel", e.Name()), filepath.Join(home, e.Name()), 0o644))
		}
	}
	gitconfig := "[user]\n\tname = Ada Agent\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n"
	must(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644))
}

// chown gives everything in the box to the caller.
func (b *box) chown() {
	b.t.Helper()
	if b.c.cred == nil {
		return
	}
	roots := []string{b.dir}
	if h := filepath.Dir(b.home); h != b.dir {
		roots = append(roots, h)
	}
	for _, root := range roots {
		err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				err = os.Lchown(p, b.c.uid, b.c.gid)
			}
			// Gone during the walk: a sandbox cordon serve destroys after
			// its answer, in a state root inside the box.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		})
		must(b.t, err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// warmUp runs cordon once as the caller in a throwaway workspace.
func (c *caller) warmUp() error {
	dir, err := os.MkdirTemp(wsRootOutside, "warm-up-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chown(dir, c.uid, c.gid); err != nil && c.cred != nil {
		return err
	}
	cmd := exec.Command(cordonBin, "run", "--", "true")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + sandboxPath, "HOME=" + dir, "USER=" + c.username, "XDG_CACHE_HOME=" + c.cacheDir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("warm-up run of cordon: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// env is the environment of every cordon invocation of the box.
func (b *box) env(extra ...string) []string {
	env := []string{
		"PATH=" + sandboxPath,
		"HOME=" + b.home,
		// Each box records its violations apart (root's would go to
		// /var/lib/cordon).
		"XDG_STATE_HOME=" + filepath.Join(b.dir, "state"),
		"USER=" + b.c.username,
		"LOGNAME=" + b.c.username,
		"LC_ALL=C",
		suiteEnv + "=" + suiteToken,
		boxEnv + "=" + b.token,
	}
	if !b.userHome {
		env = append(env, "XDG_CACHE_HOME="+b.c.cacheDir)
	}
	return append(env, extra...)
}

// runSpec is one cordon invocation.
type runSpec struct {
	flags   []string // flags of `cordon run`, before --
	args    []string // the command
	env     []string // more NAME=value
	stdin   io.Reader
	dir     string // working directory (default: the workspace)
	timeout time.Duration
	// via starts cordon through another program: its path, then its
	// arguments up to cordon's path (prlimit --nofile=16 --, or
	// /bin/sh -c 'exec "$0" "$@"'), which execs cordon.
	via []string
}

// result is what a cordon invocation did.
type result struct {
	stdout, stderr string
	code           int // -1 when a signal ended cordon itself
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, clip(r.stdout), clip(r.stderr))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// command returns cordon with the given arguments, set up to run as the
// box's caller in the workspace.
func (b *box) command(ctx context.Context, s runSpec, cli ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cordonBin, cli...)
	cmd.Dir = s.dir
	if cmd.Dir == "" {
		cmd.Dir = b.ws
	}
	cmd.Env = b.env(s.env...)
	if len(s.via) > 0 {
		cmd.Path = s.via[0]
		cmd.Args = append(append(slices.Clone(s.via), cordonBin), cli...)
	}
	// Pdeathsig: cordon must not outlive a test binary that panicked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// startLocked starts cmd from an OS thread locked until cmd has been
// waited for, and returns where Wait's error arrives. The kernel sends the
// parent-death signal (Pdeathsig) when the thread that forked the child
// ends, not the process: a cordon started from a thread the Go runtime
// lets go would be killed half way with nothing said.
func startLocked(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// runLocked is cmd.Run from a locked thread (see startLocked).
func runLocked(cmd *exec.Cmd) error {
	waited, err := startLocked(cmd)
	if err != nil {
		return err
	}
	return <-waited
}

// exitCode is the exit status Wait's error carries; a signal that ended
// the process itself is -1, and named in the result's stderr.
func exitCode(r *result, ee *exec.ExitError) {
	r.code = ee.ExitCode()
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.stderr += fmt.Sprintf("\n(the process itself was killed by %v)", ws.Signal())
	}
}

// runArgs is the command line of `cordon run`.
func runArgs(s runSpec) []string {
	return append(append(append([]string{"run"}, s.flags...), "--"), s.args...)
}

// run runs `cordon run -- ARGS` in the workspace.
func (b *box) run(args ...string) result {
	b.t.Helper()
	return b.runSpec(runSpec{args: args})
}

// sh runs `cordon run -- sh -c SCRIPT`.
func (b *box) sh(script string) result {
	b.t.Helper()
	return b.run("sh", "-c", script)
}

func (b *box) runSpec(s runSpec) result {
	b.t.Helper()
	return b.cordon(s, runArgs(s)...)
}

// cordon runs cordon with any arguments and waits for it.
func (b *box) cordon(s runSpec, cli ...string) result {
	b.t.Helper()
	timeout := s.timeout
	if timeout == 0 {
		timeout = runTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := b.command(ctx, s, cli...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdin, &stdout, &stderr
	if b.ctr != nil {
		b.ctr.wrap(cmd, b.c)
	}
	err := runLocked(cmd)
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		b.t.Fatalf("cordon %s: no end after %v\n%s", quote(cli), timeout, r)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		exitCode(&r, ee)
	default:
		b.t.Fatalf("cordon %s: %v", quote(cli), err)
	}
	b.t.Logf("cordon %s → exit %d%s", quote(cli), r.code, logTail(r.stderr))
	return r
}

func logTail(stderr string) string {
	stderr = strings.TrimSpace(stderr)
	if stderr == "" {
		return ""
	}
	if len(stderr) > 600 {
		stderr = "..." + stderr[len(stderr)-600:]
	}
	return "; stderr: " + stderr
}

func quote(args []string) string {
	var q []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$&|;<>()*?`\\") {
			a = strconv.Quote(a)
		}
		q = append(q, a)
	}
	s := strings.Join(q, " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// running is a cordon invocation in progress.
type running struct {
	t              *testing.T
	cmd            *exec.Cmd
	cancel         context.CancelFunc
	stdout, stderr *syncBuffer
	done           chan struct{}
	res            result
}

// start starts `cordon run` and returns at once.
func (b *box) start(s runSpec) *running {
	b.t.Helper()
	timeout := s.timeout
	if timeout == 0 {
		timeout = runTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := b.command(ctx, s, runArgs(s)...)
	r := &running{t: b.t, cmd: cmd, cancel: cancel, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdin, r.stdout, r.stderr
	if b.ctr != nil {
		b.ctr.wrap(cmd, b.c)
	}
	waited, err := startLocked(cmd)
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		// A test that failed half way must not leave cordon running.
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	go func() {
		defer close(r.done)
		defer cancel()
		err := <-waited
		r.res = result{stdout: r.stdout.String(), stderr: r.stderr.String()}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			exitCode(&r.res, ee)
		default:
			r.res.code = -1
			r.res.stderr += "\n(wait: " + err.Error() + ")"
		}
	}()
	return r
}

// waitStdout waits until stdout contains s.
func (r *running) waitStdout(s string) {
	r.t.Helper()
	deadline := time.After(15 * time.Second)
	for !strings.Contains(r.stdout.String(), s) {
		select {
		case <-r.done:
			r.t.Fatalf("cordon ended before printing %q\n%s", s, r.res)
		case <-deadline:
			// Where cordon is stuck: its threads' kernel stacks, and
			// Go's runtime prints every goroutine's stack on SIGQUIT
			// (unless cordon forwards it to its command by then).
			// libcontainer's init (a Go program too, which takes
			// no signal) prints its goroutines to the command's
			// stderr on SIGQUIT.
			stacks := threadStacks(r.cmd.Process.Pid)
			for _, p := range descendants(r.cmd.Process.Pid) {
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); strings.HasPrefix(string(comm), "runc:") {
					_ = syscall.Kill(p, syscall.SIGQUIT)
				}
			}
			time.Sleep(time.Second)
			_ = r.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-r.done:
			case <-time.After(2 * time.Second):
			}
			loadavg, _ := os.ReadFile("/proc/loadavg")
			load := strings.TrimSpace(string(loadavg))
			r.t.Fatalf("no %q after 15s; stdout so far: %q; load %s; runnable elsewhere: %s\ncordon's threads:\n%s\nstderr (with the init's goroutines, SIGQUIT):\n%s", s, r.stdout.String(), load, runnable(), stacks, r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wait waits for cordon to end.
func (r *running) wait() result {
	r.t.Helper()
	return r.waitFor(runTimeout)
}

// waitFor waits at most d for cordon to end, then fails the test.
func (r *running) waitFor(d time.Duration) result {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(d):
		_ = r.cmd.Process.Kill()
		<-r.done
		r.t.Fatalf("cordon did not end within %v\n%s", d, r.res)
	}
	return r.res
}

// syncBuffer is a bytes.Buffer for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a process on the host.
type proc struct{ pid int }

func (p proc) cmdline() string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
	return strings.TrimRight(strings.ReplaceAll(string(data), "\x00", " "), " ")
}

func (p proc) env(name string) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// state is the process state letter (R, S, Z, ...), or "" when gone.
func (p proc) state() string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// procsWhere returns the host's live (not zombie) processes that match.
func procsWhere(match func(proc) bool) []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p := proc{pid}
		if match(p) && p.state() != "Z" && p.state() != "" {
			out = append(out, p)
		}
	}
	return out
}

// procsRunning returns the host's processes whose command line is exactly
// cmdline.
func procsRunning(cmdline string) []proc {
	return procsWhere(func(p proc) bool { return p.cmdline() == cmdline })
}

// waitProcs polls until the number of processes running cmdline satisfies
// ok, and returns the last count.
func waitProcs(timeout time.Duration, ok func(n int) bool, cmdlines ...string) int {
	deadline := time.Now().Add(timeout)
	for {
		n := 0
		for _, c := range cmdlines {
			n += len(procsRunning(c))
		}
		if ok(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var sleepCounter atomic.Int64

// uniqueSleep returns a `sleep` duration of about base seconds that no
// other process on the host uses: base.<suite token><counter>.
func uniqueSleep(base int) string {
	return fmt.Sprintf("%d.%s%03d", base, suiteToken, sleepCounter.Add(1))
}

// stateRunDirs are the run state directories of a caller.
func stateRunDirs(c *caller) []string {
	ds, _ := filepath.Glob(filepath.Join(c.stateRoot(), "run-*"))
	return ds
}

// allStateRoots are the state roots of every user on this host.
func allStateRoots() []string {
	roots := []string{"/run/cordon"}
	more, _ := filepath.Glob("/tmp/cordon-*")
	roots = append(roots, more...)
	more, _ = filepath.Glob("/run/user/*/cordon")
	return append(roots, more...)
}

// stateWorkspace reads the workspace recorded in a run's state directory.
func stateWorkspace(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "cordon.json"))
	if err != nil {
		return ""
	}
	var m struct {
		Workspace string `json:"workspace"`
	}
	_ = json.Unmarshal(data, &m)
	return m.Workspace
}

// cgroupRunDirs are the cgroups of runs named like pattern, in every
// hierarchy (cgroup v1 controllers, the v2 unified one, or a pure v2 host).
func cgroupRunDirs(pattern string) []string {
	var out []string
	for _, g := range []string{"/sys/fs/cgroup/*/cordon/" + pattern, "/sys/fs/cgroup/cordon/" + pattern} {
		ds, _ := filepath.Glob(g)
		out = append(out, ds...)
	}
	slices.Sort(out)
	return out
}

// listed is one entry of `cordon list --json`.
type listed struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	Pid       int      `json:"pid"`
	Args      []string `json:"args"`
	Workspace string   `json:"workspace"`
	Orphaned  bool     `json:"orphaned"`
	Mode      string   `json:"mode"`
}

// list runs `cordon list --json` as the box's caller.
func (b *box) list() []listed {
	b.t.Helper()
	r := b.cordon(runSpec{}, "list", "--json")
	if r.code != 0 {
		b.t.Fatalf("cordon list --json:\n%s", r)
	}
	var l []listed
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		b.t.Fatalf("cordon list --json: %v\n%s", err, r)
	}
	return l
}

// liveRun waits until `cordon list` shows a run in this box's workspace.
func (b *box) liveRun() listed {
	b.t.Helper()
	// Once it runs: listed between making its state and starting its
	// init, a run has no pid yet (a full CI run saw "stopped" there).
	deadline := time.Now().Add(10 * time.Second)
	var seen *listed
	for {
		for _, l := range b.list() {
			if l.Workspace == b.ws {
				if l.Status == "running" || time.Now().After(deadline) {
					return l
				}
				seen = &l
			}
		}
		if time.Now().After(deadline) {
			if seen != nil {
				return *seen
			}
			b.t.Fatalf("cordon list never showed a run in %s", b.ws)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lines splits output into lines without the trailing empty one.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// readFile returns a host file's content, or "<err>".
func readFile(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// exists reports whether a host path exists (without following a final
// symlink).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
