//go:build linux

package integration

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cgroupLimits reports whether the caller's sandboxes get a cgroup (root
// here; a rootless caller with a delegated cgroup v2 subtree elsewhere): a
// run with a memory limit says once per state root when it falls back to
// rlimits.
func cgroupLimits(t *testing.T, b *box, env string) bool {
	t.Helper()
	r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--memory", "1G"}, args: []string{"true"}})
	if r.code != 0 {
		t.Fatalf("a run with a memory limit: %s", r)
	}
	return !strings.Contains(r.stderr, "by rlimit (no cgroup for the sandbox)")
}

// TestLimits: each limit holds inside the sandbox, the host stays
// responsive, and the run says which limit it met. Root enforces memory,
// processes and CPU with the sandbox's cgroup; a rootless caller without
// a delegated cgroup gets rlimits (data size, processes in its own
// user namespace) and no CPU limit.
func TestLimits(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("fork bomb", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			// Children that stay: the count that could be made is the
			// limit (minus the init, the command and python).
			script := `import os, time
n = 0
while n < 10000:
    try:
        pid = os.fork()
    except OSError as e:
        print("stopped", n, e.errno)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
`
			begin := time.Now()
			r := b.runSpec(runSpec{flags: []string{"--pids", "40", "--timeout", "20s"}, args: []string{"python3", "-c", script}})
			m := regexp.MustCompile(`^stopped (\d+) 11\n$`).FindStringSubmatch(r.stdout)
			if r.code != 0 || m == nil {
				t.Fatalf("want the forks to stop with EAGAIN (11):\n%s", r)
			}
			if n, _ := strconv.Atoi(m[1]); n < 20 || n > 40 {
				t.Errorf("%d processes made under a limit of 40", n)
			}
			if took := time.Since(begin); took > 15*time.Second {
				t.Errorf("the run took %v: its children were not ended with it", took)
			}
			if ps := b.sandboxProcs(); len(ps) != 0 {
				t.Errorf("%d processes outlived the run", len(ps))
			}
		})
		t.Run("memory hog", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			_, env := privateState(t, b)
			cgroup := cgroupLimits(t, b, env)
			// 400 MiB written, under a limit of 150 MiB.
			hog := "x = bytearray(400 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\nprint('survived')"
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--memory", "150M"}, args: []string{"python3", "-c", hog}})
			if strings.Contains(r.stdout, "survived") {
				t.Fatalf("400 MiB under a 150 MiB limit:\n%s", r)
			}
			if cgroup {
				if r.code != 137 || !strings.Contains(r.stderr, "cordon: killed: out of memory (the sandbox's limit is 150.0M)") {
					t.Errorf("want exit 137 and the out-of-memory note:\n%s", r)
				}
			} else if r.code != 1 || !strings.Contains(r.stderr, "MemoryError") {
				t.Errorf("want python's MemoryError (the data size limit):\n%s", r)
			}
			// The limit is the sandbox's, not the command's budget for ever:
			// a command within it runs.
			r = b.runSpec(runSpec{env: []string{env}, flags: []string{"--memory", "150M"},
				args: []string{"python3", "-c", "x = bytearray(40 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\nprint('fine')"}})
			if r.code != 0 || r.stdout != "fine\n" {
				t.Errorf("40 MiB under a 150 MiB limit:\n%s", r)
			}
		})
		t.Run("disk filler in tmp", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("dd"))
			b := newBox(t, c)
			r := b.runSpec(runSpec{flags: []string{"--tmp-size", "8M"}, args: []string{"sh", "-c",
				"dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; echo dd=$?; du -k /tmp/fill | cut -f1"}})
			out := lines(r.stdout)
			if r.code != 0 || len(out) < 2 || !strings.Contains(r.stdout, "No space left on device") || out[len(out)-2] == "dd=0" {
				t.Fatalf("want dd to fail with ENOSPC:\n%s", r)
			}
			if kb, err := strconv.Atoi(out[len(out)-1]); err != nil || kb > 8*1024 {
				t.Errorf("/tmp/fill is %s KiB under an 8 MiB /tmp", out[len(out)-1])
			}
		})
		t.Run("files in tmp", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			// Empty files cost no data, but each costs the host's kernel
			// about 1 KiB: an 8 MiB /tmp holds at most 2048 of them.
			script := "import errno\nn = 0\ntry:\n    while n < 10000:\n        open('/tmp/f%d' % n, 'w').close(); n += 1\nexcept OSError as e:\n    print(n, e.errno == errno.ENOSPC)"
			r := b.runSpec(runSpec{flags: []string{"--tmp-size", "8M"}, args: []string{"python3", "-c", script}})
			f := strings.Fields(r.stdout)
			if r.code != 0 || len(f) != 2 || f[1] != "True" {
				t.Fatalf("want ENOSPC before 10000 files in an 8 MiB /tmp:\n%s", r)
			}
			if n, _ := strconv.Atoi(f[0]); n > 2048 || n < 1000 {
				t.Errorf("%d files made in an 8 MiB /tmp, want at most 2048", n)
			}
		})
		t.Run("disk filler in the workspace", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("dd"))
			b := newBox(t, c)
			r := b.runSpec(runSpec{flags: []string{"--file-size", "4M"}, args: []string{"dd", "if=/dev/zero", "of=big", "bs=1M", "count=64"}})
			if r.code == 0 {
				t.Errorf("dd wrote 64 MiB under a 4 MiB file size limit:\n%s", r)
			}
			fi, err := os.Stat(filepath.Join(b.ws, "big"))
			if err != nil || fi.Size() > 4<<20 {
				t.Errorf("the file on the host: %v, %v", fi.Size(), err)
			}
		})
		t.Run("endless output", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("yes"))
			b := newBox(t, c)
			r := b.runSpec(runSpec{flags: []string{"--output-limit", "64K", "--timeout", "2s"}, args: []string{"yes"}})
			if r.code != 124 {
				t.Errorf("want the timeout's 124:\n%s", r)
			}
			kept, marker, ok := strings.Cut(r.stdout, "\n[cordon: stdout truncated: 65536 bytes kept, ")
			if !ok || len(kept) != 64<<10 || !strings.HasSuffix(marker, " dropped (output limit)]\n") {
				t.Errorf("want 64 KiB of y, then the marker; got %d bytes, marker %q", len(kept), clip(marker))
			}
			if !strings.Contains(r.stderr, "cordon: timed out after 2s") {
				t.Errorf("no timeout note:\n%s", r)
			}
		})
		t.Run("sleep past the timeout", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			begin := time.Now()
			r := b.runSpec(runSpec{flags: []string{"--timeout", "1s"}, args: []string{"sh", "-c", "sleep " + uniqueSleep(71) + " & sleep " + uniqueSleep(72)}})
			took := time.Since(begin)
			if r.code != 124 || !strings.Contains(r.stderr, "cordon: timed out after 1s: the command and everything it started were ended") {
				t.Errorf("want 124 and the note:\n%s", r)
			}
			if took < time.Second || took > 10*time.Second {
				t.Errorf("the run took %v under a 1s timeout", took)
			}
			if ps := b.sandboxProcs(); len(ps) != 0 {
				t.Errorf("processes outlived the timeout: %v", ps)
			}
		})
		t.Run("open files", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			script := "import errno\nfs = []\ntry:\n    while len(fs) < 1000: fs.append(open('/dev/null'))\nexcept OSError as e:\n    print(len(fs), e.errno == errno.EMFILE)"
			r := b.runSpec(runSpec{flags: []string{"--open-files", "32"}, args: []string{"python3", "-c", script}})
			f := strings.Fields(r.stdout)
			if r.code != 0 || len(f) != 2 || f[1] != "True" {
				t.Fatalf("want EMFILE:\n%s", r)
			}
			if n, _ := strconv.Atoi(f[0]); n >= 32 || n < 16 {
				t.Errorf("%d files opened under a limit of 32", n)
			}
		})
		t.Run("above the caller's hard limit", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("prlimit"))
			b := newBox(t, c)
			// The sandbox, in a user namespace, may not raise a hard
			// limit: the caller's (lower) one is the command's.
			r := b.runSpec(runSpec{via: []string{toolPath("prlimit"), "--nofile=256:256", "--"}, flags: []string{"--open-files", "1024"}, args: []string{"grep", "open files", "/proc/self/limits"}})
			if f := strings.Fields(r.stdout); r.code != 0 || len(f) < 5 || f[3] != "256" || f[4] != "256" {
				t.Errorf("--open-files 1024 under a hard limit of 256: want the command to run with 256:\n%s", r)
			}
		})
		t.Run("cpu", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			_, env := privateState(t, b)
			if !cgroupLimits(t, b, env) {
				t.Skip("no cgroup for this caller's sandboxes: the CPU limit is not enforced (said once per boot)")
			}
			spin := "import time\nt = time.time()\nwhile time.time() - t < 2: pass"
			r := b.runSpec(runSpec{env: []string{env}, flags: []string{"--cpus", "0.2", "--stats"}, args: []string{"python3", "-c", spin}})
			cpu := statsCPU(t, r)
			// 2 s of wall at 20% is 0.4 s; at full speed it would be 2 s.
			if cpu > 900*time.Millisecond {
				t.Errorf("%v of CPU in 2 s under a quota of 0.2 CPU:\n%s", cpu, r)
			}
		})
		t.Run("stats", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.runSpec(runSpec{flags: []string{"--stats"}, args: []string{"sh", "-c", "true"}})
			re := regexp.MustCompile(`(?m)^cordon: wall \S+, cpu \S+ \(user \S+, sys \S+\), peak memory \S+`)
			if r.code != 0 || !re.MatchString(r.stderr) {
				t.Errorf("want the --stats line:\n%s", r)
			}
			statsCPU(t, r)
		})
	})
}

