//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The always-protected paths of issue 3, the bare repositories planted in
// a writable root, the globs that must protect files created during the
// run, and git worktrees and submodules that must keep working.

// protectedPath is a path no settings can open, relative to a writable
// root.
type protectedPath struct {
	rel string
	dir bool
}

// protectedPaths are the list, then the other names cordon
// protects alike.
var protectedPaths = []protectedPath{
	{".git/hooks", true}, {".git/config", false},
	{".gitconfig", false}, {".gitmodules", false},
	{".bashrc", false}, {".bash_profile", false}, {".zshrc", false}, {".zprofile", false}, {".profile", false},
	{".mcp.json", false}, {".vscode", true}, {".idea", true},
	{".claude/commands", true}, {".claude/agents", true}, {".claude/settings.json", false},
	{".cordon", true},
	{".bash_login", false}, {".bash_logout", false}, {".zshenv", false}, {".zlogin", false},
	{".claude/settings.local.json", false},
	{".claude/hooks", true}, {".claude/skills", true},
	{".cursor", true}, {".gemini", true}, {".zed", true}, {".devcontainer", true}, {".exrc", false}, {".nvim.lua", false}, {".ripgreprc", false},
	{".envrc", false}, {".npmrc", false}, {".yarnrc", false}, {".yarnrc.yml", false}, {".pypirc", false}, {"pip.conf", false},
	{".cargo/config.toml", false}, {".cargo/config", false},
}

// movedLine is what cordon prints for each path it moved aside.
var movedLine = regexp.MustCompile(`(?m)^cordon: moved (\S+) \(protected; created during the run\) to (\S+)$`)

// moves returns what cordon said it moved aside: path → where to.
func moves(stderr string) map[string]string {
	out := map[string]string{}
	for _, m := range movedLine.FindAllStringSubmatch(stderr, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// checkMoved: p, created during the run, is gone from the host, moved to
// p.cordon-quarantine-RUNID, and cordon said so on stderr. It returns the
// run ID.
func checkMoved(t *testing.T, r result, p string) string {
	t.Helper()
	to, said := moves(r.stderr)[p]
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(p) + `\.cordon-quarantine-(run-[0-9a-f]+)$`).FindStringSubmatch(to)
	switch {
	case exists(p):
		t.Errorf("%s, created during the run, is still there on the host (%s)\n%s", p, describe(p), r)
	case !said:
		t.Errorf("no line \"cordon: moved %s ...\" on stderr\n%s", p, r)
	case m == nil:
		t.Errorf("%s was moved to %s, want %s.cordon-quarantine-RUNID", p, to, p)
	case !exists(to):
		t.Errorf("%s: %s is not on the host", p, to)
	default:
		return m[1]
	}
	return ""
}

// noGuard is the flag of a run without the system-call guard
// (cordon.syscallGuard false): the protections then rest on the mounts,
// and on the scrub after the run for what the command made.
func noGuard(b *box) []string {
	return []string{"--settings", b.writeAt("no-guard.json", `{"cordon": {"syscallGuard": false}}`)}
}

// checkNotMade: p, which the command tried to make during the run, is not
// on the host: refused when it was made, or made and moved aside when the
// run ended (checkMoved then holds).
func checkNotMade(t *testing.T, r result, p string) {
	t.Helper()
	if _, moved := moves(r.stderr)[p]; moved {
		checkMoved(t, r, p)
		return
	}
	if filepath.Base(p) == "hooks" && filepath.Base(filepath.Dir(p)) == ".git" {
		// git init makes .git/hooks; the guard lets the directory be made
		// and refuses every hook written into it.
		if es, err := os.ReadDir(p); err == nil && len(es) == 0 {
			return
		}
	}
	if exists(p) {
		t.Errorf("%s, made during the run, is on the host (%s), and cordon did not say it moved it\n%s", p, describe(p), r)
	}
}

// describe says what is at a host path.
func describe(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return err.Error()
	}
	if fi.Mode().IsRegular() {
		return fmt.Sprintf("a file holding %q", readFile(p))
	}
	return fi.Mode().String()
}

