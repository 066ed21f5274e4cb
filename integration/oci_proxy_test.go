//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	runc "github.com/containerd/go-runc"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Egress of OCI containers through cordon's proxy (issue 9): a bundle
// annotated with dev.cordon.network.allowedDomains gets a private network
// namespace with loopback only, where its monitor serves cordon's
// filtering proxy, and the proxy's variables in its processes'
// environment. Judged by what the servers of the test network (see
// network_proxy_test.go) received, and by `cordon violations`.

// ociProxyAnnotation allows the one name of the test network the
// containers may reach.
var ociProxyAnnotation = map[string]string{"dev.cordon.network.allowedDomains": "allowed.cordon-test"}

// ociProxyScript asks for an allowed name and an unlisted one through the
// proxy (busybox's wget, from the environment cordon set), then for the
// server directly; {T} is the case's token.
const ociProxyScript = `wget -q -O - http://allowed.cordon-test/{T}/allowed; echo "allowed=$?"; ` +
	`wget -q -O - http://unlisted.cordon-test/{T}/unlisted; echo "unlisted=$?"; ` +
	`nc -w 3 ` + netServerAddr + ` 80 </dev/null; echo "direct=$?"`

// TestOCIProxy: with go-runc as containerd's shim drives it, and under a
// real containerd, an annotated container reaches the allowed name and
// nothing else, refusals are recorded under the container's id, and the
// monitor ends with the container however it ends (its init killed,
// delete --force, the shim killed). A bundle without annotations gets no
// monitor; a monitor that cannot serve fails create and nothing runs.
func TestOCIProxy(t *testing.T) {
	requires(t, needOCI, netNeedRoot, needTool("ip"), needTool("nsenter"))
	f := newNetFixture(t)
	t.Run("runc", f.testOCIProxyRunc)
	t.Run("no-annotations", testOCINoMonitor)
	t.Run("fail-closed", testOCIMonitorFails)
	t.Run("containerd", func(t *testing.T) {
		requires(t, needContainerd)
		f.testOCIProxyContainerd(t)
	})
	t.Run("rootless", func(t *testing.T) {
		c := callers["user"]
		requires(t, needCaller(c))
		f.testOCIProxyRootless(t, c)
	})
}

// testOCIProxyRootless: an unprivileged user's container gets the proxy
// too: a createContainer hook makes its sockets inside the container and
// hands them to the monitor.
func (f *netFixture) testOCIProxyRootless(t *testing.T, c *caller) {
	token := "t" + randomHex(6)
	r := newRootlessOCI(t, c, "proxy", func(s *specs.Spec) {
		s.Process.Args = []string{"sh", "-c", f.expand(ociProxyScript, token)}
		s.Annotations = map[string]string{"dev.cordon.policy": "agent-network", "dev.cordon.network.allowedDomains": "allowed.cordon-test"}
	})
	if err := r.create(); err != nil {
		t.Fatalf("rootless create with allowedDomains: %v\n%s", err, readFile(r.out))
	}
	st := ociStateOf(t, c.cred, r.root, r.id)
	if st.Cordon == nil || st.Cordon.Network != "proxy" || st.Cordon.Proxy == nil {
		t.Errorf("cordon state: %+v, want the proxy", st.Cordon)
	}
	r.runToEnd(checkMonitor(t, st, r.id))
	f.checkProxyScript(t, readFile(r.out), token)
	vs := ociViolations(t, c.cred, r.stateHome, r.id)
	if !hasViolation(vs, "network", "unlisted.cordon-test:80", "") {
		t.Errorf("records of the rootless container: %+v, want unlisted.cordon-test:80 refused", vs)
	}
}

// checkProxyScript checks what ociProxyScript said and what the servers
// received.
func (f *netFixture) checkProxyScript(t *testing.T, out, token string) {
	t.Helper()
	for _, want := range []string{
		"cordon-it-server: GET /" + token + "/allowed host allowed.cordon-test", "allowed=0",
		"403", "unlisted=1", "direct=1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the container said:\n%s\nwant %q", out, want)
		}
	}
	f.checkOnlyAllowed(t, token, 1)
}

