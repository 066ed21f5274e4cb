//go:build linux

package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sandbox-runtime's escape hatches, each used by the program that needs
// it, in the full sandbox and in the container mode: with the setting the
// program works, without it the sandbox refuses what it does.
// enableWeakerNestedSandbox is TestInDockerWeakerNested's.

// hatchModes are where the hatches are tried: the full sandbox and the
// container mode on the host, and the container mode cordon picks inside
// a container as docker run makes one.
var hatchModes = []string{"full", "container", "docker"}

// hatchBox is a box of the mode, and the settings key that picks it.
func hatchBox(t *testing.T, c *caller, mode string, d *dockerLike) (*box, string) {
	switch mode {
	case "container":
		return newBox(t, c), `"containerMode": true`
	case "docker":
		return d.box(t, c), `"containerMode": false`
	}
	return newBox(t, c), `"containerMode": false`
}

// TestAllowAllUnixSockets: with allowAllUnixSockets (and SSH_AUTH_SOCK let
// in), curl reaches an HTTP server on a unix socket, as the Docker
// daemon's is, and ssh-add lists the keys of a real ssh-agent at its usual
// place under /tmp (which the full sandbox's private /tmp would hide
// without it); without the setting both are refused.
func TestAllowAllUnixSockets(t *testing.T) {
	t.Parallel()
	requires(t, needTool("curl"), needTool("ssh-agent"), needTool("ssh-add"), needTool("ssh-keygen"))
	var d *dockerLike
	if needDocker() == "" {
		d = newDockerLike(t, dockerDefault)
	}
	for _, mode := range hatchModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "docker" {
				requires(t, needDocker)
			}
			eachCaller(t, func(t *testing.T, c *caller) {
				b, key := hatchBox(t, c, mode, d)
				// The Docker daemon's socket, as far as curl can tell.
				sock := filepath.Join(b.dir, "docker.sock")
				l, err := net.Listen("unix", sock)
				must(t, err)
				must(t, os.Chmod(sock, 0o666))
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					fmt.Fprintf(w, "OK-%s %s", b.token, r.URL.Path)
				})}
				go func() { _ = srv.Serve(l) }()
				t.Cleanup(func() { srv.Close() })
				agent := startAgent(t, b, d, mode == "docker")

				script := `curl -sS --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping; echo " curl=$?"
ssh-add -l; echo "ssh-add=$?"`
				env := []string{"DOCKER_SOCK=" + sock, "SSH_AUTH_SOCK=" + agent}
				for _, allow := range []bool{true, false} {
					settings := filepath.Join(b.dir, fmt.Sprintf("unix-%t.json", allow))
					must(t, os.WriteFile(settings, []byte(fmt.Sprintf(`{"sandbox": {"network": {"allowAllUnixSockets": %t}},
"cordon": {"env": {"allow": ["SSH_AUTH_SOCK"]}, %s}}`, allow, key)), 0o644))
					r := b.runSpec(runSpec{flags: []string{"--settings", settings}, args: []string{"sh", "-c", script}, env: env})
					want := []string{"OK-" + b.token + " /_ping curl=0", "cordon-it-" + b.token + " (ED25519)", "ssh-add=0"}
					if !allow {
						want = []string{"curl=7", "ssh-add=2"}
					}
					for _, w := range want {
						if !strings.Contains(r.stdout, w) {
							t.Errorf("allowAllUnixSockets %t: stdout lacks %q\n%s", allow, w, r)
						}
					}
				}
			})
		})
	}
}

