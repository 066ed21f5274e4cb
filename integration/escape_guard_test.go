//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attacks on what the mounts cannot protect, because it does not exist
// when the sandbox is made: names the policy protects or denies, made
// during the run anywhere below the workspace — written, renamed, linked
// into place — and the races on the check that refuses them (issue 26).
// The system-call guard stops them when they are made; without it (or
// with it doing check-then-continue) each gets out, which
// TestEscapeGuardOff requires. The scrub after the run moves aside what
// appears two or three levels down: these go deeper, or act before the
// run ends.

// deep is where the guard's cases make things: deeper than the mounts and
// the scrub after the run look.
const (
	deep  = "a/b/c/d"
	deep5 = "a/b/c/d/e"
	deep7 = "a/b/c/d/e/f/g"
)

func guardCases() []escCase {
	return []escCase{
		{cat: catRead, name: "a denied name made during the run, at any depth", guard: true,
			notContained: "the container mode's policy denies no path inside a writable root (it refuses a run that would need one hidden)",
			// The suite's policy denies .env anywhere in the workspace: a
			// planted one is what dotenv loaders (and docker compose)
			// read into the environment of the next thing run there.
			script: `mkdir -p ` + deep + `/e && echo "NODE_OPTIONS=--require ./evil.js" > ` + deep + `/e/.env
echo x > f1 && mv f1 ` + deep + `/.env; echo y > f2 && ln f2 a/b/.env; ln -s /etc/hostname a/b/c/.env; mkdir -p a/.env/x
mkdir -p ` + deep7 + ` && echo SECRET-AT-7 > ` + deep7 + `/.env; cat ` + deep7 + `/.env`,
			breach: func(e *escEnv, r result) []string {
				out := absentAll(deep+"/e/.env", deep+"/.env", "a/b/.env", "a/b/c/.env", "a/.env", deep7+"/.env")(e, r)
				if strings.Contains(r.stdout, "SECRET-AT-7") {
					out = append(out, "a .env made seven deep was read in the same command")
				}
				return out
			}},
		{cat: catProtect, name: "a new repository five deep: what its config and hooks would run", tools: []string{"git"}, guard: true,
			// git init (or clone) deep down is ordinary work; the
			// developer's git in that directory runs its config and
			// hooks. Each config write is refused by what it would hold.
			setup: func(e *escEnv) { marker(e) },
			script: `mkdir -p ` + deep5 + ` && cd ` + deep5 + ` && git init -q && printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$MARKER" > ../evil.cfg
git config core.fsmonitor "touch $MARKER; false"; git config include.path ../../evil.cfg
git config remote.x.url /nowhere; git config remote.x.uploadpack "touch $MARKER; false"
git config submodule.x.update "!touch $MARKER"; git config remote.y.url "ext::sh -c touch% $MARKER"
` + escHook(".git/hooks") + `; mv .git/hooks/update.sample .git/hooks/pre-commit; ln -s ../../evil.cfg .git/hooks/post-commit
git config user.name x && git config user.email x@x && git config remote.origin.url /src && git config -l`,
			breach: func(e *escEnv, r result) []string {
				out := hostGitRuns(deep5, "status")(e, r)
				out = append(out, hostGitRuns(deep5, "commit", "-q", "--allow-empty", "-m", "host")(e, r)...)
				out = append(out, hostGitRuns(deep5, "fetch", "-q", "x")(e, r)...)
				got, _ := e.b.hostGit(filepath.Join(e.b.ws, deep5), "config", "--get-regexp", `fsmonitor|include|uploadpack|submodule|remote\.y`)
				if strings.TrimSpace(got) != "" {
					out = append(out, "the host's config holds: "+strings.TrimSpace(got))
				}
				if got, _ := e.b.hostGit(filepath.Join(e.b.ws, deep5), "config", "remote.origin.url"); strings.TrimSpace(got) != "/src" {
					// (what git writes in ordinary work is not a breach: it
					// must get through, or the case proves too much)
					e.t.Errorf("remote.origin.url on the host: %q, want /src: the guard refused ordinary config", got)
				}
				return out
			}},
		{cat: catTOCTOU, name: "a config rewritten through a kept descriptor while the guard reads it", tools: []string{"git"}, guard: true,
			setup:  func(e *escEnv) { marker(e) },
			script: `mkdir -p ` + deep5 + ` && cd ` + deep5 + ` && git init -q && CORDON_IT_ESCAPE=race-config "$HELPER" .git "$MARKER" 200`,
			breach: func(e *escEnv, r result) []string {
				out := hostGitRuns(deep5, "status")(e, r)
				if data, _ := os.ReadFile(filepath.Join(e.b.ws, deep5, ".git/config")); strings.Contains(string(data), "fsmonitor") {
					out = append(out, "the config holds fsmonitor: "+string(data))
				}
				return out
			}},
		{cat: catProtect, name: "a bare repository and a .git pointer planted deep", tools: []string{"git"}, guard: true,
			setup: func(e *escEnv) { marker(e) },
			script: `m=$MARKER; ` + strings.ReplaceAll(plantRepo(deep+"/e/evil", "MARKERX", true), "MARKERX", `'"$m"'`) + `; ` +
				strings.ReplaceAll(plantRepo(deep+"/gd", "MARKERX", false), "MARKERX", `'"$m"'`) +
				`; mkdir -p ` + deep + `/w && echo "gitdir: ../gd" > ` + deep + `/w/.git`,
			breach: func(e *escEnv, r result) []string {
				return append(hostGitRuns(deep+"/e/evil", "status")(e, r), hostGitRuns(deep+"/w", "status")(e, r)...)
			}},
		{cat: catProtect, name: "agent, editor and package manager settings deep below the workspace", guard: true,
			script: `mkdir -p ` + deep + `/.claude ` + deep + `/.vscode ` + deep + `/.cargo
echo '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}}' > ` + deep + `/.claude/settings.json
echo '{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch pwned", "runOptions": {"runOn": "folderOpen"}}]}' > ` + deep + `/.vscode/tasks.json
echo 'script-shell=/tmp/evil.sh' > ` + deep + `/.npmrc; echo 'eval evil' > ` + deep + `/.envrc
printf '[build]\nrustc-wrapper = "/tmp/evil.sh"\n' > ` + deep + `/.cargo/config.toml; echo '{"mcpServers": {}}' > ` + deep + `/e/.mcp.json`,
			breach: absentAll(deep+"/.claude/settings.json", deep+"/.vscode/tasks.json", deep+"/.npmrc", deep+"/.envrc",
				deep+"/.cargo/config.toml", deep+"/e/.mcp.json")},
		{cat: catProtect, name: "protected names brought in by rename, link and symlink", guard: true,
			// Made under other names, then put in place.
			script: `mkdir -p stage/c ` + deep + ` && echo '{"hooks": {}}' > stage/c/settings.json && mv stage/c ` + deep + `/.claude
mkdir -p evil && echo '{"tasks": []}' > evil/tasks.json && ln -s ../../../../evil ` + deep + `/.vscode
echo 'script-shell=/tmp/evil.sh' > n && ln n ` + deep + `/.npmrc; echo evil > e && ln -s ../../../../e ` + deep + `/.envrc
mkdir -p g/hooks && printf '#!/bin/sh\ntouch x\n' > g/hooks/pre-commit && mv g ` + deep + `/.git`,
			breach: absentAll(deep+"/.claude", deep+"/.vscode", deep+"/.npmrc", deep+"/.envrc", deep+"/.git")},
		{cat: catTOCTOU, name: "a hook made while git runs on the host", tools: []string{"git"}, guard: true,
			// The scrub moves a new .git/hooks aside when the run ends:
			// an editor's git on the host runs it before that.
			setup: func(e *escEnv) {
				gitRepo(e)
				must(e.t, os.RemoveAll(filepath.Join(e.b.ws, ".git/hooks")))
			},
			script: `mkdir -p .git/hooks; ` + escHook(".git/hooks") + "; " + waitGo,
			during: func(e *escEnv) {
				e.notes = append(e.notes, hostGitRuns(".", "commit", "-q", "--allow-empty", "-m", "during")(e, result{})...)
				hostGo(e)
			},
			breach: func(e *escEnv, r result) []string { return e.notes }},
		{cat: catTOCTOU, name: "the path changed in memory between the check and the make", guard: true,
			// One thread opens a buffer's path with O_CREAT again and
			// again while another flips it between an ordinary name and
			// a protected one: a check that let the kernel read the path
			// again would be raced.
			script: `mkdir -p ` + deep + ` && CORDON_IT_ESCAPE=race-path "$HELPER" ` + deep + `/ok ` + deep + `/.npmrc 3000`,
			breach: absentAll(deep + "/.npmrc")},
		{cat: catTOCTOU, name: "a directory swapped for a link to a protected one during the make", guard: true,
			// race/sw is a directory and a link to a .claude directory in
			// turn (renameat2 RENAME_EXCHANGE); the other thread makes
			// race/sw/settings.json again and again.
			script: `mkdir -p race/sw ` + deep + `/.claude && ln -s ../` + deep + `/.claude race/sw.l && CORDON_IT_ESCAPE=race-dir "$HELPER" race/sw race/sw.l settings.json 3000`,
			breach: absentAll(deep + "/.claude/settings.json")},
		{cat: catTOCTOU, name: "protected names through /proc/self/fd, /dev/fd and ..", guard: true,
			script: `mkdir -p ` + deep + `/.claude ` + deep + `/.vscode && exec 3<` + deep + `/.claude
echo x > /proc/self/fd/3/settings.json; echo y > /dev/fd/3/../.npmrc; echo z > a/b/../b/c/./d/.claude/../.claude/settings.local.json
cd ` + deep + ` && echo w > ../../../../` + deep + `/.vscode/tasks.json; cd /proc/self/cwd && echo v > .envrc`,
			breach: absentAll(deep+"/.claude/settings.json", deep+"/.npmrc", deep+"/.claude/settings.local.json", deep+"/.vscode/tasks.json", deep+"/.envrc")},
	}
}

// absentAll returns a breach for each of the workspace's paths rels that
// exists on the host (an lstat: a symbolic link counts).
func absentAll(rels ...string) func(e *escEnv, r result) []string {
	return func(e *escEnv, r result) []string {
		var out []string
		for _, rel := range rels {
			p := filepath.Join(e.b.ws, rel)
			if _, err := os.Lstat(p); err == nil {
				out = append(out, fmt.Sprintf("%s was made: %s", rel, describe(p)))
			}
		}
		return out
	}
}

// TestEscapeGuardOff runs the cases the system-call guard stops in the
// sandbox with the guard off (cordon.syscallGuard false), as every caller:
// each must get out there, or it proves nothing about the guard.
func TestEscapeGuardOff(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range allCases() {
			if !tc.guard {
				continue
			}
			t.Run(tc.cat+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				runCase(t, c, tc, unguardedSyscalls)
			})
		}
	})
}
