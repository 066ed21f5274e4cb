//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"
)

// escHelperEnv turns this test binary into the attacks' tool (inside a
// sandbox, or unguarded) and the victims they aim at (on the host),
// checked before TestMain runs:
//
//	CORDON_IT_ESCAPE=unix PATH TOKEN        send TOKEN to a unix socket every way there is
//	CORDON_IT_ESCAPE=victim SECRET          hold SECRET in memory; print "PID ADDR LEN"; sleep
//	CORDON_IT_ESCAPE=vmread PID ADDR LEN    read another process's memory (process_vm_readv, ptrace)
//	CORDON_IT_ESCAPE=key-add DESC SECRET    add a key to the caller's user keyring, print its id
//	CORDON_IT_ESCAPE=key-read DESC          find the key in the user keyring and print it
//	CORDON_IT_ESCAPE=key-drop ID            unlink a key from the user keyring
//	CORDON_IT_ESCAPE=syscall NAME           try bpf, userfaultfd, io_uring, perf_event_open, unshare, clone,
//	                                        clone3, open_tree, fsopen or open_by_handle_at
//	CORDON_IT_ESCAPE=tiocsti TEXT           push TEXT into stdin's terminal input queue
//	CORDON_IT_ESCAPE=tioclinux              ask stdin's terminal to paste its selection
//	CORDON_IT_ESCAPE=setuid FILE TEXT       print the ids; append TEXT to FILE
//	CORDON_IT_ESCAPE=fds                    open /dev/null until it fails; print how many
//	CORDON_IT_ESCAPE=inotify                make inotify instances, then watches, until it fails; print
//	                                        how many, then "ready"; hold them
//	CORDON_IT_ESCAPE=inotify-one            make one inotify instance and one watch
//	CORDON_IT_ESCAPE=race-path OK BAD N     open(O_CREAT) a path N times while another thread flips
//	                                        its bytes between OK and BAD (the same length or shorter)
//	CORDON_IT_ESCAPE=race-dir DIR LINK NAME N  make DIR/NAME N times while another thread swaps
//	                                        DIR and LINK (renameat2 RENAME_EXCHANGE)
//	CORDON_IT_ESCAPE=race-config GITDIR MARKER N  N times: write an ordinary config.lock in GITDIR and
//	                                        rename it onto config while another thread rewrites it,
//	                                        through the descriptor kept open, with a core.fsmonitor
//	                                        that touches MARKER; and once more after the rename
//	CORDON_IT_ESCAPE=pidfd PID              signal PID through a pidfd
//	CORDON_IT_ESCAPE=front ADDR SNI HOST PATH  a tunnel to ADDR (through $HTTPS_PROXY's CONNECT
//	                                        when set), TLS naming SNI (none: plain HTTP), GET PATH for HOST;
//	                                        with CORDON_IT_FRONT=lower the method is "get", with =h2c the
//	                                        request is HTTP/2 with prior knowledge
//	CORDON_IT_ESCAPE=setns PID FILE         enter PID's namespaces through /proc/PID/ns, then read FILE
//	CORDON_IT_ESCAPE=shm-hold SECRET        hold SECRET in a SysV shared memory segment of the caller's; sleep
//	CORDON_IT_ESCAPE=shm-read               print every SysV shared memory segment /proc/sysvipc/shm lists
//
// Each attempt prints "NAME: ok" (or what it got) or "NAME: ERRNO".
const escHelperEnv = "CORDON_IT_ESCAPE"

