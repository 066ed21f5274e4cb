//go:build linux && cgo

package seccomp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The kernel tests re-execute the test binary. The child loads the
// profile into its own kernel filter (with no_new_privs, as libcontainer
// does; no privilege needed), makes one system call and prints its errno.
// These variables carry the request.
const (
	envCall       = "CORDON_SECCOMP_TEST_CALL"       // system call to make; set only in the child
	envSocketpair = "CORDON_SECCOMP_TEST_SOCKETPAIR" // "1": Options.AllowSocketpair
	envMarker     = "CORDON_SECCOMP_TEST_MARKER"     // errno to refuse with instead of EPERM
	envNoFilter   = "CORDON_SECCOMP_TEST_NOFILTER"   // "1": load no filter (control runs)
	envExec       = "CORDON_SECCOMP_TEST_EXEC"       // program for the "exec" call
	envLoader     = "CORDON_SECCOMP_TEST_LOADER"     // a key of loaders; empty means "libseccomp"
	envNotify     = "CORDON_SECCOMP_TEST_NOTIFY"     // "refusals", "writes", "reads" or "guard": the Notify options
)

// loaders install a profile into the calling thread (at least) of the
// child. Test files built with more tags add their own.
var loaders = map[string]func(p *specs.LinuxSeccomp) error{
	// libseccomp's own loader, for every thread
	"libseccomp": func(p *specs.LinuxSeccomp) error {
		f, err := compile(p)
		if err != nil {
			return err
		}
		defer f.Release()
		if err := setNoNewPrivs(); err != nil {
			return err
		}
		if err := f.Load(); err != nil {
			return fmt.Errorf("load filter: %w", err)
		}
		return nil
	},
	// Compile's program, installed as cordon's init does: seccomp(2) in
	// the calling thread
	"compile": func(p *specs.LinuxSeccomp) error {
		prog, err := Compile(p)
		if err != nil {
			return err
		}
		if err := setNoNewPrivs(); err != nil {
			return err
		}
		return loadProgram(prog)
	},
}

// setNoNewPrivs sets what lets an unprivileged process install a filter.
func setNoNewPrivs() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// loadProgram installs prog into the calling thread.
func loadProgram(prog Program) error {
	if len(prog.Filter) == 0 || len(prog.Filter)%8 != 0 {
		return fmt.Errorf("program of %d bytes", len(prog.Filter))
	}
	fprog := unix.SockFprog{
		Len:    uint16(len(prog.Filter) / 8),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&prog.Filter[0])),
	}
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(prog.Flags), uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog.Filter)
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, %#x): %w", prog.Flags, e)
	}
	return nil
}

// marker replaces EPERM as the default errno in runs that check a
// refusal came from the filter: as an unprivileged user the kernel itself
// answers EPERM to mount or ptrace, which would hide a filter that fails
// open. Only the errno differs; the rules are the same.
const marker = unix.ENOTRECOVERABLE

func TestMain(m *testing.M) {
	if call := os.Getenv(envCall); call != "" {
		os.Exit(child(call))
	}
	os.Exit(m.Run())
}

