//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"
)

// The CRI tests drive containerd 1.6's CRI plugin as kubelet does, with
// crictl: pod sandboxes on a pod network (CNI's bridge and host-local
// plugins, Debian's containernetworking-plugins), containers, logs, exec,
// stop, update, removal, for the handler runc and the handler cordon of
// docs/kubernetes.md side by side. The containerd is the test's own (its
// root, state, socket and configuration); the images are written here as
// OCI layouts from Debian's busybox-static; crictl is built from its module.

// crictlVersion is the crictl the tests build (cri-tools' cmd/crictl).
const crictlVersion = "v1.37.0"

// criPauseImage and criImage are the images the test imports: a pause
// image (busybox's sleep, which ends with SIGKILL as containerd stops a
// sandbox) and busybox.
const (
	criPauseImage = "docker.io/cordon/pause:it"
	criImage      = "docker.io/cordon/busybox:it"
)

// criHandlers are the runtime handlers every lifecycle case runs under.
var criHandlers = []string{"runc", "cordon"}

// needCNI: the CNI plugins of Debian's containernetworking-plugins.
func needCNI() string {
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(criCNIBin, p)); err != nil {
			return "the CNI plugin " + p + " in " + criCNIBin + " (apt-get install containernetworking-plugins)"
		}
	}
	return ""
}

// criCNIBin is where Debian installs the CNI plugins.
const criCNIBin = "/usr/lib/cni"

// cri is a containerd with the CRI plugin, its pod network, and crictl.
type cri struct {
	*containerd
	crictl string
	// config is crictl's configuration (endpoints, timeout): the node's
	// /etc/crictl.yaml is never read.
	config string
	// bridge is the pod network's bridge; gateway is its address, the
	// node's on the pod network; subnet the pods' addresses.
	bridge, gateway, subnet string
	// cgroupParent is the pods' cgroup parent (each hierarchy).
	cgroupParent string
	logs         string // the pods' log directory
}

// startCRI starts containerd with the CRI plugin (handlers runc and
// cordon, the latter as docs/kubernetes.md configures it), a pod network,
// and imports the pause and busybox images.
func startCRI(t *testing.T) *cri {
	t.Helper()
	unlock := criLock(t)
	t.Cleanup(unlock)
	doc, err := os.ReadFile("../docs/kubernetes.md")
	must(t, err)
	m := regexp.MustCompile("(?s)```toml\n(\\[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.cordon\\].*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/kubernetes.md has no containerd snippet for the cordon handler")
	}
	handler := strings.Replace(string(m[1]), "/usr/local/bin/cordon", cordonBin, 1)
	// This machine has no systemd: cgroupfs, as the test's containerd.
	handler = strings.Replace(handler, "SystemdCgroup = true", "SystemdCgroup = false", 1)

	c := &cri{crictl: crictlBinary(t), bridge: "citcri" + suiteToken, cgroupParent: "/cordon-it-cri-" + suiteToken}
	// A subnet of the suite's own: another suite's pods elsewhere on this
	// host (a developer's parallel run) keep theirs.
	n, _ := strconv.Atoi(suiteToken)
	prefix := fmt.Sprintf("10.232.%d", n%250)
	c.gateway, c.subnet = prefix+".1", prefix+".0/24"

	dir, err := os.MkdirTemp("/var/tmp", "cordon-it-cri-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	cniConf := filepath.Join(dir, "cni")
	must(t, os.MkdirAll(cniConf, 0o755))
	c.logs = filepath.Join(dir, "logs")
	must(t, os.MkdirAll(c.logs, 0o755))
	c.criNetwork(t, cniConf, filepath.Join(dir, "ipam"))

	// restrict_oom_score_adj: kubelet's -998 for the sandbox needs
	// CAP_SYS_RESOURCE, which this machine's root may lack.
	config := fmt.Sprintf(`[plugins."io.containerd.grpc.v1.cri"]
  disable_apparmor = true
  restrict_oom_score_adj = true
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    conf_dir = %q
    bin_dir = %q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
`, criPauseImage, cniConf, criCNIBin) + handler

	netnsBefore := netnsPins()
	c.containerd = startContainerd(t, config)
	t.Cleanup(func() {
		// Pods a failed case left: their shims were killed by
		// startContainerd's cleanup (registered first, run last) — the
		// pins of their network namespaces and cgroups are ours to remove.
		for p := range netnsPins() {
			if !netnsBefore[p] {
				_ = syscall.Unmount(p, syscall.MNT_DETACH)
				_ = os.Remove(p)
			}
		}
	})
	t.Cleanup(func() { removeCgroupTree(c.cgroupParent) })
	c.config = filepath.Join(dir, "crictl.yaml")
	must(t, os.WriteFile(c.config, []byte(fmt.Sprintf("runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 60\n", c.sock, c.sock)), 0o600))

	if out, code := c.ctr(t, nil, "plugins", "ls"); !regexp.MustCompile(`(?m)^io\.containerd\.grpc\.v1\s+cri\s+\S+\s+ok\s*$`).MatchString(out) {
		t.Fatalf("the CRI plugin with the cordon handler did not load (exit %d):\n%s", code, out)
	}
	c.importImage(t, criPauseImage, []string{"/bin/sleep", "infinity"})
	c.importImage(t, criImage, []string{"sh"})
	return c
}

