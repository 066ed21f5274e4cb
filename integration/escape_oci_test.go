//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	runc "github.com/containerd/go-runc"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// TestEscapeOCIHostView: cordon's init binds the host's top-level entries
// named in a memfd called cordon-host-view at descriptor 9, which cordon's
// own runs hand it. An OCI caller's preserved descriptors land at the same
// numbers: one crafted as such a memfd must not make the init bind the host
// (here its /etc) into a container whose spec never asked for it.
func TestEscapeOCIHostView(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	id := ociID("hostview")
	bundle := ociBundle(t, []string{"sh", "-c", "if [ -e /etc/debian_version ]; then echo host-etc-bound; else echo clean; fi"}, nil)
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		t.Fatalf("the host's /etc/debian_version, which the test looks for: %v", err)
	}
	r := ociRunc(t, bundle)

	// Descriptors 3 to 8 are nothing in particular, 9 the crafted view.
	var files []*os.File
	for range 6 {
		null, err := os.Open(os.DevNull)
		must(t, err)
		defer null.Close()
		files = append(files, null)
	}
	fd, err := unix.MemfdCreate("cordon-host-view", unix.MFD_CLOEXEC)
	must(t, err)
	view := os.NewFile(uintptr(fd), "cordon-host-view")
	defer view.Close()
	_, err = fmt.Fprintf(view, "cordon host view 1\nroot %s\nd etc\n", filepath.Join(bundle, "rootfs"))
	must(t, err)
	files = append(files, view)

	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	err = r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, ExtraFiles: files})
	if err == nil {
		must(t, r.Start(ctx, id))
		out := readUntil(t, pio.Stdout().(*os.File), "\n")
		if strings.Contains(out, "host-etc-bound") {
			t.Fatalf("a preserved memfd named cordon-host-view had the init bind the host's /etc into the container")
		}
		t.Fatalf("create with a crafted host view at descriptor 9 succeeded (the container said %q), want it refused", out)
	}
	if msg := lastLogError(t, r.Log); !strings.Contains(msg, "cordon-host-view") {
		t.Errorf("create: %v, log %q, want the crafted host view named", err, msg)
	}
}

// TestEscapeOCIExecHostView: the init of an OCI exec joins the container's
// mount namespace before it runs, and with it the container's /proc. A
// container that may mount (CAP_SYS_ADMIN in a user namespace of its own)
// plants a /proc whose self/fd/9 is a "host view" naming its /etc: the
// exec's init, privileged, must not act on it (it bound /etc read-only
// over itself, after making the container's mounts slaves).
func TestEscapeOCIExecHostView(t *testing.T) {
	requires(t, needOCI)
	ctx := context.Background()
	id := ociID("exec-hostview")
	plant := `mkdir -p /fake/self/fd && ln -s "/memfd:cordon-host-view planted" /fake/self/fd/9 &&
printf 'cordon host view 1\nroot /\nd etc\n' > "/memfd:cordon-host-view planted" &&
mount --bind /fake /proc && echo planted; exec sleep 300`
	bundle := ociBundle(t, []string{"sh", "-c", plant}, func(s *specs.Spec) {
		s.Root.Readonly = false
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 65536}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 65536}}
		var kept []specs.Mount
		for _, m := range s.Mounts {
			if m.Type != "cgroup" {
				kept = append(kept, m)
			}
		}
		s.Mounts = kept
		c := s.Process.Capabilities
		for _, set := range []*[]string{&c.Bounding, &c.Effective, &c.Permitted} {
			*set = append(*set, "CAP_SYS_ADMIN")
		}
	})
	r := ociRunc(t, bundle)
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio}))
	must(t, r.Start(ctx, id))
	readUntil(t, pio.Stdout().(*os.File), "planted")
	c, err := r.State(ctx, id)
	must(t, err)
	etcMounts := func() []string {
		var ms []string
		for line := range strings.Lines(readFile(fmt.Sprintf("/proc/%d/mountinfo", c.Pid))) {
			if f := strings.Fields(line); len(f) > 4 && f[4] == "/etc" {
				ms = append(ms, line)
			}
		}
		return ms
	}
	before := etcMounts()

	// The exec itself may fail (libcontainer finds no kernel files in the
	// planted /proc); what matters is what its init did first.
	execIO, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer execIO.Close()
	_ = r.Exec(ctx, id, specs.Process{Args: []string{"true"}, Cwd: "/", Env: []string{"PATH=/bin"}}, &runc.ExecOpts{IO: execIO})
	if after := etcMounts(); len(after) != len(before) {
		t.Errorf("the container's /etc mounts went from %q to %q: the exec's init bound the host view the container planted", before, after)
	}
	must(t, r.Kill(ctx, id, int(unix.SIGKILL), nil))
}

