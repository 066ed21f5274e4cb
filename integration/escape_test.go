//go:build linux

package integration

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The adversarial suite (issue 10): real attacks, the way a hostile agent
// or a poisoned dependency would try them, run inside `cordon run` with a
// realistic policy and judged from the host — files untouched, secrets not
// in the output, servers not contacted, processes gone.
//
// Every case is (setup, attack script, host-side check). The same case
// runs twice: sandboxed, where the check must find nothing, and — when it
// is safe to — unguarded, as the caller with the same environment in
// throwaway directories, where the check must find the escape. A check
// that cannot see the attack succeed when nothing stops it is not a test
// (TestEscapeCanFail). The cases are in escape_*_test.go, one file a few
// categories; docs/security.md says what defends each.

// Categories, as in docs/security.md.
const (
	catWrite    = "write"   // writes outside the workspace
	catRead     = "read"    // reads of denied files
	catProtect  = "protect" // protected files in the workspace
	catPriv     = "priv"    // privilege
	catProc     = "proc"    // signals and processes
	catResource = "res"     // resources
	catNet      = "net"     // network
	catEnv      = "env"     // environment
	catTOCTOU   = "toctou"  // time of check, time of use
)

// offWhen says when a case may run unguarded (TestEscapeCanFail).
type offWhen int

const (
	// offAll: as every caller; the attack succeeds unguarded for each.
	offAll offWhen = iota
	// offRoot: as root only: for an unprivileged caller the attack fails
	// without any sandbox (su without a password, /proc/1/root).
	offRoot
	// offNever: never unguarded (resource exhaustion, or it would change
	// the host outside throwaway directories); why says which.
	offNever
)

// escCase is one attack.
type escCase struct {
	cat, name string
	tools     []string // needed on the sandbox's PATH
	needs     []need
	flags     []string // more flags of cordon run (the sandboxed run only)
	// setup prepares the host: plants files, starts victims and
	// listeners (their cleanups registered on e.t), sets e.vars.
	setup func(e *escEnv)
	// script is the attack, run by sh in the workspace with e.vars in
	// its environment ($HELPER is the suite's helper binary).
	script string
	// during runs on the host while the attack runs, once the attack
	// printed "ready" on stdout.
	during func(e *escEnv)
	// breach says, from the host, what the attack got: nothing when the
	// sandbox held.
	breach func(e *escEnv, r result) []string
	off    offWhen
	why    string // for offNever and offRoot
	// timeout bounds the run (default runTimeout); an unguarded run is
	// killed after it, as cordon's --timeout would.
	timeout time.Duration
	// code, when set, is the exit status the sandboxed run must have.
	code *int
	// second is a second attack, run after the first (a later command of
	// the same agent); both results go to breach, joined.
	second string
	// repeat runs the attack this many times (a race), judging each.
	repeat int
	// notContained says why the case does not apply to the container mode
	// (TestEscapeContained): what the mode does not promise
	// (docs/security.md's table).
	notContained string
	// notInDocker says why the case does not apply inside the container of
	// dockerlike_test.go (TestEscapeInDocker), where it would prove
	// nothing: the attack cannot get out there unguarded either.
	notInDocker string
	// guard: the system-call guard is what stops it, nothing after the
	// run: with the guard off, it gets out (TestEscapeGuardOff).
	guard bool
}

// Why cases do not run inside the docker-like container (notInDocker).
const (
	// dockerRefuses: the case runs in the dockerUserNS container instead.
	dockerRefuses = "Docker's seccomp profile refuses the calls already, cordon or not"
	dockerNoCap   = "it needs a capability Docker does not give its root (CAP_SYS_ADMIN, CAP_BPF, CAP_DAC_READ_SEARCH): refused unguarded too"
	dockerPipes   = "docker exec (cordon exec here) hands the command pipes for its stdio, not the caller's terminal or files"
)

