package runtime

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSweepDue(t *testing.T) {
	tests := []struct {
		name  string
		swept time.Duration // how long ago the last sweep was; 0 for never
		due   bool
	}{
		{"never swept", 0, true},
		{"just swept", time.Second, false},
		{"swept within the minute", sweepEvery - 5*time.Second, false},
		{"swept a minute ago", sweepEvery + time.Second, true},
		{"swept an hour ago", time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			stamp := filepath.Join(root, sweptFile)
			if tt.swept != 0 {
				if err := os.WriteFile(stamp, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				then := time.Now().Add(-tt.swept)
				if err := os.Chtimes(stamp, then, then); err != nil {
					t.Fatal(err)
				}
			}
			if got := sweepDue(root); got != tt.due {
				t.Fatalf("sweepDue = %v, want %v", got, tt.due)
			}
			// A sweep now is recorded: the next run does not sweep again.
			if got := sweepDue(root); got {
				t.Errorf("sweepDue right after a sweep = true, want false")
			}
		})
	}
}

// TestListContained: a contained run, which has no libcontainer state, is
// listed by its init: running while that process lives, stopped after.
func TestListContained(t *testing.T) {
	root := t.TempDir()
	self := os.Getpid()
	runs := []struct {
		id   string
		meta Meta
		want Sandbox
	}{
		{"run-live", Meta{Args: []string{"sleep", "9"}, Workspace: "/w", Mode: "container", Init: self, InitTime: startTime(self)},
			Sandbox{ID: "run-live", Status: "running", Pid: self, Args: []string{"sleep", "9"}, Workspace: "/w", Mode: "container"}},
		// The same pid, started at another time: not the run's init.
		{"run-gone", Meta{Args: []string{"true"}, Workspace: "/w", Mode: "unconfined", Init: self, InitTime: startTime(self) + 1},
			Sandbox{ID: "run-gone", Status: "stopped", Args: []string{"true"}, Workspace: "/w", Mode: "unconfined"}},
	}
	for _, r := range runs {
		if err := os.Mkdir(filepath.Join(root, r.id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := writeMeta(root, r.id, r.meta); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	var want []Sandbox
	for _, r := range runs {
		want = append(want, r.want)
	}
	ignore := cmpopts.IgnoreFields(Sandbox{}, "Owner", "Created")
	if d := cmp.Diff(want, got, ignore, cmpopts.SortSlices(func(a, b Sandbox) bool { return a.ID < b.ID })); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
}

// TestGCKeepsOwnDirs: GC removes a run that left its state directory and
// no lock, and leaves the state root's own directories alone, however old:
// the warnings said once per session would be said again, the compiled
// seccomp programs compiled again.
func TestGCKeepsOwnDirs(t *testing.T) {
	root := t.TempDir()
	// (swept just now: GC leaves the host's cgroups alone)
	if err := os.WriteFile(filepath.Join(root, sweptFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	dirs := append([]string{"run-0123456789ab"}, ownDirs...)
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(root, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := GCBeforeRun(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"run-0123456789ab"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, d := range ownDirs {
		if _, err := os.Stat(filepath.Join(root, d, "x")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if l, err := List(root); err != nil || len(l) != 0 {
		t.Errorf("List = %v, %v; want nothing", l, err)
	}
}
