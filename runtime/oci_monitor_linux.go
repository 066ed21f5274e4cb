package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/spec"
)

// A container whose policy serves cordon's proxy or records what the
// sandbox refuses gets a monitor, as conmon is to podman: a process of
// cordon's own (`cordon oci-monitor ID`), started by `create` in a session
// of its own, stdio on /dev/null, working directory /, that lives exactly
// as long as the container's init (watched through a pidfd) and then
// exits, writing the container's violation records.
//
//   - Records: the agent profile's refusals are SCMP_ACT_NOTIFY and the
//     spec's linux.seccomp.listenerPath is the monitor's unix socket;
//     libcontainer hands it the listener of every process it starts in the
//     container (the init at create, each exec) with the container's state
//     (runtime-spec's ContainerProcessState), and the monitor answers EPERM
//     and records, with the supervisor cordon run uses.
//   - Proxy: the monitor makes the proxy's listening sockets on 127.0.0.1
//     inside the container's network namespace (setns on a locked thread
//     that then dies) and serves netproxy on them from the host's side;
//     the process's environment was pointed at them in the spec. A
//     rootless runtime cannot enter that namespace from outside the
//     container's user namespace: there the container's createContainer
//     hook (ProxyListen) makes the sockets inside and sends them to the
//     monitor's socket.
//
// The monitor is not a child of the container's init nor in its cgroup:
// the init stays a child of `create` (the shim reaps it and learns the
// workload's status); the monitor is reparented to the shim too, which
// reaps it as an unknown pid. When the monitor is gone (killed), the
// container keeps its isolation: notifying system calls fail with ENOSYS,
// unrecorded, and nothing listens where the proxy did, so there is no
// egress at all; `exec` into the container fails (libcontainer cannot
// hand the new process's listener to anyone).

// Files of the monitor in the container's state directory.
const (
	monitorSocketName = "monitor.sock"
	// monitorPidName holds the monitor's pid; the monitor holds an
	// exclusive lock on it for as long as it runs.
	monitorPidName = "monitor.pid"
	// unixPathMax is the room for a path in struct sockaddr_un.
	unixPathMax = 107
)

// monitorConfig is what create tells the monitor first, as JSON on the
// control socket.
type monitorConfig struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	// Store is the violation store (StoreDir of create's environment).
	Store string `json:"store"`
	// Notify are the system calls the profile sends to the monitor; empty
	// when the monitor gets no listeners.
	Notify []string `json:"notify,omitempty"`
	// Socket is where the monitor's listening socket (fd 4) is bound: it
	// removes it when it ends.
	Socket  string             `json:"socket,omitempty"`
	PidFile string             `json:"pidFile"`
	Proxy   *spec.AppliedProxy `json:"proxy,omitempty"`
	// ProxyFromHook says that the proxy's listening sockets come from
	// the container's createContainer hook, on Socket (a rootless
	// runtime), rather than made by the monitor.
	ProxyFromHook bool `json:"proxyFromHook,omitempty"`
	// ProxyFDs are the monitor's descriptors of the proxy's listening
	// sockets that create made in a pod's network namespace, which the
	// container joins (HTTP, SOCKS5).
	ProxyFDs []int `json:"proxyFDs,omitempty"`
	// Netns is that pod's network namespace: the proxy connects and
	// resolves from there (podDial), asking Nameservers, the pod's DNS
	// servers (none: the node's resolv.conf's, from the pod).
	Netns       string   `json:"netns,omitempty"`
	Nameservers []string `json:"nameservers,omitempty"`
	// Log and LogFormat are create's --log and --log-format.
	Log       string `json:"log,omitempty"`
	LogFormat string `json:"logFormat,omitempty"`
}

// monitorStart is create's second message: the container's init runs
// (waiting at the exec barrier).
type monitorStart struct {
	Pid int `json:"pid"`
}

// monitorReply is the monitor's answer to monitorStart: serving, or why
// not.
type monitorReply struct {
	Error string `json:"error,omitempty"`
}