// TestSettingsProtectedPaths: in the workspace and in an allowWrite
// directory, the protected paths that exist cannot be written, removed or
// renamed, nor their parent directories renamed; those the command
// creates are refused when it makes them, and without the system-call
// guard moved aside when the run ends.
func TestSettingsProtectedPaths(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, where := range []string{"workspace", "allowWrite root"} {
			t.Run(where+"/existing", func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				root, flags := protectedRoot(b, where)
				if out, err := b.hostGit(root, "init", "-q"); err != nil {
					t.Fatalf("git init: %v\n%s", err, out)
				}
				b.writeAt(rel(b, root, ".git/hooks/keep"), "keep\n")
				for _, p := range protectedPaths {
					switch {
					case strings.HasPrefix(p.rel, ".git/"):
					case p.dir:
						b.writeAt(rel(b, root, p.rel+"/keep"), "keep\n")
					case strings.HasSuffix(p.rel, ".json"):
						b.writeAt(rel(b, root, p.rel), "{}\n")
					default:
						b.writeAt(rel(b, root, p.rel), "original "+p.rel+"\n")
					}
				}
				before := snapshot(t, root, "")

				var script strings.Builder
				script.WriteString(`try() { if (eval "$2") 2>/dev/null; then echo "BROKE $1: $2"; fi; }` + "\n")
				try := func(name, cmd string) { fmt.Fprintf(&script, "try %s '%s'\n", name, cmd) }
				for _, p := range protectedPaths {
					n := p.rel
					if p.dir {
						try(n, "echo evil > "+n+"/evil")
						try(n, "echo evil >> "+n+"/keep")
						try(n, "rm -rf "+n)
					} else {
						try(n, "echo evil >> "+n)
						try(n, "echo evil > "+n)
						try(n, "rm -f "+n)
					}
					try(n, "mv "+n+" "+n+".moved")
					if parent := filepath.Dir(n); parent != "." {
						try(n, "mv "+parent+" "+parent+".moved")
						try(n, "mv "+parent+" "+parent+".moved && mkdir -p "+filepath.Dir(n)+" && echo evil > "+n)
					}
				}
				r := b.runSpec(runSpec{dir: root, flags: flags, args: []string{"sh", "-c", script.String()}})
				for _, l := range lines(r.stdout) {
					if strings.HasPrefix(l, "BROKE ") {
						t.Errorf("%s", l)
					}
				}
				if d := cmp.Diff(before, snapshot(t, root, "")); d != "" {
					t.Errorf("the protected paths changed on the host (-before +after):\n%s\n%s", d, r)
				}
			})

			t.Run(where+"/missing", func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				root, flags := protectedRoot(b, where)
				var script strings.Builder
				for _, p := range protectedPaths {
					if p.dir {
						fmt.Fprintf(&script, "mkdir -p %s && echo evil > %s/evil && echo MADE %s\n", p.rel, p.rel, p.rel)
					} else {
						fmt.Fprintf(&script, "mkdir -p %s && echo evil > %s && echo MADE %s\n", filepath.Dir(p.rel), p.rel, p.rel)
					}
				}
				r := b.runSpec(runSpec{dir: root, flags: flags, args: []string{"sh", "-c", script.String()}})
				for _, p := range protectedPaths {
					if containsLine(r.stdout, "MADE "+p.rel) {
						t.Errorf("%s was made: the guard refuses it when it is made\n%s", p.rel, r)
					}
					checkNotMade(t, r, filepath.Join(root, p.rel))
				}
			})

			t.Run(where+"/missing, without the guard", func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				root, flags := protectedRoot(b, where)
				var script strings.Builder
				script.WriteString("set -e\n")
				for _, p := range protectedPaths {
					if p.dir {
						fmt.Fprintf(&script, "mkdir -p %s && echo evil > %s/evil\n", p.rel, p.rel)
					} else {
						fmt.Fprintf(&script, "mkdir -p %s && echo evil > %s\n", filepath.Dir(p.rel), p.rel)
					}
				}
				r := b.runSpec(runSpec{dir: root, flags: append(flags, noGuard(b)...), args: []string{"sh", "-c", script.String()}})
				if r.code != 0 {
					t.Fatalf("creating the missing protected paths failed (nothing can keep a writable directory from gaining an entry):\n%s", r)
				}
				ids := map[string]bool{}
				for _, p := range protectedPaths {
					if id := checkMoved(t, r, filepath.Join(root, p.rel)); id != "" {
						ids[id] = true
					}
				}
				if len(ids) > 1 {
					t.Errorf("one run, several run IDs in the quarantine names: %v", ids)
				}
			})
		}

		// Every settings file of the discovery list is protected, and the
		// home may be a writable root (allowWrite ~, or a workspace in
		// ~): a command that rewrites ~/.config/cordon/settings.json
		// trusts every workspace for the next run.
		t.Run("settings files in a writable home", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			files := []string{".config/cordon/settings.json", ".srt-settings.json", ".claude/settings.json"}
			evil := `{"cordon": {"trustedWorkspaces": ["/"]}}`
			for _, f := range files[:2] {
				b.writeAt("home/"+f, "{}\n")
			}
			var script strings.Builder
			for _, f := range files {
				fmt.Fprintf(&script, "mkdir -p ~/%s; echo '%s' > ~/%s && echo WROTE %s\n", filepath.Dir(f), evil, f, f)
			}
			r := b.shIn([]string{"--allow-write", b.home}, script.String())
			for _, f := range files[:2] {
				if got := readFile(filepath.Join(b.home, f)); got != "{}\n" {
					t.Errorf("~/%s (a settings file cordon reads) was rewritten from inside: %q\n%s", f, got, r)
				}
			}
			// One that did not exist is refused, or moved aside, like the
			// others.
			checkNotMade(t, r, filepath.Join(b.home, files[2]))
		})

		// cordon reads its user settings from $XDG_CONFIG_HOME/cordon
		// when XDG_CONFIG_HOME is set: that file is the one to protect.
		t.Run("user settings under XDG_CONFIG_HOME in a writable root", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			xdg := b.mkdirAt("xdg")
			f := b.writeAt("xdg/cordon/settings.json", "{}\n")
			r := b.runSpec(runSpec{env: []string{"XDG_CONFIG_HOME=" + xdg}, flags: []string{"--allow-write", xdg}, args: []string{"sh", "-c",
				`echo '{"cordon": {"trustedWorkspaces": ["/"]}}' > "$XDG_CONFIG_HOME/cordon/settings.json"`}})
			if got := readFile(f); got != "{}\n" {
				t.Errorf("%s (the user settings file cordon reads) was rewritten from inside: %q\n%s", f, got, r)
			}
		})
	})
}

