//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIsolation checks what the default policy promises about the
// command's process: its ids, capabilities, no_new_privs, seccomp,
// namespaces, /dev, PID 1, the read-only root, /tmp and the environment.
func TestIsolation(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("ids", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("id -u; id -g")
			want := fmt.Sprintf("%d\n%d\n", c.uid, c.gid)
			if r.code != 0 || r.stdout != want {
				t.Errorf("id -u, -g: want %q (the caller's ids)\n%s", want, r)
			}
		})
		t.Run("no capabilities, no_new_privs, seccomp", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.run("cat", "/proc/self/status")
			if r.code != 0 {
				t.Fatalf("cat /proc/self/status:\n%s", r)
			}
			status := map[string]string{}
			for _, l := range lines(r.stdout) {
				k, v, _ := strings.Cut(l, ":")
				status[k] = strings.TrimSpace(v)
			}
			for k, want := range map[string]string{
				"CapInh": "0000000000000000", "CapPrm": "0000000000000000",
				"CapEff": "0000000000000000", "CapBnd": "0000000000000000",
				"CapAmb": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2",
			} {
				if status[k] != want {
					t.Errorf("%s: %q, want %q", k, status[k], want)
				}
			}
		})
		t.Run("namespaces", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			nss := []string{"user", "mnt", "pid", "ipc", "uts", "net", "cgroup"}
			var script strings.Builder
			for _, ns := range nss {
				fmt.Fprintf(&script, "echo %s $(readlink /proc/self/ns/%s)\n", ns, ns)
			}
			r := b.sh(script.String())
			if r.code != 0 {
				t.Fatalf("readlink /proc/self/ns/*:\n%s", r)
			}
			inside := map[string]string{}
			for _, l := range lines(r.stdout) {
				k, v, _ := strings.Cut(l, " ")
				inside[k] = v
			}
			for _, ns := range nss {
				host, err := os.Readlink("/proc/self/ns/" + ns)
				must(t, err)
				if inside[ns] == "" || inside[ns] == host {
					t.Errorf("%s namespace inside %q, the host's %q: want a new one", ns, inside[ns], host)
				}
			}
		})
		t.Run("minimal /dev", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.run("ls", "-A", "/dev")
			want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
			got := lines(r.stdout)
			slices.Sort(got)
			if r.code != 0 || !slices.Equal(got, want) {
				t.Errorf("ls /dev: %q, want %q\n%s", got, want, r)
			}
		})
		t.Run("PID 1 is cordon's init", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh(`tr '\0' ' ' < /proc/1/cmdline; echo; echo "self=$$"`)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "/.cordon/cordon sandbox-init ") {
				t.Errorf("PID 1 is not cordon's init:\n%s", r)
			}
			if strings.Contains(r.stdout, "self=1\n") {
				t.Errorf("the command is PID 1 itself:\n%s", r)
			}
		})
		t.Run("root read-only", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			r := b.sh("cat /proc/self/mountinfo; touch /cordon-it-root-write && echo WROTE")
			var rootOpts string
			for _, l := range lines(r.stdout) {
				if f := strings.Fields(l); len(f) > 5 && f[4] == "/" {
					rootOpts = f[5] // the last mount on / is the one seen
				}
			}
			if !slices.Contains(strings.Split(rootOpts, ","), "ro") {
				t.Errorf("/ is mounted %q in /proc/self/mountinfo, want ro\n%s", rootOpts, r)
			}
			if strings.Contains(r.stdout, "WROTE") || exists("/cordon-it-root-write") {
				os.Remove("/cordon-it-root-write")
				t.Errorf("a file could be created in /")
			}
		})
		t.Run("host view", func(t *testing.T) {
			// Every top-level directory and file of the host is seen
			// read-only, nosuid and nodev, and so is every mount below
			// the directories (cordon's init binds them, not
			// libcontainer: see runtime/hostview_linux.go).
			t.Parallel()
			b := newBox(t, c)
			entries, err := os.ReadDir("/")
			must(t, err)
			var want []string
			for _, e := range entries {
				if e.Name() != "proc" && e.Name() != "dev" && e.Name() != "sys" && e.Name() != "tmp" && (e.IsDir() || e.Type().IsRegular()) {
					want = append(want, "/"+e.Name())
				}
			}
			r := b.sh("cat /proc/self/mountinfo")
			if r.code != 0 {
				t.Fatalf("cat /proc/self/mountinfo:\n%s", r)
			}
			seen := map[string]string{} // mountpoint: its options, the last mount there
			for _, l := range lines(r.stdout) {
				if f := strings.Fields(l); len(f) > 5 {
					seen[f[4]] = f[5]
				}
			}
			for _, p := range want {
				opts, ok := seen[p]
				if !ok {
					t.Errorf("%s is not mounted in the sandbox", p)
					continue
				}
				for _, o := range []string{"ro", "nosuid", "nodev"} {
					if !slices.Contains(strings.Split(opts, ","), o) {
						t.Errorf("%s is mounted %q, want %s", p, opts, o)
					}
				}
			}
			// Below the host's directories: their submounts, except what
			// the sandbox mounts itself (its workspace, masks, /run/cordon).
			for mp, opts := range seen {
				top := "/" + strings.SplitN(strings.TrimPrefix(mp, "/"), "/", 2)[0]
				if mp == top || !slices.Contains(want, top) || top == "/run" && strings.HasPrefix(mp, "/run/cordon") ||
					strings.HasPrefix(mp+"/", b.ws+"/") || strings.HasPrefix(b.ws+"/", mp+"/") || strings.HasPrefix(mp+"/", b.home+"/") {
					continue
				}
				if !slices.Contains(strings.Split(opts, ","), "ro") {
					t.Errorf("%s, below the host's %s, is mounted %q, want ro", mp, top, opts)
				}
			}
		})
		t.Run("environment", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			secrets := map[string]string{
				"FOO_TOKEN":             "tok-" + b.token,
				"OPENAI_API_KEY":        "sk-" + b.token,
				"AWS_SECRET_ACCESS_KEY": "aws-" + b.token,
				"SSH_AUTH_SOCK":         "/tmp/ssh-" + b.token + "/agent.1",
				"GITHUB_TOKEN":          "ghp-" + b.token,
				"DB_PASSWORD":           "pw-" + b.token,
			}
			// cordon itself honours the caller's TMPDIR (its rootless state
			// lives there): give it one that works.
			hostTmp := filepath.Join(b.dir, "host-tmpdir")
			must(t, os.Mkdir(hostTmp, 0o755))
			b.chown()
			env := []string{"MY_SETTING=kept-" + b.token, "TMPDIR=" + hostTmp}
			for k, v := range secrets {
				env = append(env, k+"="+v)
			}
			r := b.runSpec(runSpec{args: []string{"env"}, env: env})
			if r.code != 0 {
				t.Fatalf("env:\n%s", r)
			}
			got := map[string]string{}
			for _, l := range lines(r.stdout) {
				k, v, _ := strings.Cut(l, "=")
				got[k] = v
			}
			for k, want := range map[string]string{
				"CORDON_SANDBOX": "1", "SANDBOX_RUNTIME": "1", "IS_SANDBOX": "1",
				"TMPDIR": "/tmp", "MY_SETTING": "kept-" + b.token, "HOME": b.home,
			} {
				if got[k] != want {
					t.Errorf("%s=%q inside, want %q", k, got[k], want)
				}
			}
			for k := range secrets {
				if _, ok := got[k]; ok {
					t.Errorf("%s reached the command", k)
				}
			}
			if strings.Contains(r.stdout+r.stderr, b.token+"/agent") || strings.Contains(r.stdout, "sk-"+b.token) {
				t.Errorf("a secret's value is visible inside:\n%s", r)
			}
		})
		for _, placement := range []struct {
			name string
			opts []boxOpt
		}{{"workspace outside /tmp", nil}, {"workspace under /tmp", []boxOpt{underTmp}}} {
			t.Run("private /tmp, "+placement.name, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c, placement.opts...)
				hostFile := filepath.Join("/tmp", "cordon-it-host-"+b.token)
				must(t, os.WriteFile(hostFile, []byte("host\n"), 0o644))
				defer os.Remove(hostFile)
				insideFile := filepath.Join("/tmp", "cordon-it-inside-"+b.token)
				defer os.Remove(insideFile)
				r := b.sh(fmt.Sprintf(`stat -f -c %%T /tmp; echo "TMPDIR=$TMPDIR"; ls -A /tmp; echo --; echo inside > %s && cat %s; test -e %s && echo HOST-FILE-VISIBLE; touch ws-file`, insideFile, insideFile, hostFile))
				if r.code != 0 {
					t.Fatalf("script failed:\n%s", r)
				}
				l := lines(r.stdout)
				if len(l) < 2 || l[0] != "tmpfs" || l[1] != "TMPDIR=/tmp" {
					t.Errorf("want /tmp a tmpfs and TMPDIR=/tmp:\n%s", r)
				}
				// /tmp is empty but for the mountpoints of what is bound
				// into it from the host's /tmp: cordon's binary, its
				// (hidden) state directory, the package caches it keeps
				// (the suite's XDG_CACHE_HOME is there), and the
				// workspace when it lives there.
				allowed := map[string]bool{topUnderTmp(cordonBin): true, topUnderTmp(c.stateRoot()): true, topUnderTmp(c.cacheDir): true}
				if strings.HasPrefix(b.ws, "/tmp/") {
					allowed[topUnderTmp(b.ws)] = true
				}
				var listing []string
				for _, name := range l[2:] {
					if name == "--" {
						break
					}
					listing = append(listing, name)
					if !allowed[name] {
						t.Errorf("/tmp inside holds %q, want nothing but the mountpoints %v", name, allowed)
					}
				}
				for _, p := range []string{cordonBin, c.stateRoot()} {
					if top := topUnderTmp(p); top != "" && slices.Contains(listing, top) {
						t.Logf("note: the private /tmp shows the mountpoint %s (for %s)", top, p)
					}
				}
				if strings.Contains(r.stdout, "HOST-FILE-VISIBLE") {
					t.Errorf("a file of the host's /tmp is visible inside")
				}
				if !strings.Contains(r.stdout, "inside\n") {
					t.Errorf("could not write to /tmp inside:\n%s", r)
				}
				if exists(insideFile) {
					t.Errorf("a file written to /tmp inside appeared on the host: %s", insideFile)
				}
				if !exists(filepath.Join(b.ws, "ws-file")) {
					t.Errorf("a file written in the workspace (%s) did not reach the host", b.ws)
				}
			})
		}
	})
}

// topUnderTmp returns the first path element below /tmp of p.
func topUnderTmp(p string) string {
	rel, err := filepath.Rel("/tmp", p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return strings.Split(rel, "/")[0]
}