// child runs in the re-executed test binary: fixtures first, then the
// filter, then the call. It prints "errno=N" (0 for success).
func child(call string) int {
	fn, ok := calls[call]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown call %q\n", call)
		return 2
	}
	// Compile's program goes into one thread, as in cordon's init: the
	// call must be made from it
	runtime.LockOSThread()
	fx, err := newFixtures()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if os.Getenv(envNoFilter) != "1" {
		if err := loadProfile(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	err = fn(fx)
	var errno unix.Errno
	switch {
	case err == nil:
	case errors.As(err, &errno):
	default:
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("errno=%d\n", int(errno))
	return 0
}

// loadProfile installs the profile for this machine into the calling
// thread, with the loader envLoader names.
func loadProfile() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	notify := os.Getenv(envNotify)
	p, err := Profile(Options{
		Arch:            runtime.GOARCH,
		KernelVersion:   unix.ByteSliceToString(u.Release[:]),
		AllowSocketpair: os.Getenv(envSocketpair) == "1",
		Notify:          notify != "",
		NotifyWrites:    notify == "writes",
		NotifyReads:     notify == "reads",
		Guard:           notify == "guard",
	})
	if err != nil {
		return err
	}
	if m := os.Getenv(envMarker); m != "" {
		n, err := strconv.ParseUint(m, 10, 16)
		if err != nil {
			return err
		}
		p.DefaultErrnoRet = new(uint(n))
	}
	name := os.Getenv(envLoader)
	if name == "" {
		name = "libseccomp"
	}
	load, ok := loaders[name]
	if !ok {
		return fmt.Errorf("unknown loader %q", name)
	}
	return load(p)
}

// fixtures are opened before the filter is loaded, so that a failure to
// set them up is never mistaken for a refusal.
type fixtures struct {
	tty     int // the terminal side of a pseudo-terminal
	pipeR   int // a pipe holding one byte
	pipeW   int
	nowhere string // a path that does not exist
}

func newFixtures() (*fixtures, error) {
	ptmx, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(ptmx, unix.TIOCSPTLCK, 0); err != nil {
		return nil, fmt.Errorf("unlock pty: %w", err)
	}
	tty, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(ptmx), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if e != 0 {
		return nil, fmt.Errorf("open pty peer: %w", e)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	if _, err := unix.Write(p[1], []byte{'x'}); err != nil {
		return nil, err
	}
	return &fixtures{tty: int(tty), pipeR: p[0], pipeW: p[1], nowhere: "/nonexistent/cordon-seccomp-test"}, nil
}

// sys makes a raw system call and returns its errno; a file descriptor
// it returns is closed.
func sys(closeFD bool, trap uintptr, args ...uintptr) error {
	var a [6]uintptr
	copy(a[:], args)
	r, _, e := unix.Syscall6(trap, a[0], a[1], a[2], a[3], a[4], a[5])
	if e != 0 {
		return e
	}
	if closeFD {
		unix.Close(int(r))
	}
	return nil
}

// keep holds what system call arguments point to. An address passed as
// a uintptr does not keep its object alive, and a stack object may move
// when the stack grows; kept here, objects live on the heap, which does
// not move, for the short life of the child.
var keep []any

// addr returns v's address as a system call argument.
func addr[T any](v *T) uintptr {
	keep = append(keep, v)
	return uintptr(unsafe.Pointer(v))
}

// cstr returns a NUL-terminated copy of s as a system call argument.
func cstr(s string) uintptr {
	p, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err)
	}
	return addr(p)
}

// forkRaw is fork through clone(2) with flags. The child exits at once
// through exit_group, running no Go code that could touch the runtime's
// state; the parent reaps it, so a clone that should have been refused
// leaves no stray process.
//
//go:nosplit
//go:norace
func forkRaw(flags uintptr) (uintptr, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_CLONE, flags, 0, 0, 0, 0, 0)
	if e == 0 && r == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	return r, e
}

// cloneArgs is struct clone_args (linux/sched.h), version 2.
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
}

// clone3Raw is forkRaw through clone3(2); args is the address of a
// cloneArgs.
//
//go:nosplit
//go:norace
func clone3Raw(args uintptr) (uintptr, unix.Errno) {
	r, _, e := unix.RawSyscall(unix.SYS_CLONE3, args, unsafe.Sizeof(cloneArgs{}), 0)
	if e == 0 && r == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	return r, e
}

