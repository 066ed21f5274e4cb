package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/internal/access"
	"cordon.dev/cordon/internal/dirent"
	"cordon.dev/cordon/spec"
)

// scrub moves away what appeared during the run at the protected paths that
// did not exist before it (spec.AnnotationScrub): a .git/hooks created in a
// repository that had none, a .vscode/tasks.json, a .bashrc. They are
// renamed in place to NAME.cordon-quarantine-ID, where nothing reads them,
// and each move is returned as a note for the caller's stderr.
//
// The walk never follows a symlink: the command may have planted one to
// turn a rename on the host (perhaps as root) into one elsewhere. A symlink
// found on the way was made during the run and is itself moved away.
func scrub(s *specs.Spec, id string, started time.Time) []string {
	raw := s.Annotations[spec.AnnotationScrub]
	if raw == "" {
		return nil
	}
	var sc spec.Scrub
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return []string{fmt.Sprintf("cannot read the protected paths to check: %v", err)}
	}
	var notes []string
	// Only where the command could have written: cordon as root sees
	// into other users' private directories, which the command, root
	// without capabilities, could not enter (see mounts.Reach).
	var groups []uint32
	if spec.Contained(s) {
		groups = access.Groups() // (the full sandbox drops them)
	}
	targets := sc.Targets(spec.HostAsCommand(uint32(os.Geteuid()), uint32(os.Getegid()), groups))
	var nested []string
	for _, root := range sc.Roots {
		nested = append(nested, plantedBelow(root, sc.GitDirs, sc.Nested, groups, started)...)
	}
	for _, t := range sc.Trusted {
		nested = append(nested, changedBelow(t, sc.GitDirs, sc.Nested, groups, started)...)
	}
	// A file bound read-only was the caller's before the run and stayed
	// so: its ctime says only that the host touched it in the run's first
	// tick.
	bound := map[string]bool{}
	for _, m := range s.Mounts {
		if m.Type == "bind" && (slices.Contains(m.Options, "ro") || slices.Contains(m.Options, "rro")) {
			bound[m.Destination] = true
		}
	}
	for _, p := range nested {
		if !bound[p] {
			targets = append(targets, p)
		}
	}
	for _, p := range targets {
		if keptByContent(p, sc.Roots) {
			continue
		}
		moved, to, err := scrubOne(p, id)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("could not check %s: %v", p, err))
		case moved != "":
			notes = append(notes, fmt.Sprintf("moved %s (protected; created during the run) to %s", moved, to))
		}
	}
	for _, l := range sc.Links {
		moved, to, err := restoreLink(l.Path, l.Target, id)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("could not check the link %s: %v", l.Path, err))
		case moved != "":
			notes = append(notes, fmt.Sprintf("moved %s (it replaced a protected link during the run) to %s, and put the link back", moved, to))
		case to != "":
			notes = append(notes, fmt.Sprintf("put back the link %s -> %s (removed during the run)", l.Path, l.Target))
		}
	}
	return notes
}

// restoreLink puts the symlink p -> target back when the command replaced
// or removed it: what took its place is renamed to NAME.cordon-quarantine-ID
// (returned as moved and to), and the link is made again (to alone is set
// when there was nothing to move). The walk to p's directory never
// follows a symlink.
func restoreLink(p, target, id string) (moved, to string, err error) {
	dir, name, err := openParent(p)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			// Its directory is gone: the protected paths below it are
			// scrubbed on their own.
			return "", "", nil
		}
		return "", "", err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	switch err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return "", "", err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", "", err
		}
		if string(buf[:n]) == target {
			return "", "", nil
		}
		fallthrough
	default:
		dst := name + ".cordon-quarantine-" + id
		if err := unix.Renameat2(dir, name, dir, dst, unix.RENAME_NOREPLACE); err != nil {
			return "", "", fmt.Errorf("rename: %w", err)
		}
		moved = p
		to = strings.TrimSuffix(p, name) + dst
	}
	if err := unix.Symlinkat(target, dir, name); err != nil {
		return moved, to, fmt.Errorf("make the link again: %w", err)
	}
	if moved == "" {
		to = p
	}
	return moved, to, nil
}

// openParent opens the directory holding p, walking from the root without
// following any symlink, and returns it with p's last name.
func openParent(p string) (int, string, error) {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return -1, "", fmt.Errorf("not an absolute path")
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	for _, name := range parts[:len(parts)-1] {
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return -1, "", err
		}
		dir = next
	}
	return dir, parts[len(parts)-1], nil
}

