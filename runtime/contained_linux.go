package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/containerd/console"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// runContained runs a spec of the container mode (spec.ModeContainer):
// cordon's init, started as this process's child with no namespace around
// it, confines the command with the spec's Landlock rules and seccomp
// program, exactly as it does inside a full sandbox, minus the namespace
// steps. What serves it is the full sandbox's: the lifeline, the seccomp
// supervisor, the proxy (listening on the host's loopback, at ports chosen
// here), the record of refusals, the checks of the protected paths.
func runContained(ctx context.Context, s *specs.Spec, o Options) (status int, err error) {
	if o.Root == "" {
		o.Root = StateRoot()
	}
	if o.ID == "" {
		o.ID = NewID()
	}
	if s.Process == nil || len(s.Process.Args) < 2 {
		return 0, errors.New("spec has no process")
	}
	var undo []func()
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}()
	unlock, err := lockRun(o.Root, o.ID)
	if err != nil {
		return 0, err
	}
	undo = append(undo, unlock)
	// The run's state directory holds its record for GC and its private
	// temporary directory, both gone with the run (or with GC, after a
	// crash).
	dir := filepath.Join(o.Root, o.ID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, fmt.Errorf("state directory: %w", err)
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	tmp := spec.PrivateTmp(o.Root, o.ID)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return 0, fmt.Errorf("private temporary directory: %w", err)
	}
	o.Meta.Scrub = s.Annotations[spec.AnnotationScrub]
	if err := writeMeta(o.Root, o.ID, o.Meta); err != nil {
		return 0, err
	}
	started, since := time.Now(), scrubClock()
	snap, err := recordProtected(s, o.ID)
	if err != nil {
		return 0, err
	}
	if len(snap.Entries) > 0 {
		// For GC, should this cordon die before it puts them back.
		if err := snap.save(o.Root); err != nil {
			return 0, err
		}
	}
	var sv *supervisor // (made below, checked with the rest)
	undo = append(undo, func() {
		// What appeared goes first (a changed nested name is moved
		// aside), then what was there comes back.
		for _, msg := range scrub(s, o.ID, since) {
			note(o, msg)
		}
		for _, msg := range sv.checkMade(o.ID) {
			note(o, msg)
		}
		for _, msg := range snap.restore() {
			note(o, msg)
		}
	})

	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("lifeline pipe: %w", err)
	}
	undo = append(undo, func() { lifeW.Close(); lifeR.Close() })
	var program *os.File
	if s.Linux != nil && s.Linux.Seccomp != nil {
		if program, err = seccompProgram(o.Root, s.Linux.Seccomp); err != nil {
			return 0, err
		}
		undo = append(undo, func() { program.Close() })
	}
	if o.Proxy != nil {
		o.Proxy.Run = o.ID
	}
	record := NewRecorder(o)
	undo = append(undo, func() { record.Finish() })
	env := slices.Clone(s.Process.Env)
	var ports []spec.LandlockRule
	br, err := newBridge(s, o.Proxy, record.rec)
	if err != nil {
		return 0, err
	}
	if br != nil {
		undo = append(undo, br.close)
		br.child.Close()
		// The host's loopback is shared with everything else here: the
		// proxy listens where the kernel finds room, and the command's
		// TCP reaches those two ports and no other.
		var lns [2]net.Listener
		for i := range lns {
			if lns[i], err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
				return 0, fmt.Errorf("proxy: %w", err)
			}
			ln := lns[i]
			undo = append(undo, func() { ln.Close() })
			ports = append(ports, spec.LandlockRule{Access: "connect", Path: strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)})
			socks := i == 1
			go func() { _ = br.proxy.ServePort(ln, socks) }()
		}
		env = spec.ContainedProxyEnv(env, lns[0].Addr().(*net.TCPAddr).Port, lns[1].Addr().(*net.TCPAddr).Port, s.Process.Args[0])
	}
	rules, err := landlockFile(s, ports...)
	if err != nil {
		return 0, err
	}
	if rules == nil && s.Annotations[spec.AnnotationSandbox] == spec.ModeContainer {
		return 0, errors.New("the container mode's spec has no Landlock rules")
	}
	if rules != nil {
		undo = append(undo, func() { rules.Close() })
	}
	sv, err = newSupervisor(s, record.rec)
	if err != nil {
		return 0, err
	}
	var svChild *os.File
	if sv != nil {
		undo = append(undo, sv.close)
		svChild = sv.child
	}
	byFD := map[int]*os.File{
		spec.InitParentFD:   lifeR,
		spec.InitSeccompFD:  program,
		spec.InitLandlockFD: rules,
		spec.InitNotifyFD:   svChild,
	}
	initArgs := s.Process.Args
	if o.Fd3 != nil {
		byFD[initPassFD] = o.Fd3
		initArgs = passArgs(initArgs)
	}
	files, err := initFiles(byFD)
	if err != nil {
		return 0, err
	}
	args, err := withInitRlimits(initArgs, s.Process.Rlimits)
	if err != nil {
		return 0, err
	}
	cmd := &exec.Cmd{
		Path: args[0], Args: args, Env: env, Dir: s.Process.Cwd, ExtraFiles: files,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
		// A session of its own, as a full sandbox's init has: the caller's
		// terminal signals reach cordon, which passes them on once.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if o.Stdin == nil {
		cmd.Stdin = nil
	}
	var term *terminal
	if s.Process.Terminal {
		if term, err = containedTerminal(cmd, o); err != nil {
			return 0, err
		}
		defer term.close()
	}
	var out *limitedOutput
	if o.OutputLimit > 0 && term == nil {
		if out, err = newLimitedOutput(o.Stdout, o.Stderr, o.OutputLimit); err != nil {
			return 0, err
		}
		cmd.Stdout, cmd.Stderr = out.stdoutW, out.stderrW
	} else if o.OutputLimit > 0 {
		term.limit = o.OutputLimit
	}
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs)
	defer signal.Stop(sigs)

	err = cmd.Start()
	lifeR.Close()
	if term != nil {
		term.slave.Close()
	}
	if err != nil {
		return 0, fmt.Errorf("start sandbox: %w", err)
	}
	if out != nil {
		out.started()
	}
	if sv != nil {
		sv.start(cmd.Process.Pid)
	}
	// cordon list shows the run by its init.
	o.Meta.Mode, o.Meta.Init = s.Annotations[spec.AnnotationSandbox], cmd.Process.Pid
	o.Meta.InitTime = startTime(o.Meta.Init)
	if err := writeMeta(o.Root, o.ID, o.Meta); err != nil {
		note(o, err.Error())
	}
	if term != nil {
		if err := term.start(term.master); err != nil {
			lifeW.Close()
			_, _ = cmd.Process.Wait()
			return 0, err
		}
	}
	if o.Started != nil {
		o.Started()
	}

	waited := make(chan waitResult, 1)
	go func() {
		st, err := cmd.Process.Wait()
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
			forwardContained(cmd.Process, term, sig.(unix.Signal))
		case <-ctx.Done():
			// The init ends the whole tree when its lifeline closes.
			lifeW.Close()
		case <-timeout:
			timedOut = true
			lifeW.Close()
		case w := <-waited:
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
			if timedOut {
				status = 124
				note(o, fmt.Sprintf("timed out after %s: the command and everything it started were ended", o.Timeout))
			}
			if o.Stats != nil {
				o.Stats(usage(nil, map[string]string{}, w.state, time.Since(started)))
			}
			return status, nil
		}
	}
}

