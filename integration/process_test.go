//go:build linux

package integration

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostSleep starts a sleep on the host as the caller, so that only the
// sandbox stands between the command and it.
func hostSleep(t *testing.T, c *caller) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", uniqueSleep(600))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL}
	waited, err := startLocked(cmd)
	must(t, err)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-waited
	})
	return cmd
}

// TestHostProcesses: the command cannot see or signal the host's
// processes, not even the caller's own.
func TestHostProcesses(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("signal a host process", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			host := hostSleep(t, c)
			pid := host.Process.Pid
			for _, script := range []string{
				fmt.Sprintf("kill -0 %d", pid),
				fmt.Sprintf("kill -TERM %d", pid),
				fmt.Sprintf("kill -KILL %d", pid),
				fmt.Sprintf("kill -KILL -- -%d", pid),
			} {
				r := b.sh(script)
				if r.code == 0 {
					t.Errorf("%q succeeded inside:\n%s", script, r)
				}
			}
			if st := (proc{pid}).state(); st == "" || st == "Z" {
				t.Fatalf("the host's sleep (pid %d) was killed from inside the sandbox (state %q)", pid, st)
			}
			if err := host.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("the host's sleep (pid %d): %v", pid, err)
			}
		})
		t.Run("host processes invisible", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			host := hostSleep(t, c)
			r := b.sh(`for d in /proc/[0-9]*; do echo "${d#/proc/} $(tr '\0' ' ' < $d/cmdline 2>/dev/null)"; done; if command -v ps >/dev/null; then echo --ps; ps -e -o pid=,args=; fi`)
			if r.code != 0 {
				t.Fatalf("listing processes failed:\n%s", r)
			}
			if strings.Contains(r.stdout, host.Args[1]) {
				t.Errorf("the host's %q is visible inside:\n%s", strings.Join(host.Args, " "), r.stdout)
			}
			var pids []int
			for _, l := range lines(r.stdout) {
				if l == "--ps" {
					break
				}
				f := strings.Fields(l)
				if n, err := strconv.Atoi(f[0]); err == nil {
					pids = append(pids, n)
				}
			}
			// The init, sh, and the for loop's subshells and tr.
			if len(pids) == 0 || len(pids) > 6 || pids[0] != 1 {
				t.Errorf("want only the sandbox's few processes, from pid 1; got %v:\n%s", pids, r.stdout)
			}
		})
	})
}

// TestBackgroundProcessesEnd: whatever the command leaves running in the
// background is gone when cordon returns, however it detached.
func TestBackgroundProcessesEnd(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, start string // start: sh code that starts S in the background
	}{
		{"&", `sleep S &`},
		{"nohup", `nohup sleep S >/dev/null 2>&1 &`},
		{"setsid", `setsid sleep S &`},
		{"setsid -f", `setsid -f sleep S >/dev/null 2>&1 </dev/null`},
		{"double fork", `(sleep S &)`},
		{"closed stdio", `(exec sleep S </dev/null >/dev/null 2>&1 &)`},
		{"ignores SIGTERM and SIGHUP", `(trap '' TERM HUP; exec sleep S) &`},
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				if strings.Contains(tc.start, "setsid") {
					requires(t, needTool("setsid"))
				}
				b := newBox(t, c)
				s := uniqueSleep(1234)
				// Do not return before the sleep runs: the test would
				// pass on a sandbox that never started it.
				script := fmt.Sprintf(`running() {
	for f in /proc/[0-9]*/cmdline; do
		[ "$(tr '\0' ' ' < "$f" 2>/dev/null)" = "sleep %s " ] && return 0
	done
	return 1
}
`, s) + strings.ReplaceAll(tc.start, "S", s) + `
i=0
until running; do i=$((i+1)); [ $i -gt 200 ] && { echo never started; exit 99; }; sleep 0.02; done
echo started`
				r := b.sh(script)
				if r.code != 0 || !strings.Contains(r.stdout, "started") {
					t.Fatalf("the background sleep did not start:\n%s", r)
				}
				now := len(procsRunning("sleep " + s))
				if n := waitProcs(3*time.Second, func(n int) bool { return n == 0 }, "sleep "+s); n != 0 {
					t.Errorf("%d \"sleep %s\" still run on the host 3s after cordon returned", n, s)
				} else if now != 0 {
					t.Logf("the background sleep was still there when cordon returned, gone a moment later")
				}
			})
		}
	})
}

