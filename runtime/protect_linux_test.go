package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The record of protected paths never goes through a symlink: what it
// holds is what the writable root holds, never a denied file a link
// leads to (the restore after the run would write it into the root).
func TestSnapshotProtectedNoFollow(t *testing.T) {
	secret := []byte("-----BEGIN OPENSSH PRIVATE KEY----- secret")
	tests := []struct {
		name string
		// setup makes the workspace ws (and ssh, the denied directory
		// holding id_ed25519) and returns the protected paths.
		setup func(t *testing.T, ws, ssh string) []string
		// want is each recorded path's kind: "dir", "file", "link".
		want map[string]string
	}{
		{"a protected directory that is a link", func(t *testing.T, ws, ssh string) []string {
			must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
			must(t, os.Symlink(ssh, filepath.Join(ws, ".git/hooks")))
			return []string{filepath.Join(ws, ".git/hooks")}
		}, map[string]string{".git/hooks": "link"}},
		{"a link on the way to a protected path", func(t *testing.T, ws, ssh string) []string {
			must(t, os.Symlink(ssh, filepath.Join(ws, ".git")))
			return []string{filepath.Join(ws, ".git/id_ed25519")}
		}, map[string]string{}},
		{"a protected directory, recorded whole", func(t *testing.T, ws, ssh string) []string {
			must(t, os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, ".git/hooks/pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755))
			must(t, os.Symlink(ssh, filepath.Join(ws, ".git/hooks/keys")))
			return []string{filepath.Join(ws, ".git/hooks")}
		}, map[string]string{".git/hooks": "dir", ".git/hooks/pre-commit.sample": "file", ".git/hooks/keys": "link"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, ssh := filepath.Join(dir, "ws"), filepath.Join(dir, "ssh")
			must(t, os.MkdirAll(ws, 0o755))
			must(t, os.MkdirAll(ssh, 0o700))
			must(t, os.WriteFile(filepath.Join(ssh, "id_ed25519"), secret, 0o600))
			snap, err := snapshotProtected(tt.setup(t, ws, ssh), []string{ws}, "run-test")
			if err != nil {
				t.Fatalf("snapshotProtected: %v", err)
			}
			got := map[string]string{}
			for _, e := range snap.Entries {
				if bytes.Contains(e.Data, secret) {
					t.Errorf("%s holds the denied file's content", e.Path)
				}
				rel, _ := filepath.Rel(ws, e.Path)
				switch e.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					got[rel] = "dir"
				case unix.S_IFREG:
					got[rel] = "file"
				case unix.S_IFLNK:
					got[rel] = "link"
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("recorded %v, want %v", got, tt.want)
			}
			for p, k := range tt.want {
				if got[p] != k {
					t.Errorf("%s recorded as %q, want %q (all: %v)", p, got[p], k, got)
				}
			}
		})
	}
}
