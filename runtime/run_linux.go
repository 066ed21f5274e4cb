package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"

	// libcontainer's namespace setup runs as a C constructor of the
	// re-executed binary; device rules need the cgroup device manager.
	_ "github.com/opencontainers/cgroups/devices"
	_ "github.com/opencontainers/runc/libcontainer/nsenter"
)

func init() {
	// libcontainer logs through logrus; its errors are returned to us.
	logrus.SetOutput(io.Discard)
	if os.Getenv("CORDON_DEBUG") != "" {
		logrus.SetOutput(os.Stderr)
		logrus.SetLevel(logrus.DebugLevel)
		logrus.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, TimestampFormat: "05.000000"})
	}
}

// Run executes the spec and waits for the command. The returned status is
// the command's exit status (128+N when a signal N ended it); an error
// means cordon itself failed and the command may not have run.
func Run(ctx context.Context, s *specs.Spec, o Options) (int, error) {
	if spec.Contained(s) {
		return runContained(ctx, s, o)
	}
	sb, err := newSandbox(s, o, nil)
	if err != nil {
		return 0, err
	}
	defer sb.finish()
	process := sb.process

	var term *terminal
	if s.Process.Terminal {
		term, err = newTerminal(process, o.Stdin, o.Stdout)
		if err != nil {
			return 0, err
		}
		defer term.close()
	} else {
		process.Stdin, process.Stdout, process.Stderr = o.Stdin, o.Stdout, o.Stderr
		if o.Stdin == nil {
			process.Stdin = nil
		}
	}
	var out *limitedOutput
	if o.OutputLimit > 0 && term == nil {
		if out, err = newLimitedOutput(o.Stdout, o.Stderr, o.OutputLimit); err != nil {
			return 0, err
		}
		process.Stdout, process.Stderr = out.stdoutW, out.stderrW
	} else if o.OutputLimit > 0 {
		term.limit = o.OutputLimit
	}

	// Forward signals from the moment the process exists. Taking every
	// signal costs the Go runtime a handshake with its signal thread per
	// signal (0.2-1 ms in all), so it is done while libcontainer starts
	// the sandbox; until a signal is taken, it ends cordon as it did
	// before the run, and the lifeline the sandbox with it.
	sigs := make(chan os.Signal, 32)
	notified := make(chan struct{})
	go func() {
		signal.Notify(sigs)
		close(notified)
	}()
	// Letting them go costs as much, and nothing after the run needs them
	// back: it is done meanwhile (a signal that comes first is dropped).
	defer func() { go signal.Stop(sigs) }()

	sb.tr.mark("prestart")
	launched := sb.tr.watch("starting the sandbox")
	err = sb.launch()
	launched()
	<-notified
	if err != nil {
		return 0, err
	}
	if out != nil {
		out.started()
	}
	sb.tr.mark("started")
	if term != nil {
		if err := term.attach(); err != nil {
			sb.kill()
			return 0, err
		}
	}
	if o.Started != nil {
		o.Started()
	}
	sb.readCgroupPaths()
	return sb.wait(ctx, sigs, term, out)
}

// readCgroupPaths finds where the sandbox's usage is read once its command
// is over, while the command runs: libcontainer's State costs ~0.3 ms,
// which after the command would add to the run.
func (sb *sandbox) readCgroupPaths() {
	if st, err := sb.c.State(); err == nil {
		sb.cgroupPaths = st.CgroupPaths
		if sb.cgroupPaths == nil {
			sb.cgroupPaths = map[string]string{}
		}
	}
}

