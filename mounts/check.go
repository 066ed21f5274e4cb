package mounts

import (
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
)

// The mounts of a plan are made later, by another process, from paths: a
// bind's source is opened by path when the bind is made, following
// symlinks, and its destination is looked up by path in the sandbox's
// root. Inside a writable root both can change in between — a command of
// another sandbox writing there can swap a directory for a symlink or
// rename it away and back — and the bind would land elsewhere than the
// plan resolved: a protected path left writable, a denied file unmasked.
// So the plan also says what each path inside a writable root must be
// once the mounts are made (Check), and cordon's init verifies it before
// anything runs.

// Identity names a file for as long as it exists: its device and inode
// numbers.
type Identity struct {
	Dev, Ino uint64
}

// Check kinds: what a path must be once the mounts are made.
const (
	// CheckSame: the file with Identity, reached without a symlink.
	CheckSame = "same"
	// CheckReadOnly: CheckSame, on a read-only mount.
	CheckReadOnly = "ro"
	// CheckMask: an empty regular file with mode 000 on a read-only mount
	// (the mask file, bound over a denied file).
	CheckMask = "mask"
	// CheckTmpfsMask: a directory with mode 000 or 111 on a read-only
	// tmpfs (bound over a denied directory).
	CheckTmpfsMask = "tmpfs"
)

// Check is what a path must be once the mounts are made.
type Check struct {
	Path     string
	Kind     string
	Identity Identity // for CheckSame and CheckReadOnly
}

// Recorder is a file system that remembers the identity of every file the
// first time it looks at it (the identity the plan resolved against), for
// Checks. Plan and Protect given one record through it. It answers Lstat
// and Stat of a name from what it saw the first time too: a plan resolves
// the same directories for every rule (the workspace's ancestors some 30
// times each), and it is made against one view of the file system.
type Recorder struct {
	fsys  fs.FS
	mu    sync.Mutex
	seen  map[string]Identity
	lstat map[string]statResult
	stat  map[string]statResult
}

type statResult struct {
	fi  fs.FileInfo
	err error
}

// NewRecorder returns a Recorder over fsys (rooted at "/").
func NewRecorder(fsys fs.FS) *Recorder {
	return &Recorder{fsys: fsys, seen: map[string]Identity{}, lstat: map[string]statResult{}, stat: map[string]statResult{}}
}

// memo returns what f gave for name the first time.
func (r *Recorder) memo(m map[string]statResult, name string, f func() (fs.FileInfo, error)) (fs.FileInfo, error) {
	r.mu.Lock()
	res, ok := m[name]
	r.mu.Unlock()
	if ok {
		return res.fi, res.err
	}
	fi, err := f()
	r.mu.Lock()
	m[name] = statResult{fi, err}
	r.mu.Unlock()
	return fi, err
}

// Identity returns the identity the absolute path p had when it was first
// looked at through r.
func (r *Recorder) Identity(p string) (Identity, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.seen[rel(p)]
	return id, ok
}

func (r *Recorder) note(name string, fi fs.FileInfo) {
	id, ok := identityOf(fi)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.seen[name]; !dup {
		r.seen[name] = id
	}
}

// Open implements fs.FS.
func (r *Recorder) Open(name string) (fs.File, error) { return r.fsys.Open(name) }

// Lstat implements fs.ReadLinkFS.
func (r *Recorder) Lstat(name string) (fs.FileInfo, error) {
	return r.memo(r.lstat, name, func() (fs.FileInfo, error) {
		fi, err := fs.Lstat(r.fsys, name)
		if err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			r.note(name, fi)
		}
		return fi, err
	})
}

// ReadLink implements fs.ReadLinkFS.
func (r *Recorder) ReadLink(name string) (string, error) { return fs.ReadLink(r.fsys, name) }

// Stat implements fs.StatFS. Resolve stats only paths it has resolved,
// which hold no symlink.
func (r *Recorder) Stat(name string) (fs.FileInfo, error) {
	return r.memo(r.stat, name, func() (fs.FileInfo, error) {
		fi, err := fs.Stat(r.fsys, name)
		if err == nil {
			r.note(name, fi)
		}
		return fi, err
	})
}

// Entries implements entriesFS with the file system's own, when it has one.
func (r *Recorder) Entries(dir string, names []string) (has, subdirs []string, err error) {
	return entries(r.fsys, dir, names)
}

// ReadDir implements fs.ReadDirFS.
func (r *Recorder) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.fsys, name) }

// ReadFile implements fs.ReadFileFS.
func (r *Recorder) ReadFile(name string) ([]byte, error) { return fs.ReadFile(r.fsys, name) }

// identityFS is a file system that knows the identities it resolved.
type identityFS interface {
	Identity(p string) (Identity, bool)
}

// checks returns what the paths at and below the roots must be once the
// mounts ms are made: every mount destination there and every directory
// on the way to one. Paths whose identity fsys did not record (a file
// system without inode numbers) are left out.
func checks(fsys fs.FS, roots []string, ms []specs.Mount, maskFile string) []Check {
	ids, ok := fsys.(identityFS)
	if !ok || len(roots) == 0 {
		return nil
	}
	kinds := map[string]string{}
	var order []string
	add := func(p, kind string) {
		if _, dup := kinds[p]; !dup {
			order = append(order, p)
		}
		kinds[p] = kind
	}
	for _, m := range ms {
		ro := slices.Contains(m.Options, "ro") || slices.Contains(m.Options, "rro")
		mask := ""
		switch {
		case m.Type == "tmpfs" && ro:
			mask = CheckTmpfsMask
		case m.Type == "bind" && m.Source == maskFile && maskFile != "":
			mask = CheckMask
		}
		root := ""
		for _, r := range roots {
			if paths.Under(m.Destination, r) && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			// A mask outside the writable roots is checked too: a bind
			// of the plan whose destination a symlink swapped in below
			// a writable root sent elsewhere, while the sandbox was set
			// up, could land on it (.git/hooks -> ~/.ssh: the real
			// ~/.ssh bound over its mask).
			if mask != "" {
				add(m.Destination, mask)
			}
			continue
		}
		// The directories on the way, from the root down.
		var way []string
		for d := path.Dir(m.Destination); paths.Below(d, root); d = path.Dir(d) {
			way = append(way, d)
		}
		if m.Destination != root {
			way = append(way, root)
		}
		slices.Reverse(way)
		for _, d := range way {
			if _, dup := kinds[d]; !dup {
				add(d, CheckSame)
			}
		}
		switch {
		case mask != "":
			add(m.Destination, mask)
		case m.Type != "bind":
			// The sandbox's own /tmp (a workspace may live below it).
		case ro:
			add(m.Destination, CheckReadOnly)
		default:
			add(m.Destination, CheckSame)
		}
	}
	var out []Check
	for _, p := range order {
		c := Check{Path: p, Kind: kinds[p]}
		if c.Kind == CheckSame || c.Kind == CheckReadOnly {
			id, ok := ids.Identity(p)
			if !ok {
				continue
			}
			c.Identity = id
		}
		out = append(out, c)
	}
	return out
}
