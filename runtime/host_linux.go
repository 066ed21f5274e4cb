package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// StateRoot returns the directory where cordon keeps the state of live
// sandboxes for the calling user: $CORDON_STATE_ROOT when set (absolute),
// otherwise /run/cordon for root, $XDG_RUNTIME_DIR/cordon or
// /tmp/cordon-UID for everyone else, and for root too where /run cannot be
// written (a container with a read-only root file system).
func StateRoot() string {
	if d := os.Getenv("CORDON_STATE_ROOT"); filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	if os.Geteuid() == 0 && unix.Access("/run", unix.W_OK) == nil {
		return "/run/cordon"
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && ownedDir(d) {
		return filepath.Join(d, "cordon")
	}
	// Not os.TempDir: a TMPDIR of the caller's must not move cordon's state.
	return filepath.Join("/tmp", "cordon-"+strconv.Itoa(os.Geteuid()))
}

// ownedDir reports whether dir is a directory owned by the caller that
// nobody else can write to.
func ownedDir(dir string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0
}

// HostPaths returns where the host side of a sandbox lives under the state
// directory root, without creating anything.
func HostPaths(root string) (spec.Host, error) {
	h := spec.Host{
		Rootfs:   filepath.Join(root, "rootfs"),
		State:    root,
		MaskFile: filepath.Join(root, "mask"),
	}
	exe, err := executable()
	if err != nil {
		return h, fmt.Errorf("find cordon's own binary: %w", err)
	}
	if h.Executable, err = filepath.EvalSymlinks(exe); err != nil {
		return h, fmt.Errorf("find cordon's own binary: %w", err)
	}
	return h, nil
}

// Prepare makes sure the host side of a sandbox exists: the state
// directory, the directory that becomes the sandbox's root (empty
// mountpoints and copies of the host's top-level symlinks) and the mask
// file. It is cheap when they exist already.
func Prepare(h spec.Host) error {
	if err := ensureStateDir(h.State); err != nil {
		return err
	}
	if err := ensureRootfs(h.Rootfs); err != nil {
		return err
	}
	return ensureMaskFile(h.MaskFile)
}

// ensureStateDir creates root with mode 0700, or checks that the one there
// belongs to the caller and nobody else can write to it: another user must
// not be able to plant state cordon would trust.
func ensureStateDir(root string) error {
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("state directory: %w", err)
	}
	if !ownedDir(root) {
		return fmt.Errorf("state directory %s is not a directory owned by uid %d with no write access for others", root, os.Geteuid())
	}
	return nil
}

// ensureRootfs creates the sandbox's root, shared by every sandbox of the
// state directory: the mountpoints of the host's top-level directories
// and files, of cordon's own binary and of the trust bundle, made here once rather than by
// libcontainer in each run (concurrent runs would race to create a file
// mountpoint), and copies of the host's top-level symlinks (/bin ->
// usr/bin) so the view inside matches the host.
func ensureRootfs(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sandbox root: %w", err)
	}
	initDir := filepath.Join(dir, filepath.Dir(spec.InitPath))
	if err := os.Mkdir(initDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sandbox root: %w", err)
	}
	for _, f := range []string{spec.InitPath, spec.TrustBundlePath} {
		if err := ensureFile(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("sandbox root: %w", err)
		}
	}
	entries, err := os.ReadDir("/")
	if err != nil {
		return fmt.Errorf("read host root: %w", err)
	}
	for _, e := range entries {
		switch {
		case e.IsDir():
			if err := os.Mkdir(filepath.Join(dir, e.Name()), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("sandbox root: %w", err)
			}
			continue
		case e.Type().IsRegular():
			if err := ensureFile(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("sandbox root: %w", err)
			}
			continue
		case e.Type()&fs.ModeSymlink == 0:
			continue
		}
		target, err := os.Readlink("/" + e.Name())
		if err != nil {
			return fmt.Errorf("read host root: %w", err)
		}
		dst := filepath.Join(dir, e.Name())
		if cur, err := os.Readlink(dst); err == nil && cur == target {
			continue
		}
		// A stale entry (the host changed) is replaced.
		_ = os.Remove(dst)
		if err := os.Symlink(target, dst); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("sandbox root: %w", err)
		}
	}
	return nil
}

// ensureFile creates an empty file at path unless one is there.
func ensureFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

func ensureMaskFile(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == 0 && fi.Size() == 0 {
		return nil
	}
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("mask file: %w", err)
	}
	if f != nil {
		f.Close()
	}
	return nil
}
