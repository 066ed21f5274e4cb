package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/seccomp"
	"cordon.dev/cordon/spec"
)

// The kernel's struct seccomp_notif and struct seccomp_notif_resp
// (include/uapi/linux/seccomp.h), which x/sys/unix does not define.
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

const atFDCWD = -100

// supervisor answers the notifications of the command's seccomp filter
// (see spec.InitNotifyFD): the system calls cordon refuses get EPERM and
// are recorded; the file accesses (when spec.Record asks for them)
// continue, as the kernel decides them, and those the sandbox's mounts
// refuse are recorded.
type supervisor struct {
	sock, child *os.File
	names       map[int32]string
	rec         *recorder
	roots       []string // the writable roots, for the reasons given
	workspace   string
	stop        int // eventfd: the run is over
	done        chan struct{}
	// root is the sandbox's root directory, mntns its mount namespace,
	// held open so that writes are looked at in the sandbox's mounts even
	// after its last process has gone.
	root, mntns int
	// proc is the /proc directory of the sandbox's init, or cordon's own
	// in the container mode, whose root and mounts the init shares.
	proc      string
	contained bool
	// commands are the command lines of the processes seen, read once.
	commands map[int]string
	// checks are file accesses to look at once the process has
	// continued.
	checks chan fileCheck
	// guard performs the calls that make a name, when the spec has a
	// guard (see guard_linux.go).
	guard *guardian
	// recordsWrites: the profile stops every write to record those the
	// sandbox refuses (spec.Record), the guard's too.
	recordsWrites bool
}

// newSupervisor prepares the socket the init hands the listener over, when
// the spec's profile notifies.
func newSupervisor(s *specs.Spec, rec *recorder) (*supervisor, error) {
	if s.Linux == nil || s.Linux.Seccomp == nil || s.Process == nil ||
		!slices.Contains(s.Process.Args, fmt.Sprintf("--notify-fd=%d", spec.InitNotifyFD)) {
		return nil, nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("seccomp supervisor: %w", err)
	}
	names := notifiedNames(s.Linux.Seccomp)
	sv, err := newListenerSupervisor(names, rec)
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	// (removals stop only to be recorded)
	sv.recordsWrites = slices.Contains(names, "unlinkat")
	if sv.guard, err = newGuardian(s.Annotations); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	sv.contained = spec.Contained(s)
	sv.sock = os.NewFile(uintptr(fds[0]), "seccomp-notify")
	sv.child = os.NewFile(uintptr(fds[1]), "seccomp-notify-init")
	sv.workspace = s.Annotations[spec.AnnotationWorkspace]
	if raw := s.Annotations[spec.AnnotationScrub]; raw != "" {
		var sc spec.Scrub
		if err := json.Unmarshal([]byte(raw), &sc); err == nil {
			sv.roots = sc.Roots
		}
	}
	if sv.workspace != "" && !slices.Contains(sv.roots, sv.workspace) {
		sv.roots = append(sv.roots, sv.workspace)
	}
	return sv, nil
}

// notifiedNames are the system calls the profile sends to a listener.
func notifiedNames(p *specs.LinuxSeccomp) []string {
	var names []string
	for _, rule := range p.Syscalls {
		if rule.Action == specs.ActNotify {
			names = append(names, rule.Names...)
		}
	}
	return names
}

// newListenerSupervisor returns a supervisor of the system calls names,
// recording to rec, for a listener the caller hands to supervise: no
// socket to the init, no sandbox root to judge file accesses in (the OCI
// monitor gets its listeners from libcontainer).
func newListenerSupervisor(names []string, rec *recorder) (*supervisor, error) {
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp supervisor: %w", err)
	}
	return &supervisor{
		names:    seccomp.NativeNumbers(names),
		rec:      rec,
		stop:     stop,
		done:     make(chan struct{}),
		checks:   make(chan fileCheck, 1024),
		root:     -1,
		mntns:    -1,
		commands: map[int]string{},
	}, nil
}

