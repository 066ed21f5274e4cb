package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/seccomp"
	"cordon.dev/cordon/spec"
)

// The guard (seccomp.Options.Guard, spec.Guard): the system calls that
// make a name stop for the supervisor, which makes the name itself, on
// the process's behalf, or refuses it. It never lets one continue: the
// kernel would read the path again from the process's memory, which
// another thread may have changed since the check, and resolve it again,
// through directories another process may have renamed. The supervisor
// reads the path once, resolves it once, decides on the directory it holds
// open and the name in it, and makes the name there; an open's descriptor
// goes to the process with SECCOMP_IOCTL_NOTIF_ADDFD. Every process of the
// sandbox stops for the same thread, one call at a time, so no rename of
// the sandbox's can come between the check and the making.
//
// The thread acts as the process would: its file system credentials are
// the caller's (root's without a capability or a group when cordon runs as
// root, as the sandbox's root has none), it resolves paths in the
// sandbox's root and mount namespace (held by a descriptor,
// RESOLVE_IN_ROOT), from the process's working directory or descriptor
// (/proc/TID/cwd, /proc/TID/fd/N), acts only on the sandbox's mounts,
// grants nothing the sandbox's Landlock rules (spec.AnnotationLandlock)
// do not, and makes with the process's umask.

// guardian is the supervisor's side of the guard.
type guardian struct {
	g     *spec.Guard
	root  int                 // the sandbox's root, the supervisor's
	rules []spec.LandlockRule // the sandbox's Landlock rules
	// rootID identifies root: ".." there stays there.
	rootID mountedID
	procs  map[int]*guardProc
	// gen is bumped by every umask(2) of the sandbox: each process's umask
	// is read again.
	gen int
	// umask is the guard thread's own; floor what it never drops below
	// (cordon's, when the thread shares cordon's umask: see asSandbox).
	umask, floor int
	// broken says why the thread could not act as the sandbox: every
	// guarded call is refused then.
	broken error
	// mounts are the sandbox's mount IDs (onSandboxMount); rights what
	// its Landlock rules grant (allows), nil without Landlock.
	mounts map[uint64]bool
	rights map[string]llRight
	// gitDirs are the git directories the guard made during the run
	// (git init, clone, worktree add): git writes a worktree's commondir
	// there, which the guard refuses in the others (spec.Refusal.GitDir).
	gitDirs map[fileIdentity]bool
	// made are the files the guard let a git directory made during the
	// run have unseen, for the check after the run (checkMade).
	made []string
}

// fileIdentity identifies a file on the host.
type fileIdentity struct{ dev, ino uint64 }

// guardProc is what the guard knows of one thread of the sandbox.
type guardProc struct {
	dir   int // /proc/TID, O_PATH: gone with the thread
	gen   int
	umask int
	// tgid and tid are the thread's ids in the sandbox's pid namespace,
	// for /proc/self and /proc/thread-self.
	tgid, tid int
}

// mountedID identifies a directory and the mount it is reached by.
type mountedID struct{ dev, ino, mnt uint64 }

// newGuardian returns the guardian of the spec's guard, or nil.
func newGuardian(annotations map[string]string) (*guardian, error) {
	raw := annotations[spec.AnnotationGuard]
	if raw == "" {
		return nil, nil
	}
	gd := &guardian{g: &spec.Guard{}, root: -1, procs: map[int]*guardProc{}}
	if err := json.Unmarshal([]byte(raw), gd.g); err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	if raw := annotations[spec.AnnotationLandlock]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &gd.rules); err != nil {
			return nil, fmt.Errorf("guard: landlock rules: %w", err)
		}
	}
	return gd, nil
}

// madeGitDirAt records the directory name in dir, just made, as a git
// directory of the run's.
func (gd *guardian) madeGitDirAt(dir int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	if gd.gitDirs == nil {
		gd.gitDirs = map[fileIdentity]bool{}
	}
	gd.gitDirs[fileIdentity{st.Dev, st.Ino}] = true
}