// criLock serialises the CRI tests between suites running at once on this
// host: containerd 1.6's CRI plugin always uses the namespace k8s.io, whose
// shims share /run/containerd/runc/k8s.io.
func criLock(t *testing.T) (unlock func()) {
	t.Helper()
	dir := "/run/lock"
	if _, err := os.Stat(dir); err != nil {
		dir = "/run"
	}
	f, err := os.OpenFile(filepath.Join(dir, "cordon-it-cri.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	deadline := time.Now().Add(15 * time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("lock the CRI tests (%s): %v", f.Name(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// criNetwork makes the pod network: a bridge with the gateway's address,
// made here rather than by the plugin (isGateway would turn the node's
// IP forwarding on), and the plugins' configuration.
func (c *cri) criNetwork(t *testing.T, confDir, ipamDir string) {
	t.Helper()
	removeStaleCRINetwork()
	netIP(t, "link", "add", c.bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", c.bridge).Run() })
	netIP(t, "addr", "add", c.gateway+"/24", "dev", c.bridge)
	netIP(t, "link", "set", c.bridge, "up")
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "cordon-it",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": c.bridge, "isGateway": false,
			"ipam": map[string]any{
				"type": "host-local", "dataDir": ipamDir,
				"ranges": []any{[]any{map[string]string{"subnet": c.subnet, "gateway": c.gateway}}},
				"routes": []any{map[string]string{"dst": "0.0.0.0/0"}},
			},
		}},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(confDir, "10-cordon-it.conflist"), data, 0o644))
}

// removeStaleCRINetwork removes the bridges, veths and service
// namespaces of suites that died before their cleanup (killed, timed out):
// under criLock no other suite's CRI test runs.
func removeStaleCRINetwork() {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, "citcri") || strings.HasPrefix(i.Name, "cits") {
			_ = exec.Command("ip", "link", "del", i.Name).Run()
		}
	}
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "citsvc") {
			_ = exec.Command("ip", "netns", "del", e.Name()).Run()
		}
	}
}

// netnsPins lists the network namespaces pinned in /var/run/netns, where
// containerd 1.6's CRI plugin pins its pods'.
func netnsPins() map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir("/var/run/netns")
	for _, e := range entries {
		out[filepath.Join("/var/run/netns", e.Name())] = true
	}
	return out
}

// removeCgroupTree removes the cgroup path and every cgroup below it (all
// empty once their processes are gone), in every hierarchy.
func removeCgroupTree(path string) {
	for _, d := range cgroupDirs(path) {
		var dirs []string
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = os.Remove(dirs[i])
		}
	}
}

// importImage writes an image of busybox with the entrypoint args as an
// OCI layout and imports it into the CRI's namespace.
func (c *cri) importImage(t *testing.T, name string, entrypoint []string) {
	t.Helper()
	path := filepath.Join(c.dir, strings.NewReplacer("/", "_", ":", "_").Replace(name)+".tar")
	writeBusyboxImage(t, filepath.Join(c.dir, "image-rootfs"), path, name, entrypoint)
	if out, code := c.ctr(t, nil, "images", "import", path); code != 0 {
		t.Fatalf("ctr -n %s images import %s: exit %d\n%s", c.ns, name, code, out)
	}
}

// crictlBinary returns crictl, built from its Go module into the user's
// cache once (about a minute).
func crictlBinary(t *testing.T) string {
	t.Helper()
	return goToolBinary(t, "sigs.k8s.io/cri-tools", crictlVersion, "./cmd/crictl", "crictl")
}