func escHelper(mode string, args []string) int {
	switch {
	case mode == "unix" && len(args) == 2:
		return escUnix(args[0], args[1])
	case mode == "victim" && len(args) == 1:
		return escVictim(args[0])
	case mode == "vmread" && len(args) == 3:
		return escVMRead(args[0], args[1], args[2])
	case mode == "key-add" && len(args) == 2:
		id, err := unix.AddKey("user", args[0], []byte(args[1]), unix.KEY_SPEC_USER_KEYRING)
		if err != nil {
			fmt.Println("add_key:", err)
			return 1
		}
		fmt.Println(id)
		return 0
	case mode == "key-read" && len(args) == 1:
		return escKeyRead(args[0])
	case mode == "key-drop" && len(args) == 1:
		id, _ := strconv.Atoi(args[0])
		_, err := unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0)
		try("unlink", err)
		return 0
	case mode == "syscall" && len(args) == 1:
		return escSyscall(args[0])
	case mode == "tiocsti" && len(args) == 1:
		var err error
		for i := 0; i < len(args[0]) && err == nil; i++ {
			c := args[0][i]
			_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			err = errnoErr(e)
		}
		try("TIOCSTI", err)
		return 0
	case mode == "tioclinux":
		sub := byte(3) // TIOCL_PASTESEL
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCLINUX, uintptr(unsafe.Pointer(&sub)))
		try("TIOCLINUX", errnoErr(e))
		return 0
	case mode == "setuid" && len(args) == 2:
		fmt.Printf("uid=%d euid=%d\n", os.Getuid(), os.Geteuid())
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(args[1] + "\n")
			f.Close()
		}
		try("write "+args[0], err)
		return 0
	case mode == "fds":
		n := 0
		var err error
		for ; n < 1<<21; n++ {
			var fd int
			if fd, err = unix.Open("/dev/null", unix.O_RDONLY, 0); err != nil {
				break
			}
			_ = fd
		}
		fmt.Printf("opened %d\n", n)
		try("open", err)
		return 0
	case mode == "inotify":
		return escInotify()
	case mode == "inotify-one":
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		try("inotify_init1", err)
		if err == nil {
			_, err = unix.InotifyAddWatch(fd, "/", unix.IN_CREATE)
			try("inotify_add_watch", err)
		}
		return 0
	case mode == "race-path" && len(args) == 3:
		n, _ := strconv.Atoi(args[2])
		return escRacePath(args[0], args[1], n)
	case mode == "race-config" && len(args) == 3:
		n, _ := strconv.Atoi(args[2])
		return escRaceConfig(args[0], args[1], n)
	case mode == "race-dir" && len(args) == 4:
		n, _ := strconv.Atoi(args[3])
		return escRaceDir(args[0], args[1], args[2], n)
	case mode == "front" && len(args) == 4:
		return escFront(args[0], args[1], args[2], args[3])
	case mode == "shm-hold" && len(args) == 1:
		return escShmHold(args[0])
	case mode == "shm-read":
		return escShmRead()
	case mode == "setns" && len(args) == 2:
		return escSetns(args[0], args[1])
	case mode == "pidfd" && len(args) == 1:
		pid, _ := strconv.Atoi(args[0])
		fd, err := unix.PidfdOpen(pid, 0)
		try("pidfd_open", err)
		if err == nil {
			try("pidfd_send_signal", unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0))
		}
		return 0
	}
	return badMode
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// try prints the outcome of one attempt.
func try(name string, err error) {
	var errno unix.Errno
	switch {
	case err == nil:
		fmt.Printf("%s: ok\n", name)
	case errors.As(err, &errno):
		fmt.Printf("%s: %s\n", name, unix.ErrnoName(errno))
	default:
		fmt.Printf("%s: %v\n", name, err)
	}
}

// escUnix sends token to the unix socket at path (a name starting with @
// is abstract) by every route: a socket of each type, and — around a
// refusal of socket(AF_UNIX) — a socket pair of each type, connected or
// sent to by address.
func escUnix(path, token string) int {
	addr := &unix.SockaddrUnix{Name: path}
	if strings.HasPrefix(path, "@") {
		addr.Name = "\x00" + path[1:]
	}
	msg := []byte(token + "\n")
	for _, typ := range []struct {
		name string
		t    int
	}{{"stream", unix.SOCK_STREAM}, {"dgram", unix.SOCK_DGRAM}, {"seqpacket", unix.SOCK_SEQPACKET}} {
		fd, err := unix.Socket(unix.AF_UNIX, typ.t|unix.SOCK_CLOEXEC, 0)
		try("socket "+typ.name, err)
		if err == nil {
			err = unix.Connect(fd, addr)
			if err == nil {
				_, err = unix.Write(fd, msg)
			}
			try("socket "+typ.name+" send", err)
			unix.Close(fd)
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, typ.t|unix.SOCK_CLOEXEC, 0)
		try("socketpair "+typ.name, err)
		if err == nil {
			try("socketpair "+typ.name+" sendto", unix.Sendto(fds[0], msg, 0, addr))
			err = unix.Connect(fds[1], addr)
			if err == nil {
				_, err = unix.Write(fds[1], msg)
			}
			try("socketpair "+typ.name+" connect", err)
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	}
	return 0
}

// escVictim holds secret in memory and prints where.
func escVictim(secret string) int {
	buf := []byte(secret)
	fmt.Printf("%d %d %d\n", os.Getpid(), uintptr(unsafe.Pointer(&buf[0])), len(buf))
	for {
		time.Sleep(time.Hour)
		_ = buf[0]
	}
}

// escShmHold holds secret in a SysV shared memory segment of the caller's
// (mode 0600), removed when the process ends, says "ready" and sleeps.
func escShmHold(secret string) int {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		fmt.Println("shmget:", err)
		return 1
	}
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		fmt.Println("shmat:", err)
		return 1
	}
	copy(b, secret)
	// Gone with this process; Linux still lets others attach it until then.
	_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
		_ = b[0]
	}
}

