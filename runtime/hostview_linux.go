package runtime

// The sandbox's read-only view of the host root is one bind per top-level
// entry of the host (mounts.Plan). libcontainer spends about 0.2 ms on
// each of its mounts (it resolves the mountpoint step by step, opens it,
// checks what it opened, then remounts for the flags), a cold run ~3 ms
// for the twenty of a typical root. cordon's init makes those binds
// itself instead, with two system calls each, before libcontainer sets
// up the rest: newSandbox takes them out of the config it gives
// libcontainer and hands them to the init in a memfd at initHostViewFD;
// bindHostView, in the re-executed cordon, makes them in the sandbox's
// root exactly as the spec says: recursive binds of the directories,
// binds of the files, read-only, nosuid and nodev throughout (below them
// too, where libcontainer's flags stop at the top mount), and private.
// The spec itself is unchanged: runc runs `cordon spec`'s output as it is.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// initHostViewFD is the descriptor at which libcontainer's init finds the
// host view to bind: a memfd named hostViewName holding hostViewMagic, the
// sandbox's root ("root PATH") and the entries, one per line ("d NAME" for
// a directory, "f NAME" for a file). A descriptor there that is not one
// (an OCI caller's preserved descriptor, say) is left alone, unread; the
// OCI verbs refuse to pass one that is (refuseHostView).
const initHostViewFD = 9

// initTypeEnv is where libcontainer tells its init what it starts:
// initStandard for a new container's first process, "setns" for a process
// joining one.
const (
	initTypeEnv  = "_LIBCONTAINER_INITTYPE"
	initStandard = "standard"
)

// hostViewName is the name of the memfd.
const hostViewName = "cordon-host-view"

// hostViewMagic starts the message.
const hostViewMagic = "cordon host view 1\n"

// hostView is what the init binds: the entries, into root.
type hostView struct {
	root    string
	entries []hostEntry
}

// hostEntry is one top-level entry of the host to bind.
type hostEntry struct {
	name string
	dir  bool
}

// takeHostView splits s's leading binds of the host view (spec.HostView)
// from the rest: the entries the init binds first, and a copy of s without
// them for libcontainer. Only a leading run is taken, so that every mount
// is still made after those it was ordered after; and only from a spec
// with user and mount namespaces of its own (every spec cordon compiles),
// so that the init's mounts are made where nothing propagates to the host
// (bindHostView makes sure of that too).
func takeHostView(s *specs.Spec) (*specs.Spec, []hostEntry) {
	if s.Root == nil || !filepath.IsAbs(s.Root.Path) || s.Linux == nil ||
		!hasNamespace(s.Linux, specs.UserNamespace) || !hasNamespace(s.Linux, specs.MountNamespace) {
		return s, nil
	}
	var view []hostEntry
	for _, m := range s.Mounts {
		ok, dir := spec.HostView(m)
		name := strings.TrimPrefix(m.Destination, "/")
		if !ok || strings.ContainsAny(name, "\n\x00") {
			// (a name the message cannot carry stays with libcontainer)
			break
		}
		view = append(view, hostEntry{name: name, dir: dir})
	}
	if len(view) == 0 {
		return s, nil
	}
	rest := *s
	rest.Mounts = s.Mounts[len(view):]
	return &rest, view
}

// hasNamespace reports whether l asks for a new namespace of type t.
func hasNamespace(l *specs.Linux, t specs.LinuxNamespaceType) bool {
	for _, ns := range l.Namespaces {
		if ns.Type == t && ns.Path == "" {
			return true
		}
	}
	return false
}

// encodeHostView is the message for the init.
func encodeHostView(view hostView) []byte {
	var b strings.Builder
	b.WriteString(hostViewMagic)
	fmt.Fprintf(&b, "root %s\n", filepath.Clean(view.root))
	for _, e := range view.entries {
		kind := "f"
		if e.dir {
			kind = "d"
		}
		fmt.Fprintf(&b, "%s %s\n", kind, e.name)
	}
	return []byte(b.String())
}

// parseHostView reads a message: ok is false when data is not one, an
// error says what is wrong with one.
func parseHostView(data []byte) (view hostView, ok bool, err error) {
	rest, ok := strings.CutPrefix(string(data), hostViewMagic)
	if !ok {
		return view, false, nil
	}
	if !strings.HasSuffix(rest, "\n") {
		return view, true, errors.New("host view: truncated")
	}
	first, rest, _ := strings.Cut(rest, "\n")
	root, isRoot := strings.CutPrefix(first, "root ")
	if !isRoot || !filepath.IsAbs(root) || filepath.Clean(root) != root || strings.Contains(root, "\x00") {
		return view, true, fmt.Errorf("host view: bad root %q", first)
	}
	view.root = root
	for line := range strings.Lines(rest) {
		kind, name, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || (kind != "d" && kind != "f") {
			return hostView{}, true, fmt.Errorf("host view: bad entry %q", line)
		}
		view.entries = append(view.entries, hostEntry{name: name, dir: kind == "d"})
	}
	return view, true, nil
}