// monitorSocketPath is where the monitor of container id listens for
// listeners: in the container's state directory, or, when that path is
// too long for a unix socket (containerd's 64-character ids under a long
// namespace), a name derived from it directly under the root.
func monitorSocketPath(root, id string) (string, error) {
	p := filepath.Join(root, id, monitorSocketName)
	if len(p) <= unixPathMax {
		return p, nil
	}
	sum := sha256.Sum256([]byte(p))
	short := filepath.Join(root, ".monitor-"+hex.EncodeToString(sum[:8])+".sock")
	if len(short) > unixPathMax {
		return "", fmt.Errorf("the monitor's socket path %s is longer than a unix socket allows", short)
	}
	return short, nil
}

// monitorHandle is create's side of a starting monitor.
type monitorHandle struct {
	ctl    *os.File
	socket string
	proc   *os.Process
	done   bool
}

// logSettings are create's log flags, passed on to the monitor.
var logSettings struct{ path, format string }

// startMonitor starts the monitor of container id for the applied policy
// a of the tightened spec s, before the container's processes exist:
// libcontainer hands the init's seccomp listener to the socket during
// Start. In a pod's network namespace the monitor inherits the proxy's
// listening sockets that create made there, and its proxy connects from
// there.
func (o OCI) startMonitor(id string, s *specs.Spec, a *spec.Applied, pod podNetwork) (h *monitorHandle, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find cordon's own binary: %w", err)
	}
	cfg := monitorConfig{
		ID:        id,
		Command:   strings.Join(s.Process.Args, " "),
		Store:     StoreDir(),
		PidFile:   filepath.Join(o.Root, id, monitorPidName),
		Proxy:     a.Proxy,
		Log:       logSettings.path,
		LogFormat: logSettings.format,
	}
	h = &monitorHandle{}
	defer func() {
		if err != nil {
			h.abort()
		}
	}()
	var listener *os.File
	if a.Records() {
		cfg.Notify = notifiedNames(s.Linux.Seccomp)
		cfg.Socket = s.Linux.Seccomp.ListenerPath
	}
	if a.Proxy != nil && os.Geteuid() != 0 {
		// As tighten decided: the container's hook makes the sockets.
		cfg.ProxyFromHook = true
		if cfg.Socket, err = monitorSocketPath(o.Root, id); err != nil {
			return h, err
		}
	}
	if cfg.Socket != "" {
		if listener, err = listenMonitorSocket(cfg.Socket); err != nil {
			return h, err
		}
		h.socket = cfg.Socket
		defer listener.Close()
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return h, fmt.Errorf("monitor: %w", err)
	}
	// Non-blocking, so that os.File polls it and read deadlines work.
	_ = unix.SetNonblock(fds[0], true)
	h.ctl = os.NewFile(uintptr(fds[0]), "monitor-control")
	child := os.NewFile(uintptr(fds[1]), "monitor-control-child")
	defer child.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return h, err
	}
	defer null.Close()

	// Only what is passed below reaches the monitor: not the shim's pipes
	// (go-runc waits for create's output to end), not preserved fds.
	if err := CloseOnExecFrom(3); err != nil {
		return h, fmt.Errorf("monitor: %w", err)
	}
	cmd := exec.Command(exe, MonitorCommand, id)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{child}
	if listener != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, listener)
	}
	for _, f := range pod.proxy {
		cfg.ProxyFDs = append(cfg.ProxyFDs, 3+len(cmd.ExtraFiles))
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	if len(pod.proxy) > 0 {
		cfg.Netns, cfg.Nameservers = pod.netns, podNameservers(s)
	}
	// Not in the bundle: a working directory there would keep the
	// container's root file system busy.
	cmd.Dir = "/"
	// A session of its own: no signal to the shim's process group
	// reaches it, and no terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return h, fmt.Errorf("start the container's monitor: %w", err)
	}
	h.proc = cmd.Process
	data, err := json.Marshal(cfg)
	if err != nil {
		return h, err
	}
	if _, err := h.ctl.Write(data); err != nil {
		return h, fmt.Errorf("monitor: %w", err)
	}
	return h, nil
}

