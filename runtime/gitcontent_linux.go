package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/internal/gitconfig"
	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/spec"
)

// A repository's config and a root's .gitmodules are protected by what
// they hold, not by name (spec.Content): git rewrites them whole, writing
// NAME.lock and renaming it onto NAME, and the guard performs that rename
// by reading the lock file once, checking what it holds
// (internal/gitconfig.Check, against what NAME held), and writing those
// bytes into NAME itself — never renaming the command's file into place,
// which the command may still hold open for writing. Where the guard did
// not run, the checks after the run apply the same rule.

// maxChecked bounds a file the guard reads to check.
const maxChecked = 1 << 20

// checkContent decides whether the file p (as the sandbox and the host
// see it, in one of roots) of kind may go from prev (nil: new) to next.
func checkContent(kind spec.Content, p string, roots []string, prev, next []byte) error {
	r := gitconfig.Rules{}
	if kind == spec.Gitmodules {
		r.Kind = gitconfig.Modules
	}
	// A submodule's git directory names its working tree, which must lie
	// in the roots.
	r.Worktree = func(v string) bool {
		if !path.IsAbs(v) {
			v = path.Join(path.Dir(p), v)
		}
		v = path.Clean(v)
		return slices.ContainsFunc(roots, func(root string) bool { return paths.Under(v, root) })
	}
	return gitconfig.Check(prev, next, r)
}

// readBounded reads the regular file name in dir, not following a link,
// at most maxChecked bytes.
func readBounded(dir int, name string) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxChecked+1))
	if err == nil && len(data) > maxChecked {
		err = fmt.Errorf("larger than %d bytes", maxChecked)
	}
	return data, err
}

