//go:build linux

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrackedDenied: a file denyRead hides that git tracks in the
// workspace's repository stays readable through git's objects; cordon run
// says so once per session (naming the file), cordon check every time and
// cordon config among its notices, and the run is otherwise the same. Once
// the file is no longer tracked, nothing is said.
func TestTrackedDenied(t *testing.T) {
	t.Parallel()
	requires(t, needTool("git"))
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		secret := "secret-dotenv-" + b.token
		must(t, os.WriteFile(filepath.Join(b.ws, ".env"), []byte(secret+"\n"), 0o600))
		must(t, os.WriteFile(filepath.Join(b.ws, "main.go"), []byte("package main\n"), 0o644))
		b.chown()
		for _, args := range [][]string{{"init", "-q"}, {"add", ".env", "main.go"}, {"commit", "-q", "-m", "first"}} {
			if out, err := b.hostGit(b.ws, args...); err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		warning := "cordon: warning: denyRead hides .env, but git tracks it in " + b.ws +
			": its content stays readable through git's objects (git show HEAD:.env) (said once per session)"
		said := func(stderr string) int { return strings.Count(stderr, "git tracks") }
		session := fmt.Sprintf("tracked-%s-%d", c.name, time.Now().UnixNano())
		deny := []string{"--session", session, "--deny-read", "**/.env"}
		env := runSpec{env: gitEnv()}

		// The first run of the session: the file is hidden, git shows its
		// content, and the warning names it, once.
		s := env
		s.flags, s.args = deny, []string{"sh", "-c", "cat .env; echo ---; git show HEAD:.env"}
		r := b.runSpec(s)
		read, shown, _ := strings.Cut(r.stdout, "---")
		if r.code != 0 || strings.Contains(read, secret) || !strings.Contains(shown, secret) {
			t.Errorf("cordon run (cat hidden, git show shows it):\n%s", r)
		}
		if !strings.Contains(r.stderr, warning+"\n") || said(r.stderr) != 1 {
			t.Errorf("cordon run: want the one line\n%s\n%s", warning, r)
		}
		// The second run of the session says nothing.
		s.args = []string{"true"}
		if r := b.runSpec(s); r.code != 0 || said(r.stderr) != 0 {
			t.Errorf("cordon run, a second time in the session: want no warning\n%s", r)
		}
		// cordon check and cordon config say it every time.
		for range 2 {
			r := b.cordon(env, "check", "--deny-read", "**/.env", "--", "cat .env")
			if r.code != 0 || said(r.stderr) != 1 || !strings.Contains(r.stderr, "denyRead hides .env, but git tracks it in "+b.ws) {
				t.Errorf("cordon check: want the warning on stderr\n%s", r)
			}
		}
		r = b.cordon(env, "config", "--deny-read", "**/.env")
		if r.code != 0 || !strings.Contains(r.stdout, "  - denyRead hides .env, but git tracks it in "+b.ws) {
			t.Errorf("cordon config: want the notice\n%s", r)
		}

		// Untracked: nothing, in a new session too.
		if out, err := b.hostGit(b.ws, "rm", "-q", "--cached", ".env"); err != nil {
			t.Fatalf("git rm --cached: %v\n%s", err, out)
		}
		s.flags = []string{"--session", session + "-untracked", "--deny-read", "**/.env"}
		if r := b.runSpec(s); r.code != 0 || said(r.stderr) != 0 {
			t.Errorf("cordon run with .env untracked: want no warning\n%s", r)
		}
		if r := b.cordon(env, "check", "--deny-read", "**/.env", "--", "cat .env"); r.code != 0 || said(r.stderr) != 0 {
			t.Errorf("cordon check with .env untracked: want no warning\n%s", r)
		}
	})
}
