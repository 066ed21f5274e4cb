//go:build linux

package integration

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"
)

// TestOCIContainerd runs cordon under a real containerd 1.6 (Debian's
// package), started here on its own socket, root and state directories:
// ctr and nerdctl use cordon as the runc binary of io.containerd.runc.v2,
// on a busybox image written here as an OCI layout (no registry).
func TestOCIContainerd(t *testing.T) {
	requires(t, needOCI, needContainerd)
	cd := startContainerd(t, "")
	image := cd.importBusybox(t)
	run := func(args ...string) []string {
		return append([]string{"run", "--runtime", "io.containerd.runc.v2", "--runc-binary", cordonBin, "--fifo-dir", cd.fifos}, args...)
	}
	id := func(name string) string { return "cordon-it-" + name }

	t.Run("echo", func(t *testing.T) {
		out, code := cd.ctr(t, nil, run("--rm", image, id("echo"), "echo", "hi")...)
		if code != 0 || out != "hi\n" {
			t.Fatalf("ctr run --rm echo hi: exit %d, %q", code, out)
		}
	})

	t.Run("exit-status", func(t *testing.T) {
		out, code := cd.ctr(t, nil, run("--rm", image, id("exit"), "sh", "-c", "exit 3")...)
		if code != 3 {
			t.Fatalf("ctr run of exit 3: exit %d, %q", code, out)
		}
	})

	t.Run("detached", func(t *testing.T) {
		name := id("detached")
		if out, code := cd.ctr(t, nil, run("-d", image, name, "sleep", "300")...); code != 0 {
			t.Fatalf("ctr run -d: exit %d, %s", code, out)
		}
		defer cd.ctr(t, nil, "container", "delete", name)
		defer cd.ctr(t, nil, "task", "delete", "--force", name)
		cd.waitTask(t, name, "RUNNING")
		out, code := cd.ctr(t, nil, "task", "exec", "--fifo-dir", cd.fifos, "--exec-id", "e1", name, "sh", "-c", "echo exec-ok; sleep 0.2; exit 4")
		if code != 4 || out != "exec-ok\n" {
			t.Errorf("ctr task exec: exit %d, %q, want exec-ok and exit 4", code, out)
		}
		if out, _ := cd.ctr(t, nil, "task", "ps", name); !regexp.MustCompile(`(?m)^\d+\s`).MatchString(out) {
			t.Errorf("ctr task ps:\n%s", out)
		}
		if out, code := cd.ctr(t, nil, "task", "pause", name); code != 0 {
			t.Errorf("ctr task pause: %s", out)
		}
		cd.waitTask(t, name, "PAUSED")
		if out, code := cd.ctr(t, nil, "task", "resume", name); code != 0 {
			t.Errorf("ctr task resume: %s", out)
		}
		cd.waitTask(t, name, "RUNNING")
		if out, code := cd.ctr(t, nil, "task", "kill", "--signal", "SIGKILL", name); code != 0 {
			t.Errorf("ctr task kill: %s", out)
		}
		cd.waitTask(t, name, "STOPPED")
		if out, code := cd.ctr(t, nil, "task", "delete", name); code != 0 || !strings.Contains(out, "137") {
			t.Errorf("ctr task delete: exit %d, %q, want the exit status 137 (SIGKILL)", code, out)
		}
	})

	t.Run("tty", func(t *testing.T) {
		pty, slave, err := console.NewPty()
		must(t, err)
		defer pty.Close()
		_ = pty.Resize(console.WinSize{Height: 24, Width: 80})
		tty, err := os.OpenFile(slave, os.O_RDWR, 0)
		must(t, err)
		defer tty.Close()
		out, code := cd.ctr(t, tty, run("--rm", "-t", image, id("tty"), "sh", "-c", "tty; echo tty-done")...)
		if code != 0 {
			t.Fatalf("ctr run -t: exit %d, %q", code, out)
		}
		f := dupFile(t, pty.Fd(), "pty")
		got := readUntil(t, f, "tty-done")
		if !strings.Contains(got, "/dev/pts/") {
			t.Errorf("ctr run -t: the container saw %q, want a terminal of its own", got)
		}
	})

	t.Run("policy", func(t *testing.T) {
		// A server on the host's loopback: a container with the host's
		// network reaches it, one under cordon's agent policy does not.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached") })}
		go srv.Serve(l)
		defer srv.Close()
		host, port, _ := net.SplitHostPort(l.Addr().String())
		// busybox's nc: its wget needs glibc's NSS modules, not in the image.
		script := "echo x > /etc/written && echo write-ok; printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc " + host + " " + port + "; echo; true"

		out, code := cd.ctr(t, nil, run("--rm", "--net-host", image, id("nopolicy"), "sh", "-c", script)...)
		if code != 0 || !strings.Contains(out, "write-ok") || !strings.Contains(out, "reached") {
			t.Fatalf("without a policy (control): exit %d, %q, want the write and the request to work", code, out)
		}
		name := id("policy")
		out, code = cd.ctr(t, nil, run("-d", "--net-host", "--annotation", "dev.cordon.policy=agent", image, name, "sh", "-c", script+"; exec sleep 300")...)
		if code != 0 {
			t.Fatalf("ctr run -d with dev.cordon.policy=agent: exit %d, %s", code, out)
		}
		defer cd.ctr(t, nil, "container", "delete", name)
		defer cd.ctr(t, nil, "task", "delete", "--force", name)
		cd.waitTask(t, name, "RUNNING")
		// `cordon state` under the shim's runc root says what was applied.
		stOut, _, code := cordonOCI(t, filepath.Join("/run/containerd/runc", cd.ns), "state", name)
		var st struct {
			Cordon *struct {
				Policy, Network, Seccomp string
				ReadonlyRootfs           bool
			}
		}
		if code != 0 || json.Unmarshal([]byte(stOut), &st) != nil || st.Cordon == nil ||
			st.Cordon.Network != "none" || st.Cordon.Seccomp != "agent" || !st.Cordon.ReadonlyRootfs {
			t.Errorf("cordon state of the container: exit %d\n%s\nwant what the agent policy applied", code, stOut)
		}
		cd.ctr(t, nil, "task", "kill", "--signal", "SIGKILL", name)
		cd.waitTask(t, name, "STOPPED")

		// The workload's output went to the task's fifos: run it again
		// attached to see what the policy refused.
		out, code = cd.ctr(t, nil, run("--rm", "--net-host", "--annotation", "dev.cordon.policy=agent", image, id("policy2"), "sh", "-c", script)...)
		if code != 0 || strings.Contains(out, "write-ok") || strings.Contains(out, "reached") ||
			!strings.Contains(out, "Read-only file system") {
			t.Errorf("under dev.cordon.policy=agent: exit %d, %q, want the write and the request refused", code, out)
		}

		// Egress through cordon's proxy: TestOCIProxy.
	})

	t.Run("nerdctl", func(t *testing.T) {
		nerdctl := nerdctlBinary(t)
		cmd := exec.Command(nerdctl, "--address", cd.sock, "--namespace", cd.ns, "--data-root", filepath.Join(cd.dir, "nerdctl"),
			"--cni-netconfpath", filepath.Join(cd.dir, "cni"), "run", "--rm", "--net", "none", "--runtime", cordonBin, image, "echo", "hi")
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+cd.dir)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "hi\n" {
			t.Errorf("nerdctl run --rm --net none --runtime cordon: %v, %q", err, out)
		}
	})
}

