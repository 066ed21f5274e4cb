package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// The container mode cannot make the protected paths inside a writable
// root read-only (Landlock grants a directory whole; see
// spec.ModeContainer): cordon records them before the run and, once every
// process of the run is gone, puts back whatever the command changed,
// replaced or removed, moving what it put there aside (NAME.cordon-
// quarantine-ID), as the full sandbox's scrub does for what appears.

// Bounds of what is recorded: a protected tree larger than this is refused
// rather than left unprotected.
const (
	maxProtectedEntries = 20000
	maxProtectedBytes   = 64 << 20
)

// protectedEntry is one file, directory or symlink as it was.
type protectedEntry struct {
	Path  string   `json:"path"`
	Mode  uint32   `json:"mode"` // st_mode, type included
	Dev   uint64   `json:"dev"`
	Ino   uint64   `json:"ino"`
	Data  []byte   `json:"data,omitempty"`  // a regular file's content
	Link  string   `json:"link,omitempty"`  // a symlink's target
	Names []string `json:"names,omitempty"` // a directory's entries
}

type protectedSnapshot struct {
	Entries []protectedEntry `json:"entries"`
	// Roots are the writable roots, which a config's content rule needs
	// (keptByContent).
	Roots []string `json:"roots,omitempty"`
	id    string
}

// protectedFile is the snapshot's file in the run's state directory: GC
// puts the paths back from it when the run's cordon died before it could
// (SIGKILL, a harness's timeout), before the next run.
const protectedFile = "protected.json"

// save writes the snapshot to the run's state directory.
func (snap *protectedSnapshot) save(root string) error {
	data, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	if err := os.WriteFile(stateFile(root, snap.id, protectedFile), data, 0o600); err != nil {
		return fmt.Errorf("protected paths: %w", err)
	}
	return nil
}

// loadProtected reads the snapshot a run saved, or nil when it saved
// none (a full sandbox's run).
func loadProtected(root, id string) (*protectedSnapshot, error) {
	data, err := os.ReadFile(stateFile(root, id, protectedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	snap := &protectedSnapshot{id: id}
	return snap, json.Unmarshal(data, snap)
}

// snapshotProtected records the protected paths that exist, and everything
// below those that are directories, without following symlinks: every
// name is looked at in a directory held open, so that a directory swapped
// for a link meanwhile (by a command of another sandbox in the same
// writable root) is recorded as what was opened, never as the link's
// target. Followed, the record would hold a denied file's content, which
// the restore after the run then writes into the writable root.
func snapshotProtected(ps, roots []string, id string) (*protectedSnapshot, error) {
	snap := &protectedSnapshot{id: id, Roots: roots}
	size := 0
	var add func(dir int, name, p string) error
	add = func(dir int, name, p string) error {
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				return nil // scrubbed if it appears (spec.Scrub.Paths)
			}
			return fmt.Errorf("protected path %s: %w", p, err)
		}
		if len(snap.Entries) >= maxProtectedEntries || size > maxProtectedBytes {
			return fmt.Errorf("the protected paths inside the writable roots hold more than %d files or %d MiB, which the container mode would have to put back after the run", maxProtectedEntries, maxProtectedBytes>>20)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			data, fst, err := readProtected(dir, name)
			if err != nil {
				return fmt.Errorf("protected path %s: %w", p, err)
			}
			snap.Entries = append(snap.Entries, protectedEntry{Path: p, Mode: fst.Mode, Dev: fst.Dev, Ino: fst.Ino, Data: data})
			size += len(data)
		case unix.S_IFLNK:
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(dir, name, buf)
			if err != nil {
				return fmt.Errorf("protected path %s: %w", p, err)
			}
			snap.Entries = append(snap.Entries, protectedEntry{Path: p, Mode: st.Mode, Dev: st.Dev, Ino: st.Ino, Link: string(buf[:n])})
		case unix.S_IFDIR:
			fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("protected path %s: %w", p, err)
			}
			f := os.NewFile(uintptr(fd), p)
			defer f.Close()
			var fst unix.Stat_t
			if err := unix.Fstat(fd, &fst); err != nil {
				return fmt.Errorf("protected path %s: %w", p, err)
			}
			names, err := f.Readdirnames(-1)
			if err != nil {
				return fmt.Errorf("protected path %s: %w", p, err)
			}
			slices.Sort(names)
			snap.Entries = append(snap.Entries, protectedEntry{Path: p, Mode: fst.Mode, Dev: fst.Dev, Ino: fst.Ino, Names: names})
			for _, n := range names {
				if err := add(fd, n, path.Join(p, n)); err != nil {
					return err
				}
			}
		default:
			snap.Entries = append(snap.Entries, protectedEntry{Path: p, Mode: st.Mode, Dev: st.Dev, Ino: st.Ino})
		}
		return nil
	}
	for _, p := range ps {
		if slices.ContainsFunc(snap.Entries, func(e protectedEntry) bool { return e.Path == p }) {
			continue
		}
		dir, name, err := openParent(p)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			// Not there, or a link on the way: nothing is recorded
			// through it (scrubbed if it appears).
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("protected path %s: %w", p, err)
		}
		err = add(dir, name, p)
		unix.Close(dir)
		if err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// readProtected reads the regular file name in dir, refusing a symlink, and