// sandbox is one run's sandbox on the host side: the container, its init
// process, and what serves it (the lifeline, the seccomp supervisor, the
// proxy bridge, the record of what it refused).
type sandbox struct {
	o       Options
	spec    *specs.Spec
	tr      *tracer
	c       *libcontainer.Container
	process *libcontainer.Process
	sv      *supervisor
	br      *bridge
	record  *Recorder
	// lifeR is the init's end of the lifeline, closed once it has its own.
	lifeR *os.File
	// started is when the command started: the wall time of its usage.
	started time.Time
	// since is its scrubClock reading, which planted files are compared
	// with.
	since time.Time
	// undo is what finish does, last first: the order in which Run used
	// to defer it.
	undo []func()
	// released ends the OS thread that started the init (see start).
	released chan struct{}
	// reported is where report's part of undo begins.
	reported int
	// pooled: the sandbox was made before its command (see Pooled).
	pooled bool
	// initBlocks: the init was seen blocking the signals it forwards.
	initBlocks bool
	// cgroupPaths are the sandbox's cgroup directories, read while its
	// command ran or, pooled, while it waited (usage reads them).
	cgroupPaths map[string]string
	// reaped: its init has exited and been waited for, and with it every
	// process of the sandbox (PID 1 of their namespace).
	reaped bool
}

