package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestEndDir(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "file"), nil, 0o644))
	must(t, os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "link")))
	s := &specs.Spec{Mounts: []specs.Mount{
		{Destination: root, Type: "bind", Source: root, Options: []string{"rbind", "rro"}},
		{Destination: filepath.Join(ws, "hidden"), Type: "tmpfs", Source: "tmpfs"},
	}}
	must(t, os.Mkdir(filepath.Join(ws, "hidden"), 0o755))
	for _, tc := range []struct {
		name, said, want string
	}{
		{"workspace", ws + "\n", ws},
		{"below", ws + "/sub\n", ws + "/sub"},
		{"no newline", ws + "/sub", ""},
		{"two lines", ws + "\n" + ws + "/sub\n", ""},
		{"a link on the host", ws + "/link\n", ""},
		{"a file", ws + "/file\n", ""},
		{"not there", ws + "/gone\n", ""},
		{"hidden", ws + "/hidden\n", ""},
		{"not bound", "/\n", ""},
		{"relative", "ws\n", ""},
		{"not clean", ws + "/sub/..\n", ""},
		{"NUL", ws + "\x00/sub\n", ""},
		{"nothing", "", ""},
		{"too long", ws + "/" + strings.Repeat("x", maxCwdReport) + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := endDir(s, []byte(tc.said))
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("endDir(%q) = %q, %v; want %q", tc.said, got, ok, tc.want)
			}
		})
	}
}

func TestCwdArgs(t *testing.T) {
	want := []string{"bash", "-c", `eval -- 'cd sub && ls' 3>&- && { pwd -P >&3; :; } 2>/dev/null`}
	for _, args := range [][]string{
		{"bash", "-c", "cd sub && ls"},
		{"bash", "-c", "--", "cd sub && ls"},
	} {
		got, err := cwdArgs(args)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("cwdArgs(%q) = %q, %v; want %q", args, got, err, want)
		}
	}
	for _, args := range [][]string{
		{"ls"},
		{"sh", "-c", "ls"},
		{"bash", "-c", "ls", "arg0"},
		{"bash", "script.sh"},
	} {
		if got, err := cwdArgs(args); err == nil {
			t.Errorf("cwdArgs(%q) = %q, want an error", args, got)
		}
	}
}
