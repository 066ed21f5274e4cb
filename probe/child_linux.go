package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Child performs a probe and exits when this process is a probe child
// ("PROGRAM probe-child NAME" with CORDON_PROBE=NAME); otherwise it returns
// at once. Call it first thing in main, after runtime.Init.
func Child() {
	if len(os.Args) < 3 || os.Args[1] != ChildCommand || os.Getenv(childEnv) != os.Args[2] {
		return
	}
	rep := child(os.Args[2], os.Args[3:])
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		os.Exit(2)
	}
	os.Exit(0)
}

// child runs the attempt of one probe inside the child.
func child(name string, args []string) reply {
	switch name {
	case "userns":
		return childUserNS()
	case "mount":
		return childMount()
	case "pid":
		if pid := os.Getpid(); pid != 1 {
			return fail("getpid", fmt.Errorf("pid %d in the new PID namespace, want 1", pid))
		}
	case "ipc", "uts", "net", "cgroupns":
		return childNamespace(name, args)
	case "proc":
		return childProc()
	case "overlay":
		return childOverlay()
	case "seccomp":
		return childSeccomp()
	case "landlock":
		return childLandlock()
	case "wait":
		// The pidfd probe kills this child; until then, wait.
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "cgroup":
		data, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return fail("read /proc/self/cgroup", err)
		}
		own, _ := ownV2Cgroup(parseProcCgroup(string(data)))
		return reply{Feature: Feature{Available: true}, Cgroup: own}
	default:
		return fail("probe child", fmt.Errorf("unknown probe %q", name))
	}
	return ok()
}

func ok() reply { return reply{Feature: Feature{Available: true}} }

func fail(step string, err error) reply { return reply{Feature: failed(step, err)} }

// childUserNS checks that the child is root of its user namespace and can
// use root's capabilities there: AppArmor's restriction on Ubuntu lets the
// namespace be made and then denies every capability in it.
func childUserNS() reply {
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 || gid != 0 {
		return fail("uid_map", fmt.Errorf("uid %d gid %d in the user namespace, want 0 0", uid, gid))
	}
	// Namespaces belong to the thread that unshares them.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWUTS); err != nil {
		return fail("unshare", err)
	}
	if err := unix.Sethostname([]byte("cordon-probe")); err != nil {
		return fail("sethostname", err)
	}
	return ok()
}

// private makes every mount private, so that nothing the child mounts
// propagates to the caller's namespace.
func private() error {
	return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
}

// scratch mounts a small tmpfs in the child's mount namespace and returns
// where.
func scratch() (string, reply, bool) {
	if err := private(); err != nil {
		return "", fail("make / private", err), false
	}
	dir := "/tmp"
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = "/dev"
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return "", fail("mount tmpfs", err), false
	}
	return dir, reply{}, true
}

// childMount mounts a tmpfs, binds a tree of mounts recursively and makes
// the bind read-only recursively (mount_setattr), as cordon's "rro" binds
// of the host are made.
func childMount() reply {
	dir, rep, good := scratch()
	if !good {
		return rep
	}
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	for _, d := range []string{src, dst} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fail("mkdir", err)
		}
	}
	if err := unix.Mount("tmpfs", src, "tmpfs", 0, "size=1m"); err != nil {
		return fail("mount tmpfs", err)
	}
	sub := filepath.Join(src, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return fail("mkdir", err)
	}
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=1m"); err != nil {
		return fail("mount tmpfs", err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fail("bind", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr); err != nil {
		return fail("mount_setattr", err)
	}
	if err := os.Mkdir(filepath.Join(dst, "sub", "x"), 0o755); !errors.Is(err, unix.EROFS) {
		return fail("recursive read-only bind", fmt.Errorf("mkdir under the read-only bind: %v, want EROFS", err))
	}
	if err := os.Mkdir(filepath.Join(sub, "x"), 0o755); err != nil {
		return fail("mkdir", err)
	}
	return ok()
}

// childNamespace checks that the namespace is new (its inode differs from
// the parent's, passed in args) and uses it.
func childNamespace(name string, args []string) reply {
	ns := map[string]string{"ipc": "ipc", "uts": "uts", "net": "net", "cgroupns": "cgroup"}[name]
	if len(args) == 1 {
		parent, _ := strconv.ParseUint(args[0], 10, 64)
		if own := nsInode(ns); parent != 0 && own == parent {
			return fail("new namespace", fmt.Errorf("/proc/self/ns/%s is the caller's", ns))
		}
	}
	switch name {
	case "uts":
		if err := unix.Sethostname([]byte("cordon-probe")); err != nil {
			return fail("sethostname", err)
		}
	case "net":
		return childNet()
	case "cgroupns":
		data, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return fail("read /proc/self/cgroup", err)
		}
		for _, c := range parseProcCgroup(string(data)) {
			if c.Path != "/" {
				return fail("cgroup namespace root", fmt.Errorf("/proc/self/cgroup shows %s, want /", c.Path))
			}
		}
	}
	return ok()
}

