//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	runc "github.com/containerd/go-runc"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// TestOCIVerbs drives every OCI verb through go-runc, as containerd's runc
// shim does, on one long-lived container.
func TestOCIVerbs(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	id := ociID("verbs")
	cgroup := "/cordon-it-oci/" + id
	t.Cleanup(func() { removeCgroups("/cordon-it-oci") })
	bundle := ociBundle(t, []string{"sh", "-c", "echo started; echo to-stderr >&2; read line; echo got $line; exec sleep 300"},
		func(s *specs.Spec) {
			s.Linux.CgroupsPath = cgroup
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 321, Soft: 123}}
		})
	r := ociRunc(t, bundle)

	// create: stdio through pipes, as the shim passes them.
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	pidFile := filepath.Join(bundle, "init.pid")
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: pidFile}))
	data, err := os.ReadFile(pidFile)
	must(t, err)
	pid, err := strconv.Atoi(string(data))
	must(t, err)

	c, err := r.State(ctx, id)
	must(t, err)
	if c.Status != "created" || c.Pid != pid || c.Bundle != bundle {
		t.Fatalf("state after create: %+v, want created with pid %d and bundle %s", c, pid, bundle)
	}
	// The process waits at the exec barrier: nothing ran yet.
	if cmdline := readFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !strings.Contains(cmdline, "init") {
		t.Errorf("before start the container's pid %d runs %q, want cordon's init waiting", pid, cmdline)
	}

	must(t, r.Start(ctx, id))
	stdout := pio.Stdout().(*os.File)
	readUntil(t, stdout, "started")
	readUntil(t, pio.Stderr().(*os.File), "to-stderr")
	fmt.Fprintln(pio.Stdin(), "hello")
	readUntil(t, stdout, "got hello")
	waitStatus(t, r, id, "running")

	// ps: the init and nothing else yet.
	pids, err := r.Ps(ctx, id)
	must(t, err)
	if !slices.Contains(pids, pid) {
		t.Errorf("ps: %v, want %d among them", pids, pid)
	}

	// exec, attached: its output and exit status come back.
	execIO, err := runc.NewPipeIO(0, 0)
	must(t, err)
	proc := specs.Process{Args: []string{"sh", "-c", "echo exec-out; exit 5"}, Cwd: "/", Env: []string{"PATH=/bin"}}
	err = r.Exec(ctx, id, proc, &runc.ExecOpts{IO: execIO})
	var ee *runc.ExitError
	if !errors.As(err, &ee) || ee.Status != 5 {
		t.Errorf("exec: %v, want exit status 5", err)
	}
	execIO.Stdin().Close()
	out, _ := readAll(execIO.Stdout().(*os.File))
	execIO.Close()
	if out != "exec-out\n" {
		t.Errorf("exec output %q, want exec-out", out)
	}
	// The spec's rlimits are the init's (specconv leaves them out: cordon
	// sets them on the process).
	if limits := readFile(fmt.Sprintf("/proc/%d/limits", pid)); !regexp.MustCompile(`Max open files\s+123\s+321`).MatchString(limits) {
		t.Errorf("the init's limits:\n%s\nwant open files 123 (soft), 321 (hard)", limits)
	}

	// exec, detached with a pid file, as the shim runs `ctr task exec`.
	execPid := filepath.Join(bundle, "exec.pid")
	detIO, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer detIO.Close()
	proc.Args = []string{"sh", "-c", "echo detached; exec sleep 200"}
	must(t, r.Exec(ctx, id, proc, &runc.ExecOpts{IO: detIO, PidFile: execPid, Detach: true}))
	readUntil(t, detIO.Stdout().(*os.File), "detached")
	data, err = os.ReadFile(execPid)
	must(t, err)
	ep, _ := strconv.Atoi(string(data))
	pids, err = r.Ps(ctx, id)
	must(t, err)
	if !slices.Contains(pids, ep) {
		t.Errorf("ps after exec: %v, want the exec'd pid %d among them", pids, ep)
	}

	// pause and resume: the cgroup freezer.
	must(t, r.Pause(ctx, id))
	waitStatus(t, r, id, "paused")
	if st := procState(pid); st != "D" && st != "S" && st != "T" {
		t.Logf("paused init in state %q", st)
	}
	must(t, r.Resume(ctx, id))
	waitStatus(t, r, id, "running")

	// update: the shim pipes linux.resources JSON to `update --resources -`.
	limit := int64(64 << 20)
	must(t, r.Update(ctx, id, &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &limit}}))
	if got := cgroupValue(cgroup, "memory", "memory.limit_in_bytes", "memory.max"); got != strconv.FormatInt(limit, 10) {
		t.Errorf("memory limit after update: %q, want %d", got, limit)
	}

	// events --stats: the cgroup's usage. Not go-runc's Stats: its
	// monitor waits for the command at once, and Wait closes the pipe the
	// event is still to be read from when the command exits first.
	evOut, err := exec.CommandContext(ctx, r.Command, "--root", r.Root, "events", "--stats", id).Output()
	if err != nil {
		t.Fatalf("events --stats: %v\n%s", err, evOut)
	}
	var ev runc.Event
	must(t, json.Unmarshal(evOut, &ev))
	st := ev.Stats
	if st == nil {
		t.Fatalf("events --stats: no stats in %s", evOut)
	}
	if st.Pids.Current < 2 {
		t.Errorf("stats: %d pids, want the init and the exec'd sleep", st.Pids.Current)
	}

	// list: this container, running.
	list, err := r.List(ctx)
	must(t, err)
	if len(list) != 1 || list[0].ID != id || list[0].Status != "running" {
		t.Errorf("list: %+v, want %s running", list, id)
	}

	// delete without --force refuses a running container, in runc's words.
	err = r.Delete(ctx, id, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot delete container "+id+" that is not stopped: running") {
		t.Errorf("delete of a running container: %v, want runc's refusal", err)
	}

	// kill: the shim sends numbers; a name works too. sh ignores SIGTERM
	// as PID 1 without a handler: SIGKILL ends it.
	must(t, r.Kill(ctx, id, int(unix.SIGKILL), nil))
	waitStatus(t, r, id, "stopped")
	err = r.Kill(ctx, id, int(unix.SIGKILL), nil)
	if err == nil || !strings.Contains(err.Error(), "container not running") {
		t.Errorf("kill of a stopped container: %v, want \"container not running\"", err)
	}
	must(t, r.Kill(ctx, id, int(unix.SIGKILL), &runc.KillOpts{All: true}))

	must(t, r.Delete(ctx, id, nil))
	if _, err := r.State(ctx, id); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("state after delete: %v, want \"does not exist\"", err)
	}
	if msg := lastLogError(t, r.Log); msg != "container does not exist" {
		t.Errorf("last error in the log: %q, want the shim to see \"container does not exist\"", msg)
	}
	// delete --force of an unknown id succeeds; without --force it fails.
	must(t, r.Delete(ctx, id, &runc.DeleteOpts{Force: true}))
	if err := r.Delete(ctx, id, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("delete of an unknown id: %v, want \"does not exist\"", err)
	}
	if dirs := cgroupDirs(cgroup); len(dirs) > 0 {
		t.Errorf("cgroups left after delete: %v", dirs)
	}

	// features: the runtime-spec features document.
	f, err := r.Features(ctx)
	must(t, err)
	if f.Linux == nil || f.Linux.Seccomp == nil || !slices.Contains(f.Hooks, "createRuntime") {
		t.Errorf("features: %+v, want Linux, seccomp and the createRuntime hook", f)
	}
}