// listenMonitorSocket binds the monitor's socket, which only its owner may
// connect to, and returns it as a file for the monitor.
func listenMonitorSocket(path string) (*os.File, error) {
	_ = os.Remove(path) // a crashed create's
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("monitor socket: %w", err)
	}
	l.SetUnlinkOnClose(false)
	defer l.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("monitor socket: %w", err)
	}
	f, err := l.File()
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("monitor socket: %w", err)
	}
	return f, nil
}

// attach tells the monitor the container's init pid and waits until it
// serves: the proxy listens inside the container and the init's listener
// arrived. Create writes the pid file only then.
func (h *monitorHandle) attach(pid int) error {
	data, err := json.Marshal(monitorStart{Pid: pid})
	if err != nil {
		return err
	}
	if _, err := h.ctl.Write(data); err != nil {
		return fmt.Errorf("the container's monitor: %w", err)
	}
	_ = h.ctl.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := h.ctl.Read(buf)
	if err != nil || n == 0 {
		return fmt.Errorf("the container's monitor did not start: %v (see the log)", err)
	}
	var r monitorReply
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return fmt.Errorf("the container's monitor: %w", err)
	}
	if r.Error != "" {
		return fmt.Errorf("the container's monitor: %s", r.Error)
	}
	h.done = true
	h.ctl.Close()
	// Never waited for: it outlives create, and the shim (the nearest
	// subreaper) or init reaps it.
	_ = h.proc.Release()
	return nil
}

// abort ends a monitor that never got to serve: with its control socket
// closed it exits, and create, failing, waits for that, so that nothing of
// the container is left when create returns.
func (h *monitorHandle) abort() {
	if h == nil || h.done {
		return
	}
	if h.ctl != nil {
		h.ctl.Close()
	}
	if h.proc != nil {
		exited := make(chan struct{})
		go func() {
			_, _ = h.proc.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			// Through the process's handle (a pidfd): never another
			// process that took its pid.
			_ = h.proc.Kill()
			<-exited
		}
	}
	if h.socket != "" {
		_ = os.Remove(h.socket)
	}
}

// monitorState reads the monitor's pid file: the pid, and whether the
// monitor still holds its lock. Nil when the container has no monitor.
func monitorState(root, id string) *MonitorState {
	f, err := os.Open(filepath.Join(root, id, monitorPidName))
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 32))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	return &MonitorState{Pid: pid, Running: errors.Is(err, unix.EWOULDBLOCK)}
}