// TestTreeDiesWithCordon: when cordon is killed with SIGKILL, every
// process of the sandbox ends; the state it could not remove goes at the
// next `cordon gc`, and `cordon list` shows live runs only.
func TestTreeDiesWithCordon(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		s1, s2 := uniqueSleep(2345), uniqueSleep(2346)
		script := fmt.Sprintf("sleep %s & sleep %s", s1, s2)
		r := b.start(runSpec{args: []string{"sh", "-c", script}})
		if n := waitProcs(10*time.Second, func(n int) bool { return n == 2 }, "sleep "+s1, "sleep "+s2); n != 2 {
			t.Fatalf("the sandbox's two sleeps never ran on the host (%d)", n)
		}

		// cordon list shows the live run with its command.
		run := b.liveRun()
		if got := strings.Join(run.Args, " "); got != "sh -c "+script {
			t.Errorf("cordon list: command %q, want %q", got, "sh -c "+script)
		}
		if run.Status != "running" || run.Orphaned || run.Pid == 0 {
			t.Errorf("cordon list: %+v, want a running, not orphaned run with a pid", run)
		}
		table := b.cordon(runSpec{}, "list")
		if !strings.Contains(table.stdout, run.ID) || !strings.Contains(table.stdout, script) {
			t.Errorf("cordon list does not show %s running %q:\n%s", run.ID, script, table)
		}
		quiet := b.cordon(runSpec{}, "list", "-q")
		if !containsLine(quiet.stdout, run.ID) {
			t.Errorf("cordon list -q does not show %s:\n%s", run.ID, quiet)
		}
		stateDir := filepath.Join(c.stateRoot(), run.ID)
		if !exists(stateDir) {
			t.Errorf("no state directory %s for the live run", stateDir)
		}
		if c.uid == 0 && len(cgroupRunDirs(run.ID)) == 0 {
			t.Errorf("no cgroup for the live run %s as root", run.ID)
		}

		must(t, r.cmd.Process.Kill())
		r.wait()
		if n := waitProcs(5*time.Second, func(n int) bool { return n == 0 }, "sleep "+s1, "sleep "+s2); n != 0 {
			t.Errorf("%d of the sandbox's sleeps outlived cordon killed by SIGKILL by 5s", n)
		}
		if n := len(procsWhere(func(p proc) bool { return p.env(boxEnv) == b.token })); n != 0 {
			t.Errorf("%d processes of the sandbox outlived cordon", n)
		}
		t.Logf("after SIGKILL: state directory left: %v; cgroups left: %v", exists(stateDir), cgroupRunDirs(run.ID))
		for _, l := range b.list() {
			if l.ID == run.ID {
				t.Logf("cordon list after SIGKILL, before gc: %+v", l)
			}
		}

		gc := b.cordon(runSpec{}, "gc")
		if gc.code != 0 {
			t.Errorf("cordon gc:\n%s", gc)
		}
		if !strings.Contains(gc.stdout, "removed "+run.ID) {
			// A parallel `cordon run` of the same caller may have
			// collected it first: what matters is that it is gone.
			t.Logf("cordon gc did not report %s (collected by another run?):\n%s", run.ID, gc)
		}
		if exists(stateDir) {
			t.Errorf("the state directory %s is still there after cordon gc", stateDir)
		}
		if left := cgroupRunDirs(run.ID); len(left) != 0 {
			t.Errorf("cgroups of the killed run left after cordon gc: %v", left)
		}
		for _, l := range b.list() {
			if l.ID == run.ID {
				t.Errorf("cordon list still shows the killed run after cordon gc: %+v", l)
			}
		}
	})
}

// TestNextRunCollects: the next `cordon run` removes what a run killed
// with SIGKILL left, as `cordon gc` would.
func TestNextRunCollects(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		r := b.start(runSpec{args: []string{"sh", "-c", "echo ready; exec sleep " + uniqueSleep(300)}})
		r.waitStdout("ready\n")
		run := b.liveRun()
		must(t, r.cmd.Process.Kill())
		r.wait()
		if next := b.run("true"); next.code != 0 {
			t.Fatalf("the next run:\n%s", next)
		}
		if d := filepath.Join(c.stateRoot(), run.ID); exists(d) {
			t.Errorf("the next cordon run did not remove %s", d)
		}
	})
}

func containsLine(s, line string) bool {
	for _, l := range lines(s) {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
