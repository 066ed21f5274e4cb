package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

// TestTracked: the hidden files git tracks are found from the workspace,
// its repository's top or a directory below, or a worktree (whose .git is
// a file); found again when the index changes, and not when the policy
// hides nothing there.
func TestTracked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	t.Setenv("CORDON_STATE_ROOT", t.TempDir())
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	git := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	for _, f := range []string{".env", "svc/.env", "svc/main.go", "README.md"} {
		p := filepath.Join(repo, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	git(dir, "init", "-q", repo)
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "x")
	git(repo, "worktree", "add", "-q", filepath.Join(dir, "wt"))
	deny := func(ws string, denyRead ...string) *policy.Policy {
		return &policy.Policy{Workspace: ws, Filesystem: policy.Filesystem{DenyRead: denyRead}}
	}
	env := func(root string) string { return root + "/**/.env" }
	for _, tc := range []struct {
		name string
		pol  *policy.Policy
		want trackedHidden
	}{
		{"top", deny(repo, env(repo)), trackedHidden{Top: repo, Hidden: []policy.Hidden{{Path: ".env", Entry: env(repo)}, {Path: "svc/.env", Entry: env(repo)}}}},
		{"below the top", deny(filepath.Join(repo, "svc"), env(filepath.Join(repo, "svc"))),
			trackedHidden{Top: repo, Hidden: []policy.Hidden{{Path: "svc/.env", Entry: env(filepath.Join(repo, "svc"))}}}},
		{"worktree", deny(filepath.Join(dir, "wt"), env(filepath.Join(dir, "wt"))),
			trackedHidden{Top: filepath.Join(dir, "wt"), Hidden: []policy.Hidden{{Path: ".env", Entry: env(filepath.Join(dir, "wt"))}, {Path: "svc/.env", Entry: env(filepath.Join(dir, "wt"))}}}},
		{"nothing tracked is hidden", deny(repo, env(repo)+".local", "/nonexistent/home/.ssh"), trackedHidden{Top: repo}},
		{"no entry reaches the repository", deny(repo, "/nonexistent/home/.ssh"), trackedHidden{}},
		{"no repository", deny(dir, env(dir)), trackedHidden{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Twice: the second from what the first kept.
			for range 2 {
				if diff := cmp.Diff(tc.want, tracked(tc.pol)); diff != "" {
					t.Fatalf("tracked (-want +got):\n%s", diff)
				}
			}
		})
	}
	t.Run("the index changes", func(t *testing.T) {
		pol := deny(repo, env(repo))
		git(repo, "rm", "-q", "--cached", ".env")
		want := trackedHidden{Top: repo, Hidden: []policy.Hidden{{Path: "svc/.env", Entry: env(repo)}}}
		if diff := cmp.Diff(want, tracked(pol)); diff != "" {
			t.Fatalf("tracked (-want +got):\n%s", diff)
		}
		if got, want := want.notice(), "denyRead hides svc/.env, but git tracks it in "+repo+": its content stays readable through git's objects (git show HEAD:svc/.env)"; got != want {
			t.Errorf("notice:\n got %s\nwant %s", got, want)
		}
	})
}

func TestTrackedNotice(t *testing.T) {
	h := func(names ...string) trackedHidden {
		th := trackedHidden{Top: "/w"}
		for _, n := range names {
			th.Hidden = append(th.Hidden, policy.Hidden{Path: n, Entry: "/w/**"})
		}
		return th
	}
	for _, tc := range []struct {
		t    trackedHidden
		want string
	}{
		{h(), ""},
		{h(".env"), "denyRead hides .env, but git tracks it in /w: its content stays readable through git's objects (git show HEAD:.env)"},
		{h(".env", "a/.env"), "denyRead hides .env and a/.env, but git tracks them in /w: their content stays readable through git's objects (git show HEAD:.env)"},
		{h("1", "2", "3", "4", "5", "6", "7"), "denyRead hides 1, 2, 3, 4, 5 and 2 more, but git tracks them in /w: their content stays readable through git's objects (git show HEAD:1)"},
	} {
		if got := tc.t.notice(); got != tc.want {
			t.Errorf("notice of %d:\n got %s\nwant %s", len(tc.t.Hidden), got, tc.want)
		}
	}
}
