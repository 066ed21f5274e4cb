package spec

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

// testGuard is the guard of a workspace /ws with an allowWrite root /x, a
// worktree's git directory /repo/.git/worktrees/w, the caller's own
// /ws/tools/fmt.sh, and the suite's deny patterns.
func testGuard() *Guard {
	p := &policy.Policy{}
	p.Filesystem.DenyRead = []string{"/ws/**/.env", "/ws/**/*.pem", "/x/secrets", "/ws/app/**/.env.*"}
	p.Filesystem.DenyWrite = []string{"/ws/migrations/**"}
	p.Filesystem.AllowRead = []string{"/ws/**/fixtures/.env"}
	inWritable, inGitDir := p.Protected()
	inWritable = append(inWritable, gitRedirects(".git/")...)
	inGitDir = append(inGitDir, gitRedirects("")...)
	return guardFor(p, []string{"/ws", "/x"}, []string{"/repo/.git/worktrees/w"}, inWritable, inGitDir, []string{"/ws/tools/fmt.sh", "/home/u/.bashrc"})
}

func TestGuardRefuses(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path string
		want bool
	}{
		// The writable roots' own protected names, and below them.
		{"/ws/.git/hooks/pre-commit", true},
		{"/ws/.git/config", true},
		{"/ws/.git/commondir", true},
		{"/ws/.git/modules/sub/hooks/post-checkout", true},
		{"/ws/.vscode", true},
		{"/ws/.vscode/tasks.json", true},
		{"/x/.npmrc", true},
		{"/ws/.envrc", true},
		{"/ws/.cargo/config.toml", true},
		{"/ws/.bashrc", true},
		// At any depth, node_modules too.
		{"/ws/a/b/c/d/.git/hooks/pre-commit", true},
		{"/ws/a/.git/hooks/post-checkout", true},
		{"/ws/a/b/c/d/.git/config", true},
		{"/ws/node_modules/x/.git/hooks/pre-push", true},
		{"/ws/a/b/c/.claude/settings.json", true},
		{"/ws/a/b/c/.npmrc", true},
		{"/ws/a/b/c/.venv/pip.conf", true},
		{"/ws/packages/web/.vscode/tasks.json", true},
		{"/ws/node_modules/pkg/.cargo/config.toml", true},
		// A worktree's git directory outside the roots.
		{"/repo/.git/worktrees/w/config.worktree", true},
		// The caller's own files and the denied patterns.
		{"/ws/tools/fmt.sh", true},
		{"/ws/a/b/.env", true},
		{"/ws/.env", true},
		{"/ws/a/.env/x", true},
		{"/ws/certs/k.pem", true},
		{"/x/secrets/token", true},
		{"/ws/app/config/.env.local", true},
		{"/ws/migrations/001.sql", true},
		// What a build, an install or git itself makes.
		{"/ws/a/b/c/index.js", false},
		{"/ws/.git/objects/ab/cdef", false},
		{"/ws/.git/index.lock", false},
		{"/ws/.git/HEAD", false},
		{"/ws/a/.git/refs/heads/main", false},
		{"/ws/.vscodex", false},
		{"/ws/a/.vscode/extensions.json", false},
		{"/ws/a/.claude/notes.md", false},
		{"/ws/a/.claude", false},
		{"/ws/.env.example", false},
		{"/ws/other/.env.local", false},
		{"/ws/tools/fmt.sh.orig", false},
		{"/ws/test/fixtures/.env", false}, // re-opened by allowRead
		{"/tmp/.git", false},
		{"/tmp/x/.npmrc", false},
		{"/repo/.git/worktrees/w/HEAD", false},
		// A new repository (git init, git clone): an empty hooks directory
		// and git's samples; its config is decided by content
		// (Refusal.Content). A submodule's git directory, whose name may
		// hold slashes, on its way.
		{"/ws/a/b/c/d/.git", false},
		{"/ws/a/.git/hooks", false},
		{"/ws/a/.git/hooks/pre-commit.sample", false},
		{"/ws/.git/hooks/x/pre-commit.sample", true},
		{"/ws/.git/modules", false},
		{"/ws/.git/modules/lib", false},
		{"/ws/.git/modules/lib/foo", false},
		{"/ws/.git/modules/lib/foo/HEAD", false},
		{"/ws/.git/modules/lib/foo/hooks/update.sample", false},
		{"/ws/.git/modules/lib/foo/hooks/post-checkout", true},
		{"/ws/.git/modules/lib/foo/config", true},
		{"/ws/.git/modules/a/modules/b/hooks/pre-commit", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := g.Refuses(tc.path); (got != nil) != tc.want {
				t.Errorf("Refuses(%q) = %+v, want refused %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestGuardCarries(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/ws/.claude", true},
		{"/ws/a/b/.claude", true},
		{"/ws/a/.cargo", true},
		{"/ws/a/.git", true},
		{"/ws/a/.git/hooks", true},
		{"/ws/.git/modules/x/hooks", true},
		{"/ws/.git/modules/x", true},
		{"/ws/.git/modules", true},
		{"/ws/tools", true},
		{"/ws/.vscode", true},
		{"/ws/a/.vscode", true},
		{"/ws/a/b", false},
		{"/ws/node_modules/x", false},
		{"/ws/.git/objects", false},
		{"/tmp/.claude", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := g.Carries(tc.path); (got != nil) != tc.want {
				t.Errorf("Carries(%q) = %+v, want refused %v", tc.path, got, tc.want)
			}
		})
	}
}