// protectedRoot returns the writable root of a protected-paths case, and
// the flags that make it one.
func protectedRoot(b *box, where string) (string, []string) {
	if where == "workspace" {
		return b.ws, nil
	}
	root := b.mkdirAt("extra")
	return root, []string{"--allow-write", root}
}

// rel is p below the box's directory.
func rel(b *box, root, p string) string {
	r, err := filepath.Rel(b.dir, filepath.Join(root, p))
	must(b.t, err)
	return r
}

// plantRepo is the shell to make DIR a git directory whose config runs
// `touch MARKER` as soon as git status looks at it (core.fsmonitor). A
// bare one names itself its work tree, or git would refuse to run status
// in it, and its config would run nothing.
func plantRepo(dir, marker string, bare bool) string {
	worktree := ""
	if bare {
		worktree = `\tbare = false\n\tworktree = .\n`
	}
	return fmt.Sprintf(`mkdir -p %[1]s/objects %[1]s/refs/heads && echo "ref: refs/heads/main" > %[1]s/HEAD && `+
		`printf '[core]\n\trepositoryformatversion = 0\n%[3]s\tfsmonitor = "touch %[2]s; false"\n' > %[1]s/config`, dir, marker, worktree)
}

// TestSettingsBareRepos: a bare repository planted in the workspace during
// the run (HEAD, objects/, refs/ and a config that runs a command) is
// neutralised when the run ends: git on the host does not run its config.
// The workspace's own .git is left alone.
func TestSettingsBareRepos(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, guard := range []bool{true, false} {
			name := "planted in the workspace"
			if !guard {
				name += ", without the guard"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b := newBox(t, c)
				marker := filepath.Join(b.dir, "fsmonitor-ran")
				// The control: the same repository planted from the host
				// makes git on the host run its config, so the marker can
				// tell.
				control := b.mkdirAt("control")
				if out, err := b.hostShell(control, plantRepo("planted", marker, true)); err != nil {
					t.Fatalf("plant the control: %v\n%s", err, out)
				}
				_, _ = b.hostGit(filepath.Join(control, "planted"), "status")
				if !exists(marker) {
					t.Fatalf("the control: git on the host did not run the planted core.fsmonitor")
				}
				must(t, os.Remove(marker))

				for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
					if out, err := b.hostGit(b.ws, args...); err != nil {
						t.Fatalf("git %s: %v\n%s", args, err, out)
					}
				}
				// The guard refuses the last entry that makes a
				// repository, at any depth; the scrub after the run finds
				// those down to the third level.
				dirs := []string{"evil", "a/b/evil"}
				if guard {
					dirs = append(dirs, "a/b/c/deep", "a/b/c/d/e/deeper")
				}
				script := []string{"git commit -q --allow-empty -m inside"}
				for _, d := range dirs {
					script = append(script, plantRepo(d, marker, true))
				}
				var flags []string
				if !guard {
					script = append([]string{"set -e"}, script...)
					flags = noGuard(b)
				}
				r := b.runSpec(runSpec{flags: flags, args: []string{"sh", "-c", strings.Join(script, "\n")}, env: gitEnv()})
				if !guard && r.code != 0 {
					t.Fatalf("planting failed:\n%s", r)
				}
				for _, dir := range dirs {
					if !guard {
						checkMoved(t, r, filepath.Join(b.ws, dir, "HEAD"))
					}
					_, _ = b.hostGit(filepath.Join(b.ws, dir), "status")
					if exists(marker) {
						t.Errorf("git on the host in %s ran the config of the repository planted there\n%s", dir, r)
						must(t, os.Remove(marker))
					}
				}
				if out, err := b.hostGit(b.ws, "log", "-1", "--format=%s"); err != nil || out != "inside\n" {
					t.Errorf("the workspace's own repository: the commit made inside is not there (%v): %q\n%s", err, out, r)
				}
				if _, said := moves(r.stderr)[filepath.Join(b.ws, ".git/HEAD")]; said || !exists(filepath.Join(b.ws, ".git/HEAD")) {
					t.Errorf("the workspace's own .git/HEAD was moved aside:\n%s", r)
				}
			})
		}

		// The workspace had no repository; the command makes .git a
		// file pointing at a git directory it planted. The next git
		// command on the host in the workspace runs that directory's
		// config. A .git file where none was before must be moved aside
		// like .git/hooks and .git/config are.
		t.Run(".git file created during the run", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			marker := filepath.Join(b.dir, "fsmonitor-ran")
			// (The guard refuses vendor/x/.git and the .git file; without
			// it, the .git file is moved aside after the run.)
			r := b.sh(plantRepo("vendor/x/.git", marker, false) + ` ; echo "gitdir: vendor/x/.git" > .git`)
			out, _ := b.hostGit(b.ws, "status")
			if exists(marker) {
				t.Errorf("git on the host in the workspace ran the config of a git directory the command planted and pointed .git at "+
					"(.git is now %s):\ngit status: %s\n%s", describe(filepath.Join(b.ws, ".git")), out, r)
			}
		})
	})
}