// says what it read.
func readProtected(dir int, name string) ([]byte, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, st, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, st, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, errors.New("not a regular file")
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), st, err
}

// restore puts every recorded entry back, parents first, and returns a
// note for each one it had to.
func (snap *protectedSnapshot) restore() []string {
	var notes []string
	for _, e := range snap.Entries {
		what, err := snap.restoreOne(e)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("could not put back the protected %s: %v", e.Path, err))
		case what != "":
			notes = append(notes, what)
		}
	}
	return notes
}

// restoreOne makes e.Path what it was, walking to it without following a
// symlink. A symlink or file on the way, or something else in its place,
// is moved aside first.
func (snap *protectedSnapshot) restoreOne(e protectedEntry) (string, error) {
	dir, name, err := openParent(e.Path)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT) {
		// The way there changed: the protected parents come back first
		// (they are earlier entries); what is left is outside them.
		if _, _, err := scrubOne(path.Dir(e.Path), snap.id); err != nil {
			return "", err
		}
		dir, name, err = openParent(e.Path)
	}
	if err != nil {
		return "", err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		if err := snap.make(dir, name, e); err != nil {
			return "", err
		}
		return fmt.Sprintf("put back %s (protected; removed during the run)", e.Path), nil
	case err != nil:
		return "", err
	}
	typ := e.Mode & unix.S_IFMT
	same := st.Mode&unix.S_IFMT == typ
	switch {
	case same && typ == unix.S_IFDIR:
		var moved []string
		if st.Mode != e.Mode {
			if err := unix.Fchmodat(dir, name, e.Mode&0o7777, 0); err != nil {
				return "", err
			}
			moved = append(moved, "its mode")
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		f := os.NewFile(uintptr(fd), e.Path)
		now, err := f.Readdirnames(-1)
		if err != nil {
			f.Close()
			return "", err
		}
		for _, n := range now {
			if slices.Contains(e.Names, n) {
				continue
			}
			if err := unix.Renameat2(fd, n, fd, n+".cordon-quarantine-"+snap.id, unix.RENAME_NOREPLACE); err != nil {
				f.Close()
				return "", err
			}
			moved = append(moved, n)
		}
		f.Close()
		if len(moved) == 0 {
			return "", nil
		}
		return fmt.Sprintf("put back the protected %s: %s changed during the run (moved aside as *.cordon-quarantine-%s)", e.Path, strings.Join(moved, ", "), snap.id), nil
	case same && typ == unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, name, buf)
		if err == nil && string(buf[:n]) == e.Link {
			return "", nil
		}
	case same && typ == unix.S_IFREG && st.Dev == e.Dev && st.Ino == e.Ino:
		// The same file: its content and mode are put back in place
		// (never through another inode, which could be a hard link to
		// a file outside the writable roots).
		fd, err := unix.Openat(dir, name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return "", err
		}
		f := os.NewFile(uintptr(fd), e.Path)
		defer f.Close()
		var now bytes.Buffer
		if _, err := now.ReadFrom(f); err != nil {
			return "", err
		}
		if bytes.Equal(now.Bytes(), e.Data) && st.Mode == e.Mode {
			return "", nil
		}
		if kind := spec.ContentOf(snap.Roots, e.Path); kind != spec.NoContent && st.Mode == e.Mode &&
			checkContent(kind, e.Path, snap.Roots, e.Data, now.Bytes()) == nil {
			// A config git rewrote, by content as the guard decides.
			return "", nil
		}
		if err := f.Truncate(0); err != nil {
			return "", err
		}
		if _, err := f.WriteAt(e.Data, 0); err != nil {
			return "", err
		}
		if err := unix.Fchmod(fd, e.Mode&0o7777); err != nil {
			return "", err
		}
		return fmt.Sprintf("put back %s (protected; changed during the run)", e.Path), nil
	}
	dst := name + ".cordon-quarantine-" + snap.id
	if err := unix.Renameat2(dir, name, dir, dst, unix.RENAME_NOREPLACE); err != nil {
		return "", fmt.Errorf("rename: %w", err)
	}
	if err := snap.make(dir, name, e); err != nil {
		return "", err
	}
	return fmt.Sprintf("put back %s (protected; replaced during the run: moved to %s)", e.Path, path.Join(path.Dir(e.Path), dst)), nil
}

// make creates e as name in dir.
func (snap *protectedSnapshot) make(dir int, name string, e protectedEntry) error {
	switch e.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.Mkdirat(dir, name, e.Mode&0o7777)
	case unix.S_IFLNK:
		return unix.Symlinkat(e.Link, dir, name)
	case unix.S_IFREG:
		fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, e.Mode&0o7777)
		if err != nil {
			return err
		}
		f := os.NewFile(uintptr(fd), name)
		_, err = f.Write(e.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = unix.Fchmodat(dir, name, e.Mode&0o7777, 0)
		}
		return err
	}
	return nil // a fifo or device: not put back
}