// sysAdmin reports whether this process has CAP_SYS_ADMIN. A root caller
// without it (root in a container, with Docker's capabilities) makes its
// sandbox as an unprivileged one does: libcontainer's root path joins the
// sandbox's mount namespace from outside its user namespace, which only
// that capability allows.
func sysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// newSandbox creates the sandbox for s (libcontainer's create) and
// everything that serves it, short of starting its init. extra are more
// files for the init, at their descriptor numbers. On error, nothing is
// left behind.
func newSandbox(s *specs.Spec, o Options, extra map[int]*os.File) (_ *sandbox, err error) {
	sb := &sandbox{spec: s, tr: newTracer(), released: make(chan struct{})}
	sb.undo = append(sb.undo, func() { sb.tr.mark("end") })
	defer func() {
		if err != nil {
			sb.finish()
		}
	}()
	if o.Root == "" {
		o.Root = StateRoot()
	}
	if o.ID == "" {
		o.ID = NewID()
	}
	rootless := os.Geteuid() != 0 || !sysAdmin()
	// The init binds the host view itself (see bindHostView), and cordon's
	// init installs the seccomp profile, compiled once on the host (see
	// spec.InitSeccompFD): libcontainer would compile it in every sandbox.
	forLibcontainer, view := takeHostView(s)
	forLibcontainer = withoutSeccomp(forLibcontainer)
	config, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:   o.ID,
		Spec:         forLibcontainer,
		RootlessEUID: rootless,
		// A root caller's spec without a cgroup (spec.WithCgroupsPath: a
		// container's read-only cgroup file system) gets none, as a
		// rootless one: libcontainer's attempt is let fail.
		RootlessCgroups: rootless || s.Linux == nil || s.Linux.CgroupsPath == "",
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox config: %w", err)
	}
	// If cordon dies while libcontainer's setup process runs, so does it.
	config.ParentDeathSignal = int(unix.SIGKILL)
	var program *os.File
	if s.Linux != nil && s.Linux.Seccomp != nil {
		if program, err = seccompProgram(o.Root, s.Linux.Seccomp); err != nil {
			return nil, err
		}
		sb.undo = append(sb.undo, func() { program.Close() })
	}

	if sb.process, err = newProcess(s.Process); err != nil {
		return nil, err
	}

	sb.tr.mark("config")
	// Held for the whole run: the moment cordon is gone, even by SIGKILL,
	// GC knows the run is an orphan.
	unlock, err := lockRun(o.Root, o.ID)
	if err != nil {
		return nil, err
	}
	sb.undo = append(sb.undo, unlock)
	sb.c, err = libcontainer.Create(o.Root, o.ID, config)
	sb.tr.mark("created")
	if err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	sb.undo = append(sb.undo, func() { destroy(sb.c, sb.reaped || !sb.initStarted()) })
	// What follows is undone by report, the rest by release.
	sb.reported = len(sb.undo)
	o.Meta.Scrub = s.Annotations[spec.AnnotationScrub]
	if err := writeMeta(o.Root, o.ID, o.Meta); err != nil {
		return nil, err
	}
	// Once the sandbox's processes are gone, the protected paths are
	// checked (a crashed run's are checked by GC).
	sb.started, sb.since = time.Now(), scrubClock()
	sb.undo = append(sb.undo, func() {
		for _, msg := range scrub(sb.spec, sb.o.ID, sb.since) {
			note(sb.o, msg)
		}
		for _, msg := range sb.sv.checkMade(sb.o.ID) {
			note(sb.o, msg)
		}
	})

	// The init watches this pipe: when cordon goes away, even by SIGKILL,
	// its end closes and the init ends the sandbox.
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("lifeline pipe: %w", err)
	}
	sb.lifeR = lifeR
	sb.undo = append(sb.undo, func() { lifeW.Close(); sb.lifeR.Close() })
	rules, err := landlockFile(s)
	if err != nil {
		return nil, err
	}
	if rules != nil {
		sb.undo = append(sb.undo, func() { rules.Close() })
	}
	if o.Proxy != nil {
		o.Proxy.Run = o.ID
	}
	sb.o = o
	// What the sandbox refuses is recorded and noted once it is over
	// (last first: the supervisor and the proxy stop, then the record is
	// written).
	sb.record = NewRecorder(o)
	sb.undo = append(sb.undo, func() { sb.record.Finish() })
	if sb.sv, err = newSupervisor(s, sb.record.rec); err != nil {
		return nil, err
	}
	var svChild *os.File
	if sb.sv != nil {
		sb.undo = append(sb.undo, sb.sv.close)
		// Its hold on the mount namespace goes with the sandbox, after
		// the report (see supervisor.drop).
		sb.undo = slices.Insert(sb.undo, sb.reported, sb.sv.drop)
		sb.reported++
		svChild = sb.sv.child
	}
	if sb.br, err = newBridge(s, o.Proxy, sb.record.rec); err != nil {
		return nil, err
	}
	var brChild *os.File
	if sb.br != nil {
		sb.undo = append(sb.undo, sb.br.close)
		brChild = sb.br.child
	}
	// The init finds each at its fixed descriptor number (spec.Init*FD).
	files := map[int]*os.File{
		spec.InitParentFD:   lifeR,
		spec.InitSeccompFD:  program,
		spec.InitLandlockFD: rules,
		spec.InitProxyFD:    brChild,
		spec.InitNotifyFD:   svChild,
	}
	if len(view) > 0 {
		f, err := hostViewFile(hostView{root: s.Root.Path, entries: view})
		if err != nil {
			return nil, err
		}
		sb.undo = append(sb.undo, func() { f.Close() })
		files[initHostViewFD] = f
	}
	maps.Copy(files, extra)
	if o.Fd3 != nil {
		files[initPassFD] = o.Fd3
		sb.process.Args = passArgs(sb.process.Args)
	}
	if sb.process.ExtraFiles, err = initFiles(files); err != nil {
		return nil, err
	}
	return sb, nil
}

// launch starts the init, then the supervisor and the proxy bridge that
// serve it.
func (sb *sandbox) launch() error {
	err := start(sb.c, sb.process, sb.released)
	sb.lifeR.Close()
	if err != nil {
		return fmt.Errorf("start sandbox: %w", err)
	}
	if sb.sv != nil {
		pid, err := sb.process.Pid()
		if err != nil {
			sb.kill()
			return fmt.Errorf("start sandbox: %w", err)
		}
		sb.sv.start(pid)
	}
	if sb.br != nil {
		if err := sb.br.serve(); err != nil {
			sb.kill()
			return err
		}
	}
	return nil
}

