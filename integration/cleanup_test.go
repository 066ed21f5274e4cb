//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNothingLeftBehind: a run that ends normally leaves no process, state
// directory or cgroup; while it runs, all three exist (so this test can
// fail).
func TestNothingLeftBehind(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, placement := range []struct {
			name string
			opts []boxOpt
		}{{"outside tmp", nil}, {"under tmp", []boxOpt{underTmp}}} {
			t.Run(placement.name, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c, placement.opts...)
				stdinR, stdinW, err := os.Pipe()
				must(t, err)
				defer stdinW.Close()
				r := b.start(runSpec{args: []string{"sh", "-c", "echo ready; read line; sleep " + uniqueSleep(77) + " & echo done"}, stdin: stdinR})
				stdinR.Close()
				r.waitStdout("ready\n")
				run := b.liveRun()
				stateDir := filepath.Join(c.stateRoot(), run.ID)
				if !exists(stateDir) {
					t.Errorf("no state directory %s while the run is live", stateDir)
				}
				if c.uid == 0 && len(cgroupRunDirs(run.ID)) == 0 {
					t.Errorf("no cgroup /sys/fs/cgroup/*/cordon/%s while the run is live", run.ID)
				}
				mine := func(p proc) bool { return p.env(boxEnv) == b.token }
				if len(procsWhere(mine)) == 0 && os.Geteuid() == 0 {
					t.Errorf("no process of the sandbox found by its environment while it runs")
				}
				_, _ = stdinW.WriteString("go\n")
				stdinW.Close()
				res := r.wait()
				if res.code != 0 || !strings.Contains(res.stdout, "done") {
					t.Fatalf("the run failed:\n%s", res)
				}
				if exists(stateDir) {
					t.Errorf("state directory %s left after the run", stateDir)
				}
				if left := cgroupRunDirs(run.ID); len(left) != 0 {
					t.Errorf("cgroups left after the run: %v", left)
				}
				deadline := time.Now().Add(2 * time.Second)
				for len(procsWhere(mine)) != 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				for _, p := range procsWhere(mine) {
					t.Errorf("process %d left after the run: %s", p.pid, p.cmdline())
				}
				for _, l := range b.list() {
					if l.ID == run.ID {
						t.Errorf("cordon list still shows the finished run: %+v", l)
					}
				}
			})
		}
	})
}
