//go:build linux

package integration

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The attacks on the environment (secrets the caller's environment holds,
// what a later run or the caller's shell would pick up) and on the moment
// between cordon's look at the file system and the command's run.

func envCases() []escCase {
	outside := func(e *escEnv, _ result) []string { return e.outsideChanged() }
	return []escCase{
		{cat: catEnv, name: "the caller's secrets in the environment",
			setup: func(e *escEnv) {
				for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
					"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD", "PGPASSWORD", "MYSQL_PWD", "GPG_PASSPHRASE",
					"CI_JOB_JWT", "SECRET_KEY_BASE", "SENTRY_DSN", "SLACK_WEBHOOK_URL", "STRIPE_SECRET_KEY", "VAULT_TOKEN"} {
					s := "secret-env-" + strings.ToLower(name) + "-" + e.token
					e.secrets = append(e.secrets, s)
					e.set(name, s)
				}
				s := "secret-url-" + e.token
				e.secrets = append(e.secrets, s)
				e.set("DATABASE_URL", "postgres://app:"+s+"@db.internal:5432/app")
				e.set("REDIS_URL", "redis://:"+s+"@cache.internal:6379/0")
			},
			script: `env; tr '\0' '\n' < /proc/self/environ; tr '\0' '\n' < /proc/1/environ; true`,
			breach: func(e *escEnv, r result) []string { return e.secretsSeen(r) }},
		{cat: catEnv, name: "LD_PRELOAD for the caller's next shell",
			script: `printf '\x7fELF' > evil.so
echo "export LD_PRELOAD=$WS/evil.so" >> ~/.bashrc; echo "LD_PRELOAD=$WS/evil.so" >> ~/.pam_environment
mkdir -p ~/.config/environment.d && echo "LD_PRELOAD=$WS/evil.so" > ~/.config/environment.d/90-evil.conf`,
			breach: outside},
		{cat: catEnv, name: "a program on the caller's PATH",
			script: `for d in ~/.local/bin ~/bin; do mkdir -p $d && printf '#!/bin/sh\necho evil\n' > $d/git && chmod +x $d/git; done
echo 'export PATH="$HOME/.evil:$PATH"' >> ~/.profile`,
			breach: outside},
		{cat: catEnv, name: "cordon's own settings and records for the next run",
			setup: func(e *escEnv) {
				must(e.t, os.MkdirAll(filepath.Join(e.b.dir, "state", "cordon"), 0o700))
			},
			script: `mkdir -p ~/.config/cordon && echo '{"cordon": {"trustedWorkspaces": ["/"]}, "sandbox": {"enabled": false}}' > ~/.config/cordon/settings.json
mkdir -p .cordon && echo '{"sandbox": {"filesystem": {"allowWrite": ["/"]}}}' > .cordon/settings.local.json
mkdir -p "$XDG_STATE_HOME/cordon" && echo "forged $TOKEN" >> "$XDG_STATE_HOME/cordon/violations.jsonl"; true`,
			breach: func(e *escEnv, r result) []string {
				out := e.outsideChanged()
				out = append(out, absent(filepath.Join(e.b.ws, ".cordon/settings.local.json"))...)
				if p := grepTree(filepath.Join(e.b.dir, "state"), "forged "+e.token); p != "" {
					out = append(out, "cordon's record of refusals was written from inside: "+p)
				}
				return out
			}},
		{cat: catEnv, name: "git's global configuration", tools: []string{"git"},
			setup: func(e *escEnv) { marker(e) },
			script: `git config --global credential.helper "!touch $MARKER"; git config --global core.pager "touch $MARKER; less"
mkdir -p ~/.config/git && echo "[alias] st = !touch $MARKER" > ~/.config/git/config`,
			breach: outside},
	}
}

// flipper exchanges two paths on the host as fast as it can until the
// test ends.
func flipper(e *escEnv, a, b string) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	}()
	e.t.Cleanup(func() { close(stop); wg.Wait() })
}