// checkOnlyAllowed checks that the servers received n requests with
// token, all for the allowed name, and nothing else.
func (f *netFixture) checkOnlyAllowed(t *testing.T, token string, n int) {
	t.Helper()
	seen := f.seen(t, token)
	allowed := 0
	for _, s := range seen {
		if s.Via == "http" && s.Host == "allowed.cordon-test" && s.Method == "GET" {
			allowed++
		} else {
			t.Errorf("the servers received %+v: only the allowed name may be reached", s)
		}
	}
	if allowed != n {
		t.Errorf("the servers received %d requests for the allowed name with %s, want %d: %+v", allowed, token, n, seen)
	}
}

// checkProxyState checks what `cordon state` says of a proxied container,
// and returns its monitor's pid.
func checkProxyState(t *testing.T, root, id string) int {
	t.Helper()
	st := ociStateOf(t, nil, root, id)
	if c := st.Cordon; c == nil || c.Network != "proxy" || c.Proxy == nil ||
		!slices.Equal(c.Proxy.AllowedDomains, []string{"allowed.cordon-test"}) || c.Proxy.HTTP != "127.0.0.1:3128" ||
		c.Proxy.SOCKS != "127.0.0.1:1080" || !slices.Contains(c.Violations, "network") {
		t.Errorf("cordon state of %s: %+v, want the proxy and its records", id, c)
	}
	return checkMonitor(t, st, id)
}

// checkProxyRecords checks that the store in stateHome has the unlisted
// name's refusal under id, and nothing about the allowed one.
func checkProxyRecords(t *testing.T, stateHome, id string) {
	t.Helper()
	vs := ociViolations(t, nil, stateHome, id)
	if !hasViolation(vs, "network", "unlisted.cordon-test:80", "") {
		t.Errorf("cordon violations --run %s: %+v, want unlisted.cordon-test:80 refused", id, vs)
	}
	for _, v := range vs {
		if v.Host == "allowed.cordon-test" {
			t.Errorf("a record of the allowed name: %+v", v)
		}
		if v.Kind == "network" && !strings.Contains(v.Hint, "dev.cordon.network.allowedDomains") {
			t.Errorf("record %+v: want a hint naming the annotation", v)
		}
	}
}

// pidfdKill sends SIGKILL to pid, a process this test started (a
// container's init, a shim), through a pidfd: a pid reused meanwhile
// gets nothing.
func pidfdKill(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of %d: %v", pid, err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
}

func (f *netFixture) testOCIProxyRunc(t *testing.T) {
	stateHome := t.TempDir()
	ctx := runc.WithExtraEnv(context.Background(), "XDG_STATE_HOME="+stateHome)
	bundle := ociBundle(t, ociShellArgs, func(s *specs.Spec) { s.Annotations = ociProxyAnnotation })
	r := ociRunc(t, bundle)
	id := ociID("proxy")
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	if err := r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: filepath.Join(bundle, "pid")}); err != nil {
		t.Fatalf("create: %v; log:\n%s", err, readFile(r.Log))
	}
	monitor := checkProxyState(t, r.Root, id)
	must(t, r.Start(ctx, id))
	sh := newOCIShell(t, pio.Stdin(), pio.Stdout().(*os.File))

	token := "t" + randomHex(6)
	out, _ := sh.run(f.expand(ociProxyScript, token))
	f.checkProxyScript(t, out, token)
	if out, _ := sh.run("env | grep '^http_proxy='"); out != "http_proxy=http://127.0.0.1:3128" {
		t.Errorf("the container's http_proxy: %q", out)
	}

	// exec, as `ctr task exec` sends it: the bundle's process, whose
	// environment has no proxy. It gets the container's.
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	must(t, err)
	var bs specs.Spec
	must(t, json.Unmarshal(b, &bs))
	proc := *bs.Process
	proc.Args = []string{"wget", "-q", "-O", "-", "http://allowed.cordon-test/" + token + "/exec"}
	execIO, err := runc.NewPipeIO(0, 0)
	must(t, err)
	err = r.Exec(ctx, id, proc, &runc.ExecOpts{IO: execIO})
	execIO.Stdin().Close()
	got, _ := readAll(execIO.Stdout().(*os.File))
	errOut, _ := readAll(execIO.Stderr().(*os.File))
	execIO.Close()
	if err != nil || !strings.Contains(got, "GET /"+token+"/exec host allowed.cordon-test") {
		t.Errorf("exec through the proxy: %v\n%s%s", err, got, errOut)
	}
	f.checkOnlyAllowed(t, token, 2)

	// kill -9 of the container's init: the monitor ends with it.
	c, err := r.State(ctx, id)
	must(t, err)
	pidfdKill(t, c.Pid)
	waitStatus(t, r, id, "stopped")
	waitGone(t, monitor, "the monitor of a container whose init was killed")
	if st := ociStateOf(t, nil, r.Root, id); st.Monitor == nil || st.Monitor.Running {
		t.Errorf("cordon state of the stopped container: monitor %+v, want not running", st.Monitor)
	}
	must(t, r.Delete(ctx, id, nil))
	checkProxyRecords(t, stateHome, id)
	if _, err := os.Stat(filepath.Join(r.Root, id)); err == nil {
		t.Errorf("the container's state directory is left after delete")
	}

	// delete --force of a running container.
	id2 := ociID("proxy-force")
	bundle2 := ociBundle(t, []string{"sleep", "300"}, func(s *specs.Spec) { s.Annotations = ociProxyAnnotation })
	null, err := runc.NewNullIO()
	must(t, err)
	defer null.Close()
	must(t, r.Create(ctx, id2, bundle2, &runc.CreateOpts{IO: null, PidFile: filepath.Join(bundle2, "pid")}))
	monitor = checkProxyState(t, r.Root, id2)
	must(t, r.Start(ctx, id2))
	waitStatus(t, r, id2, "running")
	must(t, r.Delete(ctx, id2, &runc.DeleteOpts{Force: true}))
	waitGone(t, monitor, "the monitor of a container deleted with --force")
	for _, i := range []string{id, id2} {
		if ms := monitorsOf(i); len(ms) > 0 {
			t.Errorf("monitors of %s left: %v", i, ms)
		}
	}
}