// hostShell runs a shell script on the host as the box's caller.
func (b *box) hostShell(dir, script string) (string, error) {
	return b.hostCommand(dir, "sh", "-c", script)
}

// TestSettingsGlobProtection: a denyWrite glob protects its existing
// matches and moves aside the new ones when the run ends; a denyRead
// glob's matches cannot be read.
func TestSettingsGlobProtection(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		t.Run("denyWrite and denyRead globs of a trusted project", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("home/.config/cordon/settings.json", fmt.Sprintf(`{"cordon": {"trustedWorkspaces": [%q]}}`, b.ws))
			b.writeAt("ws/.cordon/settings.json", `{"sandbox": {"filesystem": {"denyWrite": ["/**/*.pem"], "denyRead": ["/**/.env"]}}}`)
			pem := b.writeAt("ws/certs/server.pem", "cert\n")
			b.writeAt("ws/.env", "env-root-"+b.token+"\n")
			b.writeAt("ws/app/.env", "env-app-"+b.token+"\n")
			b.writeAt("ws/app/main.go", "package main // "+b.token+"\n")
			r := b.sh(strings.Join([]string{
				"echo evil > certs/server.pem", "echo evil >> certs/server.pem", "rm -f certs/server.pem", "mv certs/server.pem certs/x",
				"echo new > fresh.pem", "mkdir -p keys && echo new > keys/k.pem", "echo y > other.txt && mv other.txt renamed.pem",
				"mkdir -p certs/sub && echo new > certs/sub/deep.pem", "echo ok > keys/readme.txt",
				"cat .env app/.env app/main.go", "true",
			}, "; "))
			if got := readFile(pem); got != "cert\n" {
				t.Errorf("an existing match of a denyWrite glob changed on the host: %q\n%s", got, r)
			}
			for _, p := range []string{"fresh.pem", "keys/k.pem", "renamed.pem", "certs/sub/deep.pem"} {
				checkNotMade(t, r, filepath.Join(b.ws, p))
			}
			if readFile(filepath.Join(b.ws, "keys/readme.txt")) != "ok\n" {
				t.Errorf("a new file not matching the glob was moved or not written:\n%s", r)
			}
			checkHidden(t, r, ".env (denyRead /**/.env)", "env-root-"+b.token)
			checkHidden(t, r, "app/.env (denyRead /**/.env)", "env-app-"+b.token)
			checkShown(t, r, "app/main.go", "package main // "+b.token)
		})

		// Known limit: a glob's matches are taken when the run starts; a
		// file the host creates in a writable root during the run is
		// not covered (Landlock cannot take a path out of a writable
		// grant).
		t.Run("denyRead glob match created by the host during the run", func(t *testing.T) {
			t.Parallel()
			b := newBox(t, c)
			b.writeAt("ws/.cordon/settings.json", `{"sandbox": {"filesystem": {"denyRead": ["/**/.env"]}}}`)
			b.mkdirAt("ws/late")
			run := b.start(runSpec{args: []string{"sh", "-c",
				`echo ready; i=0; while [ ! -e late/.env ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; cat late/.env`}})
			run.waitStdout("ready")
			b.writeAt("ws/late/.env", "late-env-"+b.token+"\n")
			r := run.wait()
			t.Logf("known limit: a match of a denyRead glob the host creates in the workspace during the run: read inside: %v",
				strings.Contains(r.stdout, "late-env-"+b.token))
		})
	})
}