// start receives the listener from the init (process init on the host)
// and answers on it until the sandbox's processes are gone or close is
// called. The command cannot run before the init has sent the listener,
// so nothing is missed.
func (sv *supervisor) start(init int) {
	sv.child.Close()
	proc := "/proc/" + strconv.Itoa(init)
	if sv.contained {
		// No namespace of its own: its root and mounts are cordon's. (Its
		// /proc entries are the init's to hide: it is not dumpable.)
		proc = "/proc/self"
	}
	sv.proc = proc
	open := func() error {
		var err error
		if sv.mntns < 0 {
			sv.mntns, _ = unix.Open(proc+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}
		if sv.root < 0 {
			sv.root, err = unix.Open(proc+"/root", unix.O_PATH|unix.O_CLOEXEC, 0)
		}
		return err
	}
	// (ENOENT while the init's exec replaces its threads: libcontainer
	// execs from a thread that is not the leader)
	_ = open()
	go func() {
		defer close(sv.done)
		listener, err := sv.receive()
		if err != nil {
			return // the init failed before the command, and says why
		}
		defer unix.Close(listener)
		// The init sends the listener once it has executed itself.
		if err := open(); err != nil && sv.guard != nil {
			sv.guard.broken = fmt.Errorf("the sandbox's root: %w", err)
		}
		sv.supervise(listener)
	}()
}

// supervise answers the notifications of listener until every process of
// its filter is gone or close is called.
func (sv *supervisor) supervise(listener int) {
	var wg sync.WaitGroup
	wg.Go(sv.checkFiles)
	if sv.guard != nil {
		// This thread performs the guarded calls as the sandbox's
		// processes would: it stays confined so, and ends with the run.
		if sv.guard.broken == nil {
			sv.guard.broken = sv.guard.confine(sv.root, sv.proc)
		}
		// Fewer switches between the process and this thread: the kernel
		// wakes each on the other's CPU (Linux 6.6; best effort).
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	}
	sv.serve(listener)
	if sv.guard != nil {
		sv.guard.close()
	}
	close(sv.checks)
	wg.Wait()
}

// receive waits for the listener, or for the init to close its end.
func (sv *supervisor) receive() (int, error) {
	fds, err := receiveFDs(sv.sock, 1)
	if err != nil {
		return -1, fmt.Errorf("no listener: %w", err)
	}
	return fds[0], nil
}

// serve answers notifications until every process of the filter is gone
// (the listener hangs up) or the run is over.
func (sv *supervisor) serve(listener int) {
	fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}, {Fd: int32(sv.stop), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			sv.answer(listener)
			continue
		}
		if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
			return
		}
	}
}

// answer receives one notification and answers it.
func (sv *supervisor) answer(listener int) {
	var n seccompNotif
	if err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		return // ENOENT: the process went away meanwhile
	}
	name := sv.names[n.Nr]
	pid := int(n.Pid)
	if sv.guard != nil && sv.guard.takes(name, n.Args) {
		out := sv.guard.handle(listener, &n, name, sv.command)
		command := out.command
		switch {
		case out.refused != nil:
			sv.rec.add(Violation{Kind: KindWrite, PID: pid, Command: command, Syscall: name,
				Path: out.refused.path, Reason: out.refused.reason})
		case out.err != nil && path.IsAbs(out.named) && sv.recordsWrites:
			// Refused by the mounts or Landlock, as the kernel would have
			// for the process: judged as its own call would be.
			select {
			case sv.checks <- fileCheck{pid: pid, command: command, name: name, paths: []string{out.named},
				follow: name == "open" || name == "openat" || name == "creat", write: true, creates: true}:
			default:
			}
		}
		return
	}
	resp := seccompNotifResp{ID: n.ID}
	if seccomp.IsFileAccess(name) {
		// Read what the kernel is about to look at before it does; look
		// at where it led afterwards, with the process on its way.
		c, ok := capture(pid, name, n.Args)
		c.command = sv.command(pid)
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		if ok {
			select {
			case sv.checks <- c:
			default: // a flood of writes: let them go unexamined
			}
		}
		return
	}
	v := refusal(pid, name, n.Args)
	// Answer before anything slow: the process waits.
	resp.Error = -int32(unix.EPERM)
	// The pid was read from /proc before the answer: it is still the
	// notifying process only if the notification is still pending.
	valid := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.ID)) == nil
	_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	if !valid {
		v.Command, v.Args = "", nil
	}
	sv.rec.add(v)
}