func TestGuardMovedIn(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"/ws/a/x", "/ws/b/x", false},      // **/.env covers both
		{"/ws/other/x", "/ws/app/x", true}, // app/**/.env.* covers only the new place
		{"/ws/app/x", "/ws/other/x", false},
		{"/ws/x", "/ws/migrations/x", false}, // refused outright: migrations/** denies it
	} {
		if got := g.MovedIn(tc.from, tc.to); got != tc.want {
			t.Errorf("MovedIn(%q, %q) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestGuardInGitDir(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/ws/.git", true},
		{"/ws/a/.git/modules/x", true},
		{"/repo/.git/worktrees/w", true},
		{"/ws/a", false},
		{"/ws/a.git", false},
		{"/tmp/.git", false},
	} {
		if got := g.InGitDir(tc.path); got != tc.want {
			t.Errorf("InGitDir(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestMakesRepo(t *testing.T) {
	for _, tc := range []struct {
		name string
		has  []string
		want bool
	}{
		{"config", []string{"HEAD", "objects", "refs"}, true},
		{"HEAD", []string{"config", "objects", "refs"}, true},
		{"refs", []string{"HEAD", "objects", "hooks"}, true},
		{"commondir", []string{"HEAD", "objects", "refs"}, true},
		{"config", []string{"HEAD", "objects"}, false},
		{"HEAD", []string{"objects", "refs"}, false}, // no config or hooks: runs nothing
		{"HEAD", []string{"HEAD", "objects", "refs", "config"}, false},
		{"config", []string{"HEAD", "objects", "refs", "hooks"}, false}, // a repository already
		{"index.js", []string{"HEAD", "objects", "refs"}, false},
	} {
		has := func(n string) bool { return slices.Contains(tc.has, n) }
		if got := MakesRepo(tc.name, has); got != tc.want {
			t.Errorf("MakesRepo(%q, %v) = %v, want %v", tc.name, tc.has, got, tc.want)
		}
	}
}

// TestGuardContent: the configs are decided by what they would hold,
// the commondir of a git directory made during the run by the caller
// (Refusal.GitDir); hooks never.
func TestGuardContent(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path    string
		content Content
		gitDir  string
	}{
		{"/ws/.git/config", GitConfig, ""},
		{"/ws/a/b/.git/config", GitConfig, ""},
		{"/ws/.git/config.worktree", GitConfig, ""},
		{"/ws/.git/modules/sub/config", GitConfig, ""},
		{"/ws/.git/modules/lib/foo/config", GitConfig, ""},
		{"/repo/.git/worktrees/w/config.worktree", GitConfig, ""},
		{"/ws/.gitmodules", Gitmodules, ""},
		{"/x/.gitmodules", Gitmodules, ""},
		{"/ws/.git/commondir", NoContent, "/ws/.git"},
		{"/ws/.git/worktrees/w/commondir", NoContent, "/ws/.git/worktrees/w"},
		{"/ws/.git/modules/lib/foo/commondir", NoContent, "/ws/.git/modules/lib/foo"},
		{"/ws/.git/hooks/pre-commit", NoContent, ""},
		{"/ws/.git/modules/sub/hooks/pre-commit", NoContent, ""},
		{"/ws/.git/config/x", NoContent, ""},
	} {
		r := g.Refuses(tc.path)
		if r == nil || r.Content != tc.content || r.GitDir != tc.gitDir {
			t.Errorf("Refuses(%q) = %+v, want refused with content %d, git directory %q", tc.path, r, tc.content, tc.gitDir)
		}
	}
	if r := g.Refuses("/ws/sub/.gitmodules"); r != nil {
		t.Errorf("Refuses(/ws/sub/.gitmodules) = %+v: a submodule's own is its business", r)
	}
}

// TestGuardIsGitDir: the directories git makes as git directories.
func TestGuardIsGitDir(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/ws/a/.git", true},
		{"/ws/.git/worktrees/w", true},
		{"/ws/a/.git/modules/sub", true},
		{"/ws/a/.git/modules/sub/modules/inner", true},
		{"/ws/.git/modules/lib/foo", true},
		{"/repo/.git/worktrees/w/modules/x", true},
		{"/ws/.git/objects", false},
		{"/ws/worktrees/w", false},
		{"/tmp/.git", false},
	} {
		if got := g.IsGitDir(tc.path); got != tc.want {
			t.Errorf("IsGitDir(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestGuardFor(t *testing.T) {
	g := testGuard()
	if d := cmp.Diff([]string{"/ws/tools/fmt.sh"}, g.Paths); d != "" {
		t.Errorf("own paths in the roots (-want +got):\n%s", d)
	}
	if guardFor(&policy.Policy{}, nil, nil, nil, nil, nil) != nil {
		t.Error("a guard without writable roots")
	}
}

func TestContentOf(t *testing.T) {
	roots := []string{"/ws", "/x"}
	for p, want := range map[string]Content{
		"/ws/.gitmodules":                      Gitmodules,
		"/ws/a/.gitmodules":                    NoContent,
		"/ws/.git/config":                      GitConfig,
		"/ws/a/b/c/d/e/.git/config":            GitConfig,
		"/ws/.git/modules/lib/foo/config":      GitConfig,
		"/ws/.git/worktrees/w/config.worktree": GitConfig,
		"/ws/.cargo/config":                    NoContent,
		"/ws/.git/hooks/config":                NoContent,
		"/tmp/.git/config":                     NoContent,
	} {
		if got := ContentOf(roots, p); got != want {
			t.Errorf("ContentOf(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestGitFileOK(t *testing.T) {
	g := testGuard()
	for _, tc := range []struct {
		path, data string
		want       bool
	}{
		{"/ws/.worktrees/hotfix/.git", "gitdir: /ws/.git/worktrees/hotfix\n", true},
		{"/ws/lib/foo/.git", "gitdir: ../../.git/modules/lib/foo\n", true},
		{"/ws/a/.git", "gitdir: /repo/.git/worktrees/w\n", true},
		{"/ws/a/.git", "gitdir: /ws/evil\n", false},
		{"/ws/a/.git", "gitdir: ../.git\n", false},
		{"/ws/a/.git", "gitdir: /ws/.git/worktrees/x/../../../evil\n", false},
		{"/ws/a/.git", "/ws/.git/worktrees/hotfix\n", false},
		{"/ws/a/.git", "gitdir: /ws/.git/objects/x\n", false},
	} {
		if got := g.GitFileOK(tc.path, []byte(tc.data)); got != tc.want {
			t.Errorf("GitFileOK(%q, %q) = %v, want %v", tc.path, tc.data, got, tc.want)
		}
	}
	for _, tc := range []struct {
		path, data string
		want       bool
	}{
		{"/ws/.git/worktrees/w/commondir", "../..\n", true},
		{"/ws/.git/worktrees/w/commondir", "/ws/.git\n", true},
		{"/ws/.git/worktrees/w/commondir", "../../../evil\n", false},
		{"/ws/.git/modules/x/commondir", "../..\n", false},
	} {
		if got := CommondirOK(tc.path, []byte(tc.data)); got != tc.want {
			t.Errorf("CommondirOK(%q, %q) = %v, want %v", tc.path, tc.data, got, tc.want)
		}
	}
}