// startAgent starts a real ssh-agent as the box's caller, listening where
// ssh-agent does by default (a directory of its own under /tmp: the
// host's, or the container's in it), holds a key whose comment names the
// box, and returns its socket.
func startAgent(t *testing.T, b *box, d *dockerLike, inDocker bool) string {
	t.Helper()
	dir := "/tmp/ssh-cordon-it-" + b.token
	agent := dir + "/agent.sock"
	key := filepath.Join(b.dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cordon-it-"+b.token, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	b.chown()
	// As the caller: ssh-agent serves its own user only.
	command := func(argv ...string) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=" + sandboxPath, "SSH_AUTH_SOCK=" + agent, suiteEnv + "=" + suiteToken}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred}
		return cmd
	}
	if inDocker {
		d.start(t, b.c, "sh", "-c", fmt.Sprintf("mkdir -m 700 %s && exec ssh-agent -D -a %s", dir, agent))
	} else {
		must(t, os.Mkdir(dir, 0o700))
		must(t, os.Chown(dir, b.c.uid, b.c.gid))
		t.Cleanup(func() { os.RemoveAll(dir) })
		cmd := command("ssh-agent", "-D", "-a", agent)
		must(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		cmd := command("ssh-add", key)
		if inDocker {
			d.wrap(cmd, b.c)
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			return agent
		}
		if ctx.Err() != nil {
			t.Fatalf("ssh-add %s: %v: %s", key, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAllowNestedUserNamespaces: with allowNestedUserNamespaces a command
// makes user namespaces of its own as unshare(1) does, and in the full
// sandbox Chromium's sandbox's set (user, pid and network namespaces and
// a chroot), while the sandbox's own mounts stay: a protected path is as
// read-only in such a namespace as outside it. Without it each is
// refused. In the container mode only namespaces without id maps can be
// made (/proc/self/uid_map is read-only there); inside a container whose
// seccomp profile refuses them (Docker's default), the hatch cannot undo
// that, and the test uses one that lets them through.
func TestAllowNestedUserNamespaces(t *testing.T) {
	t.Parallel()
	requires(t, needTool("unshare"))
	var d *dockerLike
	if needDocker() == "" {
		d = newDockerLike(t, dockerUserNS)
	}
	for _, mode := range hatchModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "docker" {
				requires(t, needDocker)
			}
			eachCaller(t, func(t *testing.T, c *caller) {
				b, key := hatchBox(t, c, mode, d)
				must(t, os.MkdirAll(filepath.Join(b.ws, ".git", "hooks"), 0o755))
				b.chown()
				script := `unshare -Un sh -c 'echo "net namespace: $(ls /sys/class/net 2>/dev/null | wc -w) links"'; echo "unshare-n=$?"`
				want := []string{"unshare-n=0"}
				if mode == "full" {
					script += `
unshare -Ur id -u; echo "unshare-r=$?"
unshare -Urpfn --kill-child sh -c 'chroot / true && echo "chromium-like pid $$"'; echo "chromium=$?"
unshare -Urm --propagation unchanged sh -c 'umount -l "$PWD/.git/hooks"; echo evil > .git/hooks/pre-commit' 2>/dev/null; echo "hook=$?"`
					want = append(want, "0\nunshare-r=0", "chromium-like pid 1\nchromium=0", "hook=2")
				}
				for _, allow := range []bool{true, false} {
					settings := filepath.Join(b.dir, fmt.Sprintf("nested-%t.json", allow))
					must(t, os.WriteFile(settings, []byte(fmt.Sprintf(`{"sandbox": {"allowNestedUserNamespaces": %t}, "cordon": {%s}}`, allow, key)), 0o644))
					r := b.runSpec(runSpec{flags: []string{"--settings", settings}, args: []string{"sh", "-c", script}})
					if allow {
						for _, w := range want {
							if !strings.Contains(r.stdout, w) {
								t.Errorf("allowNestedUserNamespaces: stdout lacks %q\n%s", w, r)
							}
						}
					} else if strings.Contains(r.stdout, "unshare-n=0") || strings.Contains(r.stdout, "unshare-r=0") || strings.Contains(r.stdout, "chromium=0") {
						t.Errorf("without allowNestedUserNamespaces a namespace was made\n%s", r)
					}
				}
				if exists(filepath.Join(b.ws, ".git", "hooks", "pre-commit")) {
					t.Errorf("a command in a namespace of its own wrote the protected .git/hooks")
				}
			})
		})
	}
}