// checkMade checks, once the supervisor is closed, the files the guard
// let the run make unseen (checkMade).
func (sv *supervisor) checkMade(id string) []string {
	if sv == nil || sv.guard == nil {
		return nil
	}
	return checkMade(sv.guard.g, sv.guard.made, id)
}

func (sv *supervisor) close() {
	if sv == nil {
		return
	}
	// Wake the server; a notification still pending then fails with
	// ENOSYS when the listener closes, but nothing is left to make one.
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(sv.stop, one[:])
	sv.child.Close()
	select {
	case <-sv.done:
	case <-time.After(2 * time.Second):
	}
	sv.sock.Close()
	unix.Close(sv.stop)
}

// drop lets go of the sandbox's root and mount namespace, after close.
// The last hold on a namespace whose processes are gone frees every mount
// in it (some 0.2 ms for a sandbox's ~95): the sandbox's release does
// it, after its report.
func (sv *supervisor) drop() {
	if sv == nil {
		return
	}
	for _, fd := range []int{sv.root, sv.mntns} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	sv.root, sv.mntns = -1, -1
}

// command is pid's command line, read the first time pid is seen (it may
// be gone by the time its write is looked at).
func (sv *supervisor) command(pid int) string {
	c, ok := sv.commands[pid]
	if !ok {
		c = cmdline(pid)
		if len(sv.commands) > 4096 {
			clear(sv.commands)
		}
		sv.commands[pid] = c
	}
	return c
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return errno
	}
}

// refusal describes a refused system call, with its arguments decoded as
// far as that is safe: numbers as they are, strings read from the
// process's memory (which it may change meanwhile; they are a record, not
// a decision).
func refusal(pid int, name string, args [6]uint64) Violation {
	v := Violation{Kind: KindSyscall, PID: pid, Syscall: name, Command: cmdline(pid)}
	if name == "" {
		v.Syscall = "unknown"
	}
	switch name {
	case "socket":
		v.Kind = KindSocket
		v.Args = []string{family(args[0]), sockType(args[1]), strconv.FormatUint(args[2]&0xffffffff, 10)}
		v.Reason = "unix sockets reach outside the sandbox: the Docker socket, ssh-agent, D-Bus"
		return v
	case "mount":
		v.Args = []string{readString(pid, args[0]), readString(pid, args[1]), readString(pid, args[2]), hexArg(args[3])}
	case "umount", "umount2", "chroot", "open_tree", "fspick":
		if name == "open_tree" || name == "fspick" {
			v.Args = []string{readString(pid, args[1])}
		} else {
			v.Args = []string{readString(pid, args[0])}
		}
	case "pivot_root":
		v.Args = []string{readString(pid, args[0]), readString(pid, args[1])}
	case "unshare":
		v.Args = []string{cloneFlags(args[0])}
	case "setns":
		v.Args = []string{strconv.FormatInt(int64(int32(args[0])), 10), cloneFlags(args[1])}
	case "ptrace":
		v.Args = []string{ptraceRequest(args[0]), strconv.FormatInt(int64(int32(args[1])), 10)}
	case "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise":
		v.Args = []string{strconv.FormatInt(int64(int32(args[0])), 10)}
	case "add_key", "request_key":
		v.Args = []string{readString(pid, args[0]), readString(pid, args[1])}
	case "keyctl", "bpf":
		v.Args = []string{strconv.FormatUint(args[0]&0xffffffff, 10)}
	}
	v.Reason = refusalReason(name)
	return v
}

