package spec

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// bigTree is a workspace of 500 packages of 420 files each in
// node_modules (210,000 files), and the files of extra, made up as they
// are read.
type bigTree struct{ extra fstest.MapFS }

func (b bigTree) ReadDir(name string) ([]fs.DirEntry, error) {
	var names []string
	dirs := map[string]bool{}
	switch el := strings.Split(name, "/"); {
	case name == ".":
		names, dirs["ws"] = []string{"ws"}, true
	case name == "ws":
		names, dirs["node_modules"] = []string{"node_modules"}, true
	case name == "ws/node_modules":
		for i := range 500 {
			names = append(names, "p"+strconv.Itoa(i))
			dirs["p"+strconv.Itoa(i)] = true
		}
	case len(el) == 3:
		names, dirs["lib"] = []string{"lib"}, true
	case len(el) == 4 && el[3] == "lib":
		for j := range 420 {
			names = append(names, fmt.Sprintf("f%d.js", j))
		}
	}
	for p := range b.extra {
		rest, ok := strings.CutPrefix(p, name+"/")
		if name == "." {
			rest, ok = p, true
		}
		if !ok {
			continue
		}
		first, below, _ := strings.Cut(rest, "/")
		if !slices.Contains(names, first) {
			names = append(names, first)
		}
		dirs[first] = dirs[first] || below != ""
	}
	slices.Sort(names)
	var out []fs.DirEntry
	for _, n := range names {
		out = append(out, fs.FileInfoToDirEntry(info{n, dirs[n]}))
	}
	return out, nil
}

func (b bigTree) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
}

func (b bigTree) Stat(name string) (fs.FileInfo, error) {
	return info{path.Base(name), true}, nil
}

type info struct {
	name string
	dir  bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return 0 }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }

// A workspace larger than the old bound of 200,000 entries (a monorepo's
// node_modules) is walked whole: its matches are found at any depth, and
// nothing is refused.
func TestExpandPatternLargeTree(t *testing.T) {
	fsys := bigTree{extra: fstest.MapFS{
		"ws/node_modules/p499/lib/deep/.env": {},
		"ws/.env":                            {},
	}}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"/ws/**/.env", []string{"/ws/.env", "/ws/node_modules/p499/lib/deep/.env"}},
		{"/ws/node_modules/p7/**/f41?.js", []string{"/ws/node_modules/p7/lib/f410.js", "/ws/node_modules/p7/lib/f411.js",
			"/ws/node_modules/p7/lib/f412.js", "/ws/node_modules/p7/lib/f413.js", "/ws/node_modules/p7/lib/f414.js",
			"/ws/node_modules/p7/lib/f415.js", "/ws/node_modules/p7/lib/f416.js", "/ws/node_modules/p7/lib/f417.js",
			"/ws/node_modules/p7/lib/f418.js", "/ws/node_modules/p7/lib/f419.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, err := expandPattern(fsys, tt.pattern)
			if err != nil {
				t.Fatalf("expandPattern: %v", err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