// TestOCIExitStatusReaped checks the contract containerd's shim relies on:
// the pid in the pid file is a descendant of create that, reaped by a
// subreaper once create has exited, carries the workload's exit status.
func TestOCIExitStatusReaped(t *testing.T) {
	requires(t, needOCI)
	for _, tc := range []struct {
		name, script, kill, want string
	}{
		{"exit", "echo ran; exit 7", "", "exited 7"},
		{"signal", "echo ran; exec sleep 100", "KILL", "signaled 9"},
		{"signal-number", "trap 'exit 42' TERM; echo ran; sleep 100 & wait", "15", "exited 42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle := ociBundle(t, []string{"sh", "-c", tc.script}, nil)
			root := t.TempDir()
			cmd := exec.Command(os.Args[0], cordonBin, root, bundle, ociID("reap-"+tc.name), tc.kill)
			cmd.Env = append(os.Environ(), ociEnv+"=shim")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("shim: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "ran") || !strings.Contains(string(out), "reaped "+tc.want) {
				t.Errorf("shim saw:\n%s\nwant the workload's output and \"reaped %s\"", out, tc.want)
			}
		})
	}
}

// ociShim plays containerd's shim: a subreaper that runs create and start,
// then reaps the pid of the pid file and reports how it ended.
func ociShim(args []string) int {
	if len(args) != 5 {
		fmt.Fprintln(os.Stderr, "shim: CORDON ROOT BUNDLE ID KILL")
		return 2
	}
	cordon, root, bundle, id, kill := args[0], args[1], args[2], args[3], args[4]
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Println("subreaper:", err)
		return 1
	}
	run := func(a ...string) error {
		cmd := exec.Command(cordon, append([]string{"--root", root}, a...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		return cmd.Run()
	}
	pidFile := filepath.Join(bundle, "pid")
	if err := run("create", "--bundle", bundle, "--pid-file", pidFile, id); err != nil {
		fmt.Println("create:", err)
		return 1
	}
	defer run("delete", "--force", id)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	pid, _ := strconv.Atoi(string(data))
	if err := run("start", id); err != nil {
		fmt.Println("start:", err)
		return 1
	}
	if kill != "" {
		time.Sleep(200 * time.Millisecond)
		if err := run("kill", id, kill); err != nil {
			fmt.Println("kill:", err)
			return 1
		}
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		fmt.Printf("wait4(%d): %v (not reparented to the shim)\n", pid, err)
		return 1
	}
	switch {
	case ws.Exited():
		fmt.Printf("reaped exited %d\n", ws.ExitStatus())
	case ws.Signaled():
		fmt.Printf("reaped signaled %d\n", int(ws.Signal()))
	}
	return 0
}

// TestOCITerminal: create with --console-socket sends the pty master over
// the socket, as `ctr run -t` needs.
func TestOCITerminal(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	id := ociID("tty")
	bundle := ociBundle(t, []string{"sh", "-c", "tty; stty size; read x; echo got-$x"}, func(s *specs.Spec) {
		s.Process.Terminal = true
		s.Process.ConsoleSize = &specs.Box{Height: 30, Width: 100}
	})
	r := ociRunc(t, bundle)
	sock, err := runc.NewTempConsoleSocket()
	must(t, err)
	defer sock.Close()
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{ConsoleSocket: sock, PidFile: filepath.Join(bundle, "pid")}))
	con, err := sock.ReceiveMaster()
	must(t, err)
	defer con.Close()
	must(t, r.Start(ctx, id))
	f := dupFile(t, con.Fd(), "pty")
	out := readUntil(t, f, "30 100")
	if !strings.Contains(out, "/dev/pts/") {
		t.Errorf("tty inside: %q, want a /dev/pts terminal", out)
	}
	_, _ = con.Write([]byte("typed\n"))
	readUntil(t, f, "got-typed")
	waitStatus(t, r, id, "stopped")
	must(t, r.Delete(ctx, id, nil))
}