// childNet brings loopback up, as a sandbox needs it, and checks that it
// is the only interface.
func childNet() reply {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail("socket", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fail("ifreq", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fail("get lo flags", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fail("bring lo up", err)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return fail("list interfaces", err)
	}
	for _, i := range ifaces {
		if i.Name != "lo" {
			return fail("list interfaces", fmt.Errorf("the new network namespace has %s", i.Name))
		}
	}
	return ok()
}

// childProc mounts a fresh procfs as PID 1 of new user, pid and mount
// namespaces, and checks that it shows the new PID namespace.
func childProc() reply {
	if err := private(); err != nil {
		return fail("make / private", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fail("mount proc", err)
	}
	if self, err := os.Readlink("/proc/self"); err != nil || self != "1" {
		return fail("fresh /proc", fmt.Errorf("/proc/self is %q (%v), want 1", self, err))
	}
	return ok()
}

// childOverlay mounts an overlay on a tmpfs and writes through it.
func childOverlay() reply {
	dir, rep, good := scratch()
	if !good {
		return rep
	}
	var d [4]string
	for i, n := range []string{"lower", "upper", "work", "merged"} {
		d[i] = filepath.Join(dir, n)
		if err := os.Mkdir(d[i], 0o755); err != nil {
			return fail("mkdir", err)
		}
	}
	if err := os.WriteFile(filepath.Join(d[0], "f"), []byte("lower"), 0o644); err != nil {
		return fail("write", err)
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", d[0], d[1], d[2])
	if err := unix.Mount("overlay", d[3], "overlay", 0, opts); err != nil {
		// Kernels that refuse trusted.* extended attributes to a user
		// namespace need user.* ones.
		if err2 := unix.Mount("overlay", d[3], "overlay", 0, opts+",userxattr"); err2 != nil {
			return fail("mount overlay", err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(d[3], "f")); err != nil || string(data) != "lower" {
		return fail("read through overlay", fmt.Errorf("%q, %v", data, err))
	}
	if err := os.WriteFile(filepath.Join(d[3], "g"), []byte("upper"), 0o644); err != nil {
		return fail("write through overlay", err)
	}
	return ok()
}

// seccompActions are the filter return actions by their OCI names.
var seccompActions = []struct {
	name string
	ret  uint32
}{
	{"SCMP_ACT_KILL_PROCESS", unix.SECCOMP_RET_KILL_PROCESS},
	{"SCMP_ACT_KILL_THREAD", unix.SECCOMP_RET_KILL_THREAD},
	{"SCMP_ACT_TRAP", unix.SECCOMP_RET_TRAP},
	{"SCMP_ACT_ERRNO", unix.SECCOMP_RET_ERRNO},
	{"SCMP_ACT_NOTIFY", unix.SECCOMP_RET_USER_NOTIF},
	{"SCMP_ACT_TRACE", unix.SECCOMP_RET_TRACE},
	{"SCMP_ACT_LOG", unix.SECCOMP_RET_LOG},
	{"SCMP_ACT_ALLOW", unix.SECCOMP_RET_ALLOW},
}

// seccompFlags are the filter flags tried with an allow-all filter.
var seccompFlags = []struct {
	name string
	flag uintptr
}{
	{"SECCOMP_FILTER_FLAG_TSYNC", unix.SECCOMP_FILTER_FLAG_TSYNC},
	{"SECCOMP_FILTER_FLAG_LOG", unix.SECCOMP_FILTER_FLAG_LOG},
	{"SECCOMP_FILTER_FLAG_SPEC_ALLOW", unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW},
}

func seccompSyscall(op, flags uintptr, arg unsafe.Pointer) (uintptr, error) {
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, op, flags, uintptr(arg))
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

func installFilter(flags uintptr, prog []unix.SockFilter) (uintptr, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, err := seccompSyscall(unix.SECCOMP_SET_MODE_FILTER, flags, unsafe.Pointer(&fprog))
	runtime.KeepAlive(prog)
	return r, err
}

var allowAll = []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}

// childSeccomp installs filters as cordon's init does (with
// no_new_privs), lists the actions and flags the kernel supports, and has
// a system call stopped by a filter and answered by a supervisor thread.
func childSeccomp() reply {
	// Filters belong to the thread that installs them.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs", err)
	}
	rep := ok()
	rep.Actions = []string{}
	for _, a := range seccompActions {
		ret := a.ret
		if _, err := seccompSyscall(unix.SECCOMP_GET_ACTION_AVAIL, 0, unsafe.Pointer(&ret)); err == nil {
			rep.Actions = append(rep.Actions, a.name)
		}
	}
	if _, err := installFilter(0, allowAll); err != nil {
		return fail("seccomp", err)
	}
	rep.Flags = []string{}
	for _, f := range seccompFlags {
		if _, err := installFilter(f.flag, allowAll); err == nil {
			rep.Flags = append(rep.Flags, f.name)
		}
	}
	notify, killable := userNotify()
	rep.Notify = &notify
	if notify.Available {
		rep.Flags = append(rep.Flags, "SECCOMP_FILTER_FLAG_NEW_LISTENER")
		if killable {
			rep.Flags = append(rep.Flags, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")
		}
	}
	return rep
}

// seccompNotif and seccompNotifResp are struct seccomp_notif and struct
// seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  struct {
		Nr                 int32
		Arch               uint32
		InstructionPointer uint64
		Args               [6]uint64
	}
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// notifyAnswer is what the supervisor answers the stopped system call.
const notifyAnswer = 4242

// userNotify installs a filter that sends getppid, which the Go runtime
// never calls, to a listener; a supervisor goroutine answers it. It runs
// on the locked thread of childSeccomp.
func userNotify() (Feature, bool) {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_GETPPID, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	killable := true
	fd, err := installFilter(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, prog)
	if errors.Is(err, unix.EINVAL) {
		killable = false
		fd, err = installFilter(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, prog)
	}
	if err != nil {
		return failed("seccomp new listener", err), false
	}
	supervised := make(chan error, 1)
	go func() {
		var n seccompNotif
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); errno != 0 {
			// Closing the listener fails the stopped call with ENOSYS.
			unix.Close(int(fd))
			supervised <- fmt.Errorf("SECCOMP_IOCTL_NOTIF_RECV: %w", errno)
			return
		}
		resp := seccompNotifResp{ID: n.ID, Val: notifyAnswer}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp))); errno != 0 {
			unix.Close(int(fd))
			supervised <- fmt.Errorf("SECCOMP_IOCTL_NOTIF_SEND: %w", errno)
			return
		}
		supervised <- nil
	}()
	// Syscall, not RawSyscall: the supervisor needs a P while this thread
	// waits.
	got, _, errno := unix.Syscall(unix.SYS_GETPPID, 0, 0, 0)
	if err := <-supervised; err != nil {
		return failed("supervise", err), false
	}
	if errno != 0 || got != notifyAnswer {
		return Feature{Step: "supervise", Error: fmt.Sprintf("getppid returned %d (%v), want the supervisor's %d", got, errno, notifyAnswer)}, false
	}
	return Feature{Available: true}, killable
}