// waitMonitor gives a container's monitor, whose init has ended, up to
// timeout to finish writing its records. f is its pid file, opened before
// the state directory was removed; the caller closes it.
func waitMonitor(f *os.File, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// monitorListenerFD is where the monitor finds the socket libcontainer
// hands seccomp listeners to, when the configuration names one.
const monitorListenerFD = 4

// RunMonitor is the monitor process (`cordon oci-monitor ID`): ctl is the
// control socket from create (fd 3). It returns when the container's init
// has ended, or create failed.
func RunMonitor(ctl *os.File) error {
	signal.Ignore(unix.SIGHUP, unix.SIGINT, unix.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM)

	buf := make([]byte, 1<<20)
	n, err := ctl.Read(buf)
	if err != nil || n == 0 {
		return nil // create went away
	}
	var cfg monitorConfig
	if err := json.Unmarshal(buf[:n], &cfg); err != nil {
		return fmt.Errorf("monitor configuration: %w", err)
	}
	if cfg.Log != "" {
		if err := ConfigureLog(cfg.Log, cfg.LogFormat, false); err != nil {
			logrus.SetOutput(io.Discard)
		}
	} else {
		logrus.SetOutput(io.Discard)
	}
	m := &monitor{cfg: cfg, rec: newRecorder(cfg.ID, cfg.Command, "", nil), firstListener: make(chan struct{}),
		proxyListeners: make(chan []net.Listener, 1)}
	defer m.end()
	if err := m.lock(); err != nil {
		return err
	}
	if cfg.Socket != "" {
		listener := os.NewFile(monitorListenerFD, "monitor-listener")
		l, err := net.FileListener(listener)
		listener.Close()
		if err != nil {
			return fmt.Errorf("monitor socket: %w", err)
		}
		m.listener = l.(*net.UnixListener)
		go m.accept()
	}
	if cfg.Proxy != nil {
		pc := netproxy.Config{
			Run:            cfg.ID,
			AllowedDomains: cfg.Proxy.AllowedDomains,
			OnDecision: func(d netproxy.Decision) {
				logrus.Debug(d.String())
				if !d.Allowed && d.Reason != "" {
					v := NetworkViolation(d)
					if v.Hint != "" {
						v.Hint = "allow with the annotation " + spec.AnnotationAllowedDomains
					}
					m.rec.add(v)
				}
			},
		}
		if cfg.Netns != "" {
			// The pod's connections are the pod's: its address, its
			// network policies, its DNS.
			pc.Dial = podDial(cfg.Netns)
			pc.Resolver = podResolver(cfg.Nameservers, pc.Dial)
		}
		p, err := netproxy.New(pc)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		m.proxy = p
	}

	n, err = ctl.Read(buf)
	if err != nil || n == 0 {
		return nil // create failed before the container ran
	}
	var st monitorStart
	if err := json.Unmarshal(buf[:n], &st); err != nil || st.Pid <= 0 {
		return fmt.Errorf("monitor: bad start message %q", buf[:n])
	}
	// The init is create's child and create waits for the reply: its pid
	// cannot have been reused.
	pidfd, err := unix.PidfdOpen(st.Pid, 0)
	if err == nil {
		err = m.serve(pidfd, st.Pid)
	}
	reply := monitorReply{}
	if err != nil {
		reply.Error = err.Error()
	}
	data, _ := json.Marshal(reply)
	_, _ = ctl.Write(data)
	ctl.Close()
	if err != nil {
		return err
	}
	defer unix.Close(pidfd)

	flushed := make(chan struct{})
	stopFlush := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.flush()
			case <-stopFlush:
				return
			}
		}
	}()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	select {
	case <-exited:
	case <-term:
		logrus.Warnf("cordon monitor of %s: terminated; the container keeps running without its proxy and its records", cfg.ID)
	}
	close(stopFlush)
	<-flushed
	return nil
}

// monitor is the state of one container's monitor.
type monitor struct {
	cfg      monitorConfig
	rec      *recorder
	pidFile  *os.File
	listener *net.UnixListener
	proxy    *netproxy.Proxy

	// proxyListeners are the proxy's sockets from the container's hook
	// (monitorConfig.ProxyFromHook).
	proxyListeners chan []net.Listener

	mu            sync.Mutex
	supervisors   []*supervisor
	firstListener chan struct{}
	gotFirst      sync.Once
	written       int  // records already in the store
	storeFailed   bool // said once
}