// escShmRead attaches every shared memory segment /proc/sysvipc/shm lists
// and prints what it holds.
func escShmRead() int {
	data, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		fmt.Println("read /proc/sysvipc/shm:", err)
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		id, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		n++
		b, err := unix.SysvShmAttach(id, 0, unix.SHM_RDONLY)
		if err != nil {
			fmt.Printf("shmat %d: %v\n", id, err)
			continue
		}
		fmt.Printf("shm %d: %s\n", id, strings.TrimRight(string(b[:min(len(b), 256)]), "\x00"))
		_ = unix.SysvShmDetach(b)
	}
	fmt.Printf("%d segments\n", n)
	return 0
}

// escVMRead reads LEN bytes at ADDR of PID: with process_vm_readv, then
// attached with ptrace, then through /proc/PID/mem.
func escVMRead(pidS, addrS, lenS string) int {
	pid, _ := strconv.Atoi(pidS)
	addr, _ := strconv.ParseUint(addrS, 10, 64)
	n, _ := strconv.Atoi(lenS)
	buf := make([]byte, n)
	_, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err == nil {
		fmt.Printf("process_vm_readv: got %s\n", buf)
	} else {
		try("process_vm_readv", err)
	}
	err = unix.PtraceAttach(pid)
	if err == nil {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
		got := make([]byte, n)
		_, err = unix.PtracePeekData(pid, uintptr(addr), got)
		_ = unix.PtraceDetach(pid)
		if err == nil {
			fmt.Printf("ptrace: got %s\n", got)
		}
	}
	if err != nil {
		try("ptrace", err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err == nil {
		got := make([]byte, n)
		_, err = f.ReadAt(got, int64(addr))
		f.Close()
		if err == nil {
			fmt.Printf("/proc/pid/mem: got %s\n", got)
		}
	}
	if err != nil {
		try("/proc/pid/mem", err)
	}
	return 0
}

// escKeyRead looks the key up in the user keyring and prints its payload.
func escKeyRead(desc string) int {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", desc, 0)
	try("keyctl search", err)
	if err != nil {
		return 0
	}
	buf := make([]byte, 256)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		try("keyctl read", err)
		return 0
	}
	fmt.Printf("keyctl read: got %s\n", buf[:min(n, len(buf))])
	return 0
}

// escSyscall tries one of the kernel interfaces the profile refuses.
func escSyscall(name string) int {
	var err error
	switch name {
	case "bpf":
		// BPF_MAP_CREATE of an array map: key 4 bytes, value 4, 1 entry.
		attr := [5]uint32{2, 4, 4, 1, 0}
		fd, _, e := unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
		if err = errnoErr(e); err == nil {
			unix.Close(int(fd))
		}
	case "userfaultfd":
		const uffdUserModeOnly = 1
		fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0)
		if err = errnoErr(e); err == nil {
			unix.Close(int(fd))
		}
	case "io_uring":
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if err = errnoErr(e); err == nil {
			unix.Close(int(fd))
		}
	case "perf_event_open":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		var fd int
		if fd, err = unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC); err == nil {
			unix.Close(fd)
		}
	case "unshare":
		err = unix.Unshare(unix.CLONE_NEWUSER | unix.CLONE_NEWNS)
	case "clone":
		// A child in a new user namespace, where it would hold every
		// capability: clone's flags in a register, clone3's behind a
		// pointer (which a seccomp filter cannot read).
		err = cloneNewUser(unix.SYS_CLONE)
	case "clone3":
		err = cloneNewUser(unix.SYS_CLONE3)
	case "open_tree":
		var fd int
		if fd, err = unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); err == nil {
			unix.Close(fd)
		}
	case "fsopen":
		var fd int
		if fd, err = unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC); err == nil {
			unix.Close(fd)
		}
	case "open_by_handle_at":
		// The handle of a file the command may read, opened again by
		// inode: the way around the mounts (and a chroot) that needs no
		// path.
		var h unix.FileHandle
		var mount, fd int
		if h, mount, err = unix.NameToHandleAt(unix.AT_FDCWD, "/etc/passwd", 0); err == nil {
			_ = mount
			if fd, err = unix.OpenByHandleAt(unix.AT_FDCWD, h, unix.O_RDONLY|unix.O_CLOEXEC); err == nil {
				unix.Close(fd)
			}
		}
	default:
		fmt.Printf("unknown system call %s\n", name)
		return 2
	}
	try(name, err)
	return 0
}

