//go:build linux

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// privateState gives the box a state root of its own (CORDON_STATE_ROOT),
// so that what its runs leave can be told from other tests' runs, and
// returns the environment entry for every cordon invocation.
func privateState(t *testing.T, b *box) (root string, env string) {
	t.Helper()
	root = filepath.Join(b.dir, "state-root")
	must(t, os.Mkdir(root, 0o700))
	b.chown()
	return root, "CORDON_STATE_ROOT=" + root
}

// runIDsSeen polls root for run directories and locks until stop is
// closed, and returns every run id it saw.
func runIDsSeen(root string, stop <-chan struct{}) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		seen := map[string]bool{}
		for {
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if id, ok := strings.CutPrefix(e.Name(), "run-"); ok {
					seen["run-"+strings.TrimSuffix(id, ".lock")] = true
				}
			}
			select {
			case <-stop:
				out <- slices.Sorted(func(yield func(string) bool) {
					for id := range seen {
						if !yield(id) {
							return
						}
					}
				})
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return out
}

// leftovers lists what runs left in a state root: run directories, run
// locks and temporary files. The shared files (the root directory
// skeleton, the mask, the compiled seccomp programs) stay by design.
func leftovers(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		name := d.Name()
		rel, _ := filepath.Rel(root, p)
		switch {
		case strings.HasPrefix(rel, "run-"):
			out = append(out, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		case strings.HasPrefix(name, ".tmp"):
			out = append(out, rel)
		case d.IsDir() && rel == "rootfs":
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// errLines are the lines of stderr that are not warnings (a rootless
// caller is warned about its degraded sandbox once per state root).
func errLines(stderr string) []string {
	return slices.DeleteFunc(lines(stderr), func(l string) bool { return strings.HasPrefix(l, "cordon: warning: ") })
}

// withoutWarnings drops cordon's warnings from a log.
func withoutWarnings(s string) string {
	var b strings.Builder
	for _, l := range errLines(s) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// sandboxProcs are the processes of the box's sandboxes (they carry the
// box's token in their environment), except cordon itself.
func (b *box) sandboxProcs() []proc {
	return procsWhere(func(p proc) bool {
		return p.env(boxEnv) == b.token && !strings.HasPrefix(p.cmdline(), cordonBin)
	})
}

// TestManyRunsAtOnce: 100 runs started at once all succeed, and afterwards
// nothing of them is left: no state, no lock, no cgroup, no process.
//
// Not parallel, and root's runs and the user's in turn: it takes the
// machine. Its 200 sandboxes (root's and the user's at once) starting on
// two CPUs kept every other run waiting for a CPU for over 15 s (load
// average 75; the threads of a run's init runnable, and 22-26 s in the
// run queue): a test beside it that waited that long for its command
// failed (TestKilledAtAnyMoment did, in half the full runs), and so did
// its own runs, whose output the test process, as starved, had not read
// 5 s after they ended (exec's WaitDelay).
func TestManyRunsAtOnce(t *testing.T) {
	eachCallerInTurn(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		root, env := privateState(t, b)
		stop := make(chan struct{})
		ids := runIDsSeen(root, stop)
		const n = 100
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := range n {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*runTimeout)
				defer cancel()
				// Traced: a failed run's stderr says whether it was
				// served and how far it got.
				cmd := b.command(ctx, runSpec{env: []string{env, "CORDON_TRACE=1"}}, "run", "--", "sh", "-c", "sleep 0.1; echo run $0", fmt.Sprint(i))
				cmd.WaitDelay = 30 * time.Second
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				start := time.Now()
				err := cmd.Run()
				if want := fmt.Sprintf("run %d\n", i); err != nil || stdout.String() != want {
					errs <- fmt.Sprintf("run %d: %v (exit %d) after %v: stdout %q, want %q; stderr:\n%s", i, err, cmd.ProcessState.ExitCode(), time.Since(start), stdout.String(), want, stderr.String())
				}
			})
		}
		wg.Wait()
		close(stop)
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		seen := <-ids
		if len(seen) < n/2 {
			t.Errorf("saw only %d of %d runs' state directories: the check below is blind", len(seen), n)
		}
		if left := leftovers(root); len(left) != 0 {
			t.Errorf("left in the state root: %v", left)
		}
		for _, id := range seen {
			if cg := cgroupRunDirs(id); len(cg) != 0 {
				t.Errorf("cgroups left: %v", cg)
			}
		}
		if ps := b.sandboxProcs(); len(ps) != 0 {
			t.Errorf("processes left: %v", ps)
		}
	})
}