func refusalReason(name string) string {
	switch name {
	case "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns",
		"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr":
		return "namespaces and mounts are cordon's to set up"
	case "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise":
		return "no process may reach into another's memory"
	case "keyctl", "add_key", "request_key":
		return "the kernel keyrings are not namespaced"
	case "io_uring_setup", "io_uring_enter", "io_uring_register":
		return "io_uring bypasses the system call filter"
	case "name_to_handle_at", "open_by_handle_at":
		return "file handles open files around the sandbox's mounts"
	}
	return "refused in every sandbox"
}

// fileCheck is a file access the kernel was about to decide: the paths as
// the process named them, made absolute from its working directory or
// descriptor, whether the last component's symlink is followed, and
// whether the access writes or creates.
type fileCheck struct {
	pid     int
	command string
	name    string
	paths   []string
	follow  bool
	write   bool
	creates bool
}

// fileArgs are where the file system calls cordon looks at take their
// paths: pairs of (directory descriptor argument or -1, path argument).
var fileArgs = map[string][][2]int{
	"open": {{-1, 0}}, "openat": {{0, 1}}, "openat2": {{0, 1}}, "creat": {{-1, 0}},
	"mkdir": {{-1, 0}}, "mkdirat": {{0, 1}}, "mknod": {{-1, 0}}, "mknodat": {{0, 1}},
	"rmdir": {{-1, 0}}, "unlink": {{-1, 0}}, "unlinkat": {{0, 1}},
	"rename": {{-1, 0}, {-1, 1}}, "renameat": {{0, 1}, {2, 3}}, "renameat2": {{0, 1}, {2, 3}},
	"link": {{-1, 1}}, "linkat": {{2, 3}}, "symlink": {{-1, 1}}, "symlinkat": {{1, 2}},
	"truncate": {{-1, 0}}, "chmod": {{-1, 0}}, "fchmodat": {{0, 1}}, "fchmodat2": {{0, 1}},
	"chown": {{-1, 0}}, "lchown": {{-1, 0}}, "fchownat": {{0, 1}},
	"utime": {{-1, 0}}, "utimes": {{-1, 0}}, "futimesat": {{0, 1}}, "utimensat": {{0, 1}},
	"setxattr": {{-1, 0}}, "lsetxattr": {{-1, 0}}, "removexattr": {{-1, 0}}, "lremovexattr": {{-1, 0}},
	"setxattrat": {{0, 1}}, "removexattrat": {{0, 1}},
}

// open(2) flags that make an open a write (the generic values).
const openWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// capture reads an access's paths (and an open's flags) from the process,
// before it continues.
func capture(pid int, name string, args [6]uint64) (fileCheck, bool) {
	spots, ok := fileArgs[name]
	if !ok {
		return fileCheck{}, false
	}
	c := fileCheck{pid: pid, name: name, write: true}
	switch name {
	case "open", "openat", "openat2", "creat", "truncate", "chmod", "chown", "utime", "utimes",
		"futimesat", "setxattr", "removexattr":
		c.follow = true
	}
	switch name {
	case "open", "openat", "openat2", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
		"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat":
		c.creates = true
	}
	var flags uint64
	switch name {
	case "open":
		flags = args[1]
	case "openat":
		flags = args[2]
	case "openat2":
		flags = readUint64(pid, args[2]) // struct open_how starts with the flags
	case "creat":
		flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
	}
	if _, open := openFlags[name]; open {
		c.write = flags&openWriteFlags != 0
		c.creates = flags&unix.O_CREAT != 0
		if flags&unix.O_NOFOLLOW != 0 {
			c.follow = false
		}
	}
	for _, spot := range spots {
		p := ""
		if args[spot[1]] != 0 {
			p = readString(pid, args[spot[1]])
			if p == "" {
				continue // unreadable, or empty: the call fails on it
			}
		}
		if !path.IsAbs(p) {
			base := "cwd"
			if spot[0] >= 0 && int32(args[spot[0]]) != atFDCWD {
				base = "fd/" + strconv.Itoa(int(int32(args[spot[0]])))
			}
			dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/" + base)
			if err != nil || !path.IsAbs(dir) {
				continue // not a directory in the file system (a pipe, a socket)
			}
			p = path.Join(dir, p)
		}
		c.paths = append(c.paths, path.Clean(p))
	}
	return c, len(c.paths) > 0
}

