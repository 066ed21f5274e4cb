package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRunLive probes this machine with the test binary as the probe child
// (see TestMain). What is available differs between machines and users;
// every feature must either work or say where it failed.
func TestRunLive(t *testing.T) {
	r, err := Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probed in %.1f ms", r.ProbeMillis)
	if r.EUID != os.Geteuid() || r.Kernel == "" || r.BootID == "" || r.Executable == "" {
		t.Errorf("basic facts missing: euid %d kernel %q boot id %q executable %q", r.EUID, r.Kernel, r.BootID, r.Executable)
	}
	rep := NewReport(r)
	for _, c := range checks {
		f := *c.get(&rep.Result)
		if !f.Available && f.Step == "" && f.Error == "" {
			t.Errorf("%s: not available, and no step or error says why", c.key)
		}
		if !f.Available && f.Step != StepUntested && f.Cause == "" {
			t.Errorf("%s: failed without a cause: %+v", c.key, f)
		}
		if strings.HasPrefix(f.Step, "probe child") {
			t.Errorf("%s: the probe child did not answer: %s", c.key, f.Error)
		}
	}
	if r.Seccomp.Available && !r.Seccomp.UserNotify && r.Seccomp.UserNotifyFailure == nil {
		t.Error("seccomp: user notification neither works nor says why")
	}
	if r.Landlock.Available != (r.Landlock.ABI > 0) {
		t.Errorf("landlock: available %v with ABI %d", r.Landlock.Available, r.Landlock.ABI)
	}
	if r.Cgroups.Layout == "" {
		t.Error("no cgroup layout")
	}
}

// TestRunInsideChild: a child that the program did not intercept must not
// probe again.
func TestRunInsideChild(t *testing.T) {
	t.Setenv(childEnv, "userns")
	if _, err := Run(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "probe.Child") {
		t.Errorf("Run in a probe child: %v, want an error naming probe.Child", err)
	}
}

