//go:build linux && cgo

package seccomp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// The notify tests load Compile's program with its listener, as cordon's
// init does, and answer it from a supervisor thread of the child that
// the filter does not cover (it is installed in one thread only). The
// supervisor prints "notified NAME" for each notification, answers file
// accesses with "continue" and everything else with notifyMarker, so
// that the errno tells the supervisor's answer from the filter's.
const (
	notifyMarker = unix.EOWNERDEAD
	// envNoSupervisor: "1" closes the listener unanswered.
	envNoSupervisor = "CORDON_SECCOMP_TEST_NO_SUPERVISOR"
)

func init() {
	loaders["notify"] = loadNotifying
	calls["openat-tmpfile"] = func(*fixtures) error {
		// an anonymous file: opened for writing, leaves nothing behind
		return sys(true, unix.SYS_OPENAT, atFDCWD, cstr(os.TempDir()), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	}
	calls["openat-read-high"] = func(*fixtures) error {
		// write bits only in the ignored upper half of the flags
		return sys(true, unix.SYS_OPENAT, atFDCWD, cstr("/proc/self/status"), high|unix.O_RDONLY|unix.O_CLOEXEC)
	}
	calls["mkdirat-nowhere"] = func(fx *fixtures) error {
		return sys(false, unix.SYS_MKDIRAT, atFDCWD, cstr(fx.nowhere), 0o700)
	}
	calls["unlinkat-nowhere"] = func(fx *fixtures) error {
		return sys(false, unix.SYS_UNLINKAT, atFDCWD, cstr(fx.nowhere), 0)
	}
	calls["renameat-nowhere"] = func(fx *fixtures) error {
		return sys(false, unix.SYS_RENAMEAT, atFDCWD, cstr(fx.nowhere), atFDCWD, cstr(fx.nowhere+"2"))
	}
	calls["openat2-read"] = func(*fixtures) error {
		how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC}
		return sys(true, unix.SYS_OPENAT2, atFDCWD, cstr("/proc/self/status"), addr(&how), unsafe.Sizeof(how))
	}
	calls["umask"] = func(*fixtures) error {
		// umask cannot fail: an error is the supervisor's answer
		return sys(false, unix.SYS_UMASK, 0o22)
	}
}

// loadNotifying starts the supervisor thread, then installs Compile's
// program in the calling thread and hands it the listener.
func loadNotifying(p *specs.LinuxSeccomp) error {
	prog, err := Compile(p)
	if err != nil {
		return err
	}
	if prog.Flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
		return errors.New("the program of a notifying profile asks for no listener")
	}
	names := map[int32]string{}
	for _, rule := range p.Syscalls {
		if rule.Action == specs.ActNotify {
			for nr, name := range NativeNumbers(rule.Names) {
				names[nr] = name
			}
		}
	}
	listener := make(chan int)
	ready := make(chan struct{})
	go func() {
		// Started before the filter and locked to its thread: no thread
		// made from the filtered one (which would inherit the filter)
		// ever runs it.
		runtime.LockOSThread()
		close(ready)
		supervise(<-listener, names)
	}()
	<-ready
	if err := setNoNewPrivs(); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog.Filter) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog.Filter[0]))}
	fd, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(prog.Flags), uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog.Filter)
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, %#x): %w", prog.Flags, e)
	}
	if os.Getenv(envNoSupervisor) == "1" {
		unix.Close(int(fd))
		return nil
	}
	listener <- int(fd)
	return nil
}

func supervise(fd int, names map[int32]string) {
	type notif struct {
		ID         uint64
		Pid, Flags uint32
		Nr         int32
		Arch       uint32
		IP         uint64
		Args       [6]uint64
	}
	type resp struct {
		ID    uint64
		Val   int64
		Error int32
		Flags uint32
	}
	for {
		var n notif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue
			}
			return
		}
		name := names[n.Nr]
		fmt.Printf("notified %s\n", name)
		r := resp{ID: n.ID, Error: -int32(notifyMarker)}
		if IsFileAccess(name) {
			r = resp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		}
		unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
	}
}