var openFlags = map[string]bool{"open": true, "openat": true, "openat2": true, "creat": true}

// checkFiles looks at each access once the kernel has decided it: a write
// to a path on a read-only mount was refused (EROFS), and any access to a
// hidden one (EACCES).
func (sv *supervisor) checkFiles() {
	for c := range sv.checks {
		for _, p := range c.paths {
			j := sv.judge(p, c.follow, c.write, c.creates)
			if j.reason == "" {
				continue
			}
			kind := KindWrite
			if !c.write {
				kind = KindRead
			}
			v := Violation{Kind: kind, PID: c.pid, Command: c.command, Syscall: c.name,
				Path: j.path, Reason: j.reason, Hint: j.hint}
			if j.path != p {
				v.Args = []string{p}
			}
			sv.rec.add(v)
		}
	}
}

const hiddenReason = "hidden from the sandbox by denyRead"

// judgement is why the sandbox refused an access to path (the path the
// kernel reached, symlinks resolved), or no reason.
type judgement struct {
	path, reason, hint string
}

// judge says whether the sandbox refuses an access to p, as the sandbox's
// processes see it: a hidden path (a mask of mode 000, or a directory the
// sandbox cannot search) refuses everything, a read-only mount writes.
func (sv *supervisor) judge(p string, follow, write, creates bool) judgement {
	if sv.root < 0 {
		return judgement{}
	}
	// The node the access reaches, or the nearest existing directory
	// above it.
	node, exists := p, true
	fd, err := resolveIn(sv.root, p, follow)
	for errors.Is(err, unix.ENOENT) && node != "/" {
		node, exists = path.Dir(node), false
		fd, err = resolveIn(sv.root, node, true)
	}
	if errors.Is(err, unix.EACCES) {
		// A directory cordon cannot search either: the deepest one that
		// opens is the mask.
		mask := path.Dir(node)
		for mask != "/" {
			if fd, err := resolveIn(sv.root, mask, true); err == nil {
				unix.Close(fd)
				break
			}
			mask = path.Dir(mask)
		}
		return judgement{path: p, reason: hiddenReason, hint: "allow with --allow-read " + mask}
	}
	if err != nil {
		return judgement{}
	}
	defer unix.Close(fd)
	resolved := node
	if link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && path.IsAbs(link) {
		resolved = link
	}
	if !exists {
		resolved = path.Join(resolved, strings.TrimPrefix(p, node+"/"))
	}
	var st unix.Stat_t
	var fs unix.Statfs_t
	if unix.Fstat(fd, &st) != nil || unix.Fstatfs(fd, &fs) != nil {
		return judgement{}
	}
	if st.Mode&0o777 == 0 {
		mask := resolved
		if !exists {
			mask = node
		}
		return judgement{path: resolved, reason: hiddenReason, hint: "allow with --allow-read " + mask}
	}
	if !write || fs.Flags&unix.ST_RDONLY == 0 {
		return judgement{}
	}
	if !exists && (!creates || node != path.Dir(p)) {
		return judgement{} // it failed for a missing file or directory
	}
	if exists && follow {
		// Opening a device, fifo or socket for writing is not a write
		// to the read-only file system.
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFCHR, unix.S_IFBLK, unix.S_IFIFO, unix.S_IFSOCK:
			return judgement{}
		}
	}
	for _, r := range sv.roots {
		if paths.Under(resolved, r) {
			return judgement{path: resolved, reason: "protected: read-only inside the writable roots"}
		}
	}
	dir := path.Dir(resolved)
	if exists && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		dir = resolved
	}
	where := "read-only outside the workspace"
	if sv.workspace == "" {
		where = "read-only outside the writable roots"
	}
	return judgement{path: resolved, reason: where, hint: "allow with --allow-write " + dir}
}