// TestKilledAtAnyMoment: cordon killed with SIGKILL at any moment of a run
// (setting up, starting, running) leaves nothing behind once `cordon gc`
// has run: the sandbox's processes end by themselves (the init's
// lifeline), and gc removes state, locks and cgroups.
func TestKilledAtAnyMoment(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		root, env := privateState(t, b)
		stop := make(chan struct{})
		ids := runIDsSeen(root, stop)
		delays := []time.Duration{0, 1, 2, 4, 6, 8, 10, 13, 16, 20, 25, 30, 40, 50, 70, 100, 150, 250, 400}
		started := 0
		for _, d := range delays {
			d *= time.Millisecond
			r := b.start(runSpec{env: []string{env}, args: []string{"sh", "-c", "echo up; sleep " + uniqueSleep(61) + " & sleep " + uniqueSleep(62)}})
			time.Sleep(d)
			if strings.Contains(r.stdout.String(), "up") {
				started++
			}
			_ = r.cmd.Process.Signal(syscall.SIGKILL)
			if res := r.waitFor(10 * time.Second); res.code != -1 && res.code != 137 {
				t.Logf("killed after %v: exit %d", d, res.code)
			}
		}
		// Make sure a run was killed while its command ran. (Its steps
		// traced: twice in full CI runs this one printed nothing.)
		r := b.start(runSpec{env: []string{env, "CORDON_TRACE=1"}, args: []string{"sh", "-c", "echo up; sleep " + uniqueSleep(63)}})
		r.waitStdout("up")
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		r.waitFor(10 * time.Second)
		close(stop)
		seen := <-ids

		deadline := time.Now().Add(5 * time.Second)
		for len(b.sandboxProcs()) != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		for _, p := range b.sandboxProcs() {
			t.Errorf("process %d outlived its killed cordon: %s", p.pid, p.cmdline())
		}
		gc := b.cordon(runSpec{env: []string{env}}, "gc")
		if gc.code != 0 {
			t.Errorf("cordon gc: %s", gc)
		}
		if left := leftovers(root); len(left) != 0 {
			t.Errorf("left in the state root after cordon gc: %v", left)
		}
		for _, id := range seen {
			if cg := cgroupRunDirs(id); len(cg) != 0 {
				t.Errorf("cgroups left after cordon gc: %v", cg)
			}
		}
		if len(seen) == 0 {
			t.Errorf("no run got as far as its state directory: the check is blind")
		}
		t.Logf("%d kills, %d with the command up, %d runs seen in the state root", len(delays)+1, started+1, len(seen))
	})
}

