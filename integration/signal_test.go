//go:build linux

package integration

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSignalsForwarded: SIGTERM, SIGINT and SIGHUP sent to cordon reach the
// command; a command that does not handle them dies of them, and cordon
// exits 128+N.
func TestSignalsForwarded(t *testing.T) {
	t.Parallel()
	sigs := []struct {
		name string
		sig  syscall.Signal
	}{
		{"TERM", syscall.SIGTERM},
		{"INT", syscall.SIGINT},
		{"HUP", syscall.SIGHUP},
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, s := range sigs {
			t.Run(s.name+" trapped", func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				script := fmt.Sprintf(`trap 'echo got %s; exit 0' %s; echo ready; while :; do sleep 0.05; done`, s.name, s.name)
				r := b.start(runSpec{args: []string{"sh", "-c", script}})
				r.waitStdout("ready\n")
				must(t, r.cmd.Process.Signal(s.sig))
				res := r.waitFor(10 * time.Second)
				if res.code != 0 || !strings.Contains(res.stdout, "got "+s.name+"\n") {
					t.Errorf("SIG%s sent to cordon did not reach the command's trap (want \"got %s\" and exit 0):\n%s", s.name, s.name, res)
				}
			})
			t.Run(s.name+" untrapped", func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				r := b.start(runSpec{args: []string{"sh", "-c", "echo ready; exec sleep " + uniqueSleep(300)}})
				r.waitStdout("ready\n")
				must(t, r.cmd.Process.Signal(s.sig))
				res := r.waitFor(10 * time.Second)
				if want := 128 + int(s.sig); res.code != want {
					t.Errorf("SIG%s: exit status %d, want %d\n%s", s.name, res.code, want, res)
				}
			})
		}
	})
}

// TestOrphansReaped: a double-forked grandchild is re-parented to the
// sandbox's init, which reaps it when it exits: no zombie stays.
func TestOrphansReaped(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		script := `
(sleep 0.3 & echo $! > /tmp/orphan)
p=$(cat /tmp/orphan)
set -- $(cat /proc/$p/stat)
echo "ppid=$4"
sleep 1
if [ -e /proc/$p ]; then set -- $(cat /proc/$p/stat); echo "left: state=$3 ppid=$4"; else echo gone; fi
# Every process of the sandbox, by state: none may be a zombie.
for f in /proc/[0-9]*/stat; do set -- $(cat $f 2>/dev/null) && echo "proc $1 $2 $3"; done
`
		r := b.sh(script)
		if r.code != 0 {
			t.Fatalf("script failed:\n%s", r)
		}
		if !strings.Contains(r.stdout, "ppid=1\n") {
			t.Errorf("the orphan was not re-parented to the sandbox's init (pid 1):\n%s", r)
		}
		if !strings.Contains(r.stdout, "gone\n") {
			t.Errorf("the orphan was not reaped after it exited:\n%s", r)
		}
		for _, l := range lines(r.stdout) {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "proc" && f[3] == "Z" {
				t.Errorf("zombie in the sandbox: %s\n%s", l, r)
			}
		}
	})
}

// TestSignalDuringStartup: SIGTERM or SIGHUP sent to cordon at any moment
// of its start ends the run: cordon dies of it (before it takes signals,
// and the sandbox with it), or the command does. Forwarded while the
// sandbox's init was still setting itself up, the signal used to be lost
// (a pid namespace's init gets no signal it has no handler for), and the
// command ran on. (SIGINT takes the same way; a shell starts background
// jobs with it ignored, so it is left out.)
func TestSignalDuringStartup(t *testing.T) {
	t.Parallel()
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP}
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, sig := range sigs {
			t.Run(unix.SignalName(sig), func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				for d := time.Duration(0); d <= 30*time.Millisecond; d += 2 * time.Millisecond {
					r := b.start(runSpec{args: []string{"sh", "-c", "exec sleep " + uniqueSleep(310)}})
					time.Sleep(d)
					must(t, r.cmd.Process.Signal(sig))
					res := r.waitFor(5 * time.Second)
					if res.code != -1 && res.code != 128+int(sig) {
						t.Errorf("%s after %v: exit %d, want %d (or cordon killed by it)\n%s", unix.SignalName(sig), d, res.code, 128+int(sig), res)
					}
				}
				if ps := b.sandboxProcs(); len(ps) != 0 {
					t.Errorf("processes left: %v", ps)
				}
			})
		}
	})
}
