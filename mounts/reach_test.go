package mounts

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/internal/access"
)

// owned is a MapFS with owners: a workspace holding another user's private
// directory (with a repository), a directory root may search but not
// list, and root's own private directory.
func owned() fstest.MapFS {
	dir := func(uid uint32, perm uint32) *fstest.MapFile {
		return &fstest.MapFile{Mode: fs.ModeDir | fs.FileMode(perm), Sys: access.File{UID: uid, GID: uid, Perm: perm}}
	}
	file := &fstest.MapFile{Mode: 0o644, Sys: access.File{Perm: 0o644}}
	return fstest.MapFS{
		"ws":                             dir(0, 0o755),
		"ws/.git/hooks":                  dir(0, 0o755),
		"ws/theirs":                      dir(1001, 0o700),
		"ws/theirs/repo/.git/hooks":      dir(1001, 0o755),
		"ws/theirs/repo/.mcp.json":       file,
		"ws/pass":                        dir(1001, 0o711),
		"ws/pass/repo/.git/hooks":        dir(0, 0o755),
		"ws/mine":                        dir(0, 0o700),
		"ws/mine/repo/.git/hooks":        dir(0, 0o755),
		"ws/group/repo/.git/hooks":       dir(0, 0o755),
		"ws/group":                       dir(1001, 0o770),
		"ws/other/.claude/settings.json": file,
	}
}

// TestReach: as a root caller's command (root without capabilities), the
// plan does not look into another user's private directory, looks into
// one it may only search, and into root's own; every refusal is
// remembered. As any other caller, the host's own answers stand.
func TestReach(t *testing.T) {
	r := AsCommand(owned(), 0, 0, nil)
	for _, tc := range []struct {
		name    string
		refused bool
	}{
		{"ws/theirs", false}, // its entry in ws: lstat is fine
		{"ws/theirs/repo", true},
		{"ws/theirs/repo/.git/hooks", true},
		{"ws/pass/repo/.git/hooks", false},
		{"ws/mine/repo/.git/hooks", false},
		{"ws/group/repo", true},
	} {
		_, err := fs.Lstat(r, tc.name)
		if got := errors.Is(err, fs.ErrPermission); got != tc.refused {
			t.Errorf("Lstat(%s): %v, want refused %v", tc.name, err, tc.refused)
		}
	}
	for _, name := range []string{"ws/theirs", "ws/group"} {
		if _, err := fs.ReadDir(r, name); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("ReadDir(%s): %v, want refused", name, err)
		}
		if _, _, err := entries(r, name, nil); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("entries(%s): %v, want refused", name, err)
		}
	}
	// Searchable, not listable: the command can reach a name there, so
	// the plan lists it.
	if _, err := fs.ReadDir(r, "ws/pass"); err != nil {
		t.Errorf("ReadDir(ws/pass): %v", err)
	}
	if diff := cmp.Diff([]string{"/ws/theirs", "/ws/group"}, r.Unreached()); diff != "" {
		t.Errorf("Unreached (-want +got):\n%s", diff)
	}

	// Another caller: the host answers for itself (here, everything).
	other := AsCommand(owned(), 1001, 1001, nil)
	if _, err := fs.ReadDir(other, "ws/mine/repo"); err != nil {
		t.Errorf("as uid 1001 over a file system that grants it: %v", err)
	}
	if got := other.Unreached(); len(got) != 0 {
		t.Errorf("Unreached = %q, want none", got)
	}
}

// TestProtectUnreachable: what the command cannot reach is neither
// protected nor scrubbed (what is there is someone else's, from before the
// run); the rest of the workspace is.
func TestProtectUnreachable(t *testing.T) {
	r := AsCommand(owned(), 0, 0, nil)
	// (theirs/repo/.mcp.json: a path named in the root, as a denyWrite
	// or the caller's own files are)
	pr, err := Protect(NewRecorder(r), []string{"/ws"}, []string{".git/hooks", ".mcp.json", "theirs/repo/.mcp.json"}, nil, []string{".claude/settings.json", ".mcp.json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rule := range pr.Rules {
		if rule.Access == ReadOnly {
			got = append(got, rule.Path)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{"/ws/.git/hooks", "/ws/mine/repo/.git/hooks", "/ws/other/.claude/settings.json", "/ws/pass/repo/.git/hooks"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read-only (-want +got):\n%s", diff)
	}
	for _, p := range pr.Scrub {
		if strings.HasPrefix(p, "/ws/theirs/") || strings.HasPrefix(p, "/ws/group/") {
			t.Errorf("%s is scrubbed: the command cannot reach it", p)
		}
	}
	for _, rule := range pr.Rules {
		if p := rule.Path; p == "/ws/theirs" || strings.HasPrefix(p, "/ws/theirs/") || strings.HasPrefix(p, "/ws/group/") {
			t.Errorf("%s is protected or scrubbed: the command cannot reach it", p)
		}
	}
}
