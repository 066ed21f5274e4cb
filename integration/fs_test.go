//go:build linux

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fsCase is one attempt on the file system, made from inside and judged
// from the host.
type fsCase struct {
	name   string
	script string // run with sh -c in the workspace; $HOME is the fake home
	// ok: the command must succeed (a write inside the workspace);
	// otherwise it must fail.
	ok bool
	// secret: a read of a hidden credential: it must fail with
	// "Permission denied" (or, when the fake home lies in the private
	// /tmp, "No such file or directory"), and the secret must not show.
	secret bool
	// parent: the target is in the workspace's parent directory (the fake
	// home and its siblings). When the workspace lives under /tmp that
	// parent is in the sandbox's private /tmp, where a write may succeed:
	// only the host is judged then.
	parent bool
	// logOnly: a known limitation: log what happens, judge nothing.
	logOnly bool
	// emptyGitDir: a directory in .git the command may leave behind,
	// empty: the guard lets git's own layout be made (git init makes
	// .git/hooks) and refuses what would go into it.
	emptyGitDir string
	// setup changes the box before the run.
	setup func(t *testing.T, b *box)
	// check judges more from the host.
	check func(t *testing.T, b *box, r result)
}

const evilHook = `printf '#!/bin/sh\necho evil\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`

var fsCases = []fsCase{
	// The control: without it every other case could pass on a sandbox
	// that cannot write at all.
	{name: "write in the workspace", ok: true,
		script: `echo inside > new.txt && mkdir -p d/e && echo deep > d/e/f.txt && ln -s new.txt rel-link && ln new.txt hard && echo more >> hard && rm -f to-remove.txt`,
		check: func(t *testing.T, b *box, _ result) {
			for p, want := range map[string]string{"new.txt": "inside\nmore\n", "d/e/f.txt": "deep\n", "rel-link": "inside\nmore\n"} {
				if got := readFile(filepath.Join(b.ws, p)); got != want {
					t.Errorf("workspace file %s on the host: %q, want %q", p, got, want)
				}
			}
			if exists(filepath.Join(b.ws, "to-remove.txt")) {
				t.Errorf("a file removed inside the workspace is still on the host")
			}
		}},

	{parent: true, name: "absolute path outside", script: `echo pwned > "$HOME/outside.txt"`},
	{parent: true, name: "new file outside", script: `echo pwned > "$HOME/new.txt"`},
	{parent: true, name: "dot-dot", script: `echo pwned > ../home/outside.txt`},
	{parent: true, name: "dot-dot new file", script: `echo pwned > ../escaped.txt`},
	{parent: true, name: "dot-dot from a subdirectory", script: `mkdir -p a/b && cd a/b && echo pwned > ../../../home/outside.txt`},
	{parent: true, name: "move a file out", script: `echo pwned > f && mv f ../escaped.txt`},
	{parent: true, name: "chmod outside", script: `chmod 666 "$HOME/outside.txt"`},
	{parent: true, name: "remove outside", script: `rm -f "$HOME/outside.txt"`},
	{parent: true, name: "planted symlink to a file", script: `echo pwned > link-file`},
	{parent: true, name: "planted symlink to a directory", script: `echo pwned > link-dir/new.txt`},
	{parent: true, name: "planted relative symlink", script: `echo pwned > link-rel`},
	{parent: true, name: "symlink made inside", script: `ln -s "$HOME/outside.txt" made-link && echo pwned > made-link`},
	{parent: true, name: "hard link made inside", script: `ln "$HOME/outside.txt" made-hardlink`,
		check: func(t *testing.T, b *box, _ result) {
			if exists(filepath.Join(b.ws, "made-hardlink")) {
				t.Errorf("a hard link to a file outside was made in the workspace")
			}
		}},
	{parent: true, name: "/proc/self/root", script: `echo pwned > "/proc/self/root$HOME/outside.txt"`},
	{parent: true, name: "/proc/1/root", script: `echo pwned > "/proc/1/root$HOME/outside.txt"`},
	{parent: true, name: "/proc/self/cwd/..", script: `echo pwned > /proc/self/cwd/../home/outside.txt`},
	{parent: true, name: "/proc/self/cwd/.. new file", script: `echo pwned > /proc/self/cwd/../escaped.txt`},
	// A hard link planted from the host before the run is the same inode
	// as the file outside: a bind mount cannot tell them apart.
	{name: "hard link planted from the host", logOnly: true, script: `echo pwned > planted-hardlink`,
		check: func(t *testing.T, b *box, r result) {
			t.Logf("known limitation (bind mounts): a write through a hard link planted before the run: exit %d; the file outside now holds %q (was %q)",
				r.code, readFile(filepath.Join(b.home, "hardlinked.txt")), "original\n")
		}},

	{name: "write .git/hooks/pre-commit", script: evilHook},
	{name: "write .git/config", script: `echo '[core]' > .git/config`},
	{name: "append to .git/config", script: `printf '[core]\n\tfsmonitor = "touch /tmp/evil"\n' >> .git/config`},
	{name: "rm .git/config", script: `rm -f .git/config`},
	{name: "mv .git/config", script: `mv .git/config .git/config.orig`},
	{name: "mv a file over .git/config", script: `cp .git/config c && echo '[core] hooksPath = /tmp' >> c && mv -f c .git/config`},
	{name: "rm -rf .git/hooks", script: `rm -rf .git/hooks`},
	{name: "mv .git/hooks", script: `mv .git/hooks .git/hooks.orig`},
	{name: "git config core.hooksPath", script: `git config core.hooksPath /tmp`},
	// The protection is on .git/hooks and .git/config; moving .git itself
	// away and putting a copy in its place must not get around it.
	{name: "replace .git", script: `mv .git .git.orig && mkdir .git && cp -R .git.orig/. .git/ && ` + evilHook},
	// A repository without a hooks directory (git init --template=, a
	// clone by some tools) must not get one from inside.
	{name: "create a missing .git/hooks", emptyGitDir: "hooks", script: `mkdir -p .git/hooks && ` + evilHook,
		setup: func(t *testing.T, b *box) { must(t, os.RemoveAll(filepath.Join(b.ws, ".git/hooks"))) }},
	{name: "replace .git with a symlink", script: `mv .git .git.orig && mkdir -p evil/hooks && cp -R .git.orig/. evil/ && ln -s evil .git && ` + evilHook},

	// A denyRead inside the workspace holds wherever the workspace is:
	// under /tmp too, which the sandbox replaces but the workspace's bind
	// brings back.
	{name: "read a denied file and directory in the workspace", secret: true,
		script: `cat .env; cat secrets/key`,
		setup: func(t *testing.T, b *box) {
			must(t, os.MkdirAll(filepath.Join(b.ws, "secrets"), 0o755))
			must(t, os.WriteFile(filepath.Join(b.ws, "secrets", "key"), []byte("ws-secret-dir\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(b.ws, ".env"), []byte("ws-secret-env\n"), 0o600))
			must(t, os.MkdirAll(filepath.Join(b.ws, ".cordon"), 0o755))
			must(t, os.WriteFile(filepath.Join(b.ws, ".cordon", "settings.json"),
				[]byte(`{"sandbox": {"filesystem": {"denyRead": ["./.env", "./secrets"]}}}`+"\n"), 0o644))
			b.chown()
		},
		check: func(t *testing.T, _ *box, r result) {
			if strings.Contains(r.stdout, "ws-secret") {
				t.Errorf("a denied file in the workspace was read:\n%s", r)
			}
		}},
	{name: "read ~/.ssh/id_ed25519", secret: true, script: `cat "$HOME/.ssh/id_ed25519"`},
	{name: "list ~/.ssh", secret: true, script: `ls -a "$HOME/.ssh"`},
	{name: "read ~/.aws/credentials", secret: true, script: `cat "$HOME/.aws/credentials"`},
	{name: "read ~/.netrc", secret: true, script: `cat "$HOME/.netrc"`},
	{name: "read ~/.ssh through /proc/self/root", secret: true, script: `cat "/proc/self/root$HOME/.ssh/id_ed25519"`},
	{name: "read ~/.ssh through a planted symlink", secret: true, script: `cat link-ssh/id_ed25519`},
	{name: "copy ~/.ssh", secret: true, script: `cp -r "$HOME/.ssh" stolen`},
	{name: "grep the home", secret: true, script: `grep -r secret "$HOME"`},
}

// TestFilesystemEscapes: a write inside the workspace lands on the host;
// every way out of it fails and leaves the host untouched; the git hooks
// and config cannot be changed; credentials cannot be read.
func TestFilesystemEscapes(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, placement := range []struct {
			name string
			opts []boxOpt
		}{{"outside tmp", nil}, {"under tmp", []boxOpt{underTmp}}} {
			t.Run(placement.name, func(t *testing.T) {
				t.Parallel()
				for _, tc := range fsCases {
					t.Run(tc.name, func(t *testing.T) {
						t.Parallel()
						b := newFSBox(t, c, placement.opts...)
						if tc.setup != nil {
							tc.setup(t, b)
						}
						outsideBefore := snapshot(t, b.dir, "ws", "state")
						gitBefore := snapshot(t, filepath.Join(b.ws, ".git"), "")
						gitIno := inode(t, filepath.Join(b.ws, ".git"))

						r := b.sh(tc.script)

						if tc.check != nil {
							tc.check(t, b, r)
						}
						if tc.logOnly {
							return
						}
						inPrivateTmp := tc.parent && strings.HasPrefix(b.dir, "/tmp/")
						switch {
						case tc.ok && r.code != 0:
							t.Errorf("the command failed:\n%s", r)
						case !tc.ok && r.code == 0 && !inPrivateTmp:
							t.Errorf("the command succeeded, want a failure:\n%s", r)
						}
						if tc.secret && !strings.Contains(r.stderr, "Permission denied") {
							// Under /tmp the fake home is in the sandbox's
							// private /tmp: not there at all is as good.
							if !strings.HasPrefix(b.dir, "/tmp/") || !strings.Contains(r.stderr, "No such file or directory") {
								t.Errorf("want \"Permission denied\":\n%s", r)
							}
						}
						for name, content := range b.secrets {
							secret := content[strings.LastIndex(content, "secret-"):]
							if strings.Contains(r.stdout+r.stderr, secret) {
								t.Errorf("the content of ~/%s was seen inside:\n%s", name, r)
							}
							if p := grepTree(b.ws, secret); p != "" {
								t.Errorf("the content of ~/%s reached the workspace: %s", name, p)
							}
						}
						if d := cmp.Diff(outsideBefore, snapshot(t, b.dir, "ws", "state")); d != "" {
							t.Errorf("the host outside the workspace changed (-before +after):\n%s\n%s", d, r)
						}
						gitAfter := snapshot(t, filepath.Join(b.ws, ".git"), "")
						if d := tc.emptyGitDir; d != "" && gitBefore[d] == "" && strings.HasPrefix(gitAfter[d], "d") {
							empty := true
							for name := range gitAfter {
								empty = empty && !strings.HasPrefix(name, d+"/")
							}
							if empty {
								delete(gitAfter, d)
							}
						}
						if d := cmp.Diff(gitBefore, gitAfter); d != "" {
							t.Errorf("the workspace's .git changed on the host (-before +after):\n%s\n%s", d, r)
						}
						if ino := inode(t, filepath.Join(b.ws, ".git")); ino != gitIno {
							t.Errorf("the workspace's .git on the host is not the original directory any more (inode %d, was %d): "+
								"the hooks and config planted in its place run on the host with the next git command\n%s", ino, gitIno, r)
						}
					})
				}
			})
		}
	})
}

// newFSBox is a box with a git repository in the workspace, links planted
// in it from the host, and files outside to aim at.
func newFSBox(t *testing.T, c *caller, opts ...boxOpt) *box {
	t.Helper()
	b := newBox(t, c, opts...)
	home, ws := b.home, b.ws
	must(t, os.WriteFile(filepath.Join(home, "hardlinked.txt"), []byte("original\n"), 0o644))
	must(t, os.Link(filepath.Join(home, "hardlinked.txt"), filepath.Join(ws, "planted-hardlink")))
	must(t, os.Symlink(filepath.Join(home, "outside.txt"), filepath.Join(ws, "link-file")))
	must(t, os.Symlink(home, filepath.Join(ws, "link-dir")))
	must(t, os.Symlink("../home/outside.txt", filepath.Join(ws, "link-rel")))
	must(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(ws, "link-ssh")))
	must(t, os.WriteFile(filepath.Join(ws, "to-remove.txt"), nil, 0o644))
	git := exec.Command("git", "init", "-q", ws)
	git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if !exists(filepath.Join(ws, ".git/hooks")) || !exists(filepath.Join(ws, ".git/config")) {
		t.Fatalf("git init made no .git/hooks or .git/config")
	}
	b.chown()
	return b
}