// testOCINoMonitor: a bundle without annotations runs as under runc: no
// monitor, no proxy variables, the network the bundle asked for.
func testOCINoMonitor(t *testing.T) {
	bundle := ociBundle(t, []string{"sh", "-c", "env; cat /proc/net/dev"}, nil)
	r := ociRunc(t, bundle)
	id := ociID("plain")
	ctx := context.Background()
	pio, err := runc.NewPipeIO(0, 0)
	must(t, err)
	defer pio.Close()
	must(t, r.Create(ctx, id, bundle, &runc.CreateOpts{IO: pio, PidFile: filepath.Join(bundle, "pid")}))
	st := ociStateOf(t, nil, r.Root, id)
	if st.Cordon != nil || st.Monitor != nil {
		t.Errorf("cordon state of a bundle without annotations: cordon %+v, monitor %+v; want neither", st.Cordon, st.Monitor)
	}
	if ms := monitorsOf(id); len(ms) > 0 {
		t.Errorf("a monitor runs for a bundle without annotations: %v", ms)
	}
	if _, err := os.Stat(filepath.Join(r.Root, id, "monitor.pid")); err == nil {
		t.Error("a monitor pid file for a bundle without annotations")
	}
	must(t, r.Start(ctx, id))
	pio.Stdin().Close()
	out, _ := readAll(pio.Stdout().(*os.File))
	waitStatus(t, r, id, "stopped")
	must(t, r.Delete(ctx, id, nil))
	if strings.Contains(strings.ToLower(out), "_proxy=") {
		t.Errorf("proxy variables in a container without annotations:\n%s", out)
	}
}

