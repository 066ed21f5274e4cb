//go:build unix

package runtime

// The package caches cordon keeps (package caches): per workspace, in
// CacheRoot/KEY (KEY from the workspace's path), each cache's upper and
// work layers (NAME/upper, NAME/work) or redirected directory
// (redirect/NAME), the workspace's path (workspace), and a lock. A run holds
// the lock for as long as it runs: another run of the same workspace at
// the same time gets layers of its own (run-ID/NAME/...), removed when it
// ends, for one overlay's upper layer must not be another's (the kernel
// leaves that undefined). The lock's modification time is when the
// workspace's caches were last used.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/caches"
	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/spec"
)

// CacheRoot is where cordon keeps the package caches of the caller with
// the home directory home and environment env: $XDG_CACHE_HOME/cordon/caches,
// else ~/.cache/cordon/caches.
func CacheRoot(home string, env []string) string {
	base := filepath.Join(home, ".cache")
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "XDG_CACHE_HOME="); ok {
			if filepath.IsAbs(v) {
				base = v
			}
			break
		}
	}
	return filepath.Join(base, "cordon", "caches")
}

// cacheKey names a workspace's directory in the cache root.
func cacheKey(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return hex.EncodeToString(sum[:8])
}

// Caches are one run's views of its workspace's package caches. Close
// them when the run is over.
type Caches struct {
	Views []spec.CacheView
	lock  *os.File
	// own is the run's own layers, when another run held the workspace's.
	own string
}

// CacheRequest is what OpenCaches needs to know.
type CacheRequest struct {
	// Root is the cache root (CacheRoot), Workspace the workspace (its
	// real path), RunID the run's id.
	Root, Workspace, RunID string
	// List are the caches (caches.For), Home and Env the caller's.
	List []caches.Cache
	Home string
	Env  []string
	// Overlay: views through overlays where the host's directory exists
	// (the full sandbox); otherwise redirects only.
	Overlay bool
	// DryRun computes the views without making anything (cordon spec).
	DryRun bool
}

// OpenCaches returns the views of the caches for a run. In the overlay
// mode a cache whose host directory exists is seen through an overlay;
// one that does not is redirected through its variable, or, without one,
// its directory is made (empty, the caller's, 0700) when the tool's own
// directory holding it exists in the home (~/.cargo/registry in an
// existing ~/.cargo), else left read-only. cordon never makes a directory
// the tool would take for the user's choice (~/.cargo, ~/.npm). In the
// redirect mode every cache with a variable is redirected.
func OpenCaches(r CacheRequest) (*Caches, error) {
	dir := filepath.Join(r.Root, cacheKey(r.Workspace))
	c := &Caches{}
	base := dir
	if !r.DryRun {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("package caches: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "workspace"), []byte(r.Workspace+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("package caches: %w", err)
		}
		lock, held, err := lockDir(dir)
		if err != nil {
			return nil, fmt.Errorf("package caches: %w", err)
		}
		if !held {
			// Another run of the workspace has its layers: this one
			// gets its own, for as long as it runs.
			lock.Close()
			base = filepath.Join(dir, "run-"+r.RunID)
			if err := os.Mkdir(base, 0o700); err != nil {
				return nil, fmt.Errorf("package caches: %w", err)
			}
			if lock, held, err = lockDir(base); err != nil || !held {
				return nil, fmt.Errorf("package caches: lock %s: %v", base, err)
			}
			c.own = base
		}
		c.lock = lock
		now := time.Now()
		_ = os.Chtimes(lock.Name(), now, now)
	}
	mk := func(p string) error {
		if r.DryRun {
			return nil
		}
		return os.MkdirAll(p, 0o700)
	}
	viewed := map[string]bool{}
	for _, k := range r.List {
		var v spec.CacheView
		if r.Overlay && k.Path != "" && cacheHostDir(k, r.Home, r.DryRun) {
			v = spec.CacheView{Name: k.Name, Path: k.Path, Upper: filepath.Join(base, k.Name, "upper"), Work: filepath.Join(base, k.Name, "work")}
			if err := errors.Join(mk(v.Upper), mk(v.Work)); err != nil {
				c.Close()
				return nil, fmt.Errorf("package caches: %w", err)
			}
			viewed[k.Name] = true
		} else if k.Var != "" && (r.Overlay && k.Path != "" || !r.Overlay || len(k.Instead) > 0) {
			v = spec.CacheView{Name: k.Name, Dir: filepath.Join(base, "redirect", k.Name)}
			v.Env = k.Redirect(v.Dir, r.Env)
			if err := mk(v.Dir); err != nil {
				c.Close()
				return nil, fmt.Errorf("package caches: %w", err)
			}
		} else {
			continue
		}
		c.Views = append(c.Views, v)
	}
	// A cache that stands for others in the overlay mode (pip's user
	// base) does so only where one of them has no view.
	for _, k := range r.List {
		if len(k.Instead) == 0 {
			continue
		}
		if r.Overlay && !slices.ContainsFunc(k.Instead, func(n string) bool { return !viewed[n] }) {
			c.Views = slices.DeleteFunc(c.Views, func(v spec.CacheView) bool { return v.Name == k.Name })
		} else {
			c.Views = slices.DeleteFunc(c.Views, func(v spec.CacheView) bool { return slices.Contains(k.Instead, v.Name) })
		}
	}
	return c, nil
}

// cacheHostDir reports whether the cache's host directory is there to be seen
// through an overlay, making it when the cache has no variable and the
// directory holding it is the tool's own, in the caller's home (see
// OpenCaches).
func cacheHostDir(k caches.Cache, home string, dryRun bool) bool {
	if fi, err := os.Stat(k.Path); err == nil {
		return fi.IsDir()
	}
	parent := filepath.Dir(k.Path)
	if k.Var != "" || dryRun || !paths.Below(parent, home) {
		return false
	}
	return mkdirInHome(home, k.Path) == nil
}

