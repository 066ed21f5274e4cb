package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