// TestSettingsDenyReadAppears: a denyRead path that does not exist when
// the run starts (~/.aws) stays unreadable when the host creates it while
// the command runs.
func TestSettingsDenyReadAppears(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		must(t, os.RemoveAll(filepath.Join(b.home, ".aws")))
		run := b.start(runSpec{args: []string{"sh", "-c", `echo ready
i=0
while { [ ! -e ~/.aws/credentials ] || [ ! -e late.txt ] || [ ! -e ~/late.txt ]; } && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -e ~/.aws/credentials ] && echo seen
cat ~/.aws/credentials; echo "cat=$?"
cat ~/.aws/sub/config
cat late.txt
cat ~/late.txt
ls -A ~/.aws`}})
		run.waitStdout("ready")
		// Made complete, owned by the caller, then renamed in: the
		// command sees the file whole or not at all, and only cordon
		// stands between it and the content.
		aws := filepath.Join(b.home, ".aws")
		must(t, os.MkdirAll(filepath.Join(aws, "sub"), 0o700))
		for name, content := range map[string]string{"credentials": "aws-late-" + b.token, "sub/config": "aws-late-sub-" + b.token} {
			tmp := filepath.Join(aws, ".tmp-"+filepath.Base(name))
			must(t, os.WriteFile(tmp, []byte(content+"\n"), 0o600))
			if c.cred != nil {
				must(t, os.Chown(tmp, c.uid, c.gid))
			}
			must(t, os.Rename(tmp, filepath.Join(aws, name)))
		}
		for _, late := range []string{filepath.Join(b.ws, "late.txt"), filepath.Join(b.home, "late.txt")} {
			tmp := late + ".tmp"
			must(t, os.WriteFile(tmp, []byte("late-"+filepath.Base(filepath.Dir(late))+"-"+b.token+"\n"), 0o644))
			b.chown()
			must(t, os.Rename(tmp, late))
		}
		r := run.wait()
		if !containsLine(r.stdout, "seen") {
			t.Fatalf("the command never saw ~/.aws/credentials appear: nothing judged\n%s", r)
		}
		checkShown(t, r, "late.txt (the control: created by the host in the workspace during the run)", "late-ws-"+b.token)
		// Landlock grants what existed when the run started in the
		// directories on the way to a denied path: a file the host adds
		// there later is unreadable too.
		t.Logf("known limit: ~/late.txt, created by the host during the run next to the denied ~/.aws, read inside: %v",
			strings.Contains(r.stdout, "late-home-"+b.token))
		checkHidden(t, r, "~/.aws/credentials created during the run", "aws-late-"+b.token)
		checkHidden(t, r, "~/.aws/sub/config created during the run", "aws-late-sub-"+b.token)
		if containsLine(r.stdout, "cat=0") {
			t.Errorf("cat ~/.aws/credentials succeeded:\n%s", r)
		}
		if containsLine(r.stdout, "credentials") {
			t.Logf("known limit: the names in a denied directory created during the run can be listed (Landlock's directory-read right on its parent covers it):\n%s", r.stdout)
		}
	})
}