// renameChecked performs the rename of src onto dst, a file decided by
// content (kind), for the thread: what src holds, read once, is checked
// against what dst holds, and written into dst by the guard (in place,
// the same file, when dst exists: the command's view of it is a read-only
// bind in the full sandbox, and the container mode's record of it is by
// inode; otherwise a new file). src goes, as a rename would take it.
func (c *guardCall) renameChecked(src, dst at, kind spec.Content, flags uint) error {
	if flags&(unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) != 0 {
		return refusedError{&guardRefusal{path: dst.full(), reason: "protected: only a file may be renamed onto " + dst.name}}
	}
	if !c.gd.allows(src.full(), llReadAll) {
		return unix.EACCES
	}
	next, err := readBounded(src.dir, src.name)
	if err != nil {
		return refusedError{&guardRefusal{path: dst.full(), reason: "could not read what would replace it: " + err.Error()}}
	}
	prev, err := readBounded(dst.dir, dst.name)
	exists := err == nil
	switch {
	case errors.Is(err, unix.ENOENT):
		prev = nil
	case err != nil:
		return refusedError{&guardRefusal{path: dst.full(), reason: "could not read it: " + err.Error()}}
	case flags&unix.RENAME_NOREPLACE != 0:
		return unix.EEXIST
	}
	if err := checkContent(kind, dst.full(), c.gd.g.Roots, prev, next); err != nil {
		return refusedError{&guardRefusal{path: dst.full(), reason: "refused " + what(kind) + ": " + err.Error()}}
	}
	if !c.gd.allows(dst.full(), llWrite) {
		return unix.EACCES
	}
	if exists {
		err = c.writeInPlace(dst, next)
	} else {
		err = c.writeNew(dst, next, src)
	}
	if err != nil {
		return err
	}
	// (gone already, if the command removed it meanwhile)
	if err := unix.Unlinkat(src.dir, src.name, 0); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

func what(kind spec.Content) string {
	if kind == spec.Gitmodules {
		return "a .gitmodules"
	}
	return "a git config"
}

// writeInPlace writes data into the existing file at t. Where the
// sandbox's view of it is a read-only bind, the file is reached through
// the host's view of t's directory (a writable root is at the same path
// on the host), which must be the same directory, and the file the same.
func (c *guardCall) writeInPlace(t at, data []byte) error {
	fd, err := unix.Openat(t.dir, t.name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.EROFS {
		fd, err = c.hostFile(t)
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), t.full())
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	return err
}

// hostFile opens for writing the file at t through the host's view of
// its directory.
func (c *guardCall) hostFile(t at) (int, error) {
	var want, got unix.Stat_t
	if err := unix.Fstat(t.dir, &want); err != nil {
		return -1, err
	}
	host, err := openat2(unix.AT_FDCWD, t.path, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return -1, err
	}
	defer unix.Close(host)
	if err := unix.Fstat(host, &got); err != nil || got.Dev != want.Dev || got.Ino != want.Ino {
		return -1, unix.EROFS
	}
	// The file the sandbox sees (the bind's) and the host's.
	if err := unix.Fstatat(t.dir, t.name, &want, 0); err != nil {
		return -1, err
	}
	fd, err := unix.Openat(host, t.name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Fstat(fd, &got); err != nil || got.Dev != want.Dev || got.Ino != want.Ino {
		unix.Close(fd)
		return -1, unix.EROFS
	}
	return fd, nil
}

// writeNew makes the file at t with data, with the mode of the file src
// it replaces, by a file of the guard's own renamed into place.
func (c *guardCall) writeNew(t at, data []byte, src at) error {
	var st unix.Stat_t
	if err := unix.Fstatat(src.dir, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	tmp := t.name + ".cordon-" + strconv.FormatUint(c.id, 16)
	fd, err := unix.Openat(t.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = unix.Fchmod(fd, st.Mode&0o777)
	}
	f.Close()
	if err == nil {
		err = unix.Renameat2(t.dir, tmp, t.dir, t.name, unix.RENAME_NOREPLACE)
	}
	if err != nil {
		unix.Unlinkat(t.dir, tmp, 0)
	}
	return err
}

// checkMade looks, once the run is over, at the files the guard let a git
// directory made during the run have without seeing what they hold: a
// new .git file must name a worktree's or a submodule's git directory
// (spec.Guard.GitFileOK), a worktree's commondir its own repository's
// (spec.CommondirOK). One that does not is moved aside
// (NAME.cordon-quarantine-ID), as the scrub moves what appears at a
// protected path.
func checkMade(g *spec.Guard, made []string, id string) []string {
	var notes []string
	for i, p := range made {
		if slices.Contains(made[:i], p) {
			continue
		}
		dir, name, err := openParent(p)
		if err != nil {
			if !errors.Is(err, unix.ENOENT) {
				notes = append(notes, fmt.Sprintf("could not check %s: %v", p, err))
			}
			continue
		}
		data, err := readBounded(dir, name)
		ok := false
		switch {
		case errors.Is(err, unix.ENOENT):
			ok = true // gone
		case err != nil:
		case name == "commondir":
			ok = spec.CommondirOK(p, data)
		default:
			ok = g.GitFileOK(p, data)
		}
		if ok {
			unix.Close(dir)
			continue
		}
		dst := name + ".cordon-quarantine-" + id
		err = unix.Renameat2(dir, name, dir, dst, unix.RENAME_NOREPLACE)
		unix.Close(dir)
		if err != nil {
			notes = append(notes, fmt.Sprintf("could not move %s aside: %v", p, err))
			continue
		}
		notes = append(notes, fmt.Sprintf("moved %s (made during the run; it sends git to %q, not to the repository's own git directory) to %s",
			p, string(bytes.TrimSpace(data)), path.Join(path.Dir(p), dst)))
	}
	return notes
}

// keptByContent reports whether the file p, made during the run where
// the scrub would move it aside, may stay: a config or .gitmodules that
// Check accepts as new, a hooks directory that holds only git's samples.
func keptByContent(p string, roots []string) bool {
	kind := spec.ContentOf(roots, p)
	if kind == spec.NoContent && (path.Base(p) != "hooks" || !slices.Contains(splitPath(p), ".git")) {
		return false
	}
	dir, name, err := openParent(p)
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	if kind != spec.NoContent {
		data, err := readBounded(dir, name)
		return err == nil && checkContent(kind, p, roots, nil, data) == nil
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, n := range names {
		var st unix.Stat_t
		if path.Ext(n) != ".sample" || unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return false
		}
	}
	return true
}

func splitPath(p string) []string {
	var out []string
	for p != "/" && p != "." && p != "" {
		out = append(out, path.Base(p))
		p = path.Dir(p)
	}
	return out
}