// TestEscapeOCIExecStdio: an attached exec without a terminal gives the
// process pipes, as runc's does, never the caller's own stdio. Run from a
// shell, cordon's stdin is the user's terminal: a process of the container
// that held it could read what the user types after exec returned (a
// password for sudo), write to it and change its modes.
func TestEscapeOCIExecStdio(t *testing.T) {
	requires(t, needOCI)
	r, id := sleepingContainer(t, "exec-stdio")

	// stdin: a terminal, as a user's; stdout and stderr: files.
	master, tty, slavePath := openPTY(t)
	defer master.Close()
	defer tty.Close()
	outF, errF := outputFiles(t)
	script := `for fd in 0 1 2; do printf "fd$fd "; readlink /proc/self/fd/$fd; done
[ -t 0 ] && echo stdin-is-a-terminal
read line; echo "got $line"; echo to-stderr >&2`
	cmd := exec.Command(cordonBin, "--root", r.Root, "exec", id, "sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, outF, errF
	must(t, cmd.Start())
	// The line the process reads comes through whatever it was given.
	_, err := master.Write([]byte("typed\n"))
	must(t, err)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("exec did not return")
	}
	out, stderr := readFile(outF.Name()), readFile(errF.Name())
	if err != nil {
		t.Fatalf("exec: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	for _, fd := range []string{"fd0", "fd1", "fd2"} {
		if !regexp.MustCompile(`(?m)^` + fd + ` pipe:\[`).MatchString(out) {
			t.Errorf("the exec'd process's %s is not a pipe of cordon's (runc gives pipes); it said:\n%s", fd, out)
		}
	}
	if strings.Contains(out, "stdin-is-a-terminal") || strings.Contains(out, slavePath) {
		t.Errorf("the exec'd process got the caller's terminal:\n%s", out)
	}
	if !strings.Contains(out, "got typed") || !strings.Contains(stderr, "to-stderr") {
		t.Errorf("stdio not passed through: stdout %q, stderr %q", out, stderr)
	}
}

// TestEscapeOCIDefaultRoot: without --root and without a runtime directory
// of its own, an unprivileged user's OCI containers live in
// /tmp/cordon-oci-UID. /tmp is everyone's: another user who made that
// directory first could read the containers' state and plant some of his
// (a state's hooks run as the user on delete). cordon refuses a directory
// there that is not the user's alone, as cordon run's state directory.
func TestEscapeOCIDefaultRoot(t *testing.T) {
	c := callers["user"]
	requires(t, needCaller(c), needOCI)
	dir := fmt.Sprintf("/tmp/cordon-oci-%d", c.uid)
	if _, err := os.Lstat(dir); err == nil {
		// The user's own, from an earlier run: kept aside meanwhile.
		aside := dir + ".aside-" + suiteToken
		must(t, os.Rename(dir, aside))
		t.Cleanup(func() { _ = os.Rename(aside, dir) })
	}
	env := []string{"XDG_RUNTIME_DIR="}
	// Planted by another user (nobody), open to all.
	must(t, os.Mkdir(dir, 0o777))
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o777))
	must(t, os.Chown(dir, 65534, 65534))
	out, stderr, code := ociCordon(t, c.cred, env, "list", "--format", "json")
	if code == 0 || !strings.Contains(stderr, dir) {
		t.Errorf("list with %s planted by another user: exit %d, %q %q; want a refusal naming it", dir, code, out, stderr)
	}
	r := newRootlessOCI(t, c, "planted-root", func(s *specs.Spec) { s.Process.Args = []string{"true"} })
	defer ociCordon(t, c.cred, env, "delete", "--force", r.id)
	_, stderr, code = ociCordon(t, c.cred, env, "create", "--bundle", r.dir, r.id)
	if code == 0 || !strings.Contains(stderr, dir) {
		t.Errorf("create with %s planted by another user: exit %d, %q; want a refusal naming it", dir, code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the user's container state went into the planted %s: %v", dir, entries)
		// Its init waits there: delete it while its state is there.
		ociCordon(t, c.cred, env, "delete", "--force", r.id)
	}
	must(t, os.RemoveAll(dir))

	// Made by the user's cordon: the user's, closed to others.
	out, stderr, code = ociCordon(t, c.cred, env, "list", "--format", "json")
	if code != 0 || strings.TrimSpace(out) != "null" {
		t.Errorf("list with no default root yet: exit %d, %q %q; want an empty list", code, out, stderr)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err == nil && (int(st.Uid) != c.uid || st.Mode&0o077 != 0) {
		t.Errorf("%s: uid %d, mode %o; want the user's, 0700", dir, st.Uid, st.Mode&0o7777)
	}
}

// TestEscapeOCIPolicyFile: dev.cordon.policy may name a policy file on the
// node, and a pod's author writes the annotation. Only a file in the
// directory of the runtime configuration is read: any other (/etc/shadow)
// would tell the author whether it exists, its first character, its first
// key. A path that is no regular file must fail create at once: /dev/zero
// was read until cordon, root on the node, ran out of memory; a FIFO held
// create for ever.
func TestEscapeOCIPolicyFile(t *testing.T) {
	requires(t, needOCI)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "runtime.json"), []byte(`{}`), 0o644))
	t.Setenv("CORDON_RUNTIME_CONFIG", filepath.Join(dir, "runtime.json"))
	fifo := filepath.Join(dir, "policy.fifo")
	must(t, unix.Mkfifo(fifo, 0o600))
	big := filepath.Join(dir, "big.json")
	must(t, os.WriteFile(big, []byte(`{"seccomp": true}`+strings.Repeat(" ", 4<<20)), 0o644))
	good := filepath.Join(dir, "policy.json")
	must(t, os.WriteFile(good, []byte(`{"noNewPrivileges": true}`), 0o644))
	elsewhere := filepath.Join(t.TempDir(), "policy.json")
	must(t, os.WriteFile(elsewhere, []byte(`{"noNewPrivileges": true}`), 0o644))
	must(t, os.Symlink(elsewhere, filepath.Join(dir, "link.json")))
	const outside = "a policy file must be in " // the directory
	for _, tc := range []struct{ name, path, want string }{
		{"regular", good, ""},
		{"elsewhere", elsewhere, outside},
		{"up and out", filepath.Join(dir, "..", filepath.Base(filepath.Dir(elsewhere)), "policy.json"), outside},
		{"a link out", filepath.Join(dir, "link.json"), outside},
		{"shadow", "/etc/shadow", outside},
		{"dev-zero", "/dev/zero", outside},
		{"fifo", fifo, "not a regular file"},
		{"big", big, "larger than"},
		// A template that left it unset must not run the pod unconfined.
		{"empty", "", "annotation dev.cordon.policy is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := ociID("policy-file-" + tc.name)
			bundle := ociBundle(t, []string{"true"}, func(s *specs.Spec) {
				s.Annotations = map[string]string{"dev.cordon.policy": tc.path}
			})
			r := ociRunc(t, bundle)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			null, err := runc.NewNullIO()
			must(t, err)
			defer null.Close()
			start := time.Now()
			err = r.Create(ctx, id, bundle, &runc.CreateOpts{IO: null})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("create with the policy file %s: %v; log: %s", tc.path, err, readFile(r.Log))
				}
				must(t, r.Delete(ctx, id, &runc.DeleteOpts{Force: true}))
				return
			}
			if err == nil {
				t.Fatalf("create with the policy file %s succeeded", tc.path)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("create with the policy file %s took %v", tc.path, d)
			}
			if msg := lastLogError(t, r.Log); !strings.Contains(msg, tc.want) {
				t.Errorf("create: %v, last log error %q, want %q", err, msg, tc.want)
			}
		})
	}

	// Nor is what the path names opened: opening a device is the device's
	// business (/dev/watchdog starts its timer; closed without a word, the
	// node reboots). Seen here on a FIFO: a writer waiting for a reader
	// must still wait after create.
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	id := ociID("policy-file-opened")
	bundle := ociBundle(t, []string{"true"}, func(s *specs.Spec) {
		s.Annotations = map[string]string{"dev.cordon.policy": fifo}
	})
	r := ociRunc(t, bundle)
	null, err := runc.NewNullIO()
	must(t, err)
	defer null.Close()
	if err := r.Create(context.Background(), id, bundle, &runc.CreateOpts{IO: null}); err == nil {
		t.Fatalf("create with the FIFO %s as policy file succeeded", fifo)
	}
	select {
	case <-opened:
		t.Errorf("create opened the FIFO its policy annotation named (a writer waiting on it got through)")
	case <-time.After(500 * time.Millisecond):
		// Let the writer go.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			<-opened
			f.Close()
		}
	}
}