// snapshot describes every file below dir (except the top-level entry
// skip): type, mode, owner, size, content hash or link target.
func snapshot(t *testing.T, dir string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%v uid=%d gid=%d", fi.Mode(), st.Uid, st.Gid)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			desc += fmt.Sprintf(" size=%d sha=%s", len(data), hex.EncodeToString(sum[:8]))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// grepTree returns a file below dir that contains s, or "".
func grepTree(dir, s string) string {
	var found string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || !d.Type().IsRegular() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), s) {
			found = p
		}
		return nil
	})
	return found
}

// TestReadOnlyMode: --mode read-only makes the workspace read-only.
func TestReadOnlyMode(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, mode := range []string{"read-only", "plan"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				must(t, os.WriteFile(filepath.Join(b.ws, "existing.txt"), []byte("before\n"), 0o644))
				must(t, os.Mkdir(filepath.Join(b.ws, "sub"), 0o755))
				b.chown()
				before := snapshot(t, b.ws, "")
				for _, script := range []string{
					"touch new.txt", "echo changed > existing.txt", "rm existing.txt",
					"mkdir newdir", "echo x > sub/new.txt", "mv existing.txt moved.txt",
				} {
					r := b.runSpec(runSpec{flags: []string{"--mode", mode}, args: []string{"sh", "-c", script}})
					if r.code == 0 {
						t.Errorf("--mode %s: %q succeeded:\n%s", mode, script, r)
					}
				}
				r := b.runSpec(runSpec{flags: []string{"--mode", mode}, args: []string{"cat", "existing.txt"}})
				if r.code != 0 || r.stdout != "before\n" {
					t.Errorf("--mode %s: the workspace is not readable:\n%s", mode, r)
				}
				if d := cmp.Diff(before, snapshot(t, b.ws, "")); d != "" {
					t.Errorf("--mode %s: the workspace changed (-before +after):\n%s", mode, d)
				}
			})
		}
	})
}
