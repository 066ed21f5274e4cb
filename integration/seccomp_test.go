//go:build linux

package integration

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSeccomp: the agent profile reaches the command (and the init):
// AF_UNIX sockets and new namespaces are refused with EPERM, while
// ordinary sockets work. AF_UNIX socket pairs reach nothing outside the
// sandbox and Node's child processes and Python's asyncio need them: they
// are allowed unless cordon.allowSocketpair is false.
func TestSeccomp(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("AF_UNIX refused", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.runSpec(runSpec{args: []string{helperBin}, env: []string{helperEnv + "=sockets"}})
			want := "socket(AF_UNIX): EPERM\nsocket(AF_UNIX, SOCK_DGRAM): EPERM\nsocketpair(AF_UNIX): ok\nsocket(AF_INET): ok\n"
			if r.code != 0 || r.stdout != want {
				t.Errorf("want\n%s\n%s", want, r)
			}
		})
		t.Run("socketpair refused when the settings say so", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			settings := b.dir + "/no-socketpair.json"
			must(t, os.WriteFile(settings, []byte(`{"cordon": {"allowSocketpair": false}}`), 0o644))
			r := b.runSpec(runSpec{flags: []string{"--settings", settings}, args: []string{helperBin}, env: []string{helperEnv + "=sockets"}})
			want := "socket(AF_UNIX): EPERM\nsocket(AF_UNIX, SOCK_DGRAM): EPERM\nsocketpair(AF_UNIX): EPERM\nsocket(AF_INET): ok\n"
			if r.code != 0 || r.stdout != want {
				t.Errorf("want\n%s\n%s", want, r)
			}
		})
		t.Run("AF_UNIX refused to python", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("python3"))
			b := newBox(t, c)
			r := b.run("python3", "-c", "import socket; socket.socket(socket.AF_UNIX)")
			if r.code == 0 || !strings.Contains(r.stderr, "PermissionError: [Errno 1] Operation not permitted") {
				t.Errorf("want PermissionError (EPERM):\n%s", r)
			}
			r = b.run("python3", "-c", "import socket; socket.socket(socket.AF_INET).close(); print('inet ok')")
			if r.code != 0 || r.stdout != "inet ok\n" {
				t.Errorf("AF_INET must work:\n%s", r)
			}
		})
		t.Run("no new user namespace", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("unshare"))
			// The control: outside the sandbox this caller may make one.
			host := exec.Command("unshare", "-U", "true")
			host.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
			if out, err := host.CombinedOutput(); err != nil {
				t.Logf("note: unshare -U fails on the host too: %v %s", err, out)
			}
			b := newBox(t, c)
			r := b.run("unshare", "-U", "true")
			if r.code == 0 || !strings.Contains(r.stderr, "Operation not permitted") {
				t.Errorf("unshare -U: want EPERM:\n%s", r)
			}
			r = b.run("unshare", "-Ur", "true")
			if r.code == 0 {
				t.Errorf("unshare -Ur succeeded:\n%s", r)
			}
		})
		t.Run("no mount", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("mount -t tmpfs cordon-it-none /mnt && echo MOUNTED; grep cordon-it-none /proc/self/mountinfo; true")
			if strings.Contains(r.stdout, "MOUNTED") || strings.Contains(r.stdout, "cordon-it-none") {
				t.Errorf("mount -t tmpfs succeeded:\n%s", r)
			}
		})
		t.Run("init confined too", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("grep -E '^(Seccomp|NoNewPrivs|CapEff|CapPrm):' /proc/1/status")
			want := "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
			if r.code != 0 || r.stdout != want {
				t.Errorf("cordon's init (pid 1): want\n%s\n%s", want, r)
			}
		})
	})
}
