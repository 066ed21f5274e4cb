package runtime

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/spec"
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

// TestPlantedBareRepos: a bare repository made during the run is found at
// every depth up to bareRepoDepth below the writable root, and not below
// it; one that was there before the run, a .git directory and the
// repositories' own git directories are left alone.
func TestPlantedBareRepos(t *testing.T) {
	root := t.TempDir()
	bare := func(rel string) {
		t.Helper()
		p := filepath.Join(root, rel)
		for _, d := range []string{"objects", "refs"} {
			if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(p, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bare("old")
	bare("a/b/old")
	time.Sleep(20 * time.Millisecond) // ctime has the kernel's tick granularity
	started := time.Now()
	time.Sleep(20 * time.Millisecond)
	for _, rel := range []string{"one", "a/two", "a/b/three", "a/b/c/four", "x/.git", "gitdir"} {
		bare(rel)
	}
	got := plantedBelow(root, []string{filepath.Join(root, "gitdir")}, nil, nil, started)
	want := []string{"a/b/three", "a/two", "one"} // a/b/c/four is too deep
	for i := range want {
		want[i] = filepath.Join(root, want[i], "HEAD")
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("plantedBelow = %q\nwant %q", got, want)
	}
}

// TestScrubLeavesUnreachable: cordon as root sees into another user's
// private directory, which its command (root without capabilities) could
// not enter: what changed there during the run is that user's, and is
// left alone, bare repository or protected name; a directory the command
// may search is looked into. (Root only: the directories must belong to
// another user.)
func TestScrubLeavesUnreachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give directories to another user")
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		perm os.FileMode
	}{{"theirs", 0o700}, {"pass", 0o711}} {
		p := filepath.Join(root, d.name)
		if err := os.Mkdir(p, d.perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 1001, 1001); err != nil {
			t.Fatal(err)
		}
	}
	started := clockBetween()
	writeFiles(t, root, "theirs/repo/HEAD", "theirs/repo/objects/x", "theirs/repo/refs/x", "theirs/sub/.mcp.json",
		"pass/repo/HEAD", "pass/repo/objects/x", "pass/repo/refs/x", "pass/sub/.mcp.json")
	got := plantedBelow(root, nil, []string{".mcp.json"}, nil, started)
	slices.Sort(got)
	want := []string{filepath.Join(root, "pass/repo/HEAD"), filepath.Join(root, "pass/sub/.mcp.json")}
	if !slices.Equal(got, want) {
		t.Errorf("plantedBelow = %q\nwant %q", got, want)
	}
}

// TestPlantedBareReposRightAway: a bare repository made in the very
// moment the run starts is found. The kernel stamps a new file's ctime
// with its coarse clock, a tick or more behind time.Now: a command that
// starts within a millisecond (in a sandbox of cordon serve's) made files
// that looked older than the run.
func TestPlantedBareReposRightAway(t *testing.T) {
	root := t.TempDir()
	for i := range 10 {
		p := filepath.Join(root, strconv.Itoa(i))
		since := scrubClock()
		plant := exec.Command("sh", "-c", `mkdir -p "$1/objects" "$1/refs" && echo "ref: refs/heads/main" > "$1/HEAD"`, "sh", p)
		if out, err := plant.CombinedOutput(); err != nil {
			t.Fatalf("plant: %v: %s", err, out)
		}
		if !planted(p, since) {
			t.Fatalf("a bare repository made right after the run started (try %d) is not found", i+1)
		}
	}
}

// TestPlantedNested: nested names made during the run are found in the
// directories one and two levels below the writable root, not in the root
// itself, deeper, through a symlink, in node_modules, or when they were
// there before.
func TestPlantedNested(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, "old/.cordon/settings.json")
	started := clockBetween()
	writeFiles(t, root,
		"p/.claude/settings.json", "p/q/.vscode/tasks.json", "p/q/r/.mcp.json", ".claude/settings.json",
		"old/.claude/settings.local.json", "p/notes.txt",
		// not protected by the plan (mounts.Protect skips it), not moved
		"node_modules/pkg/.vscode/tasks.json",
	)
	if err := os.MkdirAll(filepath.Join(root, "s", ".mcp.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "p"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	nested := []string{".claude/settings.json", ".claude/settings.local.json", ".cordon/settings.json", ".mcp.json", ".vscode/tasks.json"}
	got := plantedBelow(root, nil, nested, nil, started)
	want := []string{"old/.claude/settings.local.json", "p/.claude/settings.json", "p/q/.vscode/tasks.json"}
	for i := range want {
		want[i] = filepath.Join(root, want[i])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("plantedBelow = %q\nwant %q", got, want)
	}
}

// writeFiles writes "{}" to each path rel below root, making the
// directories on the way.
func writeFiles(t *testing.T, root string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// clockBetween is a scrubClock reading that files written before the call
// predate and files written after it do not (ctime has the kernel's tick
// granularity).
func clockBetween() time.Time {
	time.Sleep(20 * time.Millisecond)
	started := scrubClock()
	time.Sleep(20 * time.Millisecond)
	return started
}

// TestScrubNestedBound: a nested protected file the plan bound read-only
// is left where it is, whatever its ctime (the host may have touched it in
// the run's first tick); one the run made is moved aside.
func TestScrubNestedBound(t *testing.T) {
	root := t.TempDir()
	bound := filepath.Join(root, "a/.cordon/settings.json")
	made := filepath.Join(root, "b/.cordon/settings.json")
	since := scrubClock()
	for _, p := range []string{bound, made} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := json.Marshal(spec.Scrub{Roots: []string{root}, Nested: []string{".cordon/settings.json"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{
		Annotations: map[string]string{spec.AnnotationScrub: string(sc)},
		Mounts:      []specs.Mount{{Destination: bound, Type: "bind", Source: bound, Options: []string{"rbind", "rro"}}},
	}
	notes := scrub(s, "run-test", since)
	if _, err := os.Stat(bound); err != nil {
		t.Errorf("the bound file was moved: %v (%q)", err, notes)
	}
	if _, err := os.Stat(made); err == nil {
		t.Errorf("the file the run made is still there (%q)", notes)
	}
}

// TestChangedBelow: in a trusted directory, nested names made during the
// run are found in it and down to two levels below, not deeper, not
// through a symlink, not in node_modules or a git directory, and not when
// they were there before.
func TestChangedBelow(t *testing.T) {
	trusted := t.TempDir()
	writeFiles(t, trusted, "old/.cordon/settings.json")
	started := clockBetween()
	writeFiles(t, trusted,
		".cordon/settings.json", "x/.claude/settings.json", "x/y/.mcp.json", "x/y/z/.mcp.json",
		"node_modules/pkg/.vscode/tasks.json", "gitdir/.mcp.json", ".git/.mcp.json",
	)
	if err := os.Symlink(filepath.Join(trusted, "x"), filepath.Join(trusted, "link")); err != nil {
		t.Fatal(err)
	}
	nested := []string{".claude/settings.json", ".cordon/settings.json", ".mcp.json", ".vscode/tasks.json"}
	got := changedBelow(trusted, []string{filepath.Join(trusted, "gitdir")}, nested, nil, started)
	want := []string{".cordon/settings.json", "x/.claude/settings.json", "x/y/.mcp.json"}
	for i := range want {
		want[i] = filepath.Join(trusted, want[i])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("changedBelow = %q\nwant %q", got, want)
	}
}
