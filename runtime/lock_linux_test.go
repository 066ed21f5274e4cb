package runtime

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLockRunAppearsLocked: another run's GC probing a run's lock while
// the run takes it never finds it free, and never makes the run fail to
// take it (TestManyRunsAtOnce saw "lock ...: resource temporarily
// unavailable").
func TestLockRunAppearsLocked(t *testing.T) {
	root := t.TempDir()
	const id = "run-0123456789ab"
	var stop atomic.Bool
	var free atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if runLocked(root, id) == lockFree {
				free.Add(1)
			}
		}
	}()
	failed := 0
	for range 3000 {
		unlock, err := lockRun(root, id)
		if err != nil {
			failed++
			continue
		}
		unlock()
	}
	stop.Store(true)
	wg.Wait()
	if failed > 0 || free.Load() > 0 {
		t.Errorf("of 3000 runs, %d could not take their lock; a probe found a lock free %d times", failed, free.Load())
	}
}

// The lock file has no name in the state root before it is linked into
// place, locked: a run killed before that leaves nothing behind.
func TestUnnamedFile(t *testing.T) {
	dir := t.TempDir()
	f, link, drop, err := unnamedFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer drop()
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("before link, %s holds %v; want nothing (O_TMPFILE)", dir, names)
	}
	if err := link(filepath.Join(dir, "run-x.lock")); err != nil {
		t.Fatal(err)
	}
	if err := link(filepath.Join(dir, "run-x.lock")); err == nil {
		t.Errorf("a second link onto an existing name succeeded")
	}
	drop()
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != "run-x.lock" {
		t.Errorf("after link, %s holds %v; want run-x.lock alone", dir, names)
	}
}

// TestGCRunFiles: what a run's compilation made (RunFilesDir) stays while
// the run holds its lock, and while a run without one yet is younger than
// a minute; it goes with a run whose cordon is gone (its lock free), and
// once older than a minute without a lock (a cordon killed before its
// sandbox was made).
func TestGCRunFiles(t *testing.T) {
	root := t.TempDir()
	// no cgroup sweep from this test: it is not due
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, sweptFile), nil, 0o600))
	for _, id := range []string{"run-live", "run-gone", "run-new", "run-old"} {
		must(os.MkdirAll(filepath.Join(RunFilesDir(root, id)), 0o700))
		must(os.WriteFile(filepath.Join(RunFilesDir(root, id), "0"), []byte("fake"), 0o600))
	}
	unlock, err := lockRun(root, "run-live")
	must(err)
	defer unlock()
	must(os.WriteFile(lockFile(root, "run-gone"), nil, 0o600))
	old := time.Now().Add(-2 * time.Minute)
	must(os.Chtimes(RunFilesDir(root, "run-old"), old, old))

	removed, err := GCBeforeRun(root)
	must(err)
	for id, want := range map[string]bool{"run-live": true, "run-gone": false, "run-new": true, "run-old": false} {
		if _, err := os.Stat(RunFilesDir(root, id)); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v (removed %q)", RunFilesDir(root, id), err == nil, want, removed)
		}
	}
}
