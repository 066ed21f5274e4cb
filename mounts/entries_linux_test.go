package mounts

import (
	"fmt"
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

	has, subdirs, err := osRoot{os.DirFS("/")}.Entries(rel, names)
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
	if _, _, err := (osRoot{os.DirFS("/")}).Entries(strings.TrimPrefix(filepath.Join(dir, "a"), "/"), names); err == nil {
		t.Error("Entries of a file: no error")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