// initStarted reports whether the sandbox's init was started. One whose
// start failed half way (cordon serve out of descriptors) has nothing to
// end, and libcontainer panics asking about it: its container holds an
// init process that has none.
func (sb *sandbox) initStarted() bool {
	if sb.process == nil {
		return false
	}
	_, err := sb.process.Pid()
	return err == nil
}

// kill ends a sandbox whose run cannot go on, and reaps its init.
func (sb *sandbox) kill() {
	if !sb.initStarted() {
		return
	}
	_ = sb.c.Signal(unix.SIGKILL)
	st, _ := sb.process.Wait()
	sb.reaped = st != nil
}

// finish releases the sandbox, last made first: the bridge and the
// supervisor stop, the record is written, the protected paths are checked,
// the container is destroyed and the run lock let go.
func (sb *sandbox) finish() {
	sb.report()
	sb.release()
}

// report is finish up to the checks and the record: all that a run says
// once its command is over.
func (sb *sandbox) report() {
	for i := len(sb.undo) - 1; i >= sb.reported; i-- {
		sb.undo[i]()
		sb.tr.mark(fmt.Sprintf("report %d", i))
	}
	sb.undo = sb.undo[:sb.reported]
}

// release is the rest of finish: the container is destroyed and the run
// lock let go.
func (sb *sandbox) release() {
	for i := len(sb.undo) - 1; i >= 0; i-- {
		sb.undo[i]()
		if i > 0 { // the first is the mark "end"
			sb.tr.mark(fmt.Sprintf("release %d", i))
		}
	}
	sb.undo = nil
	if sb.released != nil {
		close(sb.released)
		sb.released = nil
	}
}

// wait waits for the command, passing on the signals from sigs, and ends
// it at the timeout or when ctx is done; the status is the command's.
func (sb *sandbox) wait(ctx context.Context, sigs <-chan os.Signal, term *terminal, out *limitedOutput) (int, error) {
	o, container, process := sb.o, sb.c, sb.process
	waited := make(chan waitResult, 1)
	go func() {
		st, err := process.Wait()
		waited <- waitResult{st, err}
	}()
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	timedOut := false
	for {
		select {
		case sig := <-sigs:
			if !sb.initBlocks {
				sb.initBlocks = awaitBlocked(process, sig.(unix.Signal), initBlockLimit)
			}
			forward(container, term, sig.(unix.Signal), sb.pooled)
		case <-ctx.Done():
			_ = container.Signal(unix.SIGKILL)
		case <-timeout:
			// The init is PID 1 of the sandbox's pid namespace: killing it
			// ends every process in it.
			timedOut = true
			_ = container.Signal(unix.SIGKILL)
		case w := <-waited:
			sb.reaped = w.state != nil // (an error says how it exited)
			sb.tr.mark("waited")
			if term != nil {
				term.drain(100 * time.Millisecond)
			}
			if out != nil {
				out.wait()
			}
			status, err := exitStatus(w.state, w.err)
			if err != nil {
				return status, err
			}
			sb.tr.mark("drained")
			u := usage(container, sb.cgroupPaths, w.state, time.Since(sb.started))
			sb.tr.mark("usage")
			switch {
			case timedOut:
				status = 124
				note(o, fmt.Sprintf("timed out after %s: the command and everything it started were ended", o.Timeout))
			case u.OOMKills > 0 && status == 128+int(unix.SIGKILL):
				note(o, fmt.Sprintf("killed: out of memory (the sandbox's limit is %s)", size(u.MemoryLimit)))
			case u.OOMKills > 0:
				note(o, "a process was killed for lack of memory (the sandbox's limit is "+size(u.MemoryLimit)+")")
			}
			if o.Stats != nil {
				o.Stats(u)
			}
			return status, nil
		}
	}
}

func note(o Options, msg string) {
	if o.Notify != nil {
		o.Notify(msg)
	}
}

type waitResult struct {
	state *os.ProcessState
	err   error
}

