package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// List returns the sandboxes recorded under root, oldest first.
func List(root string) ([]Sandbox, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Sandbox
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(ownDirs, e.Name()) {
			continue
		}
		sb, ok := load(root, e.Name())
		if ok {
			out = append(out, sb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

func load(root, id string) (Sandbox, bool) {
	sb := Sandbox{ID: id, Status: "unknown"}
	data, err := os.ReadFile(stateFile(root, id, metaFile))
	if err != nil {
		return sb, false
	}
	var m Meta
	if json.Unmarshal(data, &m) != nil {
		return sb, false
	}
	sb.Owner, sb.Args, sb.Workspace, sb.Created = m.Owner, m.Args, m.Workspace, m.Created
	sb.Orphaned = !alive(m.Owner, m.OwnerTime)
	if m.Mode != "" {
		// A contained run: its init, on the host, is the sandbox.
		sb.Mode, sb.Status = m.Mode, "stopped"
		if alive(m.Init, m.InitTime) {
			sb.Status, sb.Pid = "running", m.Init
		}
		return sb, true
	}
	if c, err := libcontainer.Load(root, id); err == nil {
		if st, err := c.Status(); err == nil {
			sb.Status = st.String()
		}
		if s, err := c.State(); err == nil {
			sb.Pid = s.InitProcessPid
		}
	} else {
		sb.Status = "stopped"
	}
	return sb, true
}

// GC removes what runs whose cordon process is gone left behind: their
// processes, cgroups and state. It returns the ids it removed.
func GC(root string) ([]string, error) { return gc(root, true) }

// GCBeforeRun is GC as a run does it before it starts: the sweep of the
// cgroups of runs that left no state, its one costly step, happens at most
// once every sweepEvery.
func GCBeforeRun(root string) ([]string, error) { return gc(root, false) }

func gc(root string, sweepNow bool) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(ownDirs, e.Name()) {
			continue
		}
		id := e.Name()
		if run, ok := strings.CutPrefix(id, runFilesPrefix); ok {
			// what a run's compilation made (RunFilesDir): it goes with
			// the run, whose lock says whether it lives; none yet (a
			// run between its compilation and its sandbox, or killed
			// there), its age
			if filesOrphaned(root, run) && os.RemoveAll(filepath.Join(root, id)) == nil {
				removed = append(removed, id)
			}
			continue
		}
		if !orphaned(root, id) {
			continue
		}
		if m, err := readMeta(root, id); err == nil && m.Mode != "" && alive(m.Init, m.InitTime) {
			// A contained run's init outlives its cordon to end the
			// command's tree: once it has, the run is GC's.
			continue
		}
		if c, err := libcontainer.Load(root, id); err == nil {
			destroy(c, false) // ending what still runs in it
		} else {
			// Killed before libcontainer saved its state: its cgroups,
			// if it got as far, are found by their name.
			removeRunCgroups(id)
		}
		if m, err := readMeta(root, id); err == nil && m.Scrub != "" {
			scrub(&specs.Spec{Annotations: map[string]string{spec.AnnotationScrub: m.Scrub}}, id, m.Created)
		}
		// A contained run's protected paths, which its cordon did not
		// live to put back (its init ended the command's tree when it
		// went, so nothing changes them any more).
		if snap, err := loadProtected(root, id); err == nil && snap != nil {
			snap.restore()
		}
		// State libcontainer cannot load (a crash between its create
		// and its first save) goes too.
		if err := os.RemoveAll(filepath.Join(root, id)); err == nil {
			removed = append(removed, id)
		}
		os.Remove(lockFile(root, id))
	}
	// Locks of runs killed before they made their state directory.
	locks, _ := filepath.Glob(filepath.Join(root, "run-*.lock"))
	for _, l := range locks {
		id := strings.TrimSuffix(filepath.Base(l), ".lock")
		if _, err := os.Stat(filepath.Join(root, id)); err != nil && runLocked(root, id) == lockFree {
			os.Remove(l)
		}
	}
	sweepCgroups(root, sweepNow)
	sweepTemp(filepath.Join(root, "seccomp"))
	sweepTemp(root) // lock files of runs killed while taking their lock
	return removed, nil
}

// runCgroups are the cgroups of the run id in every hierarchy, as root
// makes them (spec.WithCgroupsPath).
func runCgroups(id string) []string {
	var out []string
	for _, g := range []string{"/sys/fs/cgroup/*/cordon/" + id, "/sys/fs/cgroup/cordon/" + id} {
		ds, _ := filepath.Glob(g)
		out = append(out, ds...)
	}
	return out
}

// removeRunCgroups removes the cgroups of an orphaned run, ending what
// still runs in them.
func removeRunCgroups(id string) {
	if os.Geteuid() != 0 || !strings.HasPrefix(id, "run-") {
		return
	}
	for _, d := range runCgroups(id) {
		for range 100 {
			if err := unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
				break
			}
			data, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// sweepEvery is how often GC sweeps the cgroups of runs. Reading every
// hierarchy's cordon directory cost each cold run about 1 ms of CPU (ten
// hierarchies on a cgroup v1 host), beside the run on a 2-CPU machine,
// for what is rare: a cordon killed in the moment between making its
// cgroups and saving its state.
const sweepEvery = time.Minute

// sweptFile is the file under the state root whose modification time says
// when GC last swept the cgroups.
const sweptFile = "cgroups-swept"

// sweepCgroups removes the empty cgroups of runs of root that have no
// state any more: a cordon killed after libcontainer made the cgroup and
// before it saved its state leaves one that nothing else would find. Only
// empty ones (rmdir refuses the rest; their processes end with the
// lifeline and a later GC removes them), and only once they are old
// enough not to be a run being created under another state directory.
// Unless now is set, it sweeps at most once every sweepEvery.
func sweepCgroups(root string, now bool) {
	if os.Geteuid() != 0 {
		return // a rootless sandbox's cgroup, if any, goes with the run
	}
	if !now && !sweepDue(root) {
		return
	}
	for _, d := range runCgroups("run-*") {
		id := filepath.Base(d)
		if _, err := os.Stat(filepath.Join(root, id)); err == nil {
			continue
		}
		if fi, err := os.Stat(d); err != nil || time.Since(fi.ModTime()) < 10*time.Second {
			continue
		}
		_ = unix.Rmdir(d)
	}
}

// sweepDue reports whether the cgroups of root's runs were last swept
// sweepEvery ago or more (or never), and if so records that they are
// swept now.
func sweepDue(root string) bool {
	stamp := filepath.Join(root, sweptFile)
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < sweepEvery {
		return false
	}
	t := time.Now()
	if err := os.Chtimes(stamp, t, t); err != nil {
		if f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
			f.Close()
		}
	}
	return true
}

// sweepTemp removes temporary files a killed cordon left in dir.
func sweepTemp(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	for _, t := range tmps {
		if fi, err := os.Lstat(t); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(t)
		}
	}
}

// filesOrphaned reports whether the RunFilesDir of the run id is a gone
// run's: its lock is free, or there is none and the directory is older
// than a minute.
func filesOrphaned(root, id string) bool {
	switch runLocked(root, id) {
	case lockHeld:
		return false
	case lockFree:
		return true
	}
	fi, err := os.Stat(RunFilesDir(root, id))
	return err == nil && time.Since(fi.ModTime()) > time.Minute
}

// orphaned reports whether the sandbox id under root belongs to a cordon
// process that is gone: its run lock is free. Without a lock file (a
// cordon killed before it made one) the record says; a sandbox being
// created right now has no record yet, and without a readable one it
// counts as orphaned only once its directory is old enough.
func orphaned(root, id string) bool {
	switch runLocked(root, id) {
	case lockHeld:
		return false
	case lockFree:
		return true
	}
	m, err := readMeta(root, id)
	if err != nil {
		fi, err := os.Stat(filepath.Join(root, id))
		return err == nil && time.Since(fi.ModTime()) > time.Minute
	}
	return !alive(m.Owner, m.OwnerTime)
}

func readMeta(root, id string) (Meta, error) {
	var m Meta
	data, err := os.ReadFile(stateFile(root, id, metaFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(data, &m)
}

// lockFile is the run lock of the sandbox id: a file next to its state
// directory that the cordon running it holds a flock on.
func lockFile(root, id string) string { return filepath.Join(root, id+".lock") }

// lockRun takes the run lock of id, for the length of the run. The lock
// file appears at its name already locked: made without a name
// (O_TMPFILE), locked, then linked into place (failing if the name
// exists, as O_EXCL). Created at its name and locked after, it was free
// for a moment, in which another run's GC took the lock to probe it (this
// run then failed with EAGAIN) or, the run's state directory not made
// yet, removed the file as a crashed run's. Made under a temporary name,
// a run killed in between left that name behind. Where the file system
// has no O_TMPFILE, a temporary name it is (sweepTemp removes those a
// killed run left).
func lockRun(root, id string) (unlock func(), err error) {
	if err := os.MkdirAll(root, 0o711); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	path := lockFile(root, id)
	f, link, drop, err := unnamedFile(root)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	defer drop()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("state directory: lock %s: %w", path, err)
	}
	if err := link(path); err != nil {
		f.Close()
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, nil
}

// unnamedFile makes a file in dir that has no name until link gives it
// one: an O_TMPFILE one, or else one under a temporary name, which drop
// removes (drop does nothing for the first).
func unnamedFile(dir string) (f *os.File, link func(name string) error, drop func(), err error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		f = os.NewFile(uintptr(fd), dir+"/(unnamed)")
		return f, func(name string) error {
			// linkat(AT_EMPTY_PATH) would need CAP_DAC_READ_SEARCH.
			err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
			if err != nil {
				return &os.LinkError{Op: "link", Old: f.Name(), New: name, Err: err}
			}
			return nil
		}, func() {}, nil
	}
	if f, err = os.CreateTemp(dir, ".tmp-*"); err != nil {
		return nil, nil, nil, err
	}
	return f, func(name string) error { return os.Link(f.Name(), name) }, func() { os.Remove(f.Name()) }, nil
}

type lockState int

const (
	lockMissing lockState = iota // no lock file
	lockHeld                     // its cordon runs
	lockFree                     // its cordon is gone
)

// runLocked tells whether the run lock of id is held.
func runLocked(root, id string) lockState {
	f, err := os.OpenFile(lockFile(root, id), os.O_RDWR, 0)
	if err != nil {
		return lockMissing
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return lockHeld
	}
	// Free, unless its run let it go and removed it since it was opened:
	// then there is no lock file any more.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
		return lockMissing
	}
	return lockFree
}