// escEnv is one run of a case.
type escEnv struct {
	t       *testing.T
	b       *box
	guarded bool
	// token marks this run: planted secrets, markers, requests.
	token string
	// vars are NAME=value for the attack's environment, both ways.
	vars []string
	// extra are descriptors the attack inherits from its caller (3, 4,
	// ...), both ways.
	extra []*os.File
	// stdin, when set, is the attack's standard input; master is the
	// other side when it is a terminal.
	stdin, master *os.File
	// before is the host outside the workspace before the attack.
	before map[string]string
	// secrets are contents that must never be seen: the box's and the
	// case's own.
	secrets []string
	// cmd is the process started (cordon, or sh unguarded).
	cmd *exec.Cmd
	// flags are more flags of cordon run, set by setup.
	flags []string
	// cordon, when set, is the cordon binary the sandboxed run starts.
	cordon string
	// victim is the host process the attack aims at, if any.
	victim *hostProc
	// notes are breaches seen while the attack ran (during).
	notes []string
	// planted are the inodes of the files that hold secrets from the
	// start.
	planted []uint64
	// sink records what the case's listeners on the host received.
	sink syncBuffer
	// afterChown run after the box is given to the caller (for files
	// that must stay root's).
	afterChown []func()
	// ctty makes stdin the controlling terminal of a new session (of
	// cordon, or of the unguarded attack).
	ctty bool
	// serve, when set, is the cordon serve the sandboxed runs go through
	// (TestEscapeWarm); nil for a cold run.
	serve *serveBox
	// daemon is the pid of that cordon serve, which runs with the box's
	// environment and is no process of the attack's.
	daemon int
	// ctr, when set, is the container every command of the case runs in
	// (inDocker, dockerOff): the attack, cordon and the victims.
	ctr *dockerLike
}

func (e *escEnv) set(name, value string) { e.vars = append(e.vars, name+"="+value) }

// hostPath is where the host reaches the path p of the attack's world:
// p itself, or p in the case's container.
func (e *escEnv) hostPath(p string) string {
	if e.ctr == nil {
		return p
	}
	return e.ctr.path(p)
}