// start starts the container's init from an OS thread that lives as long as
// the run: the kernel's parent-death signal follows the thread that forked,
// not the process, and Go may retire idle threads. The thread ends once
// released is closed, after the init is gone (cordon serve starts many).
func start(c *libcontainer.Container, p *libcontainer.Process, released <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		err := c.Run(p)
		errc <- err
		// Never unlocked: a goroutine that returns locked takes its thread
		// with it.
		if err == nil {
			<-released
		}
	}()
	return <-errc
}

// initBlockLimit bounds how long a signal waits for the init to block it.
const initBlockLimit = 2 * time.Second

// awaitBlocked waits, at most limit, until the sandbox's init blocks sig
// (it then reads it from its signalfd and passes it on), and reports
// whether it does. Until then the init is libcontainer's, or cordon's
// setting itself up: a pid namespace's init gets no signal it has no
// handler for, so a SIGTERM or SIGINT forwarded then would be lost and
// the command would run on after cordon was told to stop it.
func awaitBlocked(p *libcontainer.Process, sig unix.Signal, limit time.Duration) bool {
	pid, err := p.Pid()
	if err != nil {
		return false
	}
	path := fmt.Sprintf("/proc/%d/status", pid)
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile(path)
		if err != nil || strings.Contains(string(data), "\nState:\tZ") {
			return false // gone: nothing to wait for
		}
		if blocked, ok := sigBlocked(string(data), sig); ok && blocked {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// sigBlocked reads from a /proc/PID/status whether sig is in SigBlk.
func sigBlocked(status string, sig unix.Signal) (blocked, ok bool) {
	for line := range strings.Lines(status) {
		if v, found := strings.CutPrefix(line, "SigBlk:"); found {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil || sig < 1 || sig > 64 {
				return false, false
			}
			return mask&(1<<(uint(sig)-1)) != 0, true
		}
	}
	return false, false
}

// forward passes a signal cordon received on to the sandbox's init, which
// passes it to the command's process group.
func forward(c *libcontainer.Container, term *terminal, sig unix.Signal, pooled bool) {
	switch sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
		return
	case unix.SIGWINCH:
		if term != nil {
			term.resize()
		}
		return
	case unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		// Job control on the caller's terminal: stop the command, then
		// cordon, so the caller's shell gets its prompt back. SIGCONT
		// resumes both. (cordon serve's client stops itself.)
		_ = c.Signal(unix.SIGTSTP)
		if !pooled {
			_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
		}
		return
	}
	_ = c.Signal(sig)
}

// exitStatus maps the init's end to the command's exit status.
func exitStatus(st *os.ProcessState, err error) (int, error) {
	if st == nil {
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) {
			return ee.ExitCode(), nil
		}
		return 0, fmt.Errorf("wait for sandbox: %w", err)
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok {
		return st.ExitCode(), nil
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// destroy removes the sandbox: its processes, cgroup and state. reaped
// says its init is known to be gone, and with it every process of the
// sandbox: then nothing is left to end (asking libcontainer, which reads
// the freezer and /proc, costs a run 0.1-0.5 ms).
func destroy(c *libcontainer.Container, reaped bool) {
	if !reaped {
		if st, err := c.Status(); err == nil && st != libcontainer.Stopped {
			_ = c.Signal(unix.SIGKILL)
		}
	}
	for range 50 {
		if err := c.Destroy(); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newProcess converts the spec's process to libcontainer's, as the
// sandbox's first process (see ociProcess).
func newProcess(p *specs.Process) (*libcontainer.Process, error) {
	if p == nil {
		return nil, errors.New("spec has no process")
	}
	lp, err := ociProcess(p)
	if err != nil {
		return nil, err
	}
	lp.Init = true
	// Without a level, the init's C stages log every step at debug level
	// (some thirty JSON lines a run), which the parent reads and decodes
	// only to drop: logrus is quiet unless CORDON_DEBUG.
	lp.LogLevel = strconv.Itoa(int(logrus.GetLevel()))
	// cordon's own init takes the rlimits instead, and sets them before
	// it starts the command: libcontainer would set them in its Go init
	// process, whose runtime then dies under an address space limit
	// ("fatal error: runtime: cannot allocate memory").
	if len(p.Args) > 1 && p.Args[0] == spec.InitPath && p.Args[1] == spec.InitCommand {
		lp.Rlimits = nil
		lp.Args, err = withInitRlimits(p.Args, p.Rlimits)
	}
	return lp, err
}

var rlimitTypes = map[string]int{
	"RLIMIT_CPU": unix.RLIMIT_CPU, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE,
	"RLIMIT_DATA": unix.RLIMIT_DATA, "RLIMIT_STACK": unix.RLIMIT_STACK,
	"RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_RSS": unix.RLIMIT_RSS,
	"RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_NOFILE": unix.RLIMIT_NOFILE,
	"RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK, "RLIMIT_AS": unix.RLIMIT_AS,
	"RLIMIT_LOCKS": unix.RLIMIT_LOCKS, "RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_MSGQUEUE": unix.RLIMIT_MSGQUEUE, "RLIMIT_NICE": unix.RLIMIT_NICE,
	"RLIMIT_RTPRIO": unix.RLIMIT_RTPRIO, "RLIMIT_RTTIME": unix.RLIMIT_RTTIME,
}

const metaFile = "cordon.json"

func writeMeta(root, id string, m Meta) error {
	m.Owner = os.Getpid()
	m.OwnerTime = startTime(m.Owner)
	if m.Created.IsZero() {
		// What GC's scrub of a crashed run compares ctimes with.
		m.Created = scrubClock()
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// Whole or not at all: a concurrent GC must never read half of it.
	path := stateFile(root, id, metaFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("record sandbox: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record sandbox: %w", err)
	}
	return nil
}

// initPassFD is the descriptor the init passes on to the command as its
// descriptor 3 (Options.Fd3; --pass-fd).
const initPassFD = 10

// passArgs are the init's arguments args with --pass-fd.
func passArgs(args []string) []string {
	i := slices.Index(args, "--")
	if i < 0 {
		return args
	}
	return slices.Insert(slices.Clone(args), i, "--pass-fd="+strconv.Itoa(initPassFD))
}

// initFiles lays files out at their descriptor numbers (from 3, as
// ExtraFiles are passed), filling gaps with /dev/null.
func initFiles(byFD map[int]*os.File) ([]*os.File, error) {
	last := 0
	for fd, f := range byFD {
		if f != nil && fd > last {
			last = fd
		}
	}
	var files []*os.File
	for fd := 3; fd <= last; fd++ {
		f := byFD[fd]
		if f == nil {
			null, err := os.Open(os.DevNull)
			if err != nil {
				return nil, err
			}
			f = null
		}
		files = append(files, f)
	}
	return files, nil
}

// landlockFile returns the spec's Landlock rules, and extra ones, in the
// init's format, in a sealed memory file, or nil when the spec has none.
func landlockFile(s *specs.Spec, extra ...spec.LandlockRule) (*os.File, error) {
	raw := s.Annotations[spec.AnnotationLandlock]
	if raw == "" {
		return nil, nil
	}
	var rules []spec.LandlockRule
	if err := json.Unmarshal([]byte(raw), &rules); err != nil {
		return nil, fmt.Errorf("landlock rules: %w", err)
	}
	rules = append(rules, extra...)
	fd, err := unix.MemfdCreate("cordon-landlock", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("landlock rules: %w", err)
	}
	f := os.NewFile(uintptr(fd), "cordon-landlock")
	if _, err := f.Write(spec.EncodeLandlock(rules)); err != nil {
		f.Close()
		return nil, fmt.Errorf("landlock rules: %w", err)
	}
	// The init reads it with pread; nobody may change it meanwhile.
	_, _ = unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	return f, nil
}
