package policy

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatFile(t *testing.T) {
	f := newFixture(t)
	must(t, os.Symlink("loop-b", filepath.Join(f.ws, "loop-a")))
	must(t, os.Symlink("loop-a", filepath.Join(f.ws, "loop-b")))
	must(t, os.Symlink("../other/../proj/src/../README.md", filepath.Join(f.ws, "link-rel")))
	must(t, os.Symlink("link-etc/../..", filepath.Join(f.ws, "link-dotdot")))
	must(t, os.Symlink(filepath.Join(f.home, "nowhere", "file"), filepath.Join(f.ws, "dangling")))
	tests := []struct {
		path     string
		resolved string
		exists   bool
		binary   bool
		size     int64
		err      string
	}{
		{path: "README.md", resolved: "README.md", exists: true, size: 7},
		{path: "logo.png", resolved: "logo.png", exists: true, binary: true, size: 16},
		{path: "link-src/main.go", resolved: "src/main.go", exists: true, size: 13},
		{path: "link-rel", resolved: "README.md", exists: true, size: 7},
		{path: "link-etc/hostname", resolved: "/etc/hostname", size: -1},
		// ".." after a link is the parent of its target, as for the kernel
		{path: "link-other/../notes.txt", resolved: "~/notes.txt", exists: true, size: 6},
		{path: "link-dotdot", resolved: "/"},
		{path: "new/dir/file.txt", resolved: "new/dir/file.txt"},
		{path: "README.md/x", resolved: "README.md/x"},
		{path: "dangling", resolved: "~/nowhere/file"},
		{path: "loop-a", err: "too many levels of symbolic links"},
		{path: "fifo", resolved: "fifo", exists: true},
	}
	abs := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			return filepath.Join(f.home, rest)
		}
		if filepath.IsAbs(p) {
			return p
		}
		return f.ws + "/" + p // not cleaned: ".." after a link is the kernel's
	}
	for _, tc := range tests {
		fi, err := StatFile(abs(tc.path))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if fi.Resolved != filepath.Clean(abs(tc.resolved)) || (tc.exists && !fi.Exists) || fi.Binary != tc.binary || tc.size >= 0 && fi.Size != tc.size {
			t.Errorf("%s: %+v, want resolved %s exists %v binary %v size %d", tc.path, fi, abs(tc.resolved), tc.exists, tc.binary, tc.size)
		}
	}
	if _, err := StatFile("relative"); err == nil {
		t.Error("a relative path: accepted")
	}
}

// TestCheckFile: the library call for agents' own file tools.
func TestCheckFile(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "checkfile", `{"permissions": {"defaultMode": "acceptEdits"}}`)
	for _, tc := range []struct {
		tool, path string
		want       Verdict
	}{
		{"Read", "README.md", VerdictAllow},
		{"Read", "~/.ssh/id_ed25519", VerdictDeny},
		{"Edit", "src/main.go", VerdictAllow},
		{"Write", "link-other/new.txt", VerdictAsk},
		{"Write", ".git/config", VerdictDeny},
	} {
		d, err := p.CheckFile(context.Background(), tc.tool, tc.path, f.ws)
		if err != nil || d.Verdict != tc.want || d.File == nil {
			t.Errorf("%s %s: %s (%s), %v; want %s", tc.tool, tc.path, d.Verdict, d.Reason, err, tc.want)
		}
	}
	if _, err := p.CheckFile(context.Background(), "Read", "", f.ws); err == nil {
		t.Error("no path: accepted")
	}
	if _, err := p.CheckFile(context.Background(), "Read", "a\x00b", f.ws); err == nil {
		t.Error("NUL: accepted")
	}
}

// TestAllowGitConfig: allowGitConfig opens .git/config to the file tools
// as to the sandbox (not denied, as it is without the setting; asked, as
// Claude Code asks before any write in .git, but in bypassPermissions);
// the hooks stay protected.
func TestAllowGitConfig(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "gitconfig", `{"sandbox": {"filesystem": {"allowGitConfig": true}}, "permissions": {"defaultMode": "acceptEdits"}}`)
	for path, want := range map[string]Verdict{".git/config": VerdictAsk, ".git/hooks/pre-commit": VerdictDeny} {
		if d, _ := p.CheckFile(context.Background(), "Edit", path, f.ws); d.Verdict != want {
			t.Errorf("Edit %s: %s (%s), want %s", path, d.Verdict, d.Reason, want)
		}
	}
}

