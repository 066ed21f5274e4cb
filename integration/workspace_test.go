//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// otherCaller is the caller that is not c: root for the user, the user
// for root.
func otherCaller(c *caller) *caller {
	if c.name == "root" {
		return callers["user"]
	}
	return callers["root"]
}

// TestWorkspaceInTmp: /tmp itself is a workspace, as root and as the
// user, though the other caller's cordon state lies there (the user's
// private /tmp/cordon-UID, which root's command cannot enter; the user's
// own, which its sandbox hides) and other users' private directories: what
// the sandbox cannot reach is left out of the plan, and --debug says so.
func TestWorkspaceInTmp(t *testing.T) {
	requires(t, needHostRoot)
	// A private directory of each caller's in /tmp, with a repository in
	// it, there until both runs are done (a directory the plan saw that
	// vanishes before its mounts are made fails the run).
	private := map[string]string{}
	for _, c := range callers {
		priv, err := os.MkdirTemp("/tmp", "cordon-it-private-")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(priv) })
		must(t, os.MkdirAll(filepath.Join(priv, "repo/.git/hooks"), 0o755))
		if c.missing == "" {
			chownAll(t, priv, c)
		}
		must(t, os.Chmod(priv, 0o700))
		private[c.name] = priv
	}
	eachCaller(t, func(t *testing.T, c *caller) {
		other := otherCaller(c)
		// Both have used cordon: their state is in place.
		requires(t, needCaller(other))
		b := newBox(t, c)
		priv := private[other.name]
		r := b.runSpec(runSpec{dir: "/tmp", flags: []string{"--debug"}, args: []string{"sh", "-c", "pwd; ls " + priv + " 2>&1 || echo unreadable"}})
		if r.code != 0 || !strings.HasPrefix(r.stdout, "/tmp\n") {
			t.Fatalf("cordon run in /tmp:\n%s", r)
		}
		if !strings.Contains(r.stdout, "unreadable") {
			t.Errorf("the command could list the other caller's private %s:\n%s", priv, r)
		}
		if !strings.Contains(r.stderr, "below "+priv+" ") {
			t.Errorf("--debug does not say that %s was left out:\n%s", priv, r)
		}
		if c.name == "root" && exists(other.stateRoot()) && !strings.Contains(r.stderr, "below "+other.stateRoot()+" ") {
			t.Errorf("--debug does not say that %s was left out:\n%s", other.stateRoot(), r)
		}
	})
}

// TestWorkspaceHoldingPrivateRepo: a workspace holding another user's
// private directory with a repository inside runs the command; the
// command cannot enter that directory, and the workspace's own
// repository stays protected.
func TestWorkspaceHoldingPrivateRepo(t *testing.T) {
	requires(t, needHostRoot, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		other := otherCaller(c)
		b := newBox(t, c)
		gitInit(t, b.ws)
		theirs := filepath.Join(b.ws, "theirs")
		gitInit(t, filepath.Join(theirs, "repo"))
		must(t, os.WriteFile(filepath.Join(theirs, "repo/secret"), []byte("theirs\n"), 0o644))
		b.chown()
		chownAll(t, theirs, other)
		must(t, os.Chmod(theirs, 0o700))

		r := b.runSpec(runSpec{flags: []string{"--debug"}, args: []string{"sh", "-c", `
			git status --short >/dev/null && echo git-ok
			cat theirs/repo/secret 2>/dev/null || echo unreadable
			echo x > .git/hooks/pre-commit 2>/dev/null || echo hooks-protected`}})
		if r.code != 0 {
			t.Fatalf("cordon run:\n%s", r)
		}
		for _, want := range []string{"git-ok", "unreadable", "hooks-protected"} {
			if !strings.Contains(r.stdout, want+"\n") {
				t.Errorf("want %q in the output:\n%s", want, r)
			}
		}
		if !strings.Contains(r.stderr, "below "+theirs+" ") {
			t.Errorf("--debug does not say that %s was left out:\n%s", theirs, r)
		}
		if got := readFile(filepath.Join(theirs, "repo/secret")); got != "theirs\n" {
			t.Errorf("their file changed: %q", got)
		}
	})
}

// TestWorkspaceOnOtherFileSystem: a workspace on a file system of its own
// (a tmpfs mounted nosuid,nodev,noexec: flags a user namespace cannot
// drop from a bind) is writable and protected as any other.
func TestWorkspaceOnOtherFileSystem(t *testing.T) {
	requires(t, needHostRoot, needTool("git"))
	mnt, err := os.MkdirTemp(wsRootOutside, "tmpfs-")
	must(t, err)
	must(t, syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=16m,mode=0755"))
	t.Cleanup(func() {
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		os.Remove(mnt)
	})
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		ws := filepath.Join(mnt, c.name)
		must(t, os.Mkdir(ws, 0o755))
		gitInit(t, ws)
		chownAll(t, ws, c)
		r := b.runSpec(runSpec{dir: ws, args: []string{"sh", "-c", `
			echo hi > f && cat f
			echo x > .git/hooks/pre-commit 2>/dev/null || echo hooks-protected`}})
		if r.code != 0 || r.stdout != "hi\nhooks-protected\n" {
			t.Fatalf("cordon run in a workspace on a tmpfs:\n%s", r)
		}
	})
}

// gitInit makes dir a repository, as root (chown it after).
func gitInit(t *testing.T, dir string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v: %s", dir, err, out)
	}
}

// chownAll gives dir and everything in it to c.
func chownAll(t *testing.T, dir string, c *caller) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, c.uid, c.gid)
		}
		return err
	})
	if err != nil {
		t.Fatal(fmt.Errorf("chown %s: %w", dir, err))
	}
}
