//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runc "github.com/containerd/go-runc"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The OCI tests drive cordon as containerd's runc shim, nerdctl and the
// OCI validation suite do: runc's command line on bundles of their own, a
// busybox root made from Debian's busybox-static.

// busyboxPath is Debian's busybox-static.
const busyboxPath = "/bin/busybox"

// ociEnv marks the helper modes of this test binary the OCI tests use (see
// ociHelperMain).
const ociEnv = "CORDON_IT_OCI"

// needOCI: root (the OCI verbs run containers as runc does, with cgroups
// and every namespace) and a static busybox for the containers' root.
func needOCI() string {
	if os.Geteuid() != 0 {
		return "root (the OCI verbs as containerd runs them)"
	}
	if _, err := os.Stat(busyboxPath); err != nil {
		return busyboxPath + " (apt-get install busybox-static)"
	}
	return ""
}

// busyboxRoot fills dir with a root file system: busybox and a link per
// applet in /bin, and the directories a container needs.
func busyboxRoot(t testing.TB, dir string) {
	t.Helper()
	for _, d := range []string{"bin", "proc", "sys", "dev", "etc", "tmp", "root"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.Chmod(filepath.Join(dir, "tmp"), 0o1777))
	must(t, copyFile(busyboxPath, filepath.Join(dir, "bin", "busybox"), 0o755))
	out, err := exec.Command(busyboxPath, "--list").Output()
	must(t, err)
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" {
			continue
		}
		must(t, os.Symlink("busybox", filepath.Join(dir, "bin", applet)))
	}
	must(t, os.WriteFile(filepath.Join(dir, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "etc", "group"), []byte("root:x:0:\n"), 0o644))
}

// ociBundle makes a bundle in a new directory: busybox's root and the
// config.json `cordon spec` writes (runc's starter spec), running args
// without a terminal, changed by edit.
func ociBundle(t testing.TB, args []string, edit func(*specs.Spec)) string {
	t.Helper()
	dir := t.TempDir()
	busyboxRoot(t, filepath.Join(dir, "rootfs"))
	cmd := exec.Command(cordonBin, "spec", "--bundle", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cordon spec --bundle: %v\n%s", err, out)
	}
	var s specs.Spec
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	must(t, err)
	must(t, json.Unmarshal(data, &s))
	s.Process.Terminal = false
	s.Process.Args = args
	s.Process.Env = append(s.Process.Env, suiteEnv+"="+suiteToken)
	if edit != nil {
		edit(&s)
	}
	data, err = json.MarshalIndent(&s, "", "\t")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	return dir
}

// ociRunc is cordon driven by go-runc as containerd's shim drives runc:
// every call with --root, --log BUNDLE/log.json and --log-format json.
func ociRunc(t testing.TB, bundle string) *runc.Runc {
	t.Helper()
	root := t.TempDir()
	r := &runc.Runc{
		Command:   cordonBin,
		Root:      root,
		Log:       filepath.Join(bundle, "log.json"),
		LogFormat: runc.JSON,
	}
	t.Cleanup(func() {
		// Whatever a failed test left: every container under the root.
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			_ = r.Delete(context.Background(), e.Name(), &runc.DeleteOpts{Force: true})
		}
	})
	return r
}

// ociID is a container id unique to this run of the suite.
func ociID(name string) string { return "cordon-it-" + name + "-" + suiteToken }

// cordonOCI runs `cordon --root ROOT ARGS...` and returns its stdout,
// stderr and exit status.
func cordonOCI(t testing.TB, root string, args ...string) (string, string, int) {
	t.Helper()
	return ociCordon(t, nil, nil, append([]string{"--root", root}, args...)...)
}

// outputFiles are files for a cordon's stdout and stderr, closed when the
// test ends. Files, not pipes: a container created by that cordon
// inherits them and keeps them open as long as it lives.
func outputFiles(t testing.TB) (stdout, stderr *os.File) {
	t.Helper()
	dir := t.TempDir()
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	must(t, err)
	t.Cleanup(func() { stdout.Close() })
	stderr, err = os.Create(filepath.Join(dir, "stderr"))
	must(t, err)
	t.Cleanup(func() { stderr.Close() })
	return stdout, stderr
}

// sleepingContainer creates and starts a container running sleep 300 with
// no stdio, killed when the test ends, and returns its runtime and id.
func sleepingContainer(t *testing.T, name string) (*runc.Runc, string) {
	t.Helper()
	ctx := context.Background()
	id := ociID(name)
	bundle := ociBundle(t, []string{"sleep", "300"}, nil)
	r := ociRunc(t, bundle)
	null, err := runc.NewNullIO()
	must(t, err)
	t.Cleanup(func() { null.Close() })
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{IO: null}))
	must(t, r.Start(ctx, id))
	t.Cleanup(func() { _ = r.Kill(ctx, id, int(unix.SIGKILL), nil) })
	return r, id
}

// lastLogError is what containerd's shim shows when a call fails: the
// message of the last "level":"error" line of the log.
func lastLogError(t testing.TB, logFile string) string {
	t.Helper()
	data, err := os.ReadFile(logFile)
	if err != nil {
		return ""
	}
	msg := ""
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l struct{ Level, Msg string }
		if json.Unmarshal(line, &l) == nil && l.Level == "error" {
			msg = l.Msg
		}
	}
	return msg
}

// waitStatus polls the container's state until it is want.
func waitStatus(t testing.TB, r *runc.Runc, id, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := r.State(context.Background(), id)
		if err == nil && c.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s: status %v (err %v), want %s", id, c, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dupFile returns a file of its own for the descriptor fd, which another
// value owns: os.NewFile(fd) would close fd a second time (when collected,
// or closed), and by then the number may be another file's of this process
// (a lock, a pipe the poller waits on).
func dupFile(t testing.TB, fd uintptr, name string) *os.File {
	t.Helper()
	n, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("dup %s: %v", name, err)
	}
	f := os.NewFile(uintptr(n), name)
	t.Cleanup(func() { f.Close() })
	return f
}

// readUntil reads from f until it has seen s, or fails the test after ten
// seconds (f may be a terminal, which has no deadlines).
func readUntil(t testing.TB, f *os.File, s string) string {
	t.Helper()
	type chunk struct {
		data []byte
		err  error
	}
	got := []byte{}
	for !bytes.Contains(got, []byte(s)) {
		c := make(chan chunk, 1)
		go func() {
			buf := make([]byte, 4096)
			n, err := f.Read(buf)
			c <- chunk{buf[:n], err}
		}()
		select {
		case r := <-c:
			got = append(got, r.data...)
			if r.err != nil && !bytes.Contains(got, []byte(s)) {
				t.Fatalf("reading for %q: %v; got %q", s, r.err, got)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("reading for %q: timed out; got %q", s, got)
		}
	}
	return string(got)
}

func ociHelperMain(mode string, args []string) int {
	switch mode {
	case "shim":
		return ociShim(args)
	case "listener":
		return ociUnderListener(args)
	}
	return badMode
}