// reap waits for a child forkRaw or clone3Raw created.
func reap(pid uintptr, e unix.Errno) error {
	if e != 0 {
		return e
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(int(pid), &ws, unix.WALL, nil); err != nil {
		return fmt.Errorf("wait for clone child: %w", err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("clone child ended with status %#x", ws)
	}
	return nil
}

func socket(domain uint64, typ int) error {
	return sys(true, unix.SYS_SOCKET, uintptr(domain), uintptr(typ|unix.SOCK_CLOEXEC), 0)
}

func socketpair(domain uint64) error {
	return socketpairOf(domain, unix.SOCK_STREAM)
}

func socketpairOf(domain uint64, typ int) error {
	var fds [2]int32
	err := sys(false, unix.SYS_SOCKETPAIR, uintptr(domain), uintptr(typ|unix.SOCK_CLOEXEC), 0, addr(&fds))
	if err == nil {
		unix.Close(int(fds[0]))
		unix.Close(int(fds[1]))
	}
	return err
}

func ioctl(fd int, request uint64) error {
	var buf [64]byte // large enough for any request used here
	return sys(false, unix.SYS_IOCTL, uintptr(fd), uintptr(request), addr(&buf))
}

// atFDCWD is AT_FDCWD (-100) as a system call argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

const (
	afAlg      = 38
	afPacket   = 17
	high       = 1 << 32 // set in the ignored upper half of an int argument
	tiocgwinsz = 0x5413
)

// calls are what a child can be asked to do. Arguments are chosen so
// that a call the filter lets through fails harmlessly or does nothing
// lasting, even as root.
var calls = map[string]func(fx *fixtures) error{
	"getpid": func(*fixtures) error { return sys(false, unix.SYS_GETPID) },
	"openat": func(*fixtures) error {
		return sys(true, unix.SYS_OPENAT, atFDCWD, cstr("/proc/self/status"), unix.O_RDONLY|unix.O_CLOEXEC)
	},
	"read": func(fx *fixtures) error {
		var b [1]byte
		return sys(false, unix.SYS_READ, uintptr(fx.pipeR), addr(&b), 1)
	},
	"write": func(fx *fixtures) error {
		b := []byte{'y'}
		return sys(false, unix.SYS_WRITE, uintptr(fx.pipeW), addr(&b[0]), 1)
	},
	"fork":          func(*fixtures) error { return reap(forkRaw(uintptr(unix.SIGCHLD))) },
	"clone-newuser": func(*fixtures) error { return reap(forkRaw(unix.CLONE_NEWUSER | uintptr(unix.SIGCHLD))) },
	"clone-newns":   func(*fixtures) error { return reap(forkRaw(unix.CLONE_NEWNS | uintptr(unix.SIGCHLD))) },
	"clone-newnet-high": func(*fixtures) error {
		return reap(forkRaw(unix.CLONE_NEWNET | uintptr(unix.SIGCHLD) | high))
	},
	"clone3": func(*fixtures) error { return reap(clone3Raw(addr(&cloneArgs{exitSignal: uint64(unix.SIGCHLD)}))) },
	"exec": func(*fixtures) error {
		// os/exec: Go's own fork (clone with CLONE_VFORK|CLONE_VM, pidfd)
		return exec.Command(os.Getenv(envExec)).Run()
	},
	"execve": func(*fixtures) error {
		// become the program, which inherits the filter
		path := os.Getenv(envExec)
		return syscall.Exec(path, []string{path}, os.Environ())
	},

	"socket-unix":       func(*fixtures) error { return socket(unix.AF_UNIX, unix.SOCK_STREAM) },
	"socket-unix-high":  func(*fixtures) error { return socket(high|unix.AF_UNIX, unix.SOCK_STREAM) },
	"socket-vsock":      func(*fixtures) error { return socket(afVsock, unix.SOCK_STREAM) },
	"socket-vsock-high": func(*fixtures) error { return socket(high|afVsock, unix.SOCK_STREAM) },
	"socket-alg":        func(*fixtures) error { return socket(afAlg, unix.SOCK_SEQPACKET) },
	"socket-packet":     func(*fixtures) error { return socket(afPacket, unix.SOCK_RAW) },
	"socket-inet":       func(*fixtures) error { return socket(unix.AF_INET, unix.SOCK_STREAM) },
	"socket-inet-high":  func(*fixtures) error { return socket(high|unix.AF_INET, unix.SOCK_DGRAM) },
	"socket-inet6":      func(*fixtures) error { return socket(unix.AF_INET6, unix.SOCK_STREAM) },
	"socket-netlink": func(*fixtures) error {
		return sys(true, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	},
	"socketpair-unix":           func(*fixtures) error { return socketpair(unix.AF_UNIX) },
	"socketpair-unix-high":      func(*fixtures) error { return socketpair(high | unix.AF_UNIX) },
	"socketpair-inet":           func(*fixtures) error { return socketpair(unix.AF_INET) },
	"socketpair-unix-seqpacket": func(*fixtures) error { return socketpairOf(unix.AF_UNIX, unix.SOCK_SEQPACKET) },
	"socketpair-unix-dgram":     func(*fixtures) error { return socketpairOf(unix.AF_UNIX, unix.SOCK_DGRAM) },

	"ioctl-tiocsti":         func(fx *fixtures) error { return ioctl(fx.tty, tiocsti) },
	"ioctl-tiocsti-high":    func(fx *fixtures) error { return ioctl(fx.tty, high|tiocsti) },
	"ioctl-tioclinux":       func(fx *fixtures) error { return ioctl(fx.tty, tioclinux) },
	"ioctl-tiocgwinsz":      func(fx *fixtures) error { return ioctl(fx.tty, tiocgwinsz) },
	"ioctl-tiocgwinsz-high": func(fx *fixtures) error { return ioctl(fx.tty, high|tiocgwinsz) },
	"ioctl-fionread":        func(fx *fixtures) error { return ioctl(fx.pipeR, unix.TIOCINQ) }, // FIONREAD

	"ptrace": func(*fixtures) error {
		return sys(false, unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, 0x7fffffff, 0, 0)
	},
	"process_vm_readv": func(*fixtures) error {
		return sys(false, unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)
	},
	"process_vm_writev": func(*fixtures) error {
		return sys(false, unix.SYS_PROCESS_VM_WRITEV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)
	},
	"kcmp": func(*fixtures) error {
		return sys(false, unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(os.Getpid()), 0 /* KCMP_FILE */, 0, 0)
	},
	"pidfd_getfd":     func(*fixtures) error { return sys(true, unix.SYS_PIDFD_GETFD, ^uintptr(0), 0, 0) },
	"unshare-newuser": func(*fixtures) error { return sys(false, unix.SYS_UNSHARE, unix.CLONE_NEWUSER) },
	"unshare-newns":   func(*fixtures) error { return sys(false, unix.SYS_UNSHARE, unix.CLONE_NEWNS) },
	"setns":           func(*fixtures) error { return sys(false, unix.SYS_SETNS, ^uintptr(0), 0) },
	"io_uring_setup": func(*fixtures) error {
		var params [120]byte
		return sys(true, unix.SYS_IO_URING_SETUP, 1, addr(&params))
	},
	"bpf":             func(*fixtures) error { return sys(true, unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, 0, 0) },
	"perf_event_open": func(*fixtures) error { return sys(true, unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0) },
	"userfaultfd":     func(*fixtures) error { return sys(true, unix.SYS_USERFAULTFD, unix.O_CLOEXEC) },
	"keyctl": func(*fixtures) error {
		return sys(false, unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(unix.KEY_SPEC_SESSION_KEYRING&0xffffffff), 0)
	},
	"add_key":         func(*fixtures) error { return sys(false, unix.SYS_ADD_KEY, 0, 0, 0, 0, 0) },
	"request_key":     func(*fixtures) error { return sys(false, unix.SYS_REQUEST_KEY, 0, 0, 0, 0) },
	"kexec_load":      func(*fixtures) error { return sys(false, unix.SYS_KEXEC_LOAD, 0, 0, 0, 0) },
	"kexec_file_load": func(*fixtures) error { return sys(false, unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 0, 0, 0) },
	"mount": func(fx *fixtures) error {
		return sys(false, unix.SYS_MOUNT, cstr("none"), cstr(fx.nowhere), cstr("tmpfs"), 0, 0)
	},
	"umount2":    func(fx *fixtures) error { return sys(false, unix.SYS_UMOUNT2, cstr(fx.nowhere), 0) },
	"pivot_root": func(fx *fixtures) error { return sys(false, unix.SYS_PIVOT_ROOT, cstr(fx.nowhere), cstr(fx.nowhere)) },
	"chroot":     func(fx *fixtures) error { return sys(false, unix.SYS_CHROOT, cstr(fx.nowhere)) },
	"fsopen":     func(*fixtures) error { return sys(true, unix.SYS_FSOPEN, cstr("tmpfs"), unix.FSOPEN_CLOEXEC) },
	"fsconfig":   func(*fixtures) error { return sys(false, unix.SYS_FSCONFIG, ^uintptr(0), 0, 0, 0, 0) },
	"fsmount":    func(*fixtures) error { return sys(true, unix.SYS_FSMOUNT, ^uintptr(0), 0, 0) },
	"fspick": func(fx *fixtures) error {
		return sys(true, unix.SYS_FSPICK, atFDCWD, cstr(fx.nowhere), unix.FSPICK_CLOEXEC)
	},
	"move_mount": func(*fixtures) error {
		return sys(false, unix.SYS_MOVE_MOUNT, ^uintptr(0), cstr(""), ^uintptr(0), cstr(""), 0)
	},
	"open_tree": func(fx *fixtures) error {
		return sys(true, unix.SYS_OPEN_TREE, atFDCWD, cstr(fx.nowhere), unix.OPEN_TREE_CLOEXEC)
	},
	"open_tree_attr": func(fx *fixtures) error {
		return sys(true, unix.SYS_OPEN_TREE_ATTR, atFDCWD, cstr(fx.nowhere), unix.OPEN_TREE_CLOEXEC, 0, 0)
	},
	"mount_setattr": func(*fixtures) error { return sys(false, unix.SYS_MOUNT_SETATTR, ^uintptr(0), cstr(""), 0, 0, 0) },
	"name_to_handle_at": func(*fixtures) error {
		var handle [16]byte // struct file_handle with handle_bytes 0
		var mountID int32
		return sys(false, unix.SYS_NAME_TO_HANDLE_AT, atFDCWD, cstr("/"),
			addr(&handle), addr(&mountID), 0)
	},
	"open_by_handle_at": func(*fixtures) error {
		return sys(true, unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(0), 0, 0)
	},
	// numbers no kernel has yet, in the native ABI and with the x32 bit
	"nr-1000":     func(*fixtures) error { return sys(false, 1000) },
	"nr-x32-1000": func(*fixtures) error { return sys(false, x32Bit|1000) },
}

// childTimeout bounds a child's life: a filter that kills a thread
// (SECCOMP_RET_KILL_THREAD) of a Go program leaves the rest of it waiting
// forever.
const childTimeout = 10 * time.Second

// childCommand re-executes the test binary for one call; the child is
// killed after childTimeout.
func childCommand(t *testing.T, call string, env ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	// a -race child would sleep a second on exit
	race := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), envCall+"="+call, "GORACE="+race)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// runChild runs one call in a child and returns its errno.
func runChild(t *testing.T, call string, env ...string) unix.Errno {
	t.Helper()
	cmd := childCommand(t, call, env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("child %s %v: %v\n%s%s", call, env, err, out, stderr)
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "errno=")
	n, err := strconv.Atoi(s)
	if !ok || err != nil {
		t.Fatalf("child %s: unexpected output %q", call, out)
	}
	return unix.Errno(n)
}

func errnoName(e unix.Errno) string {
	if e == 0 {
		return "success"
	}
	return fmt.Sprintf("%s (%d, %v)", unix.ErrnoName(e), int(e), e)
}

func TestKernel(t *testing.T) {
	if _, ok := platforms[runtime.GOARCH]; !ok {
		t.Skipf("no cordon profile for GOARCH %s", runtime.GOARCH)
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	const none unix.Errno = 0
	tests := []struct {
		call       string
		socketpair bool
		want       unix.Errno
		// unfiltered, when set, is what the call gives without the filter:
		// proof that the filter, not the kernel, makes the difference. Only
		// where no outer filter (a container's) could interfere.
		unfiltered *unix.Errno
		// compiled, when set, is what the call gives under Compile's
		// program instead of want: its ENOSYS stub answers system calls
		// numbered above the profile's largest
		compiled *unix.Errno
	}{
		{call: "getpid", want: none},
		{call: "openat", want: none},
		{call: "read", want: none},
		{call: "write", want: none},
		{call: "fork", want: none},
		{call: "exec", want: none},

		{call: "socket-unix", want: unix.EPERM},
		// the kernel reads the family as an int: this is AF_UNIX
		{call: "socket-unix-high", want: unix.EPERM, unfiltered: new(none)},
		{call: "socket-vsock", want: unix.EPERM},
		{call: "socket-vsock-high", want: unix.EPERM},
		{call: "socket-alg", want: unix.EPERM},
		{call: "socket-packet", want: unix.EPERM},
		{call: "socket-inet", want: none},
		{call: "socket-inet-high", want: none},
		{call: "socket-inet6", want: none},
		{call: "socket-netlink", want: none},
		{call: "socketpair-unix", want: unix.EPERM, unfiltered: new(none)},
		{call: "socketpair-unix-high", want: unix.EPERM},
		{call: "socketpair-unix", socketpair: true, want: none},
		{call: "socketpair-unix-high", socketpair: true, want: none},
		{call: "socketpair-unix-seqpacket", socketpair: true, want: none},
		{call: "socketpair-unix-dgram", want: unix.EPERM, unfiltered: new(none)},
		// a datagram pair sends to any unix socket by path
		{call: "socketpair-unix-dgram", socketpair: true, want: unix.EPERM, unfiltered: new(none)},
		// allowed by the filter, refused by the kernel
		{call: "socketpair-inet", want: unix.EOPNOTSUPP},

		{call: "ioctl-tiocsti", want: unix.EPERM},
		{call: "ioctl-tiocsti-high", want: unix.EPERM},
		{call: "ioctl-tioclinux", want: unix.EPERM},
		{call: "ioctl-tiocgwinsz", want: none},
		{call: "ioctl-tiocgwinsz-high", want: none},
		{call: "ioctl-fionread", want: none},

		{call: "clone-newuser", want: unix.EPERM},
		{call: "clone-newns", want: unix.EPERM},
		{call: "clone-newnet-high", want: unix.EPERM},
		// so that glibc falls back to clone, whose flags the filter sees
		{call: "clone3", want: unix.ENOSYS},

		{call: "ptrace", want: unix.EPERM},
		{call: "process_vm_readv", want: unix.EPERM},
		{call: "process_vm_writev", want: unix.EPERM},
		{call: "kcmp", want: unix.EPERM},
		{call: "pidfd_getfd", want: unix.EPERM},
		{call: "unshare-newuser", want: unix.EPERM},
		{call: "unshare-newns", want: unix.EPERM},
		{call: "setns", want: unix.EPERM},
		{call: "io_uring_setup", want: unix.EPERM},
		{call: "bpf", want: unix.EPERM},
		{call: "perf_event_open", want: unix.EPERM},
		{call: "userfaultfd", want: unix.EPERM},
		{call: "keyctl", want: unix.EPERM},
		{call: "add_key", want: unix.EPERM},
		{call: "request_key", want: unix.EPERM},
		{call: "kexec_load", want: unix.EPERM},
		{call: "kexec_file_load", want: unix.EPERM},
		{call: "mount", want: unix.EPERM},
		{call: "umount2", want: unix.EPERM},
		{call: "pivot_root", want: unix.EPERM},
		{call: "chroot", want: unix.EPERM},
		{call: "fsopen", want: unix.EPERM},
		{call: "fsconfig", want: unix.EPERM},
		{call: "fsmount", want: unix.EPERM},
		{call: "fspick", want: unix.EPERM},
		{call: "move_mount", want: unix.EPERM},
		{call: "open_tree", want: unix.EPERM},
		// unknown to libseccomp 2.5.4, so refused by the default action;
		// Compile's stub, like runc's, answers ENOSYS: its number (467)
		// is above the profile's largest (futex_requeue, 456, with
		// libseccomp 2.5.4)
		{call: "open_tree_attr", want: unix.EPERM, compiled: new(unix.ENOSYS)},
		{call: "mount_setattr", want: unix.EPERM},
		{call: "name_to_handle_at", want: unix.EPERM},
		{call: "open_by_handle_at", want: unix.EPERM},

		// numbers past every system call table: refused by libseccomp's
		// program, ENOSYS (as from a kernel without them) under Compile's
		{call: "nr-1000", want: unix.EPERM, unfiltered: new(unix.ENOSYS), compiled: new(unix.ENOSYS)},
		{call: "nr-x32-1000", want: unix.EPERM, unfiltered: new(unix.ENOSYS), compiled: new(unix.ENOSYS)},
	}
	for _, loader := range []string{"libseccomp", "compile"} {
		for _, tc := range tests {
			want := tc.want
			if loader == "compile" && tc.compiled != nil {
				want = *tc.compiled
			}
			name := loader + "/" + tc.call
			if tc.socketpair {
				name += "/socketpair-allowed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				kernelCase(t, tc.call, loader, tc.socketpair, want, tc.unfiltered, trueBin)
			})
		}
	}
}

// kernelCase runs call in a child under the filter loader installs and
// checks that it gives want; see TestKernel for unfiltered.
func kernelCase(t *testing.T, call, loader string, socketpair bool, want unix.Errno, unfiltered *unix.Errno, trueBin string) {
	t.Helper()
	env := []string{envExec + "=" + trueBin, envLoader + "=" + loader}
	if socketpair {
		env = append(env, envSocketpair+"=1")
	}
	if got := runChild(t, call, env...); got != want {
		t.Errorf("%s = %s, want %s", call, errnoName(got), errnoName(want))
	}
	if want == unix.EPERM {
		// the same refusal with the default errno changed: it comes from
		// the filter's default action
		got := runChild(t, call, append(env, fmt.Sprintf("%s=%d", envMarker, int(marker)))...)
		if got != marker {
			t.Errorf("%s with the default errno set to %d = %s: the refusal does not come from the filter", call, int(marker), errnoName(got))
		}
	}
	// the control run does not depend on the loader
	if unfiltered != nil && loader == "libseccomp" {
		if got := runChild(t, call, append(env, envNoFilter+"=1")...); got != *unfiltered {
			t.Errorf("%s without the filter = %s, want %s", call, errnoName(got), errnoName(*unfiltered))
		}
	}
}

// i386Program returns a static 32-bit x86 ELF executable that makes one
// system call through int 0x80 and exits with its errno (0 on success).
// The arguments go in ebx, ecx and edx; with data, ecx points at it
// instead (socketcall's argument array).
// No 32-bit toolchain is needed: the machine code is spelled out below.
func i386Program(nr, a1, a2, a3 uint32, data []uint32) []byte {
	const base = 0x08048000
	const codeOff = 52 + 32 // ELF header, one program header
	code := func(a2 uint32) []byte {
		var c []byte
		mov := func(op byte, v uint32) { c = binary.LittleEndian.AppendUint32(append(c, op), v) }
		mov(0xb8, nr) // mov eax, nr
		mov(0xbb, a1) // mov ebx, a1
		mov(0xb9, a2) // mov ecx, a2
		mov(0xba, a3) // mov edx, a3
		c = append(c,
			0xcd, 0x80, // int 0x80
			0x89, 0xc3, // mov ebx, eax
			0xf7, 0xdb, // neg ebx            ; errno when eax is -errno
			0x3d, 0x01, 0xf0, 0xff, 0xff, // cmp eax, -4095
			0x73, 0x02, // jae exit           ; an error
			0x31, 0xdb, // xor ebx, ebx       ; success
		)
		mov(0xb8, 252)               // exit: mov eax, __NR_exit_group
		return append(c, 0xcd, 0x80) // int 0x80
	}
	n := len(code(0))
	if data != nil {
		a2 = base + codeOff + uint32(n)
	}
	body := code(a2)
	for _, d := range data {
		body = binary.LittleEndian.AppendUint32(body, d)
	}
	size := uint32(codeOff + len(body))

	le := binary.LittleEndian
	var f []byte
	f = append(f, 0x7f, 'E', 'L', 'F', 1 /* 32-bit */, 1 /* LE */, 1 /* version */, 0 /* SYSV */)
	f = append(f, make([]byte, 8)...)
	f = le.AppendUint16(f, 2) // ET_EXEC
	f = le.AppendUint16(f, 3) // EM_386
	f = le.AppendUint32(f, 1) // EV_CURRENT
	f = le.AppendUint32(f, base+codeOff)
	f = le.AppendUint32(f, 52) // program headers
	f = le.AppendUint32(f, 0)  // no section headers
	f = le.AppendUint32(f, 0)  // flags
	f = le.AppendUint16(f, 52) // ELF header size
	f = le.AppendUint16(f, 32) // program header size
	f = le.AppendUint16(f, 1)  // one program header
	f = le.AppendUint16(f, 40)
	f = le.AppendUint16(f, 0)
	f = le.AppendUint16(f, 0)
	// PT_LOAD: the whole file, read and execute
	f = le.AppendUint32(f, 1)
	f = le.AppendUint32(f, 0)
	f = le.AppendUint32(f, base)
	f = le.AppendUint32(f, base)
	f = le.AppendUint32(f, size)
	f = le.AppendUint32(f, size)
	f = le.AppendUint32(f, 5)
	f = le.AppendUint32(f, 0x1000)
	return append(f, body...)
}

func TestKernel32BitX86(t *testing.T) {
	// The amd64 profile leaves 32-bit x86 out of the filter (see
	// socketcallABIs): such system calls, from a 32-bit program or int
	// 0x80 in a 64-bit one, meet the bad-architecture action and kill the
	// caller, so socketcall never reaches socket(AF_UNIX).
	if runtime.GOARCH != "amd64" {
		t.Skip("32-bit x86 programs need an amd64 machine")
	}
	args := []uint32{unix.AF_UNIX, unix.SOCK_STREAM, 0}
	programs := []struct {
		name string
		elf  []byte
	}{
		{"getpid", i386Program(20, 0, 0, 0, nil)},
		{"socketcall-socket-unix", i386Program(102, 1 /* SYS_SOCKET */, 0, 0, args)},
		{"socket-unix", i386Program(359, unix.AF_UNIX, unix.SOCK_STREAM, 0, nil)},
	}
	dir := t.TempDir()
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			path := filepath.Join(dir, p.name)
			if err := os.WriteFile(path, p.elf, 0o755); err != nil {
				t.Fatal(err)
			}
			// without the filter the program works: the kernel runs
			// 32-bit code and the call succeeds
			out, err := exec.Command(path).CombinedOutput()
			if errors.Is(err, syscall.ENOEXEC) {
				t.Skipf("this kernel runs no 32-bit x86 programs: %v", err)
			}
			if err != nil {
				t.Fatalf("%s without the filter: %v\n%s", p.name, err, out)
			}

			for _, loader := range []string{"libseccomp", "compile"} {
				cmd := childCommand(t, "execve", envExec+"="+path, envLoader+"="+loader)
				out, err = cmd.CombinedOutput()
				if ee, ok := errors.AsType[*exec.ExitError](err); ok {
					if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() == syscall.SIGSYS {
						continue
					}
				}
				t.Errorf("%s under the %s filter: %v, want killed by SIGSYS\n%s", p.name, loader, err, out)
			}
		})
	}
}
