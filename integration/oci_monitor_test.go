//go:build linux

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	runc "github.com/containerd/go-runc"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The container's monitor (issue 9): a container whose policy records
// violations or serves the proxy gets `cordon oci-monitor ID`, which
// answers the refused system calls with EPERM and records them, serves
// the filtering proxy inside the container's network namespace, and ends
// with the container's init. Killed, it leaves the container isolated:
// the refusals fail with ENOSYS and nothing reaches the network.

// ociApplied is the part of `cordon state` these tests read.
type ociApplied struct {
	Status string `json:"status"`
	Cordon *struct {
		Policy         string   `json:"policy"`
		Seccomp        string   `json:"seccomp"`
		ReadonlyRootfs bool     `json:"readonlyRootfs"`
		Network        string   `json:"network"`
		EgressRules    bool     `json:"egressRules"`
		Violations     []string `json:"violations"`
		Proxy          *struct {
			AllowedDomains []string `json:"allowedDomains"`
			HTTP           string   `json:"http"`
			SOCKS          string   `json:"socks"`
		} `json:"proxy"`
	} `json:"cordon"`
	Monitor *struct {
		Pid     int  `json:"pid"`
		Running bool `json:"running"`
	} `json:"cordonMonitor"`
}

// ociViolation is a record of `cordon violations --json`.
type ociViolation struct {
	Run     string   `json:"run"`
	Kind    string   `json:"kind"`
	Command string   `json:"command"`
	Syscall string   `json:"syscall"`
	Args    []string `json:"args"`
	Host    string   `json:"host"`
	Port    int      `json:"port"`
	Reason  string   `json:"reason"`
	Hint    string   `json:"hint"`
}

// ociCordon runs cordon with env added, as cred (nil: this process's
// user), and returns its stdout, stderr and exit status.
func ociCordon(t testing.TB, cred *syscall.Credential, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cordonBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	outF, errF := outputFiles(t)
	cmd.Stdout, cmd.Stderr = outF, errF
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("cordon %s: %v", strings.Join(args, " "), err)
	}
	return readFile(outF.Name()), readFile(errF.Name()), code
}

// ociStateOf is `cordon --root ROOT state ID`, parsed.
func ociStateOf(t testing.TB, cred *syscall.Credential, root, id string) ociApplied {
	t.Helper()
	out, stderr, code := ociCordon(t, cred, nil, "--root", root, "state", id)
	var st ociApplied
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("cordon state %s: exit %d\n%s%s", id, code, out, stderr)
	}
	return st
}

// ociViolations is `cordon violations --json --run ID` with the store in
// stateHome.
func ociViolations(t testing.TB, cred *syscall.Credential, stateHome, id string) []ociViolation {
	t.Helper()
	out, stderr, code := ociCordon(t, cred, []string{"XDG_STATE_HOME=" + stateHome}, "violations", "--json", "--run", id)
	var vs []ociViolation
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil {
		t.Fatalf("cordon violations: exit %d\n%s%s", code, out, stderr)
	}
	return vs
}

// hasViolation reports whether vs has a record of kind for target (the
// system call, or host:port) whose arguments include arg (when set).
func hasViolation(vs []ociViolation, kind, target, arg string) bool {
	return slices.ContainsFunc(vs, func(v ociViolation) bool {
		t := v.Syscall
		if v.Host != "" {
			t = v.Host + ":" + strconv.Itoa(v.Port)
		}
		return v.Kind == kind && t == target && (arg == "" || slices.Contains(v.Args, arg))
	})
}

// checkMonitor checks that pid is the monitor of container id, running.
func checkMonitor(t testing.TB, st ociApplied, id string) int {
	t.Helper()
	if st.Monitor == nil || !st.Monitor.Running || st.Monitor.Pid <= 0 {
		t.Fatalf("cordon state of %s: monitor %+v, want one running", id, st.Monitor)
	}
	p := proc{st.Monitor.Pid}
	if cmd := p.cmdline(); !strings.HasSuffix(cmd, "cordon oci-monitor "+id) {
		t.Fatalf("pid %d runs %q, want cordon's monitor of %s", p.pid, cmd, id)
	}
	return p.pid
}

// waitGone waits until pid has ended (or is a zombie nobody reaped yet).
func waitGone(t testing.TB, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s := (proc{pid}).state(); s == "" || s == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d, %s) still runs", what, pid, proc{pid}.cmdline())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// monitorsOf lists the running monitors of container id.
func monitorsOf(id string) []proc {
	return procsWhere(func(p proc) bool { return strings.HasSuffix(p.cmdline(), " oci-monitor "+id) })
}

// ociShell drives a container whose process is a shell that runs each
// line it reads (stderr with stdout) and then says its exit status.
type ociShell struct {
	t     testing.TB
	in    io.Writer
	lines chan string
}