// needContainerd: Debian's containerd 1.6 and ctr.
func needContainerd() string {
	out, err := exec.Command("containerd", "--version").Output()
	if err != nil {
		return "containerd (apt-get install containerd)"
	}
	if !regexp.MustCompile(`\s(v?1\.6\.)`).Match(out) {
		return "containerd 1.6, not " + strings.TrimSpace(string(out))
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		return "ctr (apt-get install containerd)"
	}
	return ""
}

// containerd is a containerd this test started.
type containerd struct {
	dir, sock, ns, fifos string
	// stateHome is containerd's XDG_STATE_HOME, and so its shims' and
	// cordon's: the violation store of its containers is there.
	stateHome string
}

// containerdFixed are the paths containerd 1.6 and its runc shim use
// whatever the configuration says: the test removes what it adds there.
var containerdFixed = []string{"/run/containerd/s", "/run/containerd/runc", "/run/containerd/fifo"}

// startContainerd starts containerd with the CRI plugin off, or with
// criConfig, its configuration.
func startContainerd(t *testing.T, criConfig string) *containerd {
	t.Helper()
	// Short: the shim's socket path is derived from it.
	dir, err := os.MkdirTemp("/var/tmp", "cordon-it-ctd-")
	must(t, err)
	cd := &containerd{dir: dir, sock: filepath.Join(dir, "c.sock"), ns: "cordon-it-" + suiteToken, fifos: filepath.Join(dir, "fifo"),
		stateHome: filepath.Join(dir, "xdg-state")}
	if criConfig != "" {
		// The CRI plugin's namespace, always.
		cd.ns = "k8s.io"
	}
	must(t, os.MkdirAll(cd.fifos, 0o700))
	before := map[string]bool{}
	for _, d := range containerdFixed {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			before[filepath.Join(d, e.Name())] = true
		}
	}
	runExisted := exists("/run/containerd")
	disabled := `"io.containerd.grpc.v1.cri", `
	if criConfig != "" {
		disabled = ""
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = [`+disabled+`"io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), cd.sock, cd.sock+".ttrpc", filepath.Join(dir, "opt")) + criConfig
	must(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600))
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	must(t, err)
	cmd := exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+cd.stateHome)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, cmd.Start())
	t.Cleanup(func() {
		// Shims of this containerd outlive it: end them by pid.
		for _, p := range procsWhere(func(p proc) bool {
			return strings.Contains(p.cmdline(), "containerd-shim") && strings.Contains(p.cmdline(), cd.sock)
		}) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		// Mounts containerd left (a failed test): under its state.
		unmountUnder(dir)
		// The shim's cgroups are /NAMESPACE/ID: the parent stays (the CRI
		// plugin's pods are under their cgroup parent).
		if criConfig == "" {
			removeCgroups("/" + cd.ns)
		}
		for _, d := range containerdFixed {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				p := filepath.Join(d, e.Name())
				// The shims' runc roots are per namespace: another suite's
				// containerd, running meanwhile, keeps its own.
				if !before[p] && (d != "/run/containerd/runc" || e.Name() == cd.ns) {
					_ = os.RemoveAll(p)
				}
			}
		}
		if !runExisted {
			for _, d := range containerdFixed {
				_ = os.Remove(d)
			}
			_ = os.Remove("/run/containerd")
		}
		if t.Failed() {
			t.Logf("containerd's log:\n%s", clip(readFile(logf.Name())))
		}
		_ = os.RemoveAll(dir)
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", cd.sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not start:\n%s", readFile(logf.Name()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cd
}

// unmountUnder lazily unmounts every mount below dir, deepest first.
func unmountUnder(dir string) {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mounts = append(mounts, f[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
}

// ctr runs ctr against this containerd, with stdin, stdout and stderr on
// tty when given (then the output is on the terminal), and returns the
// combined output and the exit status.
func (cd *containerd) ctr(t *testing.T, tty *os.File, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", cd.sock, "--namespace", cd.ns}, args...)...)
	var out bytes.Buffer
	if tty != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 2*time.Second {
		t.Logf("slow: %s for ctr %s", d.Round(time.Millisecond), strings.Join(args, " "))
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ctr %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), code
}

// waitTask waits until ctr task ls shows the task in status.
func (cd *containerd) waitTask(t *testing.T, name, status string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := cd.ctr(t, nil, "task", "ls")
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == name && f[2] == status {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s not %s:\n%s", name, status, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// importBusybox writes a busybox image as an OCI image layout archive
// and imports it.
func (cd *containerd) importBusybox(t *testing.T) string {
	t.Helper()
	const name = "docker.io/cordon/busybox:it"
	path := filepath.Join(cd.dir, "busybox.tar")
	writeBusyboxImage(t, filepath.Join(cd.dir, "image-rootfs"), path, name, []string{"sh"})
	if out, code := cd.ctr(t, nil, "images", "import", path); code != 0 {
		t.Fatalf("ctr images import: exit %d\n%s", code, out)
	}
	return name
}

// writeBusyboxImage writes the image name, busybox's root (made in rootfs
// when missing) with cmd as its command, as an OCI image layout archive
// (layer tar, config, manifest, index, oci-layout) at path: what `ctr
// images import` reads, with no registry.
func writeBusyboxImage(t *testing.T, rootfs, path, name string, cmd []string) {
	t.Helper()
	if !exists(rootfs) {
		busyboxRoot(t, rootfs)
	}
	layer := tarDir(t, rootfs)
	blobs := map[string][]byte{}
	add := func(data []byte) (string, int) {
		sum := sha256.Sum256(data)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = data
		return d, len(data)
	}
	layerDigest, layerSize := add(layer)
	config, _ := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Env": []string{"PATH=/bin"}, "Cmd": cmd, "WorkingDir": "/"},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	configDigest, configSize := add(config)
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": configDigest, "size": configSize},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layerSize}},
	})
	manifestDigest, manifestSize := add(manifest)
	_, tag, _ := strings.Cut(name[strings.LastIndex(name, "/"):], ":")
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifestDigest, "size": manifestSize,
			"platform":    map[string]string{"architecture": runtime.GOARCH, "os": "linux"},
			"annotations": map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag},
		}},
	})
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	file := func(path string, data []byte) {
		must(t, tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		must(t, err)
	}
	file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	file("index.json", index)
	for d, data := range blobs {
		file("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), data)
	}
	must(t, tw.Close())
	must(t, os.WriteFile(path, archive.Bytes(), 0o600))
}

// tarDir archives dir as an image layer: root-owned, relative paths.
func tarDir(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name, h.Uid, h.Gid, h.Uname, h.Gname = rel, 0, 0, "", ""
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	}))
	must(t, tw.Close())
	return buf.Bytes()
}