// lock writes the pid file and holds its lock for the monitor's life.
func (m *monitor) lock() error {
	f, err := os.OpenFile(m.cfg.PidFile, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("monitor pid file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return fmt.Errorf("monitor pid file: %w", err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid())); err != nil {
		f.Close()
		return fmt.Errorf("monitor pid file: %w", err)
	}
	m.pidFile = f
	return nil
}

// serve starts what the container needs once its init (pid, pidfd) runs:
// the proxy's listeners inside its network namespace, and the init's
// seccomp listener, which libcontainer sent during create's Start.
func (m *monitor) serve(pidfd, pid int) error {
	if m.proxy != nil {
		var ls []net.Listener
		var err error
		switch {
		case len(m.cfg.ProxyFDs) > 0:
			if ls, err = fdListeners(m.cfg.ProxyFDs); err != nil {
				err = fmt.Errorf("the proxy's sockets from create: %w", err)
			}
		case m.cfg.ProxyFromHook:
			// The hook ran during create's Start, before the init's pid
			// came here: its sockets are there or never come.
			select {
			case ls = <-m.proxyListeners:
			case <-time.After(10 * time.Second):
				err = errors.New("no proxy sockets from the container's hook")
			}
		default:
			ls, err = listenIn(pidfd, pid, []string{m.cfg.Proxy.HTTP, m.cfg.Proxy.SOCKS})
		}
		if err != nil {
			return err
		}
		for _, l := range ls {
			go func() { _ = m.proxy.Serve(l) }()
		}
	}
	if m.listener != nil {
		select {
		case <-m.firstListener:
		case <-time.After(10 * time.Second):
			return errors.New("no seccomp listener from the container's init")
		}
	}
	return nil
}

// fdListeners are the listening sockets at the descriptors fds (create's,
// or the container's hook's), which it takes: on an error every one of
// them is closed.
func fdListeners(fds []int) ([]net.Listener, error) {
	var ls []net.Listener
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "proxy-listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			for _, fd := range fds[i+1:] {
				unix.Close(fd)
			}
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// listenIn makes listening TCP sockets at addrs inside the network
// namespace of the process pidfd refers to. A thread enters the
// namespace and dies with its goroutine; the sockets stay there.
func listenIn(pidfd, pid int, addrs []string) ([]net.Listener, error) {
	type result struct {
		ls  []net.Listener
		err error
	}
	c := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, in the container's network
		// namespace, ends with this goroutine.
		goruntime.LockOSThread()
		err := unix.Setns(pidfd, unix.CLONE_NEWNET)
		if errors.Is(err, unix.EINVAL) {
			// Before Linux 5.8, setns takes no pidfd.
			var ns int
			if ns, err = unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				err = unix.Setns(ns, unix.CLONE_NEWNET)
				unix.Close(ns)
			}
		}
		if err != nil {
			c <- result{err: fmt.Errorf("enter the container's network namespace: %w", err)}
			return
		}
		var ls []net.Listener
		for _, a := range addrs {
			l, err := net.Listen("tcp4", a)
			if err != nil {
				for _, l := range ls {
					l.Close()
				}
				c <- result{err: fmt.Errorf("proxy listener inside the container: %w", err)}
				return
			}
			ls = append(ls, l)
		}
		c <- result{ls: ls}
	}()
	r := <-c
	return r.ls, r.err
}

// accept receives seccomp listeners from libcontainer: one for the init,
// one for each process exec'd into the container.
func (m *monitor) accept() {
	for {
		conn, err := m.listener.AcceptUnix()
		if err != nil {
			return // closed: the monitor ends
		}
		go func() {
			defer conn.Close()
			if err := m.receive(conn); err != nil {
				logrus.Warnf("cordon monitor of %s: %v", m.cfg.ID, err)
			}
		}()
	}
}