// ociShellArgs is the process of an ociShell container.
var ociShellArgs = []string{"sh", "-c", `while read -r line; do eval "$line" 2>&1; echo "__rc=$?"; done`}

func newOCIShell(t testing.TB, in io.Writer, out io.Reader) *ociShell {
	sh := &ociShell{t: t, in: in, lines: make(chan string, 256)}
	go func() {
		defer close(sh.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
	}()
	return sh
}

// run runs line in the container and returns its output and status.
func (sh *ociShell) run(line string) (string, int) {
	sh.t.Helper()
	if _, err := fmt.Fprintln(sh.in, line); err != nil {
		sh.t.Fatalf("container shell: %v", err)
	}
	var out []string
	timeout := time.After(40 * time.Second)
	for {
		select {
		case l, ok := <-sh.lines:
			if !ok {
				sh.t.Fatalf("container shell ended during %q; it said:\n%s", line, strings.Join(out, "\n"))
			}
			if rc, ok := strings.CutPrefix(l, "__rc="); ok {
				code, _ := strconv.Atoi(rc)
				return strings.Join(out, "\n"), code
			}
			out = append(out, l)
		case <-timeout:
			sh.t.Fatalf("container shell: %q did not end; it said:\n%s", line, strings.Join(out, "\n"))
		}
	}
}

// TestOCIViolations: under the agent policy, the refused system calls of
// the container's init and of a process exec'd into it fail with EPERM
// and are recorded under the container's id; the exec'd process gets the
// container's policy whatever the client sends; the monitor ends with the
// container, and with a container deleted before it started.
func TestOCIViolations(t *testing.T) {
	requires(t, needOCI)
	stateHome := t.TempDir()
	ctx := runc.WithExtraEnv(context.Background(), "XDG_STATE_HOME="+stateHome)
	id := ociID("records")
	bundle := ociBundle(t, ociShellArgs, func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.cordon.policy": "agent"}
	})
	r := ociRunc(t, bundle)
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	if err := r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: filepath.Join(bundle, "pid")}); err != nil {
		t.Fatalf("create: %v; log:\n%s", err, readFile(r.Log))
	}
	st := ociStateOf(t, nil, r.Root, id)
	if st.Cordon == nil || !slices.Contains(st.Cordon.Violations, "syscall") || !slices.Contains(st.Cordon.Violations, "socket") {
		t.Errorf("cordon state: %+v, want the refused system calls and sockets recorded", st.Cordon)
	}
	monitor := checkMonitor(t, st, id)
	must(t, r.Start(ctx, id))
	sh := newOCIShell(t, pio.Stdin(), pio.Stdout().(*os.File))

	out, code := sh.run("unshare -U true")
	if code == 0 || !strings.Contains(out, "Operation not permitted") {
		t.Errorf("unshare -U in the container: exit %d, %q, want EPERM", code, out)
	}
	out, code = sh.run("mount -t tmpfs none /tmp")
	if code == 0 || !strings.Contains(out, "permission denied") {
		t.Errorf("mount in the container: exit %d, %q, want it refused", code, out)
	}

	// exec, as `ctr task exec` sends it: the bundle's process with the
	// bundle's capabilities. It gets the container's policy.
	execIO, err := runc.NewPipeIO(0, 0)
	must(t, err)
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	must(t, err)
	var bs specs.Spec
	must(t, json.Unmarshal(b, &bs))
	proc := *bs.Process
	proc.Args = []string{"sh", "-c", "grep -E '^(CapBnd|CapEff|NoNewPrivs)' /proc/self/status; unshare -n true; echo exec-unshare=$?"}
	if len(proc.Capabilities.Bounding) == 0 {
		t.Fatal("the bundle's process has no capabilities: nothing to check")
	}
	err = r.Exec(ctx, id, proc, &runc.ExecOpts{IO: execIO})
	execIO.Stdin().Close()
	got, _ := readAll(execIO.Stdout().(*os.File))
	errOut, _ := readAll(execIO.Stderr().(*os.File))
	execIO.Close()
	if err != nil || !strings.Contains(got, "CapBnd:\t0000000000000000") || !strings.Contains(got, "CapEff:\t0000000000000000") ||
		!strings.Contains(got, "NoNewPrivs:\t1") || !strings.Contains(got, "exec-unshare=1") || !strings.Contains(errOut, "Operation not permitted") {
		t.Errorf("exec: %v\n%s%s\nwant no capabilities, no new privileges, unshare refused", err, got, errOut)
	}

	if _, err := fmt.Fprintln(pio.Stdin(), "exit 0"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, r, id, "stopped")
	waitGone(t, monitor, "the monitor of a stopped container")
	if st := ociStateOf(t, nil, r.Root, id); st.Monitor == nil || st.Monitor.Running {
		t.Errorf("cordon state of the stopped container: monitor %+v, want not running", st.Monitor)
	}
	must(t, r.Delete(ctx, id, nil))

	vs := ociViolations(t, nil, stateHome, id)
	for _, want := range []struct{ syscall, arg string }{
		{"unshare", "CLONE_NEWUSER"}, {"mount", "tmpfs"}, {"unshare", "CLONE_NEWNET"},
	} {
		if !hasViolation(vs, "syscall", want.syscall, want.arg) {
			t.Errorf("no record of %s %s in cordon violations --run %s: %+v", want.syscall, want.arg, id, vs)
		}
	}
	if len(monitorsOf(id)) > 0 {
		t.Errorf("monitors of %s left: %v", id, monitorsOf(id))
	}

	// A container deleted before it started: its monitor ends too.
	id2 := ociID("records-unstarted")
	null, err := runc.NewNullIO()
	must(t, err)
	defer null.Close()
	must(t, r.Create(ctx, id2, bundle, &runc.CreateOpts{IO: null, PidFile: filepath.Join(bundle, "pid2")}))
	monitor = checkMonitor(t, ociStateOf(t, nil, r.Root, id2), id2)
	must(t, r.Delete(ctx, id2, &runc.DeleteOpts{Force: true}))
	waitGone(t, monitor, "the monitor of a container deleted before it started")
}

