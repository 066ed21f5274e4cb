package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSettingsFileKinds: a settings file that is not a regular file (a
// named pipe would block cordon until something writes to it, /dev/zero
// would fill its memory) or is absurdly large is an error naming it, at
// once; a symlink to a regular file is read.
func TestSettingsFileKinds(t *testing.T) {
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".cordon"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(ws, ".cordon", "settings.json")
	regular := filepath.Join(dir, "regular.json")
	if err := os.WriteFile(regular, []byte(`{"sandbox": {"failIfUnavailable": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	large := filepath.Join(dir, "large.json")
	if err := os.WriteFile(large, []byte(`{"sandbox": {"excludedCommands": []}}`+strings.Repeat(" ", MaxSettingsSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func() error
		want string // "" loads
	}{
		{"fifo", func() error { return syscall.Mkfifo(file, 0o644) }, "not a regular file"},
		{"dev zero", func() error { return os.Symlink("/dev/zero", file) }, "not a regular file"},
		{"directory", func() error { return os.Mkdir(file, 0o755) }, "is a directory"},
		{"large", func() error { return os.Symlink(large, file) }, "larger than"},
		{"symlink to a regular file", func() error { return os.Symlink(regular, file) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.RemoveAll(file); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Load(LoadOptions{Workspace: ws, Cwd: ws, Home: home, ManagedFiles: []string{}})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Load still reading after 10s")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *SettingsError
			if !errors.As(err, &se) || se.File != file || !strings.Contains(se.Msg, tc.want) {
				t.Errorf("Load: %v, want a SettingsError for %s saying %q", err, file, tc.want)
			}
		})
	}
}