// cloneNewUser starts a child in a new user namespace with clone(2) or
// clone3(2) (trap), which exits at once, and waits for it.
func cloneNewUser(trap uintptr) error {
	var pid uintptr
	var e unix.Errno
	if trap == unix.SYS_CLONE3 {
		// struct clone_args: flags, pidfd, child_tid, parent_tid,
		// exit_signal, and the rest zero.
		args := [11]uint64{unix.CLONE_NEWUSER, 0, 0, 0, uint64(unix.SIGCHLD)}
		pid, _, e = unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args[0])), unsafe.Sizeof(args), 0)
	} else {
		pid, _, e = unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	}
	if e != 0 {
		return e
	}
	if pid == 0 {
		// The child: no Go code may run here.
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	_, err := unix.Wait4(int(pid), &ws, 0, nil)
	return err
}

// sinkConns accepts connections on l until the test ends, and writes
// what each sends within wait of its start to the case's sink as it
// arrives (at most 4 KiB a connection).
func sinkConns(e *escEnv, l net.Listener, wait time.Duration) {
	e.t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(wait))
				buf := make([]byte, 4096)
				for got := 0; got < len(buf); {
					n, err := c.Read(buf[got:])
					e.sink.Write(buf[got : got+n])
					got += n
					if err != nil {
						return
					}
				}
			}()
		}
	}()
}

// listenUnix listens on a unix socket on the host (a path, or @name in the
// abstract namespace) for the test's duration, and records what reaches it
// in the case's sink; the socket file is open to every user, as
// docker.sock is to its group.
func listenUnix(e *escEnv, path, network string) {
	e.t.Helper()
	switch network {
	case "unixgram":
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		must(e.t, err)
		e.t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 4096)
			for {
				n, _, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				e.sink.Write(buf[:n])
			}
		}()
	default:
		l, err := net.ListenUnix(network, &net.UnixAddr{Name: path, Net: network})
		must(e.t, err)
		sinkConns(e, l, 5*time.Second)
	}
	if !strings.HasPrefix(path, "@") {
		must(e.t, os.Chmod(path, 0o777))
	}
}

// escFront opens a tunnel to addr — through the HTTP proxy's CONNECT when
// $HTTPS_PROXY names one, else directly — and sends a request for host in
// it: over TLS naming sni, or in plain text when sni is "-". A CDN picks the
// site by those names, not by the address the tunnel went to.
func escFront(addr, sni, host, path string) int {
	var c net.Conn
	var err error
	if p := os.Getenv("HTTPS_PROXY"); p != "" {
		u, perr := url.Parse(p)
		if perr != nil {
			fmt.Println("proxy:", perr)
			return 1
		}
		c, err = net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
			br := bufio.NewReader(c)
			resp, rerr := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			switch {
			case rerr != nil:
				err = rerr
			case resp.StatusCode != 200:
				err = fmt.Errorf("CONNECT: %s", resp.Status)
			}
		}
	} else {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		try("tunnel", err)
		return 0
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if sni != "-" {
		tc := tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			try("tls", err)
			return 0
		}
		c = tc
	}
	var resp *http.Response
	switch os.Getenv("CORDON_IT_FRONT") {
	case "h2c":
		var cc *http2.ClientConn
		if cc, err = (&http2.Transport{AllowHTTP: true}).NewClientConn(c); err == nil {
			req, _ := http.NewRequest(http.MethodGet, "http://"+host+path, nil)
			resp, err = cc.RoundTrip(req)
		}
	case "lower":
		// servers take any token as a method (Go's does)
		fmt.Fprintf(c, "get %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
		resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	default:
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
		resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	}
	if err != nil {
		try("request", err)
		return 0
	}
	resp.Body.Close()
	fmt.Println("request:", resp.Status)
	return 0
}

// escSetns enters the namespaces of pid one by one, says for each whether
// it worked, and prints file as it then sees it.
func escSetns(pid, file string) int {
	for _, ns := range []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"} {
		fd, err := unix.Open("/proc/"+pid+"/ns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, 0)
			unix.Close(fd)
		}
		try("setns "+ns, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		try("read "+file, err)
		return 0
	}
	fmt.Printf("read %s: got %s\n", file, data)
	return 0
}