// TestOCIViolationsRootless: an unprivileged user's containers record
// violations too (their proxy: TestOCIProxy).
func TestOCIViolationsRootless(t *testing.T) {
	c := callers["user"]
	requires(t, needCaller(c), func() string {
		if _, err := os.Stat(busyboxPath); err != nil {
			return busyboxPath + " (apt-get install busybox-static)"
		}
		return ""
	})
	r := newRootlessOCI(t, c, "records", func(s *specs.Spec) {
		s.Process.Args = []string{"sh", "-c", "unshare -U true; echo unshare=$?; mount -t tmpfs none /tmp; echo mount=$?"}
		s.Annotations = map[string]string{"dev.cordon.policy": "agent"}
	})
	if err := r.create(); err != nil {
		t.Fatalf("rootless create: %v\n%s", err, readFile(r.out))
	}
	r.runToEnd(checkMonitor(t, ociStateOf(t, c.cred, r.root, r.id), r.id))
	if got := readFile(r.out); !strings.Contains(got, "unshare=1") || !strings.Contains(got, "Operation not permitted") || !strings.Contains(got, "mount=1") {
		t.Errorf("the rootless container said:\n%s\nwant unshare and mount refused", got)
	}
	vs := ociViolations(t, c.cred, r.stateHome, r.id)
	if !hasViolation(vs, "syscall", "unshare", "CLONE_NEWUSER") || !hasViolation(vs, "syscall", "mount", "tmpfs") {
		t.Errorf("records of the rootless container: %+v, want unshare and mount", vs)
	}
}

// rootlessOCI is a container of the unprivileged caller c, in a bundle of
// busybox with a root, a state home (its violation records) and a run
// directory of the caller's own.
type rootlessOCI struct {
	t                            testing.TB
	c                            *caller
	dir, root, stateHome, runDir string
	id, out                      string // out: the container's stdout and stderr
	env                          []string
}