// plant writes a file below the box's directory, owned by the caller.
func (e *escEnv) plant(rel, content string, mode os.FileMode) string {
	e.t.Helper()
	p := filepath.Join(e.b.dir, rel)
	must(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(e.t, os.WriteFile(p, []byte(content), mode))
	must(e.t, os.Chmod(p, mode))
	e.b.chown()
	return p
}

// secret plants a file whose content must never be seen inside.
func (e *escEnv) secret(rel string) string {
	e.t.Helper()
	s := "secret-" + rel + "-" + e.token
	s = strings.NewReplacer("/", "_", ".", "_").Replace(s)
	e.secrets = append(e.secrets, s)
	e.planted = append(e.planted, inode(e.t, e.plant(rel, s+"\n", 0o600)))
	return s
}

// escSettings is the realistic policy every case runs under, on top of
// cordon's defaults (the workspace writable, the rest of the host
// read-only, ~/.ssh, ~/.aws, ~/.netrc and the other credential stores
// hidden, no unix sockets): .env files hidden in the home and anywhere in
// the workspace, and the network limited to one domain through the proxy.
//
// In the container mode (how == contained, and inside the docker-like
// container, where cordon picks the mode itself) the .env files of the
// workspace are neither planted nor denied: Landlock cannot hide a path
// inside a writable root, and the mode refuses such a run
// (spec.TestContainerRefusesHiddenInWritable).
func (e *escEnv) settings(how runHow) string {
	if how.containerMode() {
		return fmt.Sprintf(`{"sandbox": {
  "filesystem": {"denyRead": ["~/.env"]},
  "network": {"allowedDomains": ["allowed.cordon-test"]}
}, "cordon": {"containerMode": %t}}`, how == contained)
	}
	return fmt.Sprintf(`{"sandbox": {
  "filesystem": {"denyRead": ["~/.env", "//%s/**/.env"]},
  "network": {"allowedDomains": ["allowed.cordon-test"]}
}, "cordon": {"serve": %t, "syscallGuard": %t}}`, e.b.ws, how == warm, how != unguardedSyscalls)
}

// newEscEnv makes the box of one run and plants what every case expects.
func newEscEnv(t *testing.T, c *caller, how runHow, ctr *dockerLike) *escEnv {
	t.Helper()
	b := newBox(t, c)
	e := &escEnv{t: t, b: b, guarded: how.guarded(), token: "t" + randomHex(6), ctr: ctr}
	for _, content := range b.secrets {
		e.secrets = append(e.secrets, content[strings.LastIndex(content, "secret-"):])
	}
	e.secret("home/.env")
	if !how.containerMode() {
		e.secret("ws/.env")
		e.secret("ws/app/.env")
	}
	e.plant("ws/app/main.go", "package main\n", 0o644)
	e.plant("home/.bashrc", "# the caller's own\n", 0o644)
	e.plant("escape.json", e.settings(how), 0o644)
	if how == warm {
		root, env := privateState(t, b)
		e.serve = &serveBox{box: b, root: root, stateEnv: env}
	}
	e.set("HELPER", helperBin)
	e.set("TOKEN", e.token)
	e.set("WS", b.ws)
	return e
}

// escTimeout is how long an unguarded attack may run when the case does
// not say: they all end on their own well before.
const escTimeout = 20 * time.Second

// run runs the attack of c, sandboxed or not.
func (e *escEnv) run(c escCase) result {
	e.t.Helper()
	r := e.runScript(c, c.script)
	if c.second != "" {
		r2 := e.runScript(escCase{timeout: c.timeout}, c.second)
		r = result{stdout: r.stdout + r2.stdout, stderr: r.stderr + r2.stderr, code: max(r.code, r2.code)}
	}
	return r
}

// runScript runs one script of c.
func (e *escEnv) runScript(c escCase, script string) result {
	e.t.Helper()
	timeout := c.timeout
	if timeout == 0 {
		timeout = escTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if e.guarded {
		flags := append([]string{"--settings", filepath.Join(e.b.dir, "escape.json")}, c.flags...)
		s := runSpec{flags: append(flags, e.flags...), args: []string{"sh", "-c", script}, env: e.vars}
		if e.serve != nil {
			// The command says on stderr whether its sandbox was a pooled
			// one (see whoRuns), before the attack.
			s.args[2] = whoRuns + " >&2\n" + script
			s.env = append(slices.Clone(e.vars), e.serve.stateEnv)
		}
		cmd = e.b.command(ctx, s, runArgs(s)...)
		if e.cordon != "" {
			cmd.Path, cmd.Args[0] = e.cordon, e.cordon
		}
	} else {
		// The same attack with nothing around it, as the caller, with the
		// same environment, in the same throwaway directories; killed
		// with everything it started in its process group after the
		// timeout.
		uctx, ucancel := context.WithTimeout(ctx, timeout)
		defer ucancel()
		cmd = exec.CommandContext(uctx, "sh", "-c", script)
		cmd.Dir = e.b.ws
		cmd.Env = e.b.env(e.vars...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.b.c.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
	}
	cmd.ExtraFiles = e.extra
	if e.stdin != nil {
		cmd.Stdin = e.stdin
	}
	if e.ctty {
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Setpgid = true, true, false
	}
	if e.ctr != nil {
		e.ctr.wrap(cmd, e.b.c)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	e.cmd = cmd
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if c.during != nil {
		deadline := time.After(15 * time.Second)
	wait:
		for !strings.Contains(stdout.String(), "ready\n") {
			select {
			case err := <-done:
				done <- err
				break wait
			case <-deadline:
				break wait
			case <-time.After(10 * time.Millisecond):
			}
		}
		if strings.Contains(stdout.String(), "ready\n") {
			c.during(e)
		} else {
			e.t.Errorf("the attack never printed ready: stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	}
	err := <-done
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if e.guarded && ctx.Err() != nil {
			e.t.Fatalf("cordon did not end within %v\n%s", timeout+10*time.Second, r)
		}
	default:
		e.t.Fatalf("wait: %v", err)
	}
	how := "sandboxed"
	if !e.guarded {
		how = "unguarded"
	}
	if e.ctr != nil {
		how += " in the " + e.ctr.variant.String() + " container"
	}
	if e.serve != nil {
		how = "through cordon serve"
		// A run the daemon declined was a cold one, which TestEscape
		// judges already: this one is about the pooled sandboxes. (Exit
		// 125 is cordon refusing to run anything; a sandbox made for the
		// command that failed its mount checks — a race of the attack's
		// seen — leaves the command to a cold run, which says so.)
		if e.cordon == "" && r.code != 125 && !containsLine(r.stderr, "warm") &&
			!strings.Contains(r.stderr, "cordon serve could not make a sandbox") {
			e.t.Errorf("the attack did not run in a pooled sandbox of cordon serve: stderr %q", clip(r.stderr))
		}
	}
	e.t.Logf("%s: exit %d\n--- stdout:\n%s--- stderr:\n%s", how, r.code, clip(r.stdout), clip(r.stderr))
	return r
}

// outsideChanged lists what changed on the host in the box outside the
// workspace (the fake home and its siblings) since e.before.
func (e *escEnv) outsideChanged() []string {
	now := e.snapshotOutside()
	var out []string
	for _, k := range sortedUnion(e.before, now) {
		if e.before[k] != now[k] {
			out = append(out, fmt.Sprintf("outside the workspace, %s: %q became %q", k, e.before[k], now[k]))
		}
	}
	return out
}

func (e *escEnv) snapshotOutside() map[string]string {
	// cordon serve's state directory changes while it is walked.
	s := snapshot(e.t, e.b.dir, "ws", "state-root")
	for k := range s {
		// cordon's own record of what it refused.
		if k == "state" || strings.HasPrefix(k, "state/") {
			delete(s, k)
		}
	}
	return s
}

func sortedUnion(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// secretsSeen lists the secrets in the attack's output or written into the
// workspace.
func (e *escEnv) secretsSeen(r result) []string {
	var out []string
	for _, s := range e.secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			out = append(out, "the output holds "+s)
		}
		_ = filepath.WalkDir(e.b.ws, func(p string, d fs.DirEntry, err error) error {
			// The planted files themselves, wherever the attack moved
			// them (a denied file moved is not a denied file read).
			if err != nil || !d.Type().IsRegular() || slices.Contains(e.planted, inode(e.t, p)) {
				return nil
			}
			if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), s) {
				out = append(out, fmt.Sprintf("%s holds %s", p, s))
			}
			return nil
		})
	}
	return out
}

// fileIs returns a breach when the host file p does not hold want.
func fileIs(p, want string) []string {
	if got := readFile(p); got != want {
		return []string{fmt.Sprintf("%s holds %q, was %q", p, got, want)}
	}
	return nil
}

// absent returns a breach when the host path p exists.
func absent(p string) []string {
	if exists(p) {
		return []string{fmt.Sprintf("%s exists on the host: %s", p, describe(p))}
	}
	return nil
}

// allCases is the whole suite, in category order.
func allCases() []escCase {
	var out []escCase
	for _, cs := range [][]escCase{writeCases(), readCases(), protectCases(), privCases(), procCases(), resourceCases(), localNetCases(), envCases(), toctouCases(), guardCases()} {
		out = append(out, cs...)
	}
	return out
}

// TestEscape runs every attack in the sandbox, as root and as an
// unprivileged user: nothing gets out. (The network attacks that need the
// test network are in TestEscapeNetwork.)
func TestEscape(t *testing.T) { everyCase(t, cold) }

// TestEscapeWarm runs every attack through cordon serve, as root and as an
// unprivileged user: in a sandbox made before the command came, which the
// daemon hands the command, its environment and its descriptors.
func TestEscapeWarm(t *testing.T) { everyCase(t, warm) }

// everyCase runs every case of the suite in how, as every caller.
func everyCase(t *testing.T, how runHow) {
	t.Parallel()
	// Inside Docker's default, and for the calls its seccomp profile
	// refuses already, inside a container whose profile lets them
	// through (where cordon picks the container mode too).
	var ctr, unconfined *dockerLike
	if how == inDocker || how == dockerOff {
		ctr, unconfined = newDockerLike(t, dockerDefault), newDockerLike(t, dockerUserNS)
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range allCases() {
			if !tc.appliesTo(how, c) {
				continue
			}
			in := ctr
			if tc.notInDocker == dockerRefuses {
				in = unconfined
			}
			t.Run(tc.cat+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				runCaseIn(t, c, tc, how, in)
			})
		}
	})
}

// appliesTo reports whether the case runs how, for caller c.
func (tc escCase) appliesTo(how runHow, c *caller) bool {
	if how.containerMode() && tc.notContained != "" {
		return false
	}
	if (how == inDocker || how == dockerOff) && tc.notInDocker != "" && tc.notInDocker != dockerRefuses {
		return false
	}
	if !how.guarded() && (tc.off == offNever || tc.off == offRoot && c.uid != 0) {
		return false
	}
	return true
}

// TestEscapeContained runs the attacks that apply to the container mode
// (cordon.containerMode: Landlock and seccomp, no namespaces) on this
// machine, as root and as an unprivileged user: nothing gets out.
func TestEscapeContained(t *testing.T) { everyCase(t, contained) }

// TestEscapeInDocker runs the attacks that apply to the container mode
// inside a container made as `docker run` makes one (dockerlike_test.go),
// as root and as an unprivileged user: cordon finds no user namespaces
// there and picks the container mode itself; nothing gets out.
func TestEscapeInDocker(t *testing.T) { everyCase(t, inDocker) }

// TestEscapeInDockerCanFail runs the same attacks in the same kind of
// container with cordon off: each must get out there, or what
// TestEscapeInDocker shows is the container's doing, not cordon's.
func TestEscapeInDockerCanFail(t *testing.T) { everyCase(t, dockerOff) }

// TestEscapeCanFail runs the attacks that are safe to run unguarded with
// the sandbox off: each must get out there, or its check proves nothing.
func TestEscapeCanFail(t *testing.T) { everyCase(t, unguarded) }

// runHow is how runCase runs a case.
type runHow int

const (
	cold              runHow = iota // sandboxed by cordon run itself
	warm                            // sandboxed through cordon serve
	unguarded                       // with the sandbox off
	contained                       // by cordon run in the container mode
	inDocker                        // by cordon run inside a docker-like container
	dockerOff                       // inside a docker-like container, with the sandbox off
	unguardedSyscalls               // by cordon run, the system-call guard off
)

// guarded reports whether cordon runs the attack.
func (h runHow) guarded() bool { return h != unguarded && h != dockerOff }

// containerMode reports whether cordon runs the attack in its container
// mode: asked to, or because it finds no user namespaces.
func (h runHow) containerMode() bool { return h == contained || h == inDocker }

// runCase runs one case one way and judges it.
func runCase(t *testing.T, c *caller, tc escCase, how runHow) {
	t.Helper()
	runCaseIn(t, c, tc, how, nil)
}

// runCaseIn runs one case one way, in the container ctr when set, and
// judges it.
func runCaseIn(t *testing.T, c *caller, tc escCase, how runHow, ctr *dockerLike) {
	t.Helper()
	// The attack must get out where cordon does not run it, and where
	// the guard alone stops it and is off.
	guarded := how.guarded() && how != unguardedSyscalls
	needs := slices.Clone(tc.needs)
	for _, tool := range tc.tools {
		needs = append(needs, needTool(tool))
	}
	requires(t, needs...)
	e := newEscEnv(t, c, how, ctr)
	if tc.setup != nil {
		tc.setup(e)
	}
	e.b.chown()
	for _, f := range e.afterChown {
		f()
	}
	if e.serve != nil {
		e.daemon = e.serve.serve("--pool", "1").Pid
	}
	e.before = e.snapshotOutside()
	var breaches []string
	var r result
	for i := range max(tc.repeat, 1) {
		r = e.run(tc)
		for _, b := range tc.breach(e, r) {
			if tc.repeat > 1 {
				b = fmt.Sprintf("run %d: %s", i+1, b)
			}
			breaches = append(breaches, b)
		}
		if !guarded && len(breaches) > 0 {
			break
		}
	}
	killLeftovers(e)
	if guarded {
		for _, b := range breaches {
			t.Errorf("ESCAPE: %s", b)
		}
		if tc.code != nil && r.code != *tc.code {
			t.Errorf("exit %d, want %d", r.code, *tc.code)
		}
		return
	}
	if len(breaches) == 0 {
		t.Errorf("unguarded, the attack did not get out: its check cannot tell an escape from a refusal\n%s", r)
	} else {
		t.Logf("unguarded, the check saw: %s", strings.Join(breaches, "; "))
	}
}

// killLeftovers ends what an unguarded attack left running (in the
// sandbox nothing is left; TestEscape's cases check that themselves).
func killLeftovers(e *escEnv) {
	if e.guarded {
		return
	}
	for range 3 {
		ps := procsWhere(func(p proc) bool { return p.env(boxEnv) == e.b.token })
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEscapeSuite checks the suite itself: enough cases in every
// category, unique names, and every case judged by a check.
func TestEscapeSuite(t *testing.T) {
	counts := map[string]int{}
	names := map[string]bool{}
	cases := append(allCases(), netEscapeCases(nil)...)
	for _, c := range cases {
		counts[c.cat]++
		if names[c.cat+"/"+c.name] {
			t.Errorf("two cases named %s/%s", c.cat, c.name)
		}
		names[c.cat+"/"+c.name] = true
		if c.breach == nil || c.script == "" {
			t.Errorf("%s/%s: no attack or no check", c.cat, c.name)
		}
		if (c.off == offNever || c.off == offRoot) && c.why == "" {
			t.Errorf("%s/%s: does not run unguarded everywhere, and does not say why", c.cat, c.name)
		}
	}
	want := map[string]int{}
	for _, cat := range []string{catWrite, catRead, catProtect, catPriv, catProc, catResource, catNet, catEnv, catTOCTOU} {
		want[cat] = 5
		if counts[cat] < 5 {
			t.Errorf("category %s has %d cases, want at least 5", cat, counts[cat])
		}
	}
	if len(cases) < 60 {
		t.Errorf("%d cases, want at least 60", len(cases))
	}
	t.Logf("%d cases: %v", len(cases), counts)
	if d := cmp.Diff(len(want), len(counts)); d != "" {
		t.Errorf("categories (-want +got): %s", d)
	}
}

// hostProc is a process on the host, started as the caller for an attack
// to aim at (in the case's container, when it has one).
type hostProc struct {
	cmd  *exec.Cmd
	pid  int // on the host
	seen int // as the attack sees it (in the container's pid namespace)
	args string
}

// startHostProc starts argv on the host as the box's caller, with extra
// environment, and ends it when the test ends.
func startHostProc(e *escEnv, dir string, env []string, argv ...string) *hostProc {
	e.t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + sandboxPath}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.b.c.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout = out
	var pidFile string
	if e.ctr != nil {
		pidFile = e.ctr.wrap(cmd, e.b.c)
	}
	must(e.t, cmd.Start())
	h := &hostProc{cmd: cmd, pid: cmd.Process.Pid, seen: cmd.Process.Pid, args: strings.Join(argv, " ")}
	if pidFile != "" {
		h.pid, h.seen = e.ctr.pid(pidFile)
	}
	var once sync.Once
	e.t.Cleanup(func() {
		once.Do(func() {
			// In a container, cordon exec leaves the process: it is
			// ended itself.
			if pidFile != "" && (proc{h.pid}).state() != "" {
				_ = syscall.Kill(h.pid, syscall.SIGKILL)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	})
	if argv[0] == helperBin {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		h.args = strings.TrimSpace(out.String())
	}
	return h
}

// alive reports whether the process is running (not a zombie, not
// stopped).
func (h *hostProc) alive() string {
	switch st := (proc{h.pid}).state(); st {
	case "", "Z":
		return "gone"
	case "T", "t":
		return "stopped"
	default:
		return ""
	}
}

func intp(n int) *int { return &n }