// TestOCIHooksAndErrors: createRuntime and poststop hooks run with the
// state on stdin (nerdctl's networking is a createRuntime hook), and a bad
// bundle fails create with its reason as the log's last error line.
func TestOCIHooksAndErrors(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	hookOut := filepath.Join(t.TempDir(), "hooks")
	hook := func(name string) specs.Hook {
		return specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", "echo " + name + " $(cat) >> " + hookOut}}
	}
	id := ociID("hooks")
	bundle := ociBundle(t, []string{"true"}, func(s *specs.Spec) {
		s.Hooks = &specs.Hooks{
			CreateRuntime: []specs.Hook{hook("createRuntime")},
			Poststart:     []specs.Hook{hook("poststart")},
			Poststop:      []specs.Hook{hook("poststop")},
		}
	})
	r := ociRunc(t, bundle)
	null, err := runc.NewNullIO()
	must(t, err)
	defer null.Close()
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{IO: null, PidFile: filepath.Join(bundle, "pid")}))
	must(t, r.Start(ctx, id))
	waitStatus(t, r, id, "stopped")
	must(t, r.Delete(ctx, id, nil))
	got := readFile(hookOut)
	for _, name := range []string{"createRuntime", "poststart", "poststop"} {
		var st specs.State
		i := strings.Index(got, name+" ")
		if i < 0 {
			t.Errorf("hook %s did not run; hooks wrote:\n%s", name, got)
			continue
		}
		line, _, _ := strings.Cut(got[i+len(name)+1:], "\n")
		if err := json.Unmarshal([]byte(line), &st); err != nil || st.ID != id || st.Bundle != bundle {
			t.Errorf("hook %s got state %q (%v), want id %s, bundle %s", name, line, err, id, bundle)
		}
	}

	// A process without a working directory: runc's wording, in the log.
	bad := ociBundle(t, []string{"true"}, func(s *specs.Spec) { s.Process.Cwd = "" })
	rb := ociRunc(t, bad)
	null2, err := runc.NewNullIO()
	must(t, err)
	defer null2.Close()
	err = rb.Create(ctx, ociID("bad"), bad, &runc.CreateOpts{IO: null2})
	if err == nil {
		t.Fatal("create of a bundle without cwd succeeded")
	}
	if msg := lastLogError(t, rb.Log); !strings.Contains(msg, "Cwd property must not be empty") {
		t.Errorf("last error line %q, want the reason (the shim shows it); create: %v; log:\n%s", msg, err, readFile(rb.Log))
	}
	// A failed create leaves nothing behind.
	if _, err := rb.State(ctx, ociID("bad")); err == nil {
		t.Error("state of a container whose create failed: it exists")
	}
}