// newRootlessOCI writes the bundle: the rootless starter spec, changed by
// edit. The container is deleted (--force) when the test ends.
func newRootlessOCI(t testing.TB, c *caller, name string, edit func(*specs.Spec)) *rootlessOCI {
	t.Helper()
	dir, err := os.MkdirTemp(wsRootOutside, "oci-rootless-"+name+"-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	busyboxRoot(t, filepath.Join(dir, "rootfs"))
	s := runcExample(t, c)
	s.Process.Env = append(s.Process.Env, suiteEnv+"="+suiteToken)
	edit(s)
	data, err := json.Marshal(s)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	r := &rootlessOCI{t: t, c: c, dir: dir, id: ociID("rootless-" + name),
		root: filepath.Join(dir, "root"), stateHome: filepath.Join(dir, "state"), runDir: filepath.Join(dir, "run")}
	for _, d := range []string{r.root, r.stateHome, r.runDir} {
		must(t, os.Mkdir(d, 0o700))
		must(t, os.Chown(d, c.uid, c.gid))
	}
	r.out = filepath.Join(r.runDir, "out")
	r.env = []string{"XDG_STATE_HOME=" + r.stateHome}
	t.Cleanup(func() { r.run("delete", "--force", r.id) })
	return r
}

// run runs a cordon OCI verb on the container's root as the caller and
// returns what it printed.
func (r *rootlessOCI) run(args ...string) (string, int) {
	o, e, code := ociCordon(r.t, r.c.cred, r.env, append([]string{"--root", r.root}, args...)...)
	return o + e, code
}

// create creates the container, its output going to r.out (a file: a
// pipe would be held open by the container).
func (r *rootlessOCI) create() error {
	create := exec.Command(cordonBin, "--root", r.root, "create", "--bundle", r.dir, "--pid-file", filepath.Join(r.runDir, "pid"), r.id)
	create.Env = append(os.Environ(), r.env...)
	create.SysProcAttr = &syscall.SysProcAttr{Credential: r.c.cred}
	f, err := os.Create(r.out)
	must(r.t, err)
	defer f.Close()
	create.Stdout, create.Stderr = f, f
	return create.Run()
}

// runToEnd starts the created container, waits for it to stop and for its
// monitor to go, and deletes it.
func (r *rootlessOCI) runToEnd(monitor int) {
	r.t.Helper()
	if o, code := r.run("start", r.id); code != 0 {
		r.t.Fatalf("start: %s", o)
	}
	deadline := time.Now().Add(30 * time.Second)
	for ociStateOf(r.t, r.c.cred, r.root, r.id).Status != "stopped" {
		if time.Now().After(deadline) {
			r.t.Fatal("the rootless container did not stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitGone(r.t, monitor, "the monitor of a stopped rootless container")
	if o, code := r.run("delete", r.id); code != 0 {
		r.t.Fatalf("delete: %s", o)
	}
}

// runcExample is the rootless starter spec (`cordon spec --rootless`)
// for the caller c: its ids mapped to root inside.
func runcExample(t testing.TB, c *caller) *specs.Spec {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command(cordonBin, "spec", "--rootless", "--bundle", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("cordon spec --rootless: %v\n%s", err, out)
	}
	var s specs.Spec
	must(t, json.Unmarshal([]byte(readFile(filepath.Join(dir, "config.json"))), &s))
	s.Process.Terminal = false
	s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(c.uid), Size: 1}}
	s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(c.gid), Size: 1}}
	return &s
}

// TestOCIListenerBusy: the kernel allows one seccomp listener per filter
// chain. cordon running under a filter that has one cannot give an agent
// container's processes theirs: create fails, saying so, and leaves
// nothing behind, rather than running the container without its records.
func TestOCIListenerBusy(t *testing.T) {
	requires(t, needOCI)
	id := ociID("busy")
	bundle := ociBundle(t, []string{"true"}, func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.cordon.policy": "agent"}
	})
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], cordonBin, "--root", root, "create", "--bundle", bundle, id)
	cmd.Env = append(os.Environ(), ociEnv+"=listener")
	out, err := combinedToFile(t, cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("create under a filter with a listener: %v\n%s\nwant it to fail", err, out)
	}
	if !strings.Contains(out, "cordon runs under a seccomp filter that already has one") ||
		!strings.Contains(out, "device or resource busy") {
		t.Errorf("create under a filter with a listener said:\n%s\nwant the reason (EBUSY, one listener per process)", out)
	}
	if entries, _ := os.ReadDir(root); len(entries) > 0 {
		t.Errorf("left under the root: %v", entries)
	}
	if len(monitorsOf(id)) > 0 {
		t.Errorf("a monitor of the refused container runs: %v", monitorsOf(id))
	}
	// Without the policy's records the same container runs there.
	bundle2 := ociBundle(t, []string{"true"}, func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.cordon.network": "none"}
	})
	cmd = exec.Command(os.Args[0], cordonBin, "--root", root, "create", "--bundle", bundle2, id)
	cmd.Env = append(os.Environ(), ociEnv+"=listener")
	if out, err := combinedToFile(t, cmd); err != nil {
		t.Errorf("create without records under a listener: %v\n%s", err, out)
	}
	ociCordon(t, nil, nil, "--root", root, "delete", "--force", id)
}

// combinedToFile runs cmd with its stdout and stderr in a file, not a
// pipe (a container created by cmd would hold a pipe open as long as it
// lives), and returns what it wrote.
func combinedToFile(t testing.TB, cmd *exec.Cmd) (string, error) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	must(t, err)
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	return readFile(f.Name()), err
}

// ociUnderListener installs a seccomp filter with a listener in every
// thread of this process (it notifies kexec_file_load, which nothing
// here calls), then runs args with it inherited and returns its status.
func ociUnderListener(args []string) int {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_KEXEC_FILE_LOAD, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		fmt.Fprintln(os.Stderr, "seccomp:", errno)
		return 2
	}
	// The listener stays open here while the command runs: the filter has
	// one.
	defer unix.Close(int(fd))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}