func toctouCases() []escCase {
	seen := func(e *escEnv, r result) []string { return e.secretsSeen(r) }
	return []escCase{
		{cat: catTOCTOU, name: "a symlinked .git/hooks replaced by the command", tools: []string{"git"},
			setup: func(e *escEnv) {
				gitRepo(e)
				// Shared hooks, as many projects keep them.
				must(e.t, os.Rename(filepath.Join(e.b.ws, ".git/hooks"), filepath.Join(e.b.ws, ".githooks")))
				must(e.t, os.Symlink("../.githooks", filepath.Join(e.b.ws, ".git/hooks")))
			},
			script: `rm .git/hooks && mkdir .git/hooks && ` + escHook(".git/hooks"),
			breach: hostGitRuns(".", "commit", "-q", "--allow-empty", "-m", "next")},
		{cat: catTOCTOU, name: "a symlinked ~/.bashrc replaced in a writable home",
			setup: func(e *escEnv) {
				// A dotfile manager's link.
				must(e.t, os.Remove(filepath.Join(e.b.home, ".bashrc")))
				e.plant("home/dotfiles/bashrc", "# the caller's own\n", 0o644)
				must(e.t, os.Symlink("dotfiles/bashrc", filepath.Join(e.b.home, ".bashrc")))
				e.flags = append(e.flags, "--allow-write", e.b.home)
			},
			script: `rm ~/.bashrc; echo "evil $TOKEN" > ~/.bashrc; echo "evil $TOKEN" >> ~/dotfiles/bashrc`,
			breach: func(e *escEnv, r result) []string {
				p := filepath.Join(e.b.home, ".bashrc")
				if target, err := os.Readlink(p); err != nil || target != "dotfiles/bashrc" {
					return []string{"~/.bashrc is not the caller's link any more: " + describe(p)}
				}
				return fileIs(p, "# the caller's own\n")
			}},
		{cat: catTOCTOU, name: "rename the directory of a denied file, read it in the next run",
			setup: func(e *escEnv) {
				e.secret("ws/config/db.secret")
				e.flags = append(e.flags, "--deny-read", filepath.Join(e.b.ws, "config/db.secret"))
			},
			script: `mv config config.old`,
			second: `cat config.old/db.secret config/db.secret`,
			breach: seen},
		{cat: catTOCTOU, name: "a symlink planted where a protected path is missing", tools: []string{"git"},
			setup: func(e *escEnv) {
				gitRepo(e)
				must(e.t, os.RemoveAll(filepath.Join(e.b.ws, ".git/hooks")))
			},
			script: `mkdir evilhooks && ` + escHook("evilhooks") + ` && ln -s ../evilhooks .git/hooks`,
			breach: hostGitRuns(".", "commit", "-q", "--allow-empty", "-m", "next")},
		{cat: catTOCTOU, name: "swap a protected directory for a symlink while the sandbox is set up",
			repeat: 12,
			setup: func(e *escEnv) {
				gitRepo(e)
				// .git/hooks and a symlink to ~/.ssh trade places
				// continuously: a bind made by path while the link is
				// there would show the keys at .git/hooks.
				link := filepath.Join(e.b.ws, ".git/hooks-link")
				must(e.t, os.Symlink(filepath.Join(e.b.home, ".ssh"), link))
				e.afterChown = append(e.afterChown, func() { flipper(e, filepath.Join(e.b.ws, ".git/hooks"), link) })
			},
			script: `for i in 1 2 3; do cat .git/hooks/id_ed25519 .git/hooks-link/id_ed25519 ~/.ssh/id_ed25519; done 2>/dev/null; true`,
			// The output only: a walk of the workspace on the host would
			// follow the flipping link itself.
			breach: func(e *escEnv, r result) []string {
				var out []string
				for _, s := range e.secrets {
					if strings.Contains(r.stdout+r.stderr, s) {
						out = append(out, "the output holds "+s)
					}
				}
				return out
			}},
	}
}