// run runs crictl with args and stdin, and returns its stdout, stderr and
// exit status.
func (c *cri) run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.crictl, append([]string{"--config", c.config}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if d := time.Since(start); d > 3*time.Second {
		t.Logf("slow: %s for crictl %s", d.Round(time.Millisecond), strings.Join(args, " "))
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("crictl %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), code
}

// must runs crictl and fails the test unless it succeeds; it returns the
// trimmed output.
func (c *cri) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := c.run(t, "", args...)
	if code != 0 {
		t.Fatalf("crictl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return strings.TrimSpace(out)
}

// criPod is a pod sandbox the test runs.
type criPod struct {
	c       *cri
	id      string
	config  string // its configuration file
	handler string
}

// runPod runs a pod sandbox under handler with annotations, on the pod
// network, and removes it when the test ends.
func (c *cri) runPod(t *testing.T, name, handler string, annotations map[string]string) *criPod {
	t.Helper()
	conf := map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "cordon-it", "uid": name + "-" + suiteToken, "attempt": 0},
		"log_directory": filepath.Join(c.logs, name),
		"annotations":   annotations,
		"dns_config":    map[string]any{"servers": []string{c.gateway}},
		"linux": map[string]any{
			"cgroup_parent": c.cgroupParent,
		},
	}
	path := filepath.Join(c.dir, "pod-"+name+".json")
	data, err := json.Marshal(conf)
	must(t, err)
	must(t, os.WriteFile(path, data, 0o644))
	p := &criPod{c: c, config: path, handler: handler}
	p.id = c.must(t, "runp", "--runtime", handler, path)
	t.Cleanup(func() {
		c.run(t, "", "stopp", p.id)
		c.run(t, "", "rmp", "--force", p.id)
	})
	return p
}

// criContainer is a container of a pod.
type criContainer struct {
	pod *criPod
	id  string
}

// criContainerConfig is what the cases set of a container.
type criContainerConfig struct {
	args        []string
	annotations map[string]string
	tty         bool
	mounts      []map[string]any
}

// create creates a container in the pod (not started).
func (p *criPod) create(t *testing.T, name string, cc criContainerConfig) *criContainer {
	t.Helper()
	conf := map[string]any{
		"metadata":    map[string]any{"name": name},
		"image":       map[string]any{"image": criImage},
		"command":     cc.args,
		"log_path":    name + ".log",
		"annotations": cc.annotations,
		"tty":         cc.tty,
		"stdin":       cc.tty,
		"mounts":      cc.mounts,
		"linux":       map[string]any{},
	}
	path := filepath.Join(p.c.dir, "ctr-"+p.id[:12]+"-"+name+".json")
	data, err := json.Marshal(conf)
	must(t, err)
	must(t, os.WriteFile(path, data, 0o644))
	return &criContainer{pod: p, id: p.c.must(t, "create", p.id, path, p.config)}
}

// start creates and starts a container.
func (p *criPod) start(t *testing.T, name string, cc criContainerConfig) *criContainer {
	t.Helper()
	ct := p.create(t, name, cc)
	p.c.must(t, "start", ct.id)
	return ct
}

// criStatus is what `crictl inspect` says of a container.
type criStatus struct {
	Status struct {
		State    string `json:"state"`
		ExitCode int    `json:"exitCode"`
		Reason   string `json:"reason"`
	} `json:"status"`
	Info struct {
		Pid int `json:"pid"`
	} `json:"info"`
}

// inspect returns the container's status.
func (ct *criContainer) inspect(t *testing.T) criStatus {
	t.Helper()
	out := ct.pod.c.must(t, "inspect", ct.id)
	var st criStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("crictl inspect %s: %v\n%s", ct.id, err, out)
	}
	return st
}