// TestDetached: `cordon run --detach` returns once the command runs and
// prints the run's id; the run outlives the cordon that started it, shows
// in `cordon list`, writes to `cordon logs`, and `cordon stop` ends it and
// everything it started.
func TestDetached(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("lifecycle", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			root, env := privateState(t, b)
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--detach"},
				args: []string{"sh", "-c", "echo started; (sleep " + uniqueSleep(64) + " &); i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done"}})
			id := strings.TrimSpace(r.stdout)
			if r.code != 0 || !strings.HasPrefix(id, "run-") || strings.Contains(id, "\n") {
				t.Fatalf("cordon run --detach: want the run's id:\n%s", r)
			}
			list := b.cordon(runSpec{env: []string{env}}, "list")
			if !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "running") {
				t.Errorf("cordon list does not show %s running:\n%s", id, list)
			}
			var logs result
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				logs = b.cordon(runSpec{env: []string{env}}, "logs", id)
				logs.stdout = withoutWarnings(logs.stdout)
				if strings.Contains(logs.stdout, "tick 3\n") {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if logs.code != 0 || !strings.HasPrefix(logs.stdout, "started\ntick 1\ntick 2\ntick 3\n") {
				t.Errorf("cordon logs %s:\n%s", id, logs)
			}
			if len(b.sandboxProcs()) == 0 {
				t.Errorf("no process of the detached run")
			}
			st := b.cordon(runSpec{env: []string{env}}, "stop", id)
			if st.code != 0 {
				t.Errorf("cordon stop: %s", st)
			}
			if ps := b.sandboxProcs(); len(ps) != 0 {
				t.Errorf("processes left after cordon stop: %v", ps)
			}
			if left := leftovers(root); len(left) != 0 {
				t.Errorf("left in the state root after cordon stop: %v", left)
			}
			logs = b.cordon(runSpec{env: []string{env}}, "logs", id)
			if !strings.HasSuffix(logs.stdout, "cordon: the command exited with status 143\n") {
				t.Errorf("the log does not end with the command's status:\n%s", logs)
			}
			if again := b.cordon(runSpec{env: []string{env}}, "stop", id); again.code != 125 {
				t.Errorf("stopping a finished run: want 125:\n%s", again)
			}
		})
		t.Run("stop kills what ignores SIGTERM", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			root, env := privateState(t, b)
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"-d"},
				args: []string{"sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.05; done"}})
			id := strings.TrimSpace(r.stdout)
			if r.code != 0 {
				t.Fatalf("cordon run -d: %s", r)
			}
			// The trap is set once "up" is out.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(b.cordon(runSpec{env: []string{env}}, "logs", id).stdout, "up\n") {
				if time.Now().After(deadline) {
					t.Fatal("no \"up\" in the log after 10s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			begin := time.Now()
			st := b.cordon(runSpec{env: []string{env}}, "stop", "--time", "300ms", id)
			if st.code != 0 {
				t.Errorf("cordon stop: %s", st)
			}
			if took := time.Since(begin); took < 300*time.Millisecond {
				t.Errorf("stopped after %v, before the grace time", took)
			}
			if ps := b.sandboxProcs(); len(ps) != 0 {
				t.Errorf("processes left: %v", ps)
			}
			if left := leftovers(root); len(left) != 0 {
				t.Errorf("left in the state root: %v", left)
			}
		})
		t.Run("follow", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			_, env := privateState(t, b)
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--detach"},
				args: []string{"sh", "-c", "for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 3"}})
			id := strings.TrimSpace(r.stdout)
			if r.code != 0 {
				t.Fatalf("cordon run --detach: %s", r)
			}
			f := b.cordon(runSpec{env: []string{env}}, "logs", "-f", id)
			f.stdout = withoutWarnings(f.stdout)
			if want := "line 1\nline 2\nline 3\ncordon: the command exited with status 3\n"; f.code != 0 || f.stdout != want {
				t.Errorf("cordon logs -f: want %q:\n%s", want, f)
			}
		})
		t.Run("a run that cannot start", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			root, env := privateState(t, b)
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--detach", "--memory", "lots"}, args: []string{"touch", "ran"}})
			if r.code != 125 || len(errLines(r.stderr)) != 1 || !strings.Contains(r.stderr, "memory") || r.stdout != "" {
				t.Errorf("want exit 125 and one line about --memory:\n%s", r)
			}
			if exists(filepath.Join(b.ws, "ran")) {
				t.Errorf("the command ran")
			}
			if left := leftovers(root); len(left) != 0 {
				t.Errorf("left in the state root: %v", left)
			}
			if r := b.cordon(runSpec{env: []string{env}}, "logs", "run-nosuch"); r.code != 125 {
				t.Errorf("logs of an unknown run: want 125:\n%s", r)
			}
		})
	})
}

// TestStateUnwritable: a state directory cordon cannot write to, or a full
// disk, is a one-line error with exit 125, and nothing runs.
func TestStateUnwritable(t *testing.T) {
	t.Parallel()
	requires(t, needTool("mount"))
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount the small file systems")
	}
	// Where the unprivileged caller can reach them.
	full, err := os.MkdirTemp(wsRootOutside, "full-")
	must(t, err)
	must(t, os.Chmod(full, 0o755))
	t.Cleanup(func() { os.RemoveAll(full) })
	if err := syscall.Mount("cordon-it-full", full, "tmpfs", 0, "size=256k,mode=0777"); err != nil {
		t.Fatalf("mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(full, syscall.MNT_DETACH) })
	filler, err := os.Create(filepath.Join(full, "filler"))
	must(t, err)
	buf := make([]byte, 4096)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	readOnly, err := os.MkdirTemp(wsRootOutside, "ro-")
	must(t, err)
	must(t, os.Chmod(readOnly, 0o755))
	t.Cleanup(func() { os.RemoveAll(readOnly) })
	if err := syscall.Mount(readOnly, readOnly, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(readOnly, syscall.MNT_DETACH) })
	if err := syscall.Mount("", readOnly, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range []struct{ name, root, want string }{
			{"disk full", filepath.Join(full, fmt.Sprintf("state-%d", c.uid)), "no space left on device"},
			{"read-only", filepath.Join(readOnly, "state"), "read-only file system"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := newBox(t, c)
				r := b.runSpec(runSpec{env: []string{"CORDON_STATE_ROOT=" + tc.root}, args: []string{"touch", "ran"}})
				if r.code != 125 || len(errLines(r.stderr)) != 1 || !strings.Contains(r.stderr, tc.want) || !strings.HasPrefix(errLines(r.stderr)[0], "cordon: ") {
					t.Errorf("want exit 125 and one line saying %q:\n%s", tc.want, r)
				}
				if exists(filepath.Join(b.ws, "ran")) {
					t.Errorf("the command ran")
				}
			})
		}
		t.Run("not mine", func(t *testing.T) {
			if c.uid == 0 {
				t.Skip("root may write anywhere")
			}
			b := newBox(t, c)
			root := filepath.Join(b.dir, "locked")
			must(t, os.Mkdir(root, 0o500))
			must(t, os.Chown(root, c.uid, c.gid))
			r := b.runSpec(runSpec{env: []string{"CORDON_STATE_ROOT=" + root}, args: []string{"touch", "ran"}})
			if r.code != 125 || len(errLines(r.stderr)) != 1 || !strings.Contains(r.stderr, "permission denied") {
				t.Errorf("want exit 125 and one line saying permission denied:\n%s", r)
			}
			if exists(filepath.Join(b.ws, "ran")) {
				t.Errorf("the command ran")
			}
		})
	})
}