// childLandlock reads the ABI version, then enforces a ruleset that
// allows reading files only under /proc and checks both sides of it.
func childLandlock() reply {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return fail("landlock_create_ruleset", errno)
	}
	rep := ok()
	rep.ABI = int(abi)
	// Rulesets belong to the thread that enforces them.
	runtime.LockOSThread()
	// Only handled_access_fs, which every ABI knows: the kernel accepts a
	// prefix of the struct.
	attr := unix.LandlockRulesetAttr{Handled_access_fs: unix.LANDLOCK_ACCESS_FS_READ_FILE}
	ruleset, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Handled_access_fs), 0)
	if errno != 0 {
		return fail("landlock_create_ruleset", errno)
	}
	proc, err := unix.Open("/proc", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open /proc", err)
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: unix.LANDLOCK_ACCESS_FS_READ_FILE, Parent_fd: int32(proc)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, ruleset, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fail("landlock_add_rule", errno)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0, 0); errno != 0 {
		return fail("landlock_restrict_self", errno)
	}
	if _, err := os.ReadFile("/proc/self/status"); err != nil {
		return fail("read an allowed file", err)
	}
	// The program's own binary, through the magic link: a file that exists
	// even when the binary was replaced, and is not under /proc.
	f, err := os.Open("/proc/self/exe")
	if err == nil {
		f.Close()
		return fail("read a denied file", errors.New("the program's binary opened under a ruleset that denies it"))
	}
	if !errors.Is(err, syscall.EACCES) {
		return fail("read a denied file", fmt.Errorf("%v, want EACCES", err))
	}
	return rep
}