// TestSettingsWorktree: in a git worktree whose repository lies outside
// the workspace, git commit works (the worktree's git directory and the
// common directory are writable) but the repository's hooks and config,
// and the worktree's .git file, stay read-only.
func TestSettingsWorktree(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		repo := filepath.Join(b.dir, "repo")
		for _, step := range [][]string{{"init", "-q", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"}, {"-C", repo, "worktree", "add", "-q", b.ws}} {
			if out, err := b.hostGit(b.dir, step...); err != nil {
				t.Fatalf("git %s: %v\n%s", step, err, out)
			}
		}
		gitFile := filepath.Join(b.ws, ".git")
		gitFileBefore := readFile(gitFile)
		if !strings.HasPrefix(gitFileBefore, "gitdir: ") {
			t.Fatalf("the worktree's .git is not a file: %s", describe(gitFile))
		}
		hooksBefore := snapshot(t, filepath.Join(repo, ".git/hooks"), "")
		configBefore := readFile(filepath.Join(repo, ".git/config"))
		wtDir := filepath.Join(repo, ".git/worktrees", filepath.Base(b.ws))

		r := b.runSpec(runSpec{env: gitEnv(), args: []string{"sh", "-c", strings.Join([]string{
			"git commit -q --allow-empty -m inside-worktree && echo COMMITTED",
			"echo evil > " + repo + "/.git/hooks/post-commit",
			"echo evil >> " + repo + "/.git/config",
			"git config core.hooksPath /tmp",
			"mv " + repo + "/.git/hooks " + repo + "/.git/hooks.moved",
			"echo 'gitdir: /tmp/evil' > .git", "rm -f .git", "mv .git .git.moved",
			"echo '[core]' > " + wtDir + "/config.worktree",
			"true",
		}, "; ")}})
		if !containsLine(r.stdout, "COMMITTED") {
			t.Errorf("git commit in the worktree failed:\n%s", r)
		}
		if out, err := b.hostGit(b.ws, "log", "-1", "--format=%s"); err != nil || out != "inside-worktree\n" {
			t.Errorf("the commit made inside is not in the repository on the host (%v): %q", err, out)
		}
		if d := cmp.Diff(hooksBefore, snapshot(t, filepath.Join(repo, ".git/hooks"), "")); d != "" {
			t.Errorf("the main repository's hooks changed (-before +after):\n%s\n%s", d, r)
		}
		if got := readFile(filepath.Join(repo, ".git/config")); got != configBefore {
			t.Errorf("the main repository's config changed:\n%s\n%s", got, r)
		}
		if got := readFile(gitFile); got != gitFileBefore {
			t.Errorf("the worktree's .git file changed: %q\n%s", got, r)
		}
		checkNotMade(t, r, filepath.Join(wtDir, "config.worktree"))
	})
}