// TestOCICLI: runc's command-line conventions the clients rely on:
// single-dash long flags, signal names, state JSON, list formats.
func TestOCICLI(t *testing.T) {
	requires(t, needOCI)
	root := t.TempDir()
	id := ociID("cli")
	bundle := ociBundle(t, []string{"sleep", "100"}, nil)
	logFile := filepath.Join(bundle, "log.json")
	_, stderr, code := cordonOCI(t, root, "-log", logFile, "-log-format", "json", "create", "-bundle", bundle, "-pid-file", filepath.Join(bundle, "pid"), id)
	if code != 0 {
		t.Fatalf("create with single-dash flags: exit %d\n%s", code, stderr)
	}
	defer cordonOCI(t, root, "delete", "--force", id)
	out, _, code := cordonOCI(t, root, "state", id)
	var st specs.State
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ID != id || st.Status != "created" || st.Pid <= 0 {
		t.Fatalf("state: exit %d, %q", code, out)
	}
	if _, stderr, code = cordonOCI(t, root, "start", id); code != 0 {
		t.Fatalf("start: %s", stderr)
	}
	// The default list: cordon run's sandboxes; with --root: runc's list.
	out, _, _ = cordonOCI(t, root, "list", "-q")
	if strings.TrimSpace(out) != id {
		t.Errorf("list -q with --root: %q, want %s", out, id)
	}
	out, _, _ = cordonOCI(t, root, "list", "--format", "json")
	var list []map[string]any
	if json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0]["status"] != "running" {
		t.Errorf("list --format json: %q", out)
	}
	if _, stderr, code = cordonOCI(t, root, "kill", id, "NOSUCH"); code != 1 || !strings.Contains(stderr, `unknown signal`) {
		t.Errorf("kill with a bad signal: exit %d, %q", code, stderr)
	}
	out, _, code = cordonOCI(t, root, "ps", id)
	if code != 0 || !strings.Contains(out, "PID") || !strings.Contains(out, "sleep 100") {
		t.Errorf("ps (table): exit %d\n%s", code, out)
	}
	if _, stderr, code = cordonOCI(t, root, "kill", id, "sigkill"); code != 0 {
		t.Errorf("kill with a lowercase name: %s", stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _ = cordonOCI(t, root, "state", id)
		if strings.Contains(out, `"stopped"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out, `"pid": 0`) {
		t.Errorf("state of a stopped container: %s, want pid 0 as runc", out)
	}
	if _, stderr, code = cordonOCI(t, root, "delete", id); code != 0 {
		t.Errorf("delete: %s", stderr)
	}
	// exec's inline form: everything after the id is the command.
	if _, stderr, code = cordonOCI(t, root, "exec", id, "ls", "-l"); code != 255 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("exec in a deleted container: exit %d, %q, want 255 and \"does not exist\"", code, stderr)
	}
}

func readAll(f *os.File) (string, error) {
	_ = f.SetReadDeadline(time.Now().Add(10 * time.Second))
	data, err := io.ReadAll(f)
	return string(data), err
}

// procState is the state letter of /proc/PID/stat.
func procState(pid int) string {
	s := readFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2 : i+3]
	}
	return ""
}

// cgroupValue reads a file of the container's cgroup: under the v1
// controller's hierarchy, or the unified one.
func cgroupValue(path, controller string, files ...string) string {
	for _, base := range []string{"/sys/fs/cgroup/" + controller, "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		for _, f := range files {
			if data, err := os.ReadFile(filepath.Join(base, path, f)); err == nil {
				return strings.TrimSpace(string(data))
			}
		}
	}
	return ""
}

// cgroupDirs lists the hierarchies where path exists.
func cgroupDirs(path string) []string {
	var out []string
	ms, _ := filepath.Glob("/sys/fs/cgroup/*" + path)
	for _, m := range ms {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			out = append(out, m)
		}
	}
	if fi, err := os.Stat("/sys/fs/cgroup" + path); err == nil && fi.IsDir() {
		out = append(out, "/sys/fs/cgroup"+path)
	}
	return out
}

// removeCgroups removes path, an empty cgroup, from every hierarchy.
func removeCgroups(path string) {
	for _, d := range cgroupDirs(path) {
		_ = os.Remove(d)
	}
}

// TestOCINetworkHook: a container whose policy allows no network has only
// loopback, even when a hook of the bundle's (nerdctl's CNI hook) put an
// interface into its network namespace; without the policy the interface
// stays.
func TestOCINetworkHook(t *testing.T) {
	requires(t, needOCI, needTool("ip"), needTool("nsenter"))
	// The hook reads the state on stdin and adds a veth pair in the
	// container's network namespace, as a CNI plugin adds one.
	cni := specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c",
		`pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p'); nsenter -t "$pid" -n ip link add cni0 type veth peer name cni1`}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"no policy", nil, "cni0 cni1 lo"},
		{"network none", map[string]string{"dev.cordon.network": "none"}, "lo"},
		{"agent", map[string]string{"dev.cordon.policy": "agent"}, "lo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ociInterfaces(t, "nethook-"+strings.ReplaceAll(tc.name, " ", "-"), func(s *specs.Spec) {
				s.Annotations = tc.annotations
				s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{cni}}
			})
			if out != tc.want {
				t.Errorf("interfaces inside: %q, want %q", out, tc.want)
			}
		})
	}
}

