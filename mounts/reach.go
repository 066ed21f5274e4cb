package mounts

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"cordon.dev/cordon/internal/access"
)

// What the sandboxed command cannot reach, it cannot change, and what it
// cannot see needs no hiding: the plan leaves out what lies in directories
// closed to it (another user's private directory in a workspace under
// /tmp), and must, since the mounts there could not be made (libcontainer
// makes them as the sandbox's root, which cannot enter them either).
// Reach is the plan's view of the host: as the command sees it.

// Reach is a file system as a process without capabilities reaches it: a
// directory it may not search hides what is below it, and cannot be
// listed; each refusal wraps fs.ErrPermission. What a directory it may
// search holds is listed and read as the host's file system answers, even
// where the process could not list it or read the file: it could still
// reach a name there, and the plan protects what it finds. Reach
// remembers the directories it refused (Unreached).
type Reach struct {
	fsys fs.FS
	// who, when set, is the identity to judge the permission bits for
	// (the sandbox of a root caller, see AsCommand); without it the host
	// file system's own refusals are the command's (the caller has the
	// command's identity).
	who *access.Who
	mu  sync.Mutex
	// search caches whether a directory may be searched.
	search    map[string]bool
	unreached []string
}

// AsCommand returns the host file system fsys (rooted at "/") as the
// sandboxed command of a caller with uid, gid and the supplementary groups
// sees it. The command runs with the caller's ids and no capability, so
// the permission bits are judged for them; the full sandbox of a root
// caller has no supplementary group left (libcontainer drops them: groups
// nil). Any other caller has the command's identity and groups: its own
// refusals are the command's.
func AsCommand(fsys fs.FS, uid, gid uint32, groups []uint32) *Reach {
	r := &Reach{fsys: fsys, search: map[string]bool{}}
	if uid == 0 {
		r.who = &access.Who{UID: uid, GID: gid, Groups: groups}
	}
	return r
}

// Unreached returns the directories (absolute) that the file system
// refused to look into so far, in the order it refused them.
func (r *Reach) Unreached() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.unreached)
}

// refuse records that the directory or file name was refused and returns
// the error.
func (r *Reach) refuse(op, name string, err error) error {
	abs := "/" + name
	if name == "." {
		abs = "/"
	}
	r.mu.Lock()
	if !slices.Contains(r.unreached, abs) {
		r.unreached = append(r.unreached, abs)
	}
	r.mu.Unlock()
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// searchable reports whether the command may search the directory name
// (looked at without following a symlink: a link's own bits say nothing).
func (r *Reach) searchable(name string) bool {
	r.mu.Lock()
	ok, seen := r.search[name]
	r.mu.Unlock()
	if seen {
		return ok
	}
	ok = true
	if fi, err := fs.Lstat(r.fsys, name); err == nil && fi.IsDir() {
		if f, known := fileOf(fi); known && !r.who.May(f, access.Search) {
			_, host := r.fsys.(osRoot)
			f.ACL = host && access.HasACL("/"+name)
			ok = f.ACL && r.who.May(f, access.Search)
		}
	}
	// (an error comes with the operation itself)
	r.mu.Lock()
	r.search[name] = ok
	r.mu.Unlock()
	return ok
}

// reach returns an error when a directory on the way to name may not be
// searched.
func (r *Reach) reach(op, name string) error {
	if r.who == nil || name == "." {
		return nil
	}
	dir := "."
	for _, part := range strings.Split(name, "/") {
		if !r.searchable(dir) {
			return r.refuse(op, dir, fs.ErrPermission)
		}
		dir = path.Join(dir, part)
	}
	return nil
}

// open checks what op on name needs: every directory on the way
// searchable, and name itself when it is a directory to list.
func (r *Reach) open(op, name string, list bool) error {
	if err := r.reach(op, name); err != nil {
		return err
	}
	if list && r.who != nil && !r.searchable(name) {
		return r.refuse(op, name, fs.ErrPermission)
	}
	return nil
}

// noted records a refusal of the underlying file system to look into the
// directory name.
func (r *Reach) noted(op, name string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		_ = r.refuse(op, name, err)
	}
	return err
}

// Open implements fs.FS.
func (r *Reach) Open(name string) (fs.File, error) {
	if err := r.open("open", name, true); err != nil {
		return nil, err
	}
	// (a file it may not read says nothing of what it reaches)
	return r.fsys.Open(name)
}

// Lstat implements fs.ReadLinkFS.
func (r *Reach) Lstat(name string) (fs.FileInfo, error) {
	if err := r.open("lstat", name, false); err != nil {
		return nil, err
	}
	fi, err := fs.Lstat(r.fsys, name)
	return fi, r.noted("lstat", path.Dir(name), err)
}

// Stat implements fs.StatFS.
func (r *Reach) Stat(name string) (fs.FileInfo, error) {
	if err := r.open("stat", name, false); err != nil {
		return nil, err
	}
	fi, err := fs.Stat(r.fsys, name)
	return fi, r.noted("stat", path.Dir(name), err)
}

// ReadLink implements fs.ReadLinkFS.
func (r *Reach) ReadLink(name string) (string, error) {
	if err := r.open("readlink", name, false); err != nil {
		return "", err
	}
	t, err := fs.ReadLink(r.fsys, name)
	return t, r.noted("readlink", path.Dir(name), err)
}

// ReadDir implements fs.ReadDirFS.
func (r *Reach) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := r.open("readdir", name, true); err != nil {
		return nil, err
	}
	des, err := fs.ReadDir(r.fsys, name)
	return des, r.noted("readdir", name, err)
}

// ReadFile implements fs.ReadFileFS.
func (r *Reach) ReadFile(name string) ([]byte, error) {
	if err := r.open("read", name, false); err != nil {
		return nil, err
	}
	return fs.ReadFile(r.fsys, name)
}

// Entries implements entriesFS with the file system's own, when it has one.
func (r *Reach) Entries(dir string, names []string) (has, subdirs []string, err error) {
	if err := r.open("open", dir, true); err != nil {
		return nil, nil, err
	}
	has, subdirs, err = entries(r.fsys, dir, names)
	return has, subdirs, r.noted("open", dir, err)
}