// receive reads one ContainerProcessState with its listener and supervises
// the listener.
func (m *monitor) receive(conn *net.UnixConn) error {
	// Only the runtime, running as the monitor's user, hands listeners.
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("refused a listener from uid %d", cred.Uid)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return fmt.Errorf("seccomp listener: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, msg := range msgs {
			if got, err := unix.ParseUnixRights(&msg); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	// The state may be longer than one read.
	rest, _ := io.ReadAll(io.LimitReader(conn, 16<<20))
	data := append(buf[:n], rest...)
	var hook proxyHookMessage
	if json.Unmarshal(data, &hook) == nil && hook.Proxy != "" {
		return m.receiveProxy(conn, hook, fds)
	}
	var st specs.ContainerProcessState
	if err := json.Unmarshal(data, &st); err != nil || len(fds) != 1 || len(st.Fds) != 1 ||
		st.Fds[0] != specs.SeccompFdName || st.State.ID != m.cfg.ID {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return fmt.Errorf("seccomp listener: unexpected message (%d descriptors, %v)", len(fds), err)
	}
	sv, err := newListenerSupervisor(m.cfg.Notify, m.rec)
	if err != nil {
		unix.Close(fds[0])
		return err
	}
	m.mu.Lock()
	m.supervisors = append(m.supervisors, sv)
	m.mu.Unlock()
	go func() {
		defer close(sv.done)
		defer unix.Close(fds[0])
		sv.supervise(fds[0])
	}()
	m.gotFirst.Do(func() { close(m.firstListener) })
	logrus.Debugf("cordon monitor of %s: supervising process %d", m.cfg.ID, st.Pid)
	return nil
}

// proxyHookMessage is what the proxy hook sends the monitor with the
// proxy's two listening sockets (HTTP, SOCKS5).
type proxyHookMessage struct {
	// Proxy is the container's id.
	Proxy string `json:"cordonProxy"`
}

// receiveProxy takes the proxy's listening sockets from the container's
// hook, and says so.
func (m *monitor) receiveProxy(conn *net.UnixConn, msg proxyHookMessage, fds []int) error {
	closeAll := func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if !m.cfg.ProxyFromHook || msg.Proxy != m.cfg.ID || len(fds) != 2 {
		closeAll()
		return fmt.Errorf("proxy sockets: unexpected message (%d descriptors for %q)", len(fds), msg.Proxy)
	}
	ls, err := fdListeners(fds)
	if err != nil {
		return fmt.Errorf("proxy sockets: %w", err)
	}
	select {
	case m.proxyListeners <- ls:
	default:
		for _, l := range ls {
			l.Close()
		}
		return errors.New("proxy sockets: sent twice")
	}
	_, _ = conn.Write([]byte("ok"))
	return nil
}

// ProxyListen is the proxy hook (`cordon oci-hook proxy-listen SOCKET`), a
// createContainer hook: it runs in the container's namespaces, reads the
// container's state (the OCI hook protocol, on stdin), makes the proxy's
// listening sockets at the addresses cordon applied, and sends them to the
// monitor's socket.
func ProxyListen(stdin io.Reader, socket string) error {
	var st specs.State
	if err := json.NewDecoder(stdin).Decode(&st); err != nil {
		return fmt.Errorf("proxy hook: container state: %w", err)
	}
	a := appliedOf(st.Annotations)
	if a == nil || a.Proxy == nil {
		return errors.New("proxy hook: the container has no proxy")
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, addr := range []string{a.Proxy.HTTP, a.Proxy.SOCKS} {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			return fmt.Errorf("proxy hook: listen inside the container: %w", err)
		}
		f, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return fmt.Errorf("proxy hook: %w", err)
		}
		files = append(files, f)
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("proxy hook: the container's monitor: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	msg, err := json.Marshal(proxyHookMessage{Proxy: st.ID})
	if err != nil {
		return err
	}
	if _, _, err := conn.WriteMsgUnix(msg, unix.UnixRights(int(files[0].Fd()), int(files[1].Fd())), nil); err != nil {
		return fmt.Errorf("proxy hook: the container's monitor: %w", err)
	}
	if err := conn.CloseWrite(); err != nil {
		return fmt.Errorf("proxy hook: the container's monitor: %w", err)
	}
	ack := make([]byte, 2)
	if _, err := io.ReadFull(conn, ack); err != nil || string(ack) != "ok" {
		return fmt.Errorf("proxy hook: the container's monitor did not take the sockets (%v): see its log", err)
	}
	return nil
}

// flush appends the records not yet in the store.
func (m *monitor) flush() {
	vs, _ := m.rec.violations()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(vs) <= m.written {
		return
	}
	if err := AppendViolations(m.cfg.Store, vs[m.written:]); err != nil {
		if !m.storeFailed {
			logrus.Warnf("cordon monitor of %s: could not record what the container was refused: %v", m.cfg.ID, err)
			m.storeFailed = true
		}
		return
	}
	m.written = len(vs)
}

// end stops everything and writes what is left: the records, and the
// notes about them to the log.
func (m *monitor) end() {
	if m.listener != nil {
		m.listener.Close()
	}
	m.mu.Lock()
	svs := m.supervisors
	m.supervisors = nil
	m.mu.Unlock()
	for _, sv := range svs {
		sv.close()
	}
	if m.proxy != nil {
		m.proxy.Close()
	}
	m.flush()
	vs, dropped := m.rec.violations()
	for _, n := range notes(m.cfg.ID, vs, dropped) {
		logrus.Infof("cordon: %s", n)
	}
	if m.cfg.Socket != "" {
		_ = os.Remove(m.cfg.Socket)
	}
	if m.pidFile != nil {
		m.pidFile.Close()
	}
}