// ociInterfaces runs a container of the bundle edit makes, through the
// OCI verbs, and returns the network interfaces it sees.
func ociInterfaces(t *testing.T, name string, edit func(*specs.Spec)) string {
	t.Helper()
	ctx := context.Background()
	id := ociID(name)
	bundle := ociBundle(t, []string{"sh", "-c", "echo $(ls /sys/class/net)"}, edit)
	r := ociRunc(t, bundle)
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	if err := r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: filepath.Join(bundle, "pid")}); err != nil {
		t.Fatalf("create: %v; log: %s", err, readFile(r.Log))
	}
	must(t, r.Start(ctx, id))
	out := strings.TrimSpace(readUntil(t, pio.Stdout().(*os.File), "lo"))
	waitStatus(t, r, id, "stopped")
	must(t, r.Delete(ctx, id, nil))
	return out
}

// TestOCIExecTerminalHost: `exec -t` attached finds the caller's terminal
// on stderr, stdout or stdin, as runc does: with its input redirected
// (`cordon exec -t ID cmd < file` from a shell) the process still gets a
// terminal of its own, sized as the caller's, and its status comes back.
func TestOCIExecTerminalHost(t *testing.T) {
	requires(t, needOCI)
	r, id := sleepingContainer(t, "exec-tty-host")

	master, tty, _ := openPTY(t)
	defer master.Close()
	setSize(t, master, 21, 77)
	defer tty.Close()
	devNull, err := os.Open(os.DevNull)
	must(t, err)
	defer devNull.Close()
	cmd := exec.Command(cordonBin, "--root", r.Root, "exec", "-t", id, "sh", "-c", "tty; stty size; exit 6")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devNull, tty, tty
	must(t, cmd.Start())
	tty.Close()
	out := readUntil(t, master, "21 77")
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 6 {
		t.Errorf("exec -t with stdin from /dev/null: %v, want exit status 6; it said:\n%s", err, out)
	}
	if !strings.Contains(out, "/dev/pts/") {
		t.Errorf("exec -t: the process said %q, want a terminal", out)
	}
}