// escInotify takes every inotify instance, then every watch, the kernel
// gives this user: watches round-robin over the instances, on files it
// makes in ./inotify (a watch is one per file and instance). It prints
// the counts and "ready", then holds them until killed.
func escInotify() int {
	var fds []int
	var err error
	for len(fds) < 1<<16 {
		fd, e := unix.InotifyInit1(unix.IN_CLOEXEC)
		if e != nil {
			err = e
			break
		}
		fds = append(fds, fd)
	}
	fmt.Printf("instances %d (%v)\n", len(fds), err)
	if len(fds) == 0 {
		return 1
	}
	if err := os.MkdirAll("inotify", 0o755); err != nil {
		fmt.Println("mkdir:", err)
		return 1
	}
	watches := 0
	err = nil
	for i := 0; err == nil && i < 1<<20/len(fds)+1; i++ {
		name := fmt.Sprintf("inotify/%d", i)
		if err = os.WriteFile(name, nil, 0o644); err != nil {
			break
		}
		for _, fd := range fds {
			if _, err = unix.InotifyAddWatch(fd, name, unix.IN_MODIFY); err != nil {
				break
			}
			watches++
		}
	}
	fmt.Printf("watches %d (%v)\nready\n", watches, err)
	time.Sleep(time.Minute)
	return 0
}

// atFDCWD is AT_FDCWD as a system call argument.
var atFDCWD = uintptr(0xffffffffffffff9c)

// escRacePath opens (O_CREAT) the path in one buffer n times (for a
// second at least), on one thread, while another thread flips the buffer
// between ok and bad: a supervisor that checks the path and then lets the
// kernel read it again makes bad sooner or later.
func escRacePath(ok, bad string, n int) int {
	buf := make([]byte, max(len(ok), len(bad))+1)
	set := func(p string) {
		copy(buf, p)
		clear(buf[len(p):])
	}
	set(ok)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				set(bad)
			} else {
				set(ok)
			}
		}
	}()
	made := 0
	// On a loaded machine the flipping thread may get no CPU during n
	// quick opens (CI saw 3,000 opens make nothing bad unguarded).
	start := time.Now()
	for i := 0; i < n || time.Since(start) < time.Second; i++ {
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&buf[0])), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644, 0, 0)
		if e == 0 {
			unix.Close(int(fd))
			made++
		}
	}
	stop.Store(true)
	<-done
	_, err := os.Lstat(bad)
	fmt.Printf("race-path: %d opens made something; %s made: %v\n", made, bad, err == nil)
	return 0
}

// escRaceConfig renames gitDir/config.lock onto gitDir/config n times,
// rewriting the lock file through its descriptor on another thread all the
// while, and after the rename: a supervisor that checked the file and then
// let the kernel rename it (or renamed the command's file into place)
// would let the last content through.
func escRaceConfig(gitDir, marker string, n int) int {
	bad := []byte("[core]\n\tfsmonitor = \"touch " + marker + "; false\"\n")
	ok := []byte("[core]\n\trepositoryformatversion = 0\n#")
	ok = append(ok, bytes.Repeat([]byte("x"), max(0, len(bad)-len(ok)))...)
	ok = append(ok, '\n')
	lock, config := filepath.Join(gitDir, "config.lock"), filepath.Join(gitDir, "config")
	renamed := 0
	for range n {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
		if err != nil {
			fmt.Println("race-config:", err)
			return 1
		}
		_, _ = f.WriteAt(ok, 0)
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer close(done)
			for i := 0; !stop.Load(); i++ {
				if i%2 == 0 {
					_, _ = f.WriteAt(bad, 0)
				} else {
					_, _ = f.WriteAt(ok, 0)
				}
			}
		}()
		if os.Rename(lock, config) == nil {
			renamed++
		}
		stop.Store(true)
		<-done
		_, _ = f.WriteAt(bad, 0)
		f.Close()
		os.Remove(lock)
	}
	data, _ := os.ReadFile(config)
	fmt.Printf("race-config: %d renames; the config holds fsmonitor: %v\n", renamed, bytes.Contains(data, []byte("fsmonitor")))
	return 0
}

// escRaceDir makes dir/name n times (for a second at least), on one thread, while another swaps
// dir (a directory) and link (a symbolic link) again and again: a
// supervisor that resolves the path, checks, and then has the kernel
// resolve it again makes name where link leads.
func escRaceDir(dir, link, name string, n int) int {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		for !stop.Load() {
			_ = unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE)
		}
	}()
	made := 0
	p := filepath.Join(dir, name)
	// n opens, and for a second at least: on a loaded machine the
	// swapping thread may get no CPU during n quick opens.
	start := time.Now()
	for i := 0; i < n || time.Since(start) < time.Second; i++ {
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
			made++
		}
	}
	stop.Store(true)
	<-done
	fmt.Printf("race-dir: %d opens made something\n", made)
	return 0
}