// statsCPU reads the CPU time from the --stats line.
func statsCPU(t *testing.T, r result) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`cpu (\S+) \(user`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no --stats line:\n%s", r)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("--stats cpu %q: %v", m[1], err)
	}
	return d
}

// TestOutputLimitReaderGone: with --output-limit, a command whose output's
// reader went away (cordon run ... | head -1) gets EPIPE, as without the
// limit, warm as cold. Past the limit nothing was written any more, so
// nothing saw the reader go: the command ran on for ever, its output read
// and dropped.
func TestOutputLimitReaderGone(t *testing.T) {
	t.Parallel()
	requires(t, needTool("yes"))
	eachCaller(t, func(t *testing.T, c *caller) {
		sb := newServeBox(t, c)
		sb.serve("--pool", "1")
		for _, mode := range []struct{ name, serve string }{{"warm", "1"}, {"cold", "0"}} {
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			cmd := sb.command(ctx, runSpec{env: []string{sb.stateEnv, "CORDON_SERVE=" + mode.serve}}, "run", "--output-limit", "1K", "--", "yes")
			r, w, err := os.Pipe()
			must(t, err)
			var stderr syncBuffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			waited, err := startLocked(cmd)
			w.Close()
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			if _, err := io.ReadFull(r, buf); err != nil {
				t.Errorf("%s: no output: %v", mode.name, err)
			}
			r.Close()
			select {
			case err = <-waited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				err = <-waited
				t.Errorf("%s: the run did not end within 10s of its output's reader going away", mode.name)
			}
			cancel()
			if code := cmd.ProcessState.ExitCode(); code != 128+13 {
				t.Errorf("%s: exit %d (%v), want 141 (SIGPIPE), as without an output limit; stderr:\n%s", mode.name, code, err, stderr.String())
			}
		}
	})
}