// wantRefused fails t unless r exited 125 with one line on stderr holding
// want, and the command, which touches ran in the workspace, did not run.
func wantRefused(t *testing.T, b *box, r result, want, what string) {
	t.Helper()
	if errs := errLines(r.stderr); r.code != 125 || len(errs) != 1 || !strings.Contains(errs[0], want) {
		t.Errorf("%s: want 125 and one line holding %q:\n%s", what, want, r)
	}
	if exists(filepath.Join(b.ws, "ran")) {
		t.Errorf("%s: the command ran", what)
	}
}

// TestRefusedWithOneLine: where cordon cannot make the sandbox asked for,
// nothing runs, and it says why in one line with exit 125: inside another
// cordon sandbox (whose seccomp filter refuses namespaces), under an
// address space limit too small for Go's runtime or a process limit that
// leaves it no thread, with a user settings file of another user's, and
// from a working directory that was removed.
func TestRefusedWithOneLine(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("nested", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.run("/.cordon/cordon", "run", "--", "touch", "ran")
			wantRefused(t, b, r, "seccomp filter of the cordon sandbox", "cordon run inside cordon run")
		})
		t.Run("address space too small", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("prlimit"))
			b := newBox(t, c)
			// Go's runtime would abort with a page of output and exit 2.
			r := b.runSpec(runSpec{via: []string{toolPath("prlimit"), "--as=268435456", "--"}, args: []string{"touch", filepath.Join(b.ws, "ran")}})
			wantRefused(t, b, r, "RLIMIT_AS", "under RLIMIT_AS=256M")
		})
		t.Run("no thread left", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("prlimit"))
			b := newBox(t, c)
			// Go's runtime would abort with a page of output and exit 2;
			// root's processes are not counted.
			r := b.runSpec(runSpec{via: []string{toolPath("prlimit"), "--nproc=1", "--"}, args: []string{"touch", filepath.Join(b.ws, "ran")}})
			errs := errLines(r.stderr)
			switch {
			case c.uid == 0 && (r.code != 0 || !exists(filepath.Join(b.ws, "ran"))):
				t.Errorf("root under RLIMIT_NPROC=1: want the run to run:\n%s", r)
			case c.uid != 0 && (r.code != 125 || len(errs) != 1 || !strings.Contains(errs[0], "RLIMIT_NPROC")):
				t.Errorf("under RLIMIT_NPROC=1: want 125 and one line naming RLIMIT_NPROC:\n%s", r)
			case c.uid != 0 && exists(filepath.Join(b.ws, "ran")):
				t.Error("the command ran")
			}
		})
		t.Run("settings of another user", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			// HOME in someone else's home: his settings would widen the
			// caller's sandbox (root's, with allowWrite //etc).
			p := filepath.Join(b.home, ".config", "cordon", "settings.json")
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(`{"sandbox": {"filesystem": {"allowWrite": ["//etc"]}}}`+"\n"), 0o644))
			b.chown()
			const other = 4242
			must(t, os.Chown(p, other, other))
			r := b.run("touch", "ran")
			wantRefused(t, b, r, "owned by uid 4242", fmt.Sprintf("a user settings file of uid %d", other))
			must(t, os.Chown(p, c.uid, c.gid))
			if r := b.run("touch", "ran"); r.code != 0 {
				t.Errorf("the caller's own settings file: %s", r)
			}
		})
		t.Run("working directory removed", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			gone := filepath.Join(b.ws, "gone")
			must(t, os.Mkdir(gone, 0o755))
			b.chown()
			// The directory goes while the shell is in it.
			r := b.runSpec(runSpec{dir: gone, via: []string{"/bin/sh", "-c", `rmdir "$PWD" && exec "$0" "$@"`}, args: []string{"touch", filepath.Join(b.ws, "ran")}})
			wantRefused(t, b, r, "working directory", "from a removed directory")
		})
	})
}
