package mounts

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

// hostFS is a small host file system with the kinds of symlinks that
// redirect rules: absolute, relative, chained, looping, dangling.
func hostFS() fstest.MapFS {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}
	}
	return fstest.MapFS{
		"bin":                       link("usr/bin"),
		"usr":                       dir,
		"usr/bin":                   dir,
		"usr/bin/sh":                &fstest.MapFile{Mode: 0o755},
		"etc":                       dir,
		"etc/passwd":                &fstest.MapFile{Mode: 0o644},
		"home":                      dir,
		"home/u":                    dir,
		"home/u/.ssh":               dir,
		"home/u/.ssh/id":            &fstest.MapFile{Mode: 0o600},
		"home/u/.aws":               link("/data/aws"),
		"home/u/ws":                 dir,
		"home/u/ws/up":              link("../.ssh"),
		"home/u/ws/loop":            link("loop"),
		"home/u/ws/dangling":        link("/nowhere"),
		"home/u/ws/chain":           link("up/id"),
		"home/u/ws/escape":          link("../../../../../../etc"),
		"data":                      dir,
		"data/aws":                  dir,
		"data/aws/credentials":      &fstest.MapFile{Mode: 0o600},
		"tmp":                       dir,
		"proc":                      dir,
		"dev":                       dir,
		"sys":                       dir,
		"top-file":                  &fstest.MapFile{Mode: 0o644},
		"run":                       dir,
		"run/cordon":                dir,
		"run/cordon/mask":           &fstest.MapFile{Mode: 0},
		"home/u/ws/.git":            dir,
		"home/u/ws/.git/hooks":      dir,
		"home/u/ws/.git/config":     &fstest.MapFile{Mode: 0o644},
		"home/u/ws/.git/hooks/post": &fstest.MapFile{Mode: 0o755},
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name, path, want string
		dir              bool
		err              error
	}{
		{name: "plain", path: "/etc/passwd", want: "/etc/passwd"},
		{name: "directory", path: "/home/u/ws", want: "/home/u/ws", dir: true},
		{name: "root", path: "/", want: "/", dir: true},
		{name: "top-level symlink", path: "/bin/sh", want: "/usr/bin/sh"},
		{name: "symlink itself", path: "/bin", want: "/usr/bin", dir: true},
		{name: "absolute symlink", path: "/home/u/.aws/credentials", want: "/data/aws/credentials"},
		{name: "relative symlink", path: "/home/u/ws/up/id", want: "/home/u/.ssh/id"},
		{name: "chained", path: "/home/u/ws/chain", want: "/home/u/.ssh/id"},
		{name: "dot-dot", path: "/home/u/ws/../.ssh", want: "/home/u/.ssh", dir: true},
		{name: "dot-dot above root", path: "/../../etc/passwd", want: "/etc/passwd"},
		{name: "symlink climbing above root stays at root", path: "/home/u/ws/escape/passwd", want: "/etc/passwd"},
		{name: "unclean", path: "//home/./u//ws/", want: "/home/u/ws", dir: true},
		{name: "missing", path: "/home/u/.gnupg", err: fs.ErrNotExist},
		{name: "missing below file", path: "/etc/passwd/x", err: fs.ErrNotExist},
		{name: "dangling", path: "/home/u/ws/dangling", err: fs.ErrNotExist},
		{name: "loop", path: "/home/u/ws/loop", err: errLoopForTest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, fi, err := Resolve(hostFS(), tc.path)
			switch {
			case tc.err == errLoopForTest:
				if err == nil {
					t.Fatalf("Resolve(%q) = %q, want a symlink loop error", tc.path, got)
				}
				return
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Fatalf("Resolve(%q) error = %v, want %v", tc.path, err, tc.err)
				}
				return
			case err != nil:
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.path, got, tc.want)
			}
			if fi.IsDir() != tc.dir {
				t.Errorf("Resolve(%q) dir = %v, want %v", tc.path, fi.IsDir(), tc.dir)
			}
		})
	}
}

var errLoopForTest = errors.New("loop")

func TestResolveRelative(t *testing.T) {
	if _, _, err := Resolve(hostFS(), "etc/passwd"); err == nil {
		t.Fatal("Resolve accepted a relative path")
	}
}