// resolveIn opens p as the process whose root is root sees it: symlinks
// resolved inside that root, magic links not followed.
func resolveIn(root int, p string, follow bool) (int, error) {
	flags := uint64(unix.O_PATH | unix.O_CLOEXEC)
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	rel := strings.TrimPrefix(p, "/")
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
}

// readUint64 reads a native-endian uint64 at addr in pid's memory, 0 when
// it cannot.
func readUint64(pid int, addr uint64) uint64 {
	var v uint64
	local := []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&v))}}
	local[0].SetLen(8)
	if n, err := unix.ProcessVMReadv(pid, local, []unix.RemoteIovec{{Base: uintptr(addr), Len: 8}}, 0); err != nil || n != 8 {
		return 0
	}
	return v
}

// readString reads a NUL-terminated string of at most PATH_MAX bytes at
// addr in pid's memory, "" when it cannot.
func readString(pid int, addr uint64) string {
	const max = 4096
	var out []byte
	buf := make([]byte, 512)
	for len(out) < max && addr != 0 {
		// Never read across a page boundary in one go: the next page may
		// not be mapped.
		n := min(uint64(len(buf)), 4096-addr%4096)
		local := []unix.Iovec{{Base: &buf[0]}}
		local[0].SetLen(int(n))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: int(n)}}
		got, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil || got <= 0 {
			return ""
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...))
		}
		out = append(out, buf[:got]...)
		addr += uint64(got)
	}
	return ""
}

// cmdline is pid's command line, spaces for NULs, cut at 256 bytes.
func cmdline(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	data = bytes.TrimRight(data, "\x00")
	if len(data) > 256 {
		data = data[:256]
	}
	return string(bytes.ReplaceAll(data, []byte{0}, []byte{' '}))
}

func hexArg(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

var families = map[uint64]string{1: "AF_UNIX", 2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK", 17: "AF_PACKET", 38: "AF_ALG", 40: "AF_VSOCK"}

func family(v uint64) string {
	if s, ok := families[v&0xffffffff]; ok {
		return s
	}
	return strconv.FormatUint(v&0xffffffff, 10)
}

func sockType(v uint64) string {
	names := map[uint64]string{1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW", 5: "SOCK_SEQPACKET"}
	s, ok := names[v&0xf]
	if !ok {
		s = strconv.FormatUint(v&0xf, 10)
	}
	if v&unix.SOCK_NONBLOCK != 0 {
		s += "|SOCK_NONBLOCK"
	}
	if v&unix.SOCK_CLOEXEC != 0 {
		s += "|SOCK_CLOEXEC"
	}
	return s
}

var cloneNames = []struct {
	flag uint64
	name string
}{
	{unix.CLONE_NEWUSER, "CLONE_NEWUSER"}, {unix.CLONE_NEWNS, "CLONE_NEWNS"}, {unix.CLONE_NEWPID, "CLONE_NEWPID"},
	{unix.CLONE_NEWNET, "CLONE_NEWNET"}, {unix.CLONE_NEWUTS, "CLONE_NEWUTS"}, {unix.CLONE_NEWIPC, "CLONE_NEWIPC"},
	{unix.CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {unix.CLONE_NEWTIME, "CLONE_NEWTIME"},
}

func cloneFlags(v uint64) string {
	var parts []string
	for _, f := range cloneNames {
		if v&f.flag != 0 {
			parts = append(parts, f.name)
			v &^= f.flag
		}
	}
	if v != 0 || len(parts) == 0 {
		parts = append(parts, hexArg(v))
	}
	return strings.Join(parts, "|")
}

func ptraceRequest(v uint64) string {
	names := map[uint64]string{0: "PTRACE_TRACEME", 16: "PTRACE_ATTACH", 0x4206: "PTRACE_SEIZE", 1: "PTRACE_PEEKTEXT", 2: "PTRACE_PEEKDATA", 4: "PTRACE_POKETEXT", 5: "PTRACE_POKEDATA"}
	if s, ok := names[v&0xffffffff]; ok {
		return s
	}
	return strconv.FormatUint(v&0xffffffff, 10)
}