// madeGitDir reports whether the git directory at p (as the sandbox sees
// it) is one the guard made during the run.
func (gd *guardian) madeGitDir(p string) bool {
	if len(gd.gitDirs) == 0 {
		return false
	}
	fd, err := gd.openInRoot(p, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && gd.gitDirs[fileIdentity{st.Dev, st.Ino}]
}

// close lets go of what the guard holds of the sandbox's processes (its
// root is the supervisor's to close).
func (gd *guardian) close() {
	for tid, p := range gd.procs {
		unix.Close(p.dir)
		delete(gd.procs, tid)
	}
}

// confine makes the calling goroutine's thread act as the sandbox's
// processes do (asSandbox), for good: the goroutine must end without
// unlocking it, which ends the thread. proc is the /proc directory of a
// process whose root is root and whose mounts the thread acts in.
func (gd *guardian) confine(root int, proc string) error {
	gd.root = root
	id, err := identify(root)
	if err != nil {
		return fmt.Errorf("the sandbox's root: %w", err)
	}
	gd.rootID = id
	if err := gd.sandboxMounts(proc); err != nil {
		return fmt.Errorf("the sandbox's mounts: %w", err)
	}
	gd.landlockRights()
	own, err := asSandbox(true)
	if err != nil {
		return err
	}
	gd.umask = unix.Umask(0o22)
	unix.Umask(gd.umask)
	if !own {
		// Shared with cordon's other threads: never looser than cordon's.
		gd.floor = gd.umask
	}
	return nil
}

// asSandbox gives the calling thread, locked to its goroutine for good,
// the file system credentials of the sandbox's processes: cordon's ids
// (the caller's), and as root no capability and no group, as the
// sandbox's root has none. A thread's credentials are its own: cordon's
// other threads keep theirs. With ownFS it gets a umask of its own, and
// says so: where unshare is refused (Docker's default seccomp profile,
// around the container mode) the thread shares cordon's.
func asSandbox(ownFS bool) (own bool, err error) {
	runtime.LockOSThread()
	if ownFS {
		switch err := unix.Unshare(unix.CLONE_FS); {
		case err == nil:
			own = true
		case errors.Is(err, unix.EPERM):
		default:
			return false, fmt.Errorf("unshare: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return false, fmt.Errorf("setgroups: %w", e)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if _, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0); e != 0 {
		return false, fmt.Errorf("capset: %w", e)
	}
	return own, nil
}

// sandboxMounts reads the mounts of the sandbox's mount namespace, from
// the mountinfo of proc: what the guard acts in must be one of them.
func (gd *guardian) sandboxMounts(proc string) error {
	data, err := os.ReadFile(proc + "/mountinfo")
	if err != nil {
		return err
	}
	gd.mounts = map[uint64]bool{}
	for line := range strings.Lines(string(data)) {
		id, _, _ := strings.Cut(line, " ")
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			gd.mounts[n] = true
		}
	}
	return nil
}

// landlockRights maps the sandbox's Landlock rules to the rights they
// grant beneath each path, when the kernel applies them: the guard, which
// has no domain of its own (Landlock would keep it from reading the
// processes' memory, which lie in another domain), grants no more.
func (gd *guardian) landlockRights() {
	if len(gd.rules) == 0 {
		return
	}
	if _, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 {
		return // no Landlock: the sandbox has none either
	}
	gd.rights = map[string]llRight{}
	for _, r := range gd.rules {
		switch r.Access {
		case "w":
			gd.rights[r.Path] |= llWrite | llReadAll
		case "r":
			gd.rights[r.Path] |= llReadAll
		}
	}
}

// llRight is what a Landlock rule grants beneath its path, as far as the
// guard asks: reading files, and writing (making, removing, linking).
type llRight uint8

const (
	llReadAll llRight = 1 << iota
	llWrite
)

// allows reports whether the sandbox's Landlock rules grant want beneath
// p (a path as the sandbox sees it, of something on one of its mounts):
// rights add up along the path, as Landlock's do.
func (gd *guardian) allows(p string, want llRight) bool {
	if gd.rights == nil {
		return true
	}
	var have llRight
	for q := p; ; q = parentDir(q) {
		have |= gd.rights[q]
		if have&want == want {
			return true
		}
		if q == "/" || q == "" {
			return false
		}
	}
}

// parentDir is path.Dir for clean absolute paths.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// onSandboxMount reports whether fd lies on one of the sandbox's mounts:
// not on one of the host's, reached through a descriptor the command was
// given (a directory on its standard input), where the sandbox's mounts
// do not apply.
func (gd *guardian) onSandboxMount(fd int) bool {
	if gd.mounts == nil {
		return true
	}
	var st unix.Statx_t
	return unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &st) == nil && gd.mounts[st.Mnt_id]
}

// openInRoot opens the absolute path p as the sandbox sees it, symlinks
// followed inside its root.
func (gd *guardian) openInRoot(p string, flags int) (int, error) {
	rel := strings.TrimPrefix(p, "/")
	if rel == "" {
		rel = "."
	}
	return openat2(gd.root, rel, flags, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
}

func openat2(dir int, p string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	for range 16 {
		fd, err := unix.Openat2(dir, p, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

func identify(fd int) (mountedID, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return mountedID{}, err
	}
	return mountedID{dev: uint64(st.Dev_major)<<32 | uint64(st.Dev_minor), ino: st.Ino, mnt: st.Mnt_id}, nil
}

// takes reports whether the guard performs the notified call: what makes
// a name, an open with write access, O_CREAT or O_TRUNC (opens of any
// kind notify when reads are recorded), and umask.
func (gd *guardian) takes(name string, args [6]uint64) bool {
	switch name {
	case "open":
		return args[1]&openWriteFlags != 0
	case "openat":
		return args[2]&openWriteFlags != 0
	case "umask":
		return true
	}
	return seccomp.IsCreate(name)
}

// guardRefusal is a refused call's path and the guard's reason.
type guardRefusal struct {
	path, reason string
	// errno is the call's answer: EACCES when 0.
	errno unix.Errno
}

// outcome is what performing a call gave: a descriptor for the process
// (fd >= 0, to install close-on-exec when cloexec), answered already by
// another thread (async), or an error; refused says the guard refused it.
type outcome struct {
	fd      int
	cloexec bool
	async   bool
	err     error
	refused *guardRefusal
	named   string // the path made, as the process named it
	command string // a failed call's process's command, read before the answer
}

// handle performs the call n (of the system call name) and answers it,
// and returns what it gave, for the record. A call that fails gets its
// process's command (command) before it is answered: a process refused
// may be gone once answered (mkdir exits at once).
func (gd *guardian) handle(listener int, n *seccompNotif, name string, command func(pid int) string) outcome {
	resp := seccompNotifResp{ID: n.ID}
	if name == "umask" {
		// The process's own call; the next creation reads its umask.
		gd.gen++
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		return outcome{fd: -1}
	}
	out := outcome{fd: -1}
	c := &guardCall{gd: gd, tid: int(n.Pid), listener: listener, id: n.ID}
	if gd.broken != nil {
		out.refused = &guardRefusal{reason: "the guard could not start (" + gd.broken.Error() + "): nothing is made"}
	} else {
		out = c.perform(name, n.Args)
	}
	if out.refused != nil {
		out.err = unix.EACCES
		if out.refused.errno != 0 {
			out.err = out.refused.errno
		}
	}
	if out.async {
		return out
	}
	if out.fd >= 0 {
		out.err = addFD(listener, n.ID, out.fd, out.cloexec)
		unix.Close(out.fd)
		out.fd = -1
		if out.err == nil {
			return out
		}
	}
	if out.err != nil {
		out.command = command(int(n.Pid))
		if out.refused == nil && c.proc != nil {
			out.named = c.namedPath()
		}
		errno, ok := errors.AsType[unix.Errno](out.err)
		if !ok {
			errno = unix.EACCES
		}
		resp.Error = -int32(errno)
	}
	_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	return out
}

// seccompNotifAddfd is the kernel's struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

// addFD installs fd in the notifying process and answers its call with
// the new descriptor's number, in one step (SECCOMP_ADDFD_FLAG_SEND): the
// process returns as soon as it has the descriptor. That step marks the
// call answered before the process has installed it, and a signal that
// ends the ioctl's wait meanwhile makes the kernel withdraw the descriptor
// while the call stays answered: it returns 0, and the process writes its
// output to its stdin (EBADF; Go's preemption signal did it to one go
// build in ten). So no signal can end the wait: this thread blocks them
// all for the ioctl (a fatal one still ends it, and cordon with it). In
// two steps (install, then answer) each file made took two more switches
// between the process and this thread, in a virtual machine 40 us each.
// When the process cannot take the descriptor (its RLIMIT_NOFILE), the
// call stays unanswered and the error is the answer's.
func addFD(listener int, id uint64, fd int, cloexec bool) error {
	a := seccompNotifAddfd{ID: id, Srcfd: uint32(fd), Flags: unix.SECCOMP_ADDFD_FLAG_SEND}
	if cloexec {
		a.NewfdFlags = unix.O_CLOEXEC
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	all, old := ^uint64(0), uint64(0)
	if _, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); errno != 0 {
		return errno
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&a)))
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	switch errno {
	case 0, unix.ENOENT: // answered; or the process went away meanwhile
		return nil
	}
	return errno
}