// scrubOne walks to p from the root without following symlinks and renames
// the first entry that should not be there: a symlink on the way, or p
// itself. It returns what it moved, and where.
func scrubOne(p, id string) (moved, to string, err error) {
	if !strings.HasPrefix(p, "/") {
		return "", "", fmt.Errorf("not an absolute path")
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", "", err
	}
	defer func() { unix.Close(dir) }()
	cur := ""
	for i, name := range parts {
		cur += "/" + name
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return "", "", nil
			}
			return "", "", err
		}
		last := i == len(parts)-1
		// A file where a directory of the path belongs was made during the
		// run (the spec protects one that existed): a .git file pointing
		// at a planted git directory, say.
		if last || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			dst := name + ".cordon-quarantine-" + id
			if err := unix.Renameat2(dir, name, dir, dst, unix.RENAME_NOREPLACE); err != nil {
				return "", "", fmt.Errorf("rename: %w", err)
			}
			return cur, strings.TrimSuffix(cur, name) + dst, nil
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", "", err
		}
		unix.Close(dir)
		dir = next
	}
	return "", "", nil
}

// bareRepoDepth bounds the search for planted bare repositories below each
// writable root; git finds a repository by walking up from where it runs,
// so the shallow ones are those a later git command would trip on.
const bareRepoDepth = 3

// plantedBelow returns the HEAD files of directories below root that
// became bare repositories during the run (HEAD, objects/ and refs/ side by
// side, one of them changed since started): moving HEAD aside is enough for
// git not to take the directory for a repository. Directories named .git,
// and the repositories' own git directories, are left alone. It also
// returns the nested names (spec.Scrub.Nested) created or changed since
// started in the directories down to spec.NestedDepth below root.
//
// It runs after every command, so it reads each directory once, by its
// entries (getdents, relative to its parent, nothing allocated for the
// files), and looks at a name only when the directory holds it; the
// directories at bareRepoDepth are not read, only their HEAD looked up.
// Symlinks are not followed.
func plantedBelow(root string, gitDirs, nested []string, groups []uint32, started time.Time) []string {
	if path.Base(root) == ".git" || slices.Contains(gitDirs, root) {
		return nil
	}
	w := newScrubWalk(gitDirs, nested, groups, started)
	w.bare, w.nestedFrom = true, 1
	return w.walk(root)
}

// changedBelow returns the nested names created or changed since started
// in the directory t and those down to spec.NestedDepth below it (a trusted
// directory in a writable root: mounts.Protect binds those that existed),
// as plantedBelow finds them.
func changedBelow(t string, gitDirs, nested []string, groups []uint32, started time.Time) []string {
	return newScrubWalk(gitDirs, nested, groups, started).walk(t)
}

// scrubMaxEntries bounds the walk after a run: what it looks for lies a
// few levels down (the guard refuses it deeper when the run makes it).
const scrubMaxEntries = 200_000

// scrubWalk is the walk of plantedBelow and changedBelow.
type scrubWalk struct {
	gitDirs, nested []string
	firsts          []string // the nested names' first components
	// bare: look for planted bare repositories too (down to
	// bareRepoDepth); nestedFrom: the depth from which the nested names
	// are looked for (down to spec.NestedDepth).
	bare       bool
	nestedFrom int
	started    time.Time
	// root, for a root caller, is the command's identity: root without
	// capabilities, who cannot enter another user's private directory
	// (cordon can): what is there the walk leaves alone.
	root *access.Who
	buf  []byte
	seen int
	out  []string
}

func newScrubWalk(gitDirs, nested []string, groups []uint32, started time.Time) *scrubWalk {
	w := &scrubWalk{gitDirs: gitDirs, nested: nested, started: started, buf: make([]byte, 32<<10)}
	if os.Geteuid() == 0 {
		w.root = &access.Who{UID: 0, GID: uint32(os.Getegid()), Groups: groups}
	}
	for _, n := range nested {
		first, _, _ := strings.Cut(n, "/")
		if !slices.Contains(w.firsts, first) {
			w.firsts = append(w.firsts, first)
		}
	}
	return w
}

// walk walks from the directory root, not through a symlink.
func (w *scrubWalk) walk(root string) []string {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	w.dir(fd, root, 0, true)
	return w.out
}

