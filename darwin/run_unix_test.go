//go:build unix

package darwin

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// These tests run Run and StartMonitor on any Unix with stand-ins for
// /usr/bin/sandbox-exec and /usr/bin/log: shell scripts that take the same
// arguments. They check cordon's side (arguments, environment, stdio,
// statuses, signals, timeouts, rlimits, the profile file, the stream's
// reading), never Seatbelt's.

// fakeSandboxEnv names the stand-in for the re-executed test binary (see
// TestMain): LimitChild executes sandboxExec.
const fakeSandboxEnv = "CORDON_TEST_SANDBOX_EXEC"

func TestMain(m *testing.M) {
	if p := os.Getenv(fakeSandboxEnv); p != "" {
		sandboxExec = p
	}
	LimitChild()
	os.Exit(m.Run())
}

// fakeSandboxExec installs a stand-in for sandbox-exec that writes the
// profile it was given (and how: -p or -f) to dir/profile and dir/how,
// then executes the command, and returns dir.
func fakeSandboxExec(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
out=` + dir + `
case "$1" in
-p) printf '%s' "$2" > "$out/profile"; echo p > "$out/how" ;;
-f) cat "$2" > "$out/profile"; echo "f $2" > "$out/how" ;;
*) echo "sandbox-exec: usage" >&2; exit 64 ;;
esac
shift 2
[ "$1" = "--" ] || { echo "sandbox-exec: no --" >&2; exit 64; }
shift
exec "$@"
`
	path := filepath.Join(dir, "sandbox-exec")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := sandboxExec
	sandboxExec = path
	t.Cleanup(func() { sandboxExec = old })
	return dir
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunStdioEnvStatus(t *testing.T) {
	dir := fakeSandboxExec(t)
	var stdout, stderr strings.Builder
	res, err := Run(context.Background(), "(version 1)", []string{"/bin/sh", "-c", `read line; echo "out $line $FOO"; echo err >&2; pwd; exit 3`}, Options{
		Dir:    t.TempDir(),
		Env:    []string{"FOO=bar", "PATH=/usr/bin:/bin"},
		Stdin:  strings.NewReader("hello\n"),
		Stdout: &stdout,
		Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 3 || res.TimedOut || res.State == nil {
		t.Errorf("result %+v, want status 3", res)
	}
	if !strings.HasPrefix(stdout.String(), "out hello bar\n") || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	if got := read(t, filepath.Join(dir, "profile")); got != "(version 1)" {
		t.Errorf("profile %q", got)
	}
	if got := read(t, filepath.Join(dir, "how")); got != "p\n" {
		t.Errorf("a small profile goes inline, got %q", got)
	}
}

func TestRunDirectPipes(t *testing.T) {
	fakeSandboxExec(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A pipe is handed to the command as it is: what it writes arrives
	// even though cordon copies nothing.
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", "echo direct"}, Options{Stdout: w})
	w.Close()
	if err != nil || res.Status != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	line, _ := bufio.NewReader(r).ReadString('\n')
	if line != "direct\n" {
		t.Errorf("got %q", line)
	}
}

func TestRunEmptyEnvironment(t *testing.T) {
	fakeSandboxExec(t)
	var stdout strings.Builder
	// nil is an empty environment, never cordon's own.
	t.Setenv("CORDON_SECRET_TEST", "x")
	if _, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", `echo "[$CORDON_SECRET_TEST]"`}, Options{Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "[]\n" {
		t.Errorf("got %q", stdout.String())
	}
}

func TestRunSignalled(t *testing.T) {
	fakeSandboxExec(t)
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", "kill -TERM $$"}, Options{})
	if err != nil || res.Status != 128+15 {
		t.Errorf("%+v %v, want status 143", res, err)
	}
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	fakeSandboxExec(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", "sleep 30 & echo $! > " + pidFile + "; wait"}, Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != ExitTimedOut || !res.TimedOut {
		t.Errorf("result %+v, want the timeout's status", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(read(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	// The background sleep was in the group: it is gone (or a zombie
	// of an init that has not reaped it yet).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d of the command's group outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether pid has exited and waits to be reaped (Linux's
// /proc; elsewhere it says no).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestRunContextEnds(t *testing.T) {
	fakeSandboxExec(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, "P", []string{"/bin/sleep", "30"}, Options{})
	if err != nil || res.Status != 128+9 || res.TimedOut {
		t.Errorf("%+v %v, want killed, not timed out", res, err)
	}
}

func TestRunForwardsSignals(t *testing.T) {
	fakeSandboxExec(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		if line == "ready\n" {
			_ = syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		}
	}()
	script := `trap 'echo got >&2; exit 5' USR1; echo ready; while :; do sleep 0.05; done`
	var stderr strings.Builder
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", script}, Options{Stdout: w, Stderr: &stderr, Timeout: 10 * time.Second})
	w.Close()
	// The whole group gets it: the shell's sleep too, which the shell may
	// report.
	if err != nil || res.Status != 5 || !strings.HasSuffix(stderr.String(), "got\n") {
		t.Errorf("%+v %v, stderr %q: want the command to get SIGUSR1 and exit 5", res, err, stderr.String())
	}
}

func TestRunOutputLimit(t *testing.T) {
	fakeSandboxExec(t)
	var stdout, stderr strings.Builder
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", "printf 0123456789abcdef; printf xy >&2"}, Options{Stdout: &stdout, Stderr: &stderr, OutputLimit: 10})
	if err != nil || res.Status != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	want := "0123456789\n[cordon: stdout truncated: 10 bytes kept, 6 dropped (output limit)]\n"
	if stdout.String() != want || stderr.String() != "xy" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestRunProfileFile(t *testing.T) {
	dir := fakeSandboxExec(t)
	profile := "(version 1)\n" + strings.Repeat("; padding\n", 30<<10) // 300 KiB: past the inline budget
	res, err := Run(context.Background(), profile, []string{"/bin/true"}, Options{})
	if err != nil || res.Status != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if got := read(t, filepath.Join(dir, "profile")); got != profile {
		t.Errorf("the profile file holds %d bytes, want %d", len(got), len(profile))
	}
	how := strings.Fields(read(t, filepath.Join(dir, "how")))
	if len(how) != 2 || how[0] != "f" {
		t.Fatalf("a large profile goes in a file, got %q", how)
	}
	if _, err := os.Stat(how[1]); !os.IsNotExist(err) {
		t.Errorf("the profile file %s is still there: %v", how[1], err)
	}
}

func TestRunRlimits(t *testing.T) {
	fakeSandboxExec(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	res, err := Run(context.Background(), "P", []string{"/bin/sh", "-c", "ulimit -n; ulimit -Hn; ulimit -f"}, Options{
		Env:     []string{fakeSandboxEnv + "=" + sandboxExec},
		Stdout:  &stdout,
		Rlimits: []Rlimit{{"nofile", 64}, {"fsize", 512 * 100}},
		Self:    self,
	})
	if err != nil || res.Status != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	// ulimit -f counts blocks of 512 bytes.
	if diff := cmp.Diff("64\n64\n100\n", stdout.String()); diff != "" {
		t.Errorf("limits inside (-want +got):\n%s", diff)
	}
}

func TestRunNoRlimitsWithoutSelf(t *testing.T) {
	if _, err := Run(context.Background(), "P", []string{"true"}, Options{Rlimits: []Rlimit{{"nofile", 1}}}); err == nil {
		t.Error("rlimits need cordon's own path")
	}
}

func TestRunStartFails(t *testing.T) {
	old := sandboxExec
	sandboxExec = filepath.Join(t.TempDir(), "missing")
	t.Cleanup(func() { sandboxExec = old })
	res, err := Run(context.Background(), "P", []string{"true"}, Options{})
	if err == nil || res.Status != ExitCordonFailed {
		t.Errorf("%+v %v, want cordon's failure", res, err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	old := sandboxExec
	t.Cleanup(func() { sandboxExec = old })
	sandboxExec = filepath.Join(dir, "sandbox-exec")
	refuse := "#!/bin/sh\necho 'sandbox-exec: unbound variable: bogus at <input string>, line 1' >&2\nexit 65\n"
	if err := os.WriteFile(sandboxExec, []byte(refuse), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Check(context.Background(), "(bogus)")
	if err == nil || !strings.Contains(err.Error(), "unbound variable: bogus") {
		t.Errorf("Check = %v, want sandbox-exec's complaint", err)
	}
	fakeSandboxExec(t)
	if err := Check(context.Background(), "(version 1)"); err != nil {
		t.Errorf("Check of an accepted profile = %v", err)
	}
}

// fakeLog installs a stand-in for /usr/bin/log that prints script's
// output.
func fakeLog(t *testing.T, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := logCommand
	logCommand = path
	t.Cleanup(func() { logCommand = old })
}

func TestStartMonitor(t *testing.T) {
	lines := []string{
		kernelLine(t, "Sandbox: cat(7) deny(1) file-read-data /Users/u/.ssh/id_rsa\ncordon:run-1"),
		kernelLine(t, "Sandbox: cat(8) deny(1) file-read-data /x\ncordon:run-10"), // another run, same prefix
		`{"processID":99,"senderImagePath":"/tmp/Sandbox","eventMessage":"Sandbox: sh(9) deny(1) file-write-data /\ncordon:run-1"}`,
		kernelLine(t, "Sandbox: curl(10) deny(1) network-outbound 1.1.1.1:443\ncordon:run-1"),
	}
	var script strings.Builder
	// The arguments, then the banner, then the entries; then it streams on.
	script.WriteString(`[ "$1 $2 $3 $4" = "stream --style ndjson --predicate" ] || { echo "bad arguments: $*" >&2; exit 2; }` + "\n")
	script.WriteString(`echo 'Filtering the log data using "'"$5"'"'` + "\n")
	script.WriteString("sleep 0.1\n")
	for _, l := range lines {
		script.WriteString("cat <<'EOF'\n" + l + "\nEOF\n")
	}
	script.WriteString("exec sleep 30\n")
	fakeLog(t, script.String())

	got := make(chan Violation, 10)
	m, err := StartMonitor(context.Background(), "run-1", func(v Violation) { got <- v })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	close(got)
	var pids []int
	for v := range got {
		pids = append(pids, v.PID)
	}
	if diff := cmp.Diff([]int{7, 10}, pids); diff != "" {
		t.Errorf("reported pids (-want +got):\n%s", diff)
	}
	_ = m.Stop(0) // a second Stop does nothing
}

func TestStartMonitorFails(t *testing.T) {
	fakeLog(t, "echo \"log: Must be admin to run 'stream' command\" >&2; exit 64\n")
	_, err := StartMonitor(context.Background(), "run-1", func(Violation) {})
	if err == nil || !strings.Contains(err.Error(), "Must be admin") {
		t.Errorf("StartMonitor = %v, want the stream's complaint", err)
	}
	if _, err := StartMonitor(context.Background(), "bad tag", func(Violation) {}); err == nil {
		t.Error("a bad tag is refused")
	}
}

func TestStartMonitorBannerOnStderr(t *testing.T) {
	fakeLog(t, "echo 'Filtering the log data using \"x\"' >&2\nexec sleep 30\n")
	m, err := StartMonitor(context.Background(), "run-1", func(Violation) {})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Stop(0)
}

// TestSandboxExecIsFixed keeps the stand-in a test's: cordon runs
// /usr/bin/sandbox-exec and /usr/bin/log, never one found on PATH.
func TestSandboxExecIsFixed(t *testing.T) {
	if os.Getenv(fakeSandboxEnv) == "" && (sandboxExec != SandboxExec || logCommand != LogCommand) {
		t.Errorf("sandboxExec %s, logCommand %s", sandboxExec, logCommand)
	}
}
