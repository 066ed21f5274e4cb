package spec

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// TestWorkspaceProtected: a workspace that is the caller's protected
// configuration (or a symlink to it) is refused, never made writable.
func TestWorkspaceProtected(t *testing.T) {
	for _, ws := range []string{"/home/u/.local/bin", "/home/u/.claude/commands/team", "/home/u/cfg"} {
		t.Run(ws, func(t *testing.T) {
			req := request("true")
			fsys := host()
			fsys["home/u/.local/bin/tool"] = &fstest.MapFile{Mode: 0o755}
			fsys["home/u/.claude/commands/team/c.md"] = &fstest.MapFile{Mode: 0o644}
			fsys["home/u/.config/git/config"] = &fstest.MapFile{Mode: 0o644}
			fsys["home/u/cfg"] = &fstest.MapFile{Mode: fs.ModeSymlink | 0o777, Data: []byte(".config/git")}
			req.FS, req.Cwd = fsys, ws
			_, err := Compile(defaultPolicy(t, ws, "/home/u"), req, amd64)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "protected") {
				t.Errorf("Compile: %v, want the workspace refused as protected", err)
			}
		})
	}
}