// TestEscapeMountChecks makes the time-of-check-to-time-of-use window
// between cordon's resolution of the policy's paths and libcontainer's
// bind mounts deterministic, and changes the workspace in it:
// libcontainer makes binds from paths, so they would land on what is
// there then, not on what cordon resolved. cordon must refuse to run
// instead (its init checks every path of a writable root against what
// cordon resolved). The window is held open by the only thing cordon
// writes in it: its warning about limits this machine enforces by rlimit
// for an unprivileged caller, into a stderr pipe the test keeps full.
func TestEscapeMountChecks(t *testing.T) {
	t.Parallel()
	c := callers["user"]
	requires(t, needCaller(c), needTool("git"))
	b := newBox(t, c)
	if out, err := b.hostGit(b.ws, "init", "-q"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	secret := b.secrets[".ssh/id_ed25519"]
	secret = secret[strings.LastIndex(secret, "secret-"):]
	envSecret := "secret-env-" + b.token
	b.writeAt("ws/app/.env", envSecret+"\n")

	// cordon says each set of unenforced limits once per boot, recorded in
	// its state root: a state root of the test's own has said nothing. (A
	// memory limit of the test's own did not do: the warning rounds it,
	// and a machine running the suite often had said them all.)
	// A first run there says the rest (a degraded sandbox, the default
	// limits), which cordon says before its plan is made: blocked on
	// that, the swap would come before the plan and prove nothing.
	_, stateEnv := privateState(t, b)
	if r := b.runSpec(runSpec{env: []string{stateEnv}, args: []string{"true"}}); r.code != 0 {
		t.Fatalf("cordon run -- true: %s", r)
	}
	mem := "4096M"
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	filled := 0
	wfd := int(w.Fd()) // once: Fd makes the file blocking again
	must(t, unix.SetNonblock(wfd, true))
	for {
		n, err := unix.Write(wfd, make([]byte, 4096))
		if err != nil {
			break
		}
		filled += n
	}
	must(t, unix.SetNonblock(wfd, false))
	ctx := t.Context()
	s := runSpec{env: []string{stateEnv}, flags: []string{"--memory", mem, "--deny-read", filepath.Join(b.ws, "app/.env")}, args: []string{"sh", "-c",
		"cat .git/hooks/id_ed25519 ~/.ssh/id_ed25519 app/.env app.moved/.env; echo ran"}}
	cmd := b.command(ctx, s, runArgs(s)...)
	var stdout syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, w
	must(t, cmd.Start())
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Blocked writing its warning: the plan is made, nothing is mounted.
	blocked := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !blocked; time.Sleep(10 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", cmd.Process.Pid))
		for _, task := range tasks {
			if strings.Contains(readFile(task), "pipe_write") {
				blocked = true
			}
		}
	}
	// What another sandbox writing in the workspace could do meanwhile:
	// .git/hooks becomes a link to ~/.ssh (a bind follows it), and the
	// directory of the denied app/.env trades places with a decoy (the
	// mask would land on the decoy's .env; the real one, inside a
	// writable root, has no Landlock rule to stop a read).
	hooks := filepath.Join(b.ws, ".git/hooks")
	app := filepath.Join(b.ws, "app")
	if blocked {
		must(t, os.Rename(hooks, hooks+".real"))
		must(t, os.Symlink(filepath.Join(b.home, ".ssh"), hooks))
		must(t, os.Rename(app, app+".moved"))
		b.writeAt("ws/app/.env", "decoy\n")
	}
	all, _ := io.ReadAll(r)
	stderrText := ""
	if len(all) > filled {
		stderrText = string(all[filled:])
	}
	err = <-done
	res := result{stdout: stdout.String(), stderr: stderrText}
	if err != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	t.Logf("cordon run --memory %s: exit %d\n%s", mem, res.code, res)
	if !blocked {
		t.Fatalf("cordon never blocked on its warning: the window could not be held open\n%s", res)
	}
	if strings.Contains(res.stdout, secret) {
		t.Errorf("ESCAPE: the keys of ~/.ssh were bound into the sandbox through the swapped .git/hooks\n%s", res)
	}
	if strings.Contains(res.stdout, envSecret) {
		t.Errorf("ESCAPE: the denied app/.env was read: its mask landed on the decoy put in its directory's place\n%s", res)
	}
	if res.code != 125 || !strings.Contains(res.stderr, "is not what the sandbox was planned with") || strings.Contains(res.stdout, "ran") {
		t.Errorf("want cordon to refuse to run (exit 125, the path named):\n%s", res)
	}
}