// forwardContained passes a signal cordon received on to the init, which
// passes it to the command's process group.
func forwardContained(p *os.Process, term *terminal, sig unix.Signal) {
	switch sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE:
		return
	case unix.SIGWINCH:
		if term != nil {
			term.resize()
		}
		return
	case unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		_ = p.Signal(unix.SIGTSTP)
		_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
		return
	}
	_ = p.Signal(sig)
}

// withInitRlimits inserts the rlimits into the arguments of cordon's init,
// which sets them before it starts the command.
func withInitRlimits(args []string, rls []specs.POSIXRlimit) ([]string, error) {
	var initArgs []string
	for _, rl := range rls {
		t, ok := rlimitTypes[rl.Type]
		if !ok {
			return nil, fmt.Errorf("unknown rlimit %q", rl.Type)
		}
		initArgs = append(initArgs, fmt.Sprintf("--rlimit=%d:%d:%d", t, rl.Soft, rl.Hard))
	}
	if len(initArgs) == 0 {
		return args, nil
	}
	i := slices.Index(args, "--")
	if i < 0 {
		return nil, errors.New("cordon's init without a command")
	}
	return slices.Concat(args[:i], initArgs, args[i:]), nil
}

// containedTerminal gives the contained command a new pseudo-terminal, as
// a full sandbox's command gets one: the init's session's controlling
// terminal, whose foreground group the init gives the command.
func containedTerminal(cmd *exec.Cmd, o Options) (*terminal, error) {
	host, err := console.ConsoleFromFile(o.Stdin)
	if err != nil {
		return nil, fmt.Errorf("terminal: stdin: %w", err)
	}
	master, slavePath, err := console.NewPty()
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	slave, err := os.OpenFile(slavePath, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("terminal: %w", err)
	}
	t := &terminal{host: host, in: o.Stdin, out: o.Stdout, slave: slave, copied: make(chan struct{})}
	t.master = master
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0
	return t, nil
}

// recordProtected records the protected paths inside the writable roots
// (spec.Scrub.Protected) before a contained run, which cannot make them
// read-only (see spec.ModeContainer).
func recordProtected(s *specs.Spec, id string) (*protectedSnapshot, error) {
	var sc spec.Scrub
	if raw := s.Annotations[spec.AnnotationScrub]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return nil, fmt.Errorf("protected paths: %w", err)
		}
	}
	return snapshotProtected(sc.Protected, sc.Roots, id)
}