// TestOCIBundleSeccompKept: under the agent policy the bundle's own
// seccomp profile still holds (the two are merged into the one filter
// libcontainer installs): a bundle refusing mkdir with EACCES gets EACCES
// where the agent profile alone lets mkdir reach the read-only root
// (EROFS); and a bundle profile the merge cannot hold fails create.
func TestOCIBundleSeccompKept(t *testing.T) {
	requires(t, needOCI)
	eacces := uint(13)
	for _, tc := range []struct {
		name    string
		profile *specs.LinuxSeccomp
		want    string // what mkdir says; "" when create must fail
	}{
		{"no bundle profile", nil, "Read-only file system"},
		{"bundle refuses mkdir", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"mkdir", "mkdirat"}, Action: specs.ActErrno, ErrnoRet: &eacces},
		}}, "Permission denied"},
		{"bundle refuses IPv6 sockets only", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"socket"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{{Index: 0, Value: 10, Op: specs.OpEqualTo}}},
		}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			id := ociID("bundle-seccomp-" + strings.ReplaceAll(tc.name, " ", "-"))
			bundle := ociBundle(t, []string{"sh", "-c", "mkdir /made 2>&1; echo done"}, func(s *specs.Spec) {
				s.Annotations = map[string]string{"dev.cordon.policy": "agent"}
				s.Linux.Seccomp = tc.profile
			})
			r := ociRunc(t, bundle)
			pio, err := runc.NewPipeIO(0, 0)
			must(t, err)
			defer pio.Close()
			err = r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: filepath.Join(bundle, "pid")})
			if tc.want == "" {
				if err == nil {
					r.Delete(ctx, id, &runc.DeleteOpts{Force: true})
					t.Fatal("create succeeded; want it refused")
				}
				if log := lastLogError(t, r.Log); !strings.Contains(log, "seccomp") {
					t.Errorf("create's error %q does not name seccomp", log)
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v; log: %s", err, readFile(r.Log))
			}
			must(t, r.Start(ctx, id))
			out := readUntil(t, pio.Stdout().(*os.File), "done")
			if !strings.Contains(out, tc.want) {
				t.Errorf("mkdir in the container said %q, want %q", out, tc.want)
			}
			waitStatus(t, r, id, "stopped")
			must(t, r.Delete(ctx, id, nil))
		})
	}
}

// TestOCIJoinedNetwork: a container without network joins a namespace by
// path (as a pod's containers do) and keeps it, with cordon's egress rules
// in it; a bundle that names the node's own namespace by path gets a
// private one instead: the node's network never gets a pod's rules.
func TestOCIJoinedNetwork(t *testing.T) {
	requires(t, needOCI, needTool("ip"), needTool("nft"))
	ns := "cit-join-" + suiteToken
	netIP(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	netIP(t, "-n", ns, "link", "add", "cit0", "type", "veth", "peer", "name", "cit1")
	for _, tc := range []struct {
		name, path string
		want       string // the interfaces inside
		rules      bool   // cordon's table in the pod's namespace
	}{
		{"pod namespace", "/var/run/netns/" + ns, "cit0 cit1 lo", true},
		{"the node's namespace", "/proc/" + strconv.Itoa(os.Getpid()) + "/ns/net", "lo", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ociInterfaces(t, "joined-"+strings.NewReplacer(" ", "-", "'", "").Replace(tc.name), func(s *specs.Spec) {
				s.Annotations = map[string]string{"dev.cordon.policy": "agent"}
				for i, n := range s.Linux.Namespaces {
					if n.Type == specs.NetworkNamespace {
						s.Linux.Namespaces[i].Path = tc.path
					}
				}
			})
			if out != tc.want {
				t.Errorf("interfaces inside: %q, want %q", out, tc.want)
			}
			if tc.rules {
				if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", "inet", "cordon").CombinedOutput(); err != nil {
					t.Errorf("no cordon table in the pod's namespace: %v\n%s", err, out)
				}
			}
			if host, err := exec.Command("nft", "list", "table", "inet", "cordon").CombinedOutput(); err == nil {
				t.Errorf("cordon's table in the node's namespace:\n%s", host)
			}
		})
	}
}