// isHostView reports whether descriptor fd of this process is what the
// init takes for a host view: a memfd named hostViewName. Anyone can name
// a memfd so; the OCI verbs refuse to pass one at initHostViewFD (see
// refuseHostView).
func isHostView(fd int) bool {
	name, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return err == nil && strings.HasPrefix(name, "/memfd:"+hostViewName+" ")
}

// refuseHostView fails when files, the descriptors from 3 on that a
// process of an OCI container is given (a caller's preserved descriptors,
// systemd's sockets), would put a host view where the init looks for one:
// the init would bind the host's entries it names into the container,
// which its spec never asked for. Only cordon's own runs hand the init a
// host view (newSandbox).
func refuseHostView(files []*os.File) error {
	i := initHostViewFD - 3
	if i < len(files) && files[i] != nil && isHostView(int(files[i].Fd())) {
		return fmt.Errorf("descriptor %d is a memfd named %s, which cordon's init would bind the host from: refused", initHostViewFD, hostViewName)
	}
	return nil
}

// hostViewFile is a memfd that holds view's message.
func hostViewFile(view hostView) (*os.File, error) {
	fd, err := unix.MemfdCreate(hostViewName, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("host view: %w", err)
	}
	f := os.NewFile(uintptr(fd), hostViewName)
	if _, err := f.Write(encodeHostView(view)); err != nil {
		f.Close()
		return nil, fmt.Errorf("host view: %w", err)
	}
	return f, nil
}

// bindHostView makes the host view in the sandbox's root when cordon asked
// for it at initHostViewFD. It runs in libcontainer's re-executed init,
// before libcontainer.Init: in the sandbox's new mount and user
// namespaces, with the root still the host's and the working directory
// the sandbox's root (libcontainer starts its init there). Nothing of the
// sandbox's runs yet. Then it sets the sandbox's share of the per-user
// limits (shareUserLimits), which only a sandbox's new user namespace has.
func bindHostView() error {
	// Only the init of a new sandbox: the init of a process joining one
	// (an OCI exec) is in the container's mount namespace already, where
	// /proc/self/fd is whatever the container mounted there (a planted
	// "host view" would have this privileged init bind, and read, as the
	// container says). libcontainer sets the type, in an environment of
	// its own.
	if os.Getenv(initTypeEnv) != initStandard {
		return nil
	}
	if !isHostView(initHostViewFD) {
		return nil
	}
	data, err := os.ReadFile("/proc/self/fd/" + strconv.Itoa(initHostViewFD))
	unix.Close(initHostViewFD)
	if err != nil {
		return fmt.Errorf("host view: %w", err)
	}
	view, ok, err := parseHostView(data)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("host view: not a host view")
	}
	// libcontainer starts its init in the sandbox's root: the binds go
	// there, and nowhere else.
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("host view: %w", err)
	}
	if want, err := filepath.EvalSymlinks(view.root); err != nil || want != root {
		return fmt.Errorf("host view: the init runs in %s, not in the sandbox's root %s", root, view.root)
	}
	// Nothing made here may reach the host's mount namespace. In a mount
	// namespace owned by a new user namespace the kernel has made the
	// host's shared mounts slaves already; this is what libcontainer does
	// first too (it sets its own propagation after).
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("host view: %w", err)
	}
	attr := unix.MountAttr{
		Attr_set:    unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
		Propagation: unix.MS_PRIVATE,
	}
	for _, e := range view.entries {
		target := filepath.Join(root, e.name)
		if err := hostViewMountpoint(target, e.dir); err != nil {
			return err
		}
		flags := uintptr(unix.MS_BIND)
		if e.dir {
			flags |= unix.MS_REC
		}
		if err := unix.Mount("/"+e.name, target, "", flags, ""); err != nil {
			return fmt.Errorf("host view: bind /%s: %w", e.name, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, target, unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("host view: make /%s read-only: %w", e.name, err)
		}
	}
	shareUserLimits()
	return nil
}

// hostViewMountpoint checks that the mountpoint in the sandbox's root is
// a directory or a file as the entry is (runtime.Prepare makes them),
// making it when the host gained the entry since; a symlink there is
// refused, which the mount would follow.
func hostViewMountpoint(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if dir {
			err = os.Mkdir(path, 0o755)
		} else {
			err = ensureFile(path)
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("host view: mountpoint %s: %w", path, err)
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return fmt.Errorf("host view: mountpoint %s: %w", path, err)
	}
	if dir && !fi.IsDir() {
		return fmt.Errorf("host view: mountpoint %s is not a directory", path)
	}
	if !dir && !fi.Mode().IsRegular() {
		return fmt.Errorf("host view: mountpoint %s is not a file", path)
	}
	return nil
}