// wait waits until the container has exited, and returns its status.
func (ct *criContainer) wait(t *testing.T) criStatus {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for {
		st := ct.inspect(t)
		if st.Status.State == "CONTAINER_EXITED" {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s still %s after %s", ct.id, st.Status.State, runTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logs returns the container's log (stdout and stderr).
func (ct *criContainer) logs(t *testing.T) string {
	t.Helper()
	out, errOut, code := ct.pod.c.run(t, "", "logs", ct.id)
	if code != 0 {
		t.Fatalf("crictl logs %s: exit %d\n%s%s", ct.id, code, out, errOut)
	}
	return out + errOut
}

// exec runs args in the container (crictl exec, no terminal) and returns
// the output and the process's exit status, which crictl 1.37 says only
// in its error ("exited with N") when it is not 0.
func (ct *criContainer) exec(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	flags := []string{"exec"}
	if stdin != "" {
		flags = append(flags, "-i")
	}
	out, errOut, code := ct.pod.c.run(t, stdin, append(append(flags, ct.id), args...)...)
	if code == 0 {
		return out, 0
	}
	if m := regexp.MustCompile(`(?:exited with|exit code) (\d+)`).FindStringSubmatch(errOut); m != nil {
		n, _ := strconv.Atoi(m[1])
		return out, n
	}
	t.Fatalf("crictl exec %s %q: exit %d\n%s%s", ct.id, args, code, out, errOut)
	return "", 0
}

// execTTY runs args in the container with a terminal (crictl exec -it, its
// stdio on a terminal of the test's) and returns every byte the terminal
// received.
func (ct *criContainer) execTTY(t *testing.T, args ...string) string {
	t.Helper()
	pty, slave, err := console.NewPty()
	must(t, err)
	defer pty.Close()
	_ = pty.Resize(console.WinSize{Height: 24, Width: 80})
	tty, err := os.OpenFile(slave, os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ct.pod.c.crictl, append([]string{"--config", ct.pod.c.config, "exec", "-it", ct.id}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = cmd.Start()
	tty.Close()
	must(t, err)
	// Everything until crictl has ended and the terminal is drained.
	f := dupFile(t, pty.Fd(), "pty")
	got := make(chan []byte, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				got <- all
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Errorf("crictl exec -it %s %q: %v", ct.id, args, err)
	}
	select {
	case out := <-got:
		return string(out)
	case <-time.After(10 * time.Second):
		t.Fatalf("crictl exec -it %s: the terminal did not end", ct.id)
		return ""
	}
}

// podIP is the pod's address on the pod network.
func (p *criPod) ip(t *testing.T) string {
	t.Helper()
	out := p.c.must(t, "inspectp", p.id)
	var st struct {
		Status struct {
			Network struct {
				IP string `json:"ip"`
			} `json:"network"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || net.ParseIP(st.Status.Network.IP) == nil {
		t.Fatalf("crictl inspectp %s: no pod address (%v)\n%s", p.id, err, out)
	}
	return st.Status.Network.IP
}

// TestCRI drives containerd's CRI plugin with crictl, as kubelet drives
// it, under the handlers runc and cordon: every step passes under both;
// under cordon the pod's annotations confine it as documented, and an
// agent pod keeps its pod network for what connects to it while its own
// connections go only through cordon's proxy, which connects from the pod.
func TestCRI(t *testing.T) {
	requires(t, needOCI, needContainerd, needCNI, needTool("ip"), needTool("nft"))
	c := startCRI(t)
	for _, h := range criHandlers {
		t.Run("lifecycle-"+h, func(t *testing.T) { c.testLifecycle(t, h) })
	}
	t.Run("policy", c.testPolicy)
	t.Run("agent-network", c.testAgentNetwork)
}

// testLifecycle: a pod and its containers through every step kubelet takes,
// and nothing left after their removal.
func (c *cri) testLifecycle(t *testing.T, handler string) {
	pod := c.runPod(t, "life-"+handler, handler, nil)
	if ip := net.ParseIP(pod.ip(t)); ip == nil || !strings.HasPrefix(ip.String(), strings.TrimSuffix(c.gateway, "1")) {
		t.Errorf("pod address %s, want one of %s", ip, c.subnet)
	}

	// Logs and the exit status.
	done := pod.start(t, "exit", criContainerConfig{args: []string{"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"}})
	if st := done.wait(t); st.Status.ExitCode != 3 {
		t.Errorf("exit 3: crictl inspect says %+v", st.Status)
	}
	if logs := done.logs(t); !strings.Contains(logs, "to-stdout") || !strings.Contains(logs, "to-stderr") {
		t.Errorf("crictl logs: %q, want both lines", logs)
	}

	main := pod.start(t, "main", criContainerConfig{args: []string{"sh", "-c",
		"trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.2; done"}})

	// exec: the status, streamed input, a terminal.
	if out, code := main.exec(t, "", "sh", "-c", "echo exec-ok; exit 4"); code != 4 || out != "exec-ok\n" {
		t.Errorf("crictl exec: %q, status %d; want exec-ok and 4", out, code)
	}
	if out, code := main.exec(t, "line-one\nline-two\n", "sh", "-c", "while read l; do echo got:$l; done"); code != 0 || out != "got:line-one\ngot:line-two\n" {
		t.Errorf("crictl exec -i: %q, status %d; want the two lines back", out, code)
	}
	// The terminal carries the command's bytes and nothing else.
	for range criTTYRuns {
		if out := main.execTTY(t, "tty"); !regexp.MustCompile(`^/dev/pts/\d+\r\n$`).MatchString(out) {
			t.Errorf("crictl exec -it tty: the terminal got %q, want the command's terminal and nothing else", out)
		}
	}

	// update: a new memory limit on the running container.
	c.must(t, "update", "--memory", "134217728", main.id)
	read := "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max"
	if out, _ := main.exec(t, "", "sh", "-c", read); strings.TrimSpace(out) != "134217728" {
		t.Errorf("the memory limit after crictl update --memory 134217728: %q", out)
	}

	// stop: SIGTERM, then SIGKILL after the grace period.
	c.must(t, "stop", "--timeout", "20", main.id)
	if st := main.inspect(t); st.Status.State != "CONTAINER_EXITED" || st.Status.ExitCode != 0 {
		t.Errorf("after crictl stop of a container that exits on SIGTERM: %+v", st.Status)
	}
	if logs := main.logs(t); !strings.Contains(logs, "got-term") {
		t.Errorf("the container's trap did not run: %q", logs)
	}
	stubborn := pod.start(t, "stubborn", criContainerConfig{args: []string{"sh", "-c", "trap '' TERM; echo started; while :; do sleep 0.2; done"}})
	waitLog(t, stubborn, "started")
	c.must(t, "stop", "--timeout", "1", stubborn.id)
	if st := stubborn.inspect(t); st.Status.ExitCode != 137 {
		t.Errorf("a container that ignores SIGTERM, stopped with a grace period of 1s: %+v, want 137", st.Status)
	}

	// Removal: nothing of the pod is left.
	pids := []int{}
	ids := []string{pod.id}
	for _, ct := range []*criContainer{done, main, stubborn} {
		c.must(t, "rm", ct.id)
		ids = append(ids, ct.id)
	}
	for _, p := range procsWhere(func(p proc) bool {
		return strings.Contains(p.cmdline(), "containerd-shim") && strings.Contains(p.cmdline(), pod.id)
	}) {
		pids = append(pids, p.pid)
	}
	netns := pod.netns(t)
	c.must(t, "stopp", pod.id)
	c.must(t, "rmp", pod.id)
	c.checkGone(t, pod, ids, pids, netns)
}

// netns is the pin of the pod's network namespace, from the sandbox's
// runtime spec ("" for a pod on the node's network).
func (p *criPod) netns(t *testing.T) string {
	t.Helper()
	out := p.c.must(t, "inspectp", p.id)
	var st struct {
		Info struct {
			RuntimeSpec struct {
				Linux struct {
					Namespaces []struct{ Type, Path string } `json:"namespaces"`
				} `json:"linux"`
			} `json:"runtimeSpec"`
		} `json:"info"`
	}
	must(t, json.Unmarshal([]byte(out), &st))
	for _, ns := range st.Info.RuntimeSpec.Linux.Namespaces {
		if ns.Type == "network" {
			return ns.Path
		}
	}
	return ""
}

// checkGone checks that nothing of a removed pod is left: no container,
// no shim, no state under the shims' runtime root, no cgroup, no pin of
// its network namespace, no monitor.
func (c *cri) checkGone(t *testing.T, pod *criPod, ids []string, shims []int, netns string) {
	t.Helper()
	if out := c.must(t, "ps", "-a", "-q", "--pod", pod.id); out != "" {
		t.Errorf("containers left: %s", out)
	}
	if out := c.must(t, "pods", "-q", "--id", pod.id); out != "" {
		t.Errorf("pod left: %s", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range shims {
		for s := (proc{pid}).state(); s != "" && s != "Z"; s = (proc{pid}).state() {
			if time.Now().After(deadline) {
				t.Errorf("the pod's shim (pid %d) still runs", pid)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, id := range ids {
		if p := filepath.Join("/run/containerd/runc", c.ns, id); exists(p) {
			t.Errorf("state left under the shims' root: %s", p)
		}
		if ds := cgroupDirs(filepath.Join(c.cgroupParent, id)); len(ds) > 0 {
			t.Errorf("cgroups left: %v", ds)
		}
		if ms := monitorsOf(id); len(ms) > 0 {
			t.Errorf("monitors left: %v", ms)
		}
	}
	if netns != "" && exists(netns) {
		t.Errorf("the pod's network namespace is still pinned at %s", netns)
	}
}

// waitLog waits until the container's log has s.
func waitLog(t *testing.T, ct *criContainer, s string) {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for !strings.Contains(ct.logs(t), s) {
		if time.Now().After(deadline) {
			t.Fatalf("container %s never logged %q: %q", ct.id, s, ct.logs(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testPolicy: under the handler cordon the pod's dev.cordon.policy=agent
// confines every container of the pod as documented (a read-only root, no
// capabilities, no namespaces of its own, refusals recorded); the same pod
// under runc is not confined (containerd passes the annotations to the
// cordon handler only).
func (c *cri) testPolicy(t *testing.T) {
	script := "echo x > /etc/written && echo write-ok; grep CapEff /proc/self/status; unshare -U true && echo unshare-ok; echo done"
	for _, h := range criHandlers {
		t.Run(h, func(t *testing.T) {
			pod := c.runPod(t, "policy-"+h, h, map[string]string{"dev.cordon.policy": "agent"})
			ct := pod.start(t, "agent", criContainerConfig{args: []string{"sh", "-c", script + "; exec sleep 300"}})
			waitLog(t, ct, "done")
			logs := ct.logs(t)
			confined := h == "cordon"
			for _, want := range []struct {
				what string
				ok   bool
			}{
				{"write-ok", !confined}, {"unshare-ok", !confined},
				{"Read-only file system", confined}, {"CapEff:\t0000000000000000", confined},
			} {
				if strings.Contains(logs, want.what) != want.ok {
					t.Errorf("the container said %q; want %q: %v", logs, want.what, want.ok)
				}
			}
			// An exec'd process gets the container's policy, with a
			// terminal too.
			out, _ := ct.exec(t, "", "sh", "-c", "grep CapEff /proc/self/status")
			if strings.Contains(out, "CapEff:\t0000000000000000") != confined {
				t.Errorf("crictl exec: %q (confined: %v)", out, confined)
			}
			for range criTTYRuns {
				if out := ct.execTTY(t, "echo", "tty-ok"); out != "tty-ok\r\n" {
					t.Errorf("crictl exec -it echo tty-ok: the terminal got %q", out)
				}
			}
			if !confined {
				return
			}
			root := filepath.Join("/run/containerd/runc", c.ns)
			st := ociStateOf(t, nil, root, ct.id)
			if st.Cordon == nil || st.Cordon.Policy != "annotation:agent" || st.Cordon.Seccomp != "agent" || !st.Cordon.ReadonlyRootfs {
				t.Errorf("cordon state of the container: %+v, want the agent policy", st.Cordon)
			}
			checkMonitor(t, st, ct.id)
			// The pause container too: the pod's annotations are its.
			if st := ociStateOf(t, nil, root, pod.id); st.Cordon == nil || st.Cordon.Policy != "annotation:agent" {
				t.Errorf("cordon state of the pod's sandbox: %+v, want the agent policy", st.Cordon)
			}
			if vs, ok := c.waitViolation(t, ct.id, "syscall", "unshare"); !ok {
				t.Errorf("records of the container: %+v, want unshare refused", vs)
			}
		})
	}
}

// waitViolation waits for the record of kind for target (see hasViolation)
// in the store of container id, which its monitor writes every 200 ms
// while the container runs, and returns the records and whether it came.
func (c *cri) waitViolation(t *testing.T, id, kind, target string) ([]ociViolation, bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		vs := ociViolations(t, nil, c.stateHome, id)
		if hasViolation(vs, kind, target, "") || time.Now().After(deadline) {
			return vs, hasViolation(vs, kind, target, "")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// criTTYRuns is how many times the cases run crictl exec -it: its terminal
// must carry the command's bytes and nothing else. (A `^@` seen before the
// output of `crictl exec -it`, under runc as under cordon, comes from the
// caller's terminal, not the runtime: `script` with its stdin at its end
// queues an EOF in its terminal, which the kernel hands crictl as a NUL
// byte once crictl turns raw mode on; crictl sends it to the command, whose
// terminal echoes it as `^@`. The test's terminal never ends its input.)
const criTTYRuns = 3