// nerdctlVersion is the nerdctl that fits containerd 1.6.
const nerdctlVersion = "v1.7.7"

// nerdctlBinary returns nerdctl, built from its Go module into the user's
// cache once.
func nerdctlBinary(t *testing.T) string {
	t.Helper()
	return goToolBinary(t, "github.com/containerd/nerdctl", nerdctlVersion, "./cmd/nerdctl", "nerdctl")
}

// goToolBinary returns the program pkg of the Go module mod at version,
// built into the user's cache once (~/.cache/cordon-it/NAME-VERSION/NAME).
// Building takes a minute or so: without a cached build the test is
// skipped, unless CORDON_INTEGRATION=1, which builds it (and fails only
// when it cannot be built).
func goToolBinary(t *testing.T, mod, version, pkg, name string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	must(t, err)
	bin := filepath.Join(cache, "cordon-it", name+"-"+version, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if os.Getenv("CORDON_INTEGRATION") != "1" {
		t.Skipf("no cached %s %s build at %s (CORDON_INTEGRATION=1 builds it, about a minute)", name, version, bin)
	}
	out, err := exec.Command("go", "mod", "download", "-json", mod+"@"+version).Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v", mod, version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s@%s: %q", mod, version, out)
	}
	must(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	build := exec.Command("go", "build", "-o", bin+".tmp", pkg)
	build.Dir = m.Dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s %s: %v\n%s", name, version, err, out)
	}
	t.Logf("built %s %s from its module in %s", name, version, time.Since(start).Round(time.Second))
	must(t, os.Rename(bin+".tmp", bin))
	return bin
}
