package spec

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"cordon.dev/cordon/internal/access"
	"cordon.dev/cordon/policy"
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

// TestNothingBoundInHidden: a directory the command cannot see gets no
// bind below it, whatever it holds: a repository in a denyRead directory
// of the workspace (its pins would have brought it back into view,
// writable) and cordon's own state in a workspace that holds it (/tmp for
// a caller whose state is /tmp/cordon-UID). What an allowRead re-opens
// there is still protected.
func TestNothingBoundInHidden(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	for _, tc := range []struct {
		name, ws, hidden string
		flags            policy.Flags
		state            string
	}{
		{name: "denyRead", ws: "/home/u/ws", hidden: "/home/u/ws/secret", flags: policy.Flags{DenyRead: []string{"/home/u/ws/secret"}}},
		{name: "state", ws: "/tmp", hidden: "/tmp/cordon-1000", state: "/tmp/cordon-1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request("true")
			fsys := host()
			fsys["home/u/ws/secret/repo/.git/hooks"] = dir
			fsys["home/u/ws/secret/repo/key"] = &fstest.MapFile{Mode: 0o600}
			fsys["tmp/cordon-1000/rootfs/.cordon"] = dir
			fsys["tmp/cordon-1000/rootfs/usr"] = dir
			fsys["tmp/cordon-1000/mask"] = &fstest.MapFile{}
			req.FS, req.Cwd = fsys, tc.ws
			if tc.state != "" {
				req.Host = Host{Rootfs: tc.state + "/rootfs", State: tc.state, Executable: "/usr/local/bin/cordon", MaskFile: tc.state + "/mask"}
			}
			p, err := policy.Load(policy.LoadOptions{Workspace: tc.ws, Cwd: tc.ws, Home: "/home/u", FS: fsys, Flags: tc.flags})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(p, req, amd64)
			if err != nil {
				t.Fatal(err)
			}
			masked := false
			for _, m := range s.Mounts {
				if m.Destination == tc.hidden {
					masked = m.Type == "tmpfs" && slices.Contains(m.Options, "mode=000")
				}
				if strings.HasPrefix(m.Destination, tc.hidden+"/") {
					t.Errorf("%s %s is bound below the hidden %s", m.Type, m.Destination, tc.hidden)
				}
			}
			if !masked {
				t.Errorf("%s is not hidden by an empty read-only tmpfs", tc.hidden)
			}
		})
	}
}

// TestUnreachableLeftOut: a root caller's command (root without
// capabilities) cannot enter another user's private directory in its
// workspace, so the plan neither protects nor scrubs anything there, and
// says so under --debug; its own repositories, and those in a directory
// it may search, are protected.
func TestUnreachableLeftOut(t *testing.T) {
	ownedDir := func(uid, perm uint32) *fstest.MapFile {
		return &fstest.MapFile{Mode: fs.ModeDir | fs.FileMode(perm), Sys: access.File{UID: uid, GID: uid, Perm: perm}}
	}
	fsys := host()
	fsys["tmp/ws"] = ownedDir(0, 0o1777)
	fsys["tmp/ws/theirs"] = ownedDir(1001, 0o700)
	fsys["tmp/ws/theirs/repo/.git/hooks"] = ownedDir(1001, 0o755)
	fsys["tmp/ws/pass"] = ownedDir(1001, 0o711)
	fsys["tmp/ws/pass/repo/.git/hooks"] = ownedDir(0, 0o755)
	fsys["tmp/ws/mine/.git/hooks"] = ownedDir(0, 0o755)
	req := request("true")
	req.FS, req.Cwd, req.UID, req.GID = fsys, "/tmp/ws", 0, 0
	var debug []string
	req.Debug = func(msg string) { debug = append(debug, msg) }
	s, err := Compile(defaultPolicy(t, "/tmp/ws", "/root"), req, amd64)
	if err != nil {
		t.Fatal(err)
	}
	var readOnly []string
	for _, m := range s.Mounts {
		if strings.HasPrefix(m.Destination, "/tmp/ws/theirs") {
			t.Errorf("%s %s: the command cannot reach it", m.Type, m.Destination)
		}
		if slices.Contains(m.Options, "rro") && strings.HasPrefix(m.Destination, "/tmp/ws/") {
			readOnly = append(readOnly, m.Destination)
		}
	}
	for _, want := range []string{"/tmp/ws/mine/.git/hooks", "/tmp/ws/pass/repo/.git/hooks"} {
		if !slices.Contains(readOnly, want) {
			t.Errorf("%s is not bound read-only (read-only: %q)", want, readOnly)
		}
	}
	if sc := s.Annotations[AnnotationScrub]; strings.Contains(sc, "/tmp/ws/theirs") {
		t.Errorf("the scrub looks into /tmp/ws/theirs: %s", sc)
	}
	if !slices.ContainsFunc(debug, func(m string) bool { return strings.Contains(m, "below /tmp/ws/theirs ") }) {
		t.Errorf("debug messages %q do not name /tmp/ws/theirs", debug)
	}
}