// TestKernelNotify runs calls under notifying profiles with a supervisor
// (and without one) and checks which calls stop for it and what they
// then give.
func TestKernelNotify(t *testing.T) {
	if _, ok := platforms[runtime.GOARCH]; !ok {
		t.Skipf("no cordon profile for GOARCH %s", runtime.GOARCH)
	}
	const none unix.Errno = 0
	tests := []struct {
		notify       string // envNotify
		call         string
		noSupervisor bool
		notified     bool
		want         unix.Errno
	}{
		// refusals: each refused call stops, and gets the supervisor's
		// answer; allowed ones never stop
		{"refusals", "mount", false, true, notifyMarker},
		{"refusals", "ptrace", false, true, notifyMarker},
		{"refusals", "unshare-newuser", false, true, notifyMarker},
		{"refusals", "io_uring_setup", false, true, notifyMarker},
		{"refusals", "socket-unix", false, true, notifyMarker},
		{"refusals", "socket-unix-high", false, true, notifyMarker},
		{"refusals", "socket-inet", false, false, none},
		{"refusals", "socket-vsock", false, false, unix.EPERM},
		{"refusals", "socketpair-unix", false, false, unix.EPERM},
		{"refusals", "ioctl-tiocsti", false, false, unix.EPERM},
		{"refusals", "clone3", false, false, unix.ENOSYS},
		{"refusals", "getpid", false, false, none},
		{"refusals", "openat", false, false, none},
		{"refusals", "openat-tmpfile", false, false, none},
		{"refusals", "mkdirat-nowhere", false, false, unix.ENOENT},
		// writes: the writes stop and continue, the reads do not stop
		{"writes", "openat-tmpfile", false, true, none},
		{"writes", "mkdirat-nowhere", false, true, unix.ENOENT},
		{"writes", "unlinkat-nowhere", false, true, unix.ENOENT},
		{"writes", "openat", false, false, none},
		{"writes", "openat-read-high", false, false, none},
		{"writes", "read", false, false, none},
		{"writes", "mount", false, true, notifyMarker},
		// guard: what makes a name stops (the supervisor here lets it
		// continue), openat2 is not there, umask stops; reads, removals
		// and writes by descriptor do not stop
		{"guard", "openat-tmpfile", false, true, none},
		{"guard", "mkdirat-nowhere", false, true, unix.ENOENT},
		{"guard", "renameat-nowhere", false, true, unix.ENOENT},
		{"guard", "umask", false, true, notifyMarker},
		{"guard", "openat2-read", false, false, unix.ENOSYS},
		{"guard", "unlinkat-nowhere", false, false, unix.ENOENT},
		{"guard", "openat", false, false, none},
		{"guard", "openat-read-high", false, false, none},
		{"guard", "write", false, false, none},
		{"guard", "mount", false, true, notifyMarker},
		// reads: every open stops
		{"reads", "openat", false, true, none},
		{"reads", "openat-tmpfile", false, true, none},
		{"reads", "read", false, false, none},
		// no supervisor: what would stop fails, never passes
		{"refusals", "mount", true, false, unix.ENOSYS},
		{"refusals", "socket-unix", true, false, unix.ENOSYS},
		{"writes", "openat-tmpfile", true, false, unix.ENOSYS},
		{"writes", "openat", true, false, none},
	}
	for _, tc := range tests {
		name := tc.notify + "/" + tc.call
		if tc.noSupervisor {
			name += "/no-supervisor"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := childCommand(t, tc.call, envLoader+"=notify", envNotify+"="+tc.notify)
			if tc.noSupervisor {
				cmd.Env = append(cmd.Env, envNoSupervisor+"=1")
			}
			out, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := errors.AsType[*exec.ExitError](err); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("child: %v\n%s%s", err, out, stderr)
			}
			var notified []string
			got := unix.Errno(0)
			parsed := false
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if name, ok := strings.CutPrefix(line, "notified "); ok {
					notified = append(notified, name)
				} else if s, ok := strings.CutPrefix(line, "errno="); ok {
					n, err := strconv.Atoi(s)
					if err != nil {
						t.Fatalf("child output %q", out)
					}
					got, parsed = unix.Errno(n), true
				}
			}
			if !parsed {
				t.Fatalf("child output %q", out)
			}
			if got != tc.want {
				t.Errorf("%s = %s, want %s", tc.call, errnoName(got), errnoName(tc.want))
			}
			if (len(notified) > 0) != tc.notified {
				t.Errorf("notified %v, want notified: %v", notified, tc.notified)
			}
		})
	}
}