// mkdirInHome makes the directory p (below home) when its parent exists,
// the caller's, walking from home without following a symlink: a link
// planted in the home must not have cordon make a directory elsewhere.
func mkdirInHome(home, p string) error {
	rel, err := filepath.Rel(home, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not in the home", p)
	}
	fd, err := unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for _, name := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return err
		}
		fd = next
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not the caller's", filepath.Dir(p))
	}
	return unix.Mkdirat(fd, parts[len(parts)-1], 0o700)
}

// lockDir takes the lock of a cache directory without waiting: held is
// false when another run holds it.
func lockDir(dir string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(filepath.Join(dir, "lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		return f, true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return f, false, nil
	default:
		f.Close()
		return nil, false, err
	}
}

// Close releases the workspace's caches, and removes the run's own
// layers if it had any.
func (c *Caches) Close() {
	if c == nil {
		return
	}
	if c.own != "" {
		_ = removeCacheDir(c.own)
		c.own = ""
	}
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
}

// removeCacheDir removes a cache directory whole: an overlay's work
// directory leaves a directory with mode 000 (work/work) that must be
// opened first.
func removeCacheDir(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			_ = os.Chmod(p, 0o700)
		} else if err != nil && d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// CacheUsage is one workspace's package caches, as cordon keeps them.
type CacheUsage struct {
	Workspace string    `json:"workspace"`
	Dir       string    `json:"dir"`
	Size      int64     `json:"size"`
	LastUsed  time.Time `json:"lastUsed"`
	InUse     bool      `json:"inUse,omitempty"`
	// Caches are the names of the caches it holds.
	Caches []string `json:"caches,omitempty"`
}

// ListCaches returns the workspaces' caches in root, the most recently
// used first, with their sizes (what their files take on disk).
func ListCaches(root string) ([]CacheUsage, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CacheUsage
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		u := CacheUsage{Dir: dir, Size: diskUsage(dir)}
		if ws, err := os.ReadFile(filepath.Join(dir, "workspace")); err == nil {
			u.Workspace = strings.TrimSpace(string(ws))
		}
		if fi, err := os.Stat(filepath.Join(dir, "lock")); err == nil {
			u.LastUsed = fi.ModTime()
		}
		if lock, held, err := lockDir(dir); err == nil {
			u.InUse = !held
			lock.Close()
		}
		subs, _ := os.ReadDir(dir)
		for _, s := range subs {
			if s.IsDir() && !strings.HasPrefix(s.Name(), "run-") {
				u.Caches = append(u.Caches, s.Name())
			}
		}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out, nil
}

// diskUsage is what the files below dir take on disk, in bytes; symlinks
// are not followed.
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += int64(st.Blocks) * 512
			}
		}
		return nil
	})
	return n
}

// GCCaches removes the workspaces' caches in root that no run uses:
// those unused for longer than maxAge, then, the least recently used
// first, as many as it takes for the rest to fit in maxSize (0: no
// bound); with all, every one. A run's own layers left by a run that
// died go too. It returns what it removed.
func GCCaches(root string, maxAge time.Duration, maxSize int64, all bool, now time.Time) ([]CacheUsage, error) {
	list, err := ListCaches(root)
	if err != nil {
		return nil, err
	}
	var removed []CacheUsage
	var total int64
	for _, u := range list {
		total += u.Size
	}
	remove := func(u CacheUsage) {
		lock, held, err := lockDir(u.Dir)
		if err != nil || !held {
			if lock != nil {
				lock.Close()
			}
			return // in use
		}
		// Moved aside first: a removal cut short must not leave a cache
		// half there for the next run to trust.
		trash := filepath.Join(root, ".trash-"+filepath.Base(u.Dir)+"-"+strconv.FormatInt(now.UnixNano(), 36))
		err = os.Rename(u.Dir, trash)
		lock.Close()
		if err == nil {
			removed = append(removed, u)
			total -= u.Size
			_ = removeCacheDir(trash)
		}
	}
	// What an earlier removal left.
	if trash, _ := filepath.Glob(filepath.Join(root, ".trash-*")); len(trash) > 0 {
		for _, d := range trash {
			_ = removeCacheDir(d)
		}
	}
	// Oldest first.
	for i := len(list) - 1; i >= 0; i-- {
		u := list[i]
		switch {
		case all, maxAge > 0 && now.Sub(u.LastUsed) > maxAge, maxSize > 0 && total > maxSize:
			remove(u)
		default:
			sweepRunLayers(u.Dir)
		}
	}
	return removed, nil
}

// sweepRunLayers removes the layers of runs that are over (their lock is
// free) from a workspace's cache directory.
func sweepRunLayers(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if lock, held, err := lockDir(p); err == nil {
			if held {
				_ = removeCacheDir(p)
			}
			lock.Close()
		}
	}
}

// cacheSweepEvery is how often SweepCaches looks at the caches' sizes and
// ages: a look walks every file of them.
const cacheSweepEvery = time.Hour

// SweepCaches is GCCaches without all, at most once per cacheSweepEvery
// (a run calls it when it ends).
func SweepCaches(root string, maxAge time.Duration, maxSize int64) {
	stamp := filepath.Join(root, ".swept")
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < cacheSweepEvery {
		return
	}
	if _, err := os.Stat(root); err != nil {
		return
	}
	_ = os.WriteFile(stamp, nil, 0o600)
	now := time.Now()
	_ = os.Chtimes(stamp, now, now)
	_, _ = GCCaches(root, maxAge, maxSize, false, now)
}
