package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRestoreLink: a protected symlink the command replaced (by a
// directory, another link) or removed is put back; the replacement is
// moved aside; an unchanged link is left alone.
func TestRestoreLink(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    func(p string) error
		wantMoved bool
		wantNote  bool
	}{
		{"unchanged", func(string) error { return nil }, false, false},
		{"replaced by a directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, true, true},
		{"pointed elsewhere", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("/etc", p)
		}, true, true},
		{"removed", os.Remove, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "hooks")
			if err := os.Symlink("../githooks", p); err != nil {
				t.Fatal(err)
			}
			if err := tc.change(p); err != nil {
				t.Fatal(err)
			}
			moved, to, err := restoreLink(p, "../githooks", "run-test")
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.Readlink(p); got != "../githooks" {
				t.Errorf("the link is %q, want ../githooks", got)
			}
			if (moved != "") != tc.wantMoved || (to != "") != tc.wantNote {
				t.Errorf("restoreLink = %q, %q; want moved %v, a note %v", moved, to, tc.wantMoved, tc.wantNote)
			}
			if tc.wantMoved {
				if _, err := os.Lstat(p + ".cordon-quarantine-run-test"); err != nil {
					t.Errorf("the replacement was not moved aside: %v", err)
				}
			}
		})
	}
}