// TestSettingsSubmodule: in a submodule (its .git a file pointing into the
// superproject's .git/modules), git commit works, but the submodule's
// hooks and config, its .git file and .gitmodules stay read-only.
func TestSettingsSubmodule(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		origin := filepath.Join(b.dir, "sub-origin")
		for _, step := range [][]string{
			{"init", "-q", origin}, {"-C", origin, "commit", "-q", "--allow-empty", "-m", "sub"},
			{"-C", b.ws, "init", "-q"},
			{"-C", b.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "file://" + origin, "sub"},
			{"-C", b.ws, "commit", "-q", "-m", "add sub"},
		} {
			if out, err := b.hostGit(b.dir, step...); err != nil {
				t.Fatalf("git %s: %v\n%s", step, err, out)
			}
		}
		modDir := filepath.Join(b.ws, ".git/modules/sub")
		before := map[string]string{}
		for _, p := range []string{filepath.Join(modDir, "config"), filepath.Join(b.ws, "sub/.git"), filepath.Join(b.ws, ".gitmodules")} {
			before[p] = readFile(p)
		}
		hooksBefore := snapshot(t, filepath.Join(modDir, "hooks"), "")
		r := b.runSpec(runSpec{env: gitEnv(), args: []string{"sh", "-c", strings.Join([]string{
			"(cd sub && git commit -q --allow-empty -m inside-submodule) && echo COMMITTED",
			"echo evil > .git/modules/sub/hooks/post-commit",
			"echo evil >> .git/modules/sub/config",
			"(cd sub && git config core.hooksPath /tmp)",
			"echo 'gitdir: /tmp/evil' > sub/.git",
			"echo evil >> .gitmodules",
			"mv .git/modules/sub .git/modules/sub2", "mv .git/modules .git/modules2",
			"true",
		}, "; ")}})
		if !containsLine(r.stdout, "COMMITTED") {
			t.Errorf("git commit in the submodule failed:\n%s", r)
		}
		if out, err := b.hostGit(filepath.Join(b.ws, "sub"), "log", "-1", "--format=%s"); err != nil || out != "inside-submodule\n" {
			t.Errorf("the commit made inside the submodule is not on the host (%v): %q", err, out)
		}
		for p, want := range before {
			if got := readFile(p); got != want {
				t.Errorf("%s changed: %q\n%s", p, got, r)
			}
		}
		if d := cmp.Diff(hooksBefore, snapshot(t, filepath.Join(modDir, "hooks"), "")); d != "" {
			t.Errorf("the submodule's hooks changed (-before +after):\n%s\n%s", d, r)
		}
	})
}

// TestSettingsHostRunScripts: the scripts Claude Code runs on the host by
// itself, named by its settings (a hook's command, the status line, the
// API key helper) and by .mcp.json (a stdio server's code), stay
// read-only wherever they are in the workspace: rewritten, the next tool
// call would run them outside the sandbox. A script no such command names
// stays writable.
func TestSettingsHostRunScripts(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		b.writeAt("ws/.claude/settings.json", `{
  "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/fmt.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "cd \"$CLAUDE_PROJECT_DIR\" && python3 tools/check.py --strict"}]}]},
  "statusLine": {"type": "command", "command": "bash ./scripts/status.sh"}
}`)
		b.writeAt("ws/.claude/settings.local.json", `{"apiKeyHelper": "~/bin/key.sh"}`)
		b.writeAt("ws/.mcp.json", `{"mcpServers": {"local": {"command": "node", "args": ["./mcp/server.js"]}}}`)
		scripts := []string{"scripts/fmt.sh", "tools/check.py", "scripts/status.sh", "mcp/server.js"}
		for _, s := range append(scripts, "scripts/other.sh") {
			b.writeAt("ws/"+s, "original\n")
		}
		b.writeAt("home/bin/key.sh", "original\n")
		var script strings.Builder
		for _, s := range append(scripts, "scripts/other.sh") {
			fmt.Fprintf(&script, "echo evil >> %s && echo wrote %s\n", s, s)
		}
		r := b.shIn([]string{"--allow-write", "~/bin"}, script.String()+"echo evil >> ~/bin/key.sh && echo wrote key.sh\n")
		for _, s := range append(scripts, "key.sh") {
			if containsLine(r.stdout, "wrote "+s) {
				t.Errorf("the sandbox wrote %s, which Claude Code runs on the host\n%s", s, r)
			}
		}
		if !containsLine(r.stdout, "wrote scripts/other.sh") {
			t.Errorf("scripts/other.sh, which nothing names, was not writable (the control)\n%s", r)
		}
		for _, s := range scripts {
			if got := readFile(filepath.Join(b.ws, s)); got != "original\n" {
				t.Errorf("%s is now %q", s, got)
			}
		}
		if got := readFile(filepath.Join(b.home, "bin", "key.sh")); got != "original\n" {
			t.Errorf("~/bin/key.sh is now %q", got)
		}
	})
}