// TestReadOnlyOwnPaths: a file tool's write is refused on the caller's own
// files wherever they lie, as the sandbox's mounts refuse it (OwnPaths):
// the home's protected configuration, the same below $CLAUDE_CONFIG_DIR,
// the settings files and the scripts Claude Code runs on the host.
func TestReadOnlyOwnPaths(t *testing.T) {
	p := &Policy{Home: "/h", ClaudeDir: "/w/.cc", SettingsFiles: []string{"/w/.cordon/settings.json"}, HostRun: []string{"/w/scripts/fmt.sh"}}
	for _, tc := range []struct{ name, want string }{
		{"/h/.bashrc", "the always-protected ~/.bashrc"},
		{"/h/.claude/hooks/x.sh", "the always-protected ~/.claude/hooks"},
		{"/w/.cc/commands/deploy.md", "the always-protected /w/.cc/commands"},
		{"/w/.cordon/settings.json", "the always-protected /w/.cordon/settings.json"},
		{"/w/scripts/fmt.sh", "the always-protected /w/scripts/fmt.sh"},
		{"/w/scripts/other.sh", ""},
		{"/h/notes.txt", ""},
	} {
		if got := p.readOnly(tc.name, nil); got != tc.want {
			t.Errorf("readOnly(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestHiddenIn: the tracked files a policy hides are the paths Read
// decisions hide (denyRead covers the file or a directory above it, no
// narrower allowRead re-opens it), relative to the repository; entries
// that cannot reach the repository are never matched.
func TestHiddenIn(t *testing.T) {
	const repo = "/work/app"
	names := []string{".env", ".env.example", "README.md", "config/.env", "config/prod/key.pem", "deploy/secrets/db.txt",
		"deploy/secrets/public.txt", "vendor/", "../outside/.env", "/etc/passwd", "web/src/index.ts"}
	for _, tc := range []struct {
		name              string
		denyRead, reopens []string
		dir               string
		want              []Hidden
	}{
		{name: "dotenv glob", denyRead: []string{"/work/app/**/.env"},
			want: []Hidden{{".env", "/work/app/**/.env"}, {"config/.env", "/work/app/**/.env"}}},
		{name: "glob from above the repository", denyRead: []string{"/work/**/*.pem"},
			want: []Hidden{{"config/prod/key.pem", "/work/**/*.pem"}}},
		{name: "a directory", denyRead: []string{"/work/app/deploy/secrets"},
			want: []Hidden{{"deploy/secrets/db.txt", "/work/app/deploy/secrets"}, {"deploy/secrets/public.txt", "/work/app/deploy/secrets"}}},
		{name: "allowRead re-opens", denyRead: []string{"/work/app/deploy/secrets"}, reopens: []string{"/work/app/deploy/secrets/public.txt"},
			want: []Hidden{{"deploy/secrets/db.txt", "/work/app/deploy/secrets"}}},
		{name: "a second entry when the first is re-opened", denyRead: []string{"/work/app/deploy", "/work/app/**/db.txt"}, reopens: []string{"/work/app/deploy/secrets"},
			want: []Hidden{{"deploy/secrets/db.txt", "/work/app/**/db.txt"}}},
		{name: "a sparse directory", denyRead: []string{"/work/app/vendor"}, want: []Hidden{{"vendor/", "/work/app/vendor"}}},
		{name: "the credential stores of the home", denyRead: []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/**/.netrc"}},
		{name: "a home that is the repository", dir: "/home/u", denyRead: []string{"/home/u/.ssh", "/home/u/.aws"},
			want: []Hidden{{".ssh/config", "/home/u/.ssh"}}},
		{name: "escaped literal", denyRead: []string{`/work/app/\[x\]`}, want: nil},
		{name: "nothing denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{Filesystem: Filesystem{DenyRead: tc.denyRead, AllowRead: tc.reopens}}
			dir, ns := repo, names
			if tc.dir != "" {
				dir, ns = tc.dir, []string{".bashrc", ".ssh/config", "src/x.go"}
			}
			got := p.HiddenIn(dir, ns)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HiddenIn (-want +got):\n%s", diff)
			}
			// The same as a Read of each path decides.
			for _, n := range ns {
				abs := path.Join(dir, n)
				hidden := slices.ContainsFunc(got, func(h Hidden) bool { return h.Path == n })
				if fs.ValidPath(strings.TrimSuffix(n, "/")) && hidden != (p.unreadable(abs) != "") {
					t.Errorf("%s: hidden %v, unreadable says %q", n, hidden, p.unreadable(abs))
				}
			}
		})
	}
}