// TestChildNoAnswer: an executable without the hook is a failed probe
// that says so, not a hang or a crash.
func TestChildNoAnswer(t *testing.T) {
	r, err := Run(context.Background(), Options{Executable: "/bin/true", NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seccomp.Available || !strings.Contains(r.Seccomp.Error, "probe.Child") {
		t.Errorf("seccomp with /bin/true as the child: %+v, want no answer naming probe.Child", r.Seccomp.Feature)
	}
}

func TestLoadCaches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	ctx := context.Background()
	first, err := Load(ctx, Options{CacheDir: dir, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached {
		t.Error("a fresh probe says it was cached")
	}
	// Another process: no memo, only the file.
	resetMemo()
	second, err := Load(ctx, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Cached {
		t.Error("the second Load probed again")
	}
	second.Cached = false
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("cached result differs (-probed +cached):\n%s", diff)
	}
	key, err := currentKey("")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(cachePath(dir, key))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("cache file mode %v, want no access for others", fi.Mode())
	}
}

// TestLoadTimeoutNotCached: a probe out of time says so and is not
// cached.
func TestLoadTimeoutNotCached(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	resetMemo()
	r, err := Load(context.Background(), Options{CacheDir: dir, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.UserNamespaces.Cause != CauseTimeout {
		t.Errorf("userNamespaces = %+v, want cause %s", r.UserNamespaces, CauseTimeout)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "probe-*.json")); len(files) > 0 {
		t.Errorf("a result with timeouts was cached: %v", files)
	}
	resetMemo()
}

// TestLoadChildCrashNotCached: probe children that die without an answer
// (Go's runtime aborts with a page of output when the caller's process
// limit leaves it no thread) fail the features with a one-line error, and
// the result is not cached: it would refuse every run until the next boot.
func TestLoadChildCrashNotCached(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	crash := filepath.Join(t.TempDir(), "crash")
	script := "#!/bin/sh\necho 'runtime/cgo: pthread_create failed: Resource temporarily unavailable' >&2\necho 'SIGABRT: abort' >&2\necho 'PC=0x97dabb m=0' >&2\nexit 2\n"
	if err := os.WriteFile(crash, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	resetMemo()
	r, err := Load(context.Background(), Options{CacheDir: dir, Executable: crash})
	resetMemo()
	if err != nil {
		t.Fatal(err)
	}
	f := r.UserNamespaces
	if f.Available || !strings.HasPrefix(f.Step, "probe child ") || !strings.Contains(f.Error, "pthread_create failed") || strings.Contains(f.Error, "\n") {
		t.Errorf("userNamespaces = %+v, want a one-line failure of the probe child", f)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "probe-*.json")); len(files) > 0 {
		t.Errorf("a result of crashed probe children was cached: %v", files)
	}
}

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Feature
		want bool
	}{
		{"a fact", Feature{Step: "clone", Errno: "EPERM"}, false},
		{"the limit on namespaces", Feature{Step: "clone", Errno: "ENOSPC"}, false},
		{"out of time", timeout("userns"), true},
		{"no thread for the child", Feature{Step: "probe child userns", Error: "exit status 2 runtime/cgo: pthread_create failed"}, true},
		{"no process for the child", Feature{Step: "clone", Errno: "EAGAIN"}, true},
		{"no memory for the child", Feature{Step: "clone3", Errno: "ENOMEM"}, true},
		{"no descriptor for the child's pipes", Feature{Step: "clone", Errno: "EMFILE"}, true},
		{"no descriptor on the machine", Feature{Step: "pipe", Errno: "ENFILE"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{UserNamespaces: Feature{Available: true}, NetworkNamespace: tc.f}
			if got := transient(r); got != tc.want {
				t.Errorf("transient with networkNamespace %+v = %v, want %v", tc.f, got, tc.want)
			}
		})
	}
}

func resetMemo() {
	memo.Lock()
	defer memo.Unlock()
	memo.ok = false
}

// TestReadCacheRejects: a cache Load must not trust.
func TestReadCacheRejects(t *testing.T) {
	key, err := currentKey("")
	if err != nil {
		t.Fatal(err)
	}
	good := Result{EUID: key.EUID, BootID: key.BootID, Kernel: "6.18.0"}
	entry := func(k cacheKey, r Result) []byte {
		data, err := json.Marshal(cacheEntry{Key: k, Result: r})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	otherBoot := key
	otherBoot.BootID = "another"
	otherBinary := key
	otherBinary.Binary += "x"
	tests := []struct {
		name    string
		content []byte
		mode    os.FileMode
		dirMode os.FileMode
		symlink bool
		ok      bool
	}{
		{"valid", entry(key, good), 0o600, 0o700, false, true},
		{"group-writable file", entry(key, good), 0o620, 0o700, false, false},
		{"world-writable directory", entry(key, good), 0o600, 0o777, false, false},
		{"symlink", entry(key, good), 0o600, 0o700, true, false},
		{"another boot", entry(otherBoot, good), 0o600, 0o700, false, false},
		{"another binary", entry(otherBinary, good), 0o600, 0o700, false, false},
		{"another user's result", entry(key, Result{EUID: key.EUID + 1, BootID: key.BootID}), 0o600, 0o700, false, false},
		{"unknown field", []byte(`{"key":{},"result":{},"trusted":true}`), 0o600, 0o700, false, false},
		{"trailing data", append(entry(key, good), []byte(`{}`)...), 0o600, 0o700, false, false},
		{"truncated", entry(key, good)[:40], 0o600, 0o700, false, false},
		{"empty", nil, 0o600, 0o700, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := cachePath(dir, key)
			if tc.symlink {
				real := filepath.Join(t.TempDir(), "real.json")
				must(t, os.WriteFile(real, tc.content, tc.mode))
				must(t, os.Symlink(real, path))
			} else {
				must(t, os.WriteFile(path, tc.content, 0o600))
				must(t, os.Chmod(path, tc.mode))
			}
			must(t, os.Chmod(dir, tc.dirMode))
			r, err := readCache(dir, key)
			if tc.ok != (err == nil) {
				t.Fatalf("readCache: %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && r.Kernel != good.Kernel {
				t.Errorf("readCache = %+v", r)
			}
		})
	}
}

// TestLoadReplacesBadCache: a corrupt cache is probed over and replaced.
func TestLoadReplacesBadCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	must(t, os.Mkdir(dir, 0o700))
	key, _ := currentKey("")
	must(t, os.WriteFile(cachePath(dir, key), []byte(`{"key":`), 0o600))
	resetMemo()
	r, err := Load(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cached {
		t.Error("a corrupt cache was used")
	}
	if _, err := readCache(dir, key); err != nil {
		t.Errorf("the corrupt cache was not replaced: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRun measures a cold probe (every child, concurrently).
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadCached measures an answer from the cache file, as a new
// cordon process gets it: the key's reads, the file, strict decoding.
func BenchmarkLoadCached(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "cache")
	if _, err := Load(context.Background(), Options{CacheDir: dir, Fresh: true}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		resetMemo()
		r, err := Load(context.Background(), Options{CacheDir: dir})
		if err != nil || !r.Cached {
			b.Fatal("not cached", err)
		}
	}
}

// TestCacheKeys: results for different keys (two binaries) are kept side
// by side, at most maxCacheEntries of them, the newest.
func TestCacheKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	key, err := currentKey("")
	if err != nil {
		t.Fatal(err)
	}
	// cordon's earlier single file is removed by the first write.
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "probe.json"), []byte("{}"), 0o600))
	keys := make([]cacheKey, maxCacheEntries+3)
	for i := range keys {
		keys[i] = key
		keys[i].Binary = fmt.Sprintf("%s #%d", key.Binary, i)
		r := Result{EUID: key.EUID, BootID: key.BootID, Kernel: fmt.Sprint(i)}
		if err := writeCache(dir, keys[i], r); err != nil {
			t.Fatal(err)
		}
		// distinct mtimes, whatever the file system's granularity
		ts := time.Unix(1_700_000_000+int64(i), 0)
		must(t, os.Chtimes(cachePath(dir, keys[i]), ts, ts))
		if i > 0 {
			// the one before is still there, and still its own
			got, err := readCache(dir, keys[i-1])
			if err != nil || got.Kernel != fmt.Sprint(i-1) {
				t.Fatalf("after writing key %d, key %d: %+v, %v", i, i-1, got, err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "probe*.json"))
	if len(files) != maxCacheEntries {
		t.Errorf("%d cache files, want %d: %v", len(files), maxCacheEntries, files)
	}
	for i, k := range keys {
		_, err := readCache(dir, k)
		if kept := i >= len(keys)-maxCacheEntries; kept != (err == nil) {
			t.Errorf("key %d: readCache error %v, want kept=%v", i, err, kept)
		}
	}
}
