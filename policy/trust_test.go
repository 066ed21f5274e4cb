package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetTrustedSymlink: a user settings file that is a symlink (into a
// dotfiles repository) is written where it points; the link stays.
func TestSetTrustedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "cordon.json")
	link := filepath.Join(dir, "config", "cordon", "settings.json")
	for _, d := range []string{filepath.Dir(target), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(target, []byte(`{"cordon": {"mode": "prompt"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := SetTrusted(link, "/home/u/src/app", true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink: %v", link, err)
	}
	data, err := os.ReadFile(target)
	if err != nil || !strings.Contains(string(data), "/home/u/src/app") || !strings.Contains(string(data), "prompt") {
		t.Errorf("%s: %q, %v; want the trusted directory added and the mode kept", target, data, err)
	}
}