// dir looks at the directory p, open as fd (which it closes), depth below
// the root, and below it; for the nested names only when nested (not in
// node_modules, which the plan does not search either).
func (w *scrubWalk) dir(fd int, p string, depth int, nested bool) {
	defer unix.Close(fd)
	if w.seen++; w.seen > scrubMaxEntries {
		return
	}
	present, subdirs := w.entries(fd)
	if w.bare && present["HEAD"] && present["objects"] && present["refs"] && planted(p, w.started) {
		w.out = append(w.out, p+"/HEAD")
	}
	if nested && depth >= w.nestedFrom && depth <= spec.NestedDepth {
		for _, n := range w.nested {
			if first, _, _ := strings.Cut(n, "/"); present[first] && changed(p+"/"+n, w.started) {
				w.out = append(w.out, p+"/"+n)
			}
		}
	}
	for _, name := range subdirs {
		sub := p + "/" + name
		if name == ".git" || slices.Contains(w.gitDirs, sub) {
			continue
		}
		subNested := nested && name != "node_modules"
		if !w.bare && (!subNested || depth+1 > spec.NestedDepth) {
			continue // nothing to look for there
		}
		if w.bare && depth+1 == bareRepoDepth {
			// Checked; what is below is too deep to be looked at, so
			// its directory is not even read (most of the walk's
			// directories are at this depth).
			if w.seen++; w.seen > scrubMaxEntries {
				return
			}
			if planted(sub, w.started) && w.reachesPath(sub) {
				w.out = append(w.out, sub+"/HEAD")
			}
			continue
		}
		subfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if !w.reaches(subfd, sub) {
			unix.Close(subfd)
			continue
		}
		w.dir(subfd, sub, depth+1, subNested)
		if w.seen > scrubMaxEntries {
			return
		}
	}
}

// reaches reports whether the command could search the directory p, open
// as fd: otherwise it could have put nothing there.
func (w *scrubWalk) reaches(fd int, p string) bool {
	if w.root == nil {
		return true // the caller's own refusals are the command's
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	return w.may(st, p)
}

// reachesPath is reaches for a directory not open.
func (w *scrubWalk) reachesPath(p string) bool {
	if w.root == nil {
		return true
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return false
	}
	return w.may(st, p)
}

func (w *scrubWalk) may(st unix.Stat_t, p string) bool {
	f := access.File{UID: st.Uid, GID: st.Gid, Perm: st.Mode & 0o777}
	if w.root.May(f, access.Search) {
		return true
	}
	f.ACL = access.HasACL(p)
	return f.ACL && w.root.May(f, access.Search)
}

// entries reads the directory fd: which of the names the walk looks for
// it holds, and its subdirectories, in name order (as fs.WalkDir visits
// them).
func (w *scrubWalk) entries(fd int) (present map[string]bool, subdirs []string) {
	present = map[string]bool{}
	_ = dirent.Read(fd, w.buf, func(name []byte, isDir bool) {
		switch string(name) {
		case "HEAD", "objects", "refs":
			present[string(name)] = true
		default:
			if slices.Contains(w.firsts, string(name)) {
				present[string(name)] = true
			}
		}
		if isDir {
			subdirs = append(subdirs, string(name))
		}
	})
	slices.Sort(subdirs)
	return present, subdirs
}

// changed reports whether p exists, not as a directory, with a ctime not
// before started (a scrubClock reading).
func changed(p string, started time.Time) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR && !time.Unix(st.Ctim.Unix()).Before(started)
}

// scrubClock is the time a run's scrub compares ctimes with, read when the
// run starts: the kernel's coarse clock, which stamps a file's ctime. It
// lags time.Now by a tick or more, so a file made within milliseconds of
// time.Now would look older than the run; made after scrubClock, it has a
// ctime no earlier.
func scrubClock() time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts); err != nil {
		return time.Now().Add(-time.Second)
	}
	return time.Unix(ts.Unix())
}

// planted reports whether the directory p is a bare repository (HEAD,
// objects/ and refs/ side by side) one of whose three parts changed since
// started (a scrubClock reading: the same tick counts).
func planted(p string, started time.Time) bool {
	var head, objects, refs unix.Stat_t
	if unix.Lstat(p+"/HEAD", &head) != nil || head.Mode&unix.S_IFMT != unix.S_IFREG ||
		unix.Lstat(p+"/objects", &objects) != nil || objects.Mode&unix.S_IFMT != unix.S_IFDIR ||
		unix.Lstat(p+"/refs", &refs) != nil || refs.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	for _, st := range []unix.Stat_t{head, objects, refs} {
		if !time.Unix(st.Ctim.Unix()).Before(started) {
			return true
		}
	}
	return false
}