// testOCIMonitorFails: a monitor that cannot serve the proxy (here a hook
// of the bundle's took 127.0.0.1 off the container's loopback) fails
// create, with the reason on one line, and nothing runs or is left.
func testOCIMonitorFails(t *testing.T) {
	hook := `pid=$(tr , '\n' | sed -n 's/^"pid":\([0-9]*\)$/\1/p'); exec nsenter --net=/proc/$pid/ns/net ip addr del 127.0.0.1/8 dev lo`
	bundle := ociBundle(t, []string{"echo", "the-container-ran"}, func(s *specs.Spec) {
		s.Annotations = ociProxyAnnotation
		s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", hook}}}}
	})
	root := t.TempDir()
	id := ociID("monitor-fails")
	stdout, stderr, code := cordonOCI(t, root, "create", "--bundle", bundle, id)
	if code == 0 {
		cordonOCI(t, root, "delete", "--force", id)
		t.Fatalf("create with a monitor that cannot serve: exit 0, want a failure")
	}
	msg := strings.TrimSpace(stdout + stderr)
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "monitor") || !strings.Contains(msg, "cannot assign requested address") {
		t.Errorf("create with a monitor that cannot serve said %q, want one line with the reason", msg)
	}
	if o, e, code := cordonOCI(t, root, "start", id); code == 0 || strings.Contains(o+e, "the-container-ran") {
		t.Errorf("start after the failed create: exit %d, %q", code, o+e)
	}
	if entries, _ := os.ReadDir(root); len(entries) > 0 {
		t.Errorf("left under the root: %v", entries)
	}
	// create waited for the monitor to end.
	if ms := monitorsOf(id); len(ms) > 0 {
		t.Errorf("the monitor of the failed container still runs: %v", ms)
	}
}

func (f *netFixture) testOCIProxyContainerd(t *testing.T) {
	cd := startContainerd(t, "")
	image := cd.importBusybox(t)
	run := func(args ...string) []string {
		return append([]string{"run", "--runtime", "io.containerd.runc.v2", "--runc-binary", cordonBin, "--fifo-dir", cd.fifos,
			"--annotation", "dev.cordon.network.allowedDomains=allowed.cordon-test"}, args...)
	}
	runcRoot := filepath.Join("/run/containerd/runc", cd.ns)

	// Attached, removed at the end: the script's output, and the records.
	id := "cordon-it-proxy"
	token := "t" + randomHex(6)
	out, code := cd.ctr(t, nil, run("--rm", image, id, "sh", "-c", f.expand(ociProxyScript, token))...)
	if code != 0 {
		t.Errorf("ctr run with allowedDomains: exit %d\n%s", code, out)
	}
	f.checkProxyScript(t, out, token)
	checkProxyRecords(t, cd.stateHome, id)
	if ms := monitorsOf(id); len(ms) > 0 {
		t.Errorf("monitors of %s left after ctr run --rm: %v", id, ms)
	}

	// The shim killed: containerd deletes the container through cordon
	// (delete --force), and the monitor ends with it.
	id = "cordon-it-proxy-shim"
	if out, code := cd.ctr(t, nil, run("-d", image, id, "sleep", "300")...); code != 0 {
		t.Fatalf("ctr run -d: exit %d, %s", code, out)
	}
	defer cd.ctr(t, nil, "container", "delete", id)
	defer cd.ctr(t, nil, "task", "delete", "--force", id)
	cd.waitTask(t, id, "RUNNING")
	monitor := checkProxyState(t, runcRoot, id)
	shims := procsWhere(func(p proc) bool {
		c := p.cmdline()
		return strings.Contains(c, "containerd-shim") && strings.Contains(c, cd.sock) && strings.Contains(c, " -id "+id+" ")
	})
	if len(shims) != 1 {
		t.Fatalf("the shim of %s: %v, want one", id, shims)
	}
	pidfdKill(t, shims[0].pid)
	deadline := time.Now().Add(30 * time.Second)
	for (proc{monitor}).state() != "" && (proc{monitor}).state() != "Z" {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor of %s (pid %d) still runs 30s after its shim was killed", id, monitor)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Without annotations: no monitor.
	id = "cordon-it-plain"
	plain := []string{"run", "--runtime", "io.containerd.runc.v2", "--runc-binary", cordonBin, "--fifo-dir", cd.fifos, "-d", image, id, "sleep", "300"}
	if out, code := cd.ctr(t, nil, plain...); code != 0 {
		t.Fatalf("ctr run -d without annotations: exit %d, %s", code, out)
	}
	defer cd.ctr(t, nil, "container", "delete", id)
	defer cd.ctr(t, nil, "task", "delete", "--force", id)
	cd.waitTask(t, id, "RUNNING")
	if st := ociStateOf(t, nil, runcRoot, id); st.Cordon != nil || st.Monitor != nil {
		t.Errorf("cordon state without annotations: cordon %+v, monitor %+v, want neither", st.Cordon, st.Monitor)
	}
	if ms := monitorsOf(id); len(ms) > 0 {
		t.Errorf("a monitor runs for a container without annotations: %v", ms)
	}
}
