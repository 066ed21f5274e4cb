package mounts

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEntries: the host's getdents Entries answers as the fs.ReadDir
// fallback does: names of any kind, subdirectories but not symlinks to
// them, in name order, and an error for what is not a directory.
func TestEntries(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".git", "x", "y/z", ".claude"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"a", ".mcp.json", "HEAD"} {
		must(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	must(t, os.Symlink("x", filepath.Join(dir, "link")))
	must(t, os.Symlink("nowhere", filepath.Join(dir, ".vscode")))
	// enough entries for several getdents calls
	for i := range 600 {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-long-name-%s-%d", strings.Repeat("n", 40), i)), nil, 0o644))
	}
	names := []string{".claude", ".git", ".mcp.json", ".vscode", "missing"}
	rel := strings.TrimPrefix(dir, "/")

	has, subdirs, err := HostFS().(osRoot).Entries(rel, names)
	if err != nil {
		t.Fatal(err)
	}
	wantHas, wantSubdirs, err := entries(os.DirFS("/"), rel, names)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(has, wantHas) || !slices.Equal(subdirs, wantSubdirs) {
		t.Errorf("Entries = %q, %q; fs.ReadDir says %q, %q", has, subdirs, wantHas, wantSubdirs)
	}
	if want := []string{".claude", ".git", ".mcp.json", ".vscode"}; !slices.Equal(has, want) {
		t.Errorf("has = %q, want %q", has, want)
	}
	if want := []string{".claude", ".git", "x", "y"}; !slices.Equal(subdirs, want) {
		t.Errorf("subdirs = %q, want %q", subdirs, want)
	}
	if _, _, err := (HostFS().(osRoot)).Entries(strings.TrimPrefix(filepath.Join(dir, "a"), "/"), names); err == nil {
		t.Error("Entries of a file: no error")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHostFSSymlinks: HostFS looks at a symlink itself (Lstat, ReadLink),
// as os.DirFS does: every symlink-safe resolution and protected link in
// the plan relies on it. (Wrapped in a struct that embedded only fs.FS, it
// lost them: fs.Lstat fell back to Stat, which follows the link.)
func TestHostFSSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fsys := HostFS()
	fi, err := fs.Lstat(fsys, rel(link))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat of a symlink: %v, %v: want a symlink", fi, err)
	}
	if got, err := fs.ReadLink(fsys, rel(link)); err != nil || got != target {
		t.Errorf("ReadLink = %q, %v; want %q", got, err, target)
	}
	if _, _, err := entries(fsys, rel(link), nil); err == nil {
		t.Errorf("Entries of a symlink to a directory: want an error, it followed the link")
	}
}
