package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run probes every feature now, concurrently, and returns what it found.
// It fails only when it cannot probe at all; a feature that fails is a
// fact in the Result.
func Run(ctx context.Context, o Options) (Result, error) {
	if name := os.Getenv(childEnv); name != "" {
		return Result{}, fmt.Errorf("probe: this process is the probe child %q: the program must call probe.Child first in main", name)
	}
	start := time.Now()
	exe := o.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return Result{}, fmt.Errorf("probe: find the program to run probes with: %w", err)
		}
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()

	r := Basic()
	r.Executable = exe
	r.CordonVersion = version()
	r.BootID = bootID()
	r.ProbedAt = start.UTC().Truncate(time.Millisecond)
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	ms := parseMountinfo(string(mountinfo))
	r.Host = hostFacts(ms)
	r.Container = container()
	r.Libseccomp = libseccompVersion()

	p := &prober{exe: exe, uid: os.Geteuid(), gid: os.Getegid()}
	// Each goroutine writes its own fields of r, and nothing reads r
	// until they are done.
	root := r.Root()
	var wg sync.WaitGroup
	for _, c := range namespaceChecks {
		wg.Go(func() { *c.field(&r) = p.namespace(ctx, c) })
	}
	wg.Go(func() { r.Seccomp = p.seccomp(ctx) })
	wg.Go(func() { r.Landlock = p.landlock(ctx) })
	wg.Go(func() { r.Pidfd = p.pidfd(ctx) })
	wg.Go(func() { r.Cgroups, r.Clone3IntoCgroup = p.cgroups(ctx, root, ms) })
	wg.Wait()

	diagnose(&r)
	r.ProbeMillis = float64(time.Since(start).Microseconds()) / 1000
	return r, nil
}

// prober starts the probe children.
type prober struct {
	exe      string
	uid, gid int
}

// reply is a probe child's answer, one JSON line on its stdout.
type reply struct {
	Feature
	ABI     int      `json:"abi,omitempty"`
	Actions []string `json:"actions,omitempty"`
	Flags   []string `json:"flags,omitempty"`
	Notify  *Feature `json:"notify,omitempty"`
	Cgroup  string   `json:"cgroup,omitempty"`
}

// command is a probe child: the program run as "probe-child NAME ARGS...".
func (p *prober) command(ctx context.Context, name string, args []string, attr *syscall.SysProcAttr) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.exe, append([]string{ChildCommand, name}, args...)...)
	cmd.Env = []string{childEnv + "=" + name}
	cmd.Dir = "/"
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	cmd.WaitDelay = time.Second
	return cmd
}

// run runs a probe child to its end and returns its reply; a child that
// cannot be started, dies or does not answer is a failed Feature.
func (p *prober) run(ctx context.Context, name string, args []string, attr *syscall.SysProcAttr) reply {
	cmd := p.command(ctx, name, args, attr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		step := "clone"
		if attr != nil && attr.UseCgroupFD {
			step = "clone3"
		}
		return reply{Feature: startFailed(ctx, name, step, err)}
	}
	err := cmd.Wait()
	return p.answer(ctx, name, err, stdout.Bytes(), stderr.Bytes())
}

// answer decodes a child's reply.
func (p *prober) answer(ctx context.Context, name string, waitErr error, stdout, stderr []byte) reply {
	var rep reply
	line, _, _ := bytes.Cut(stdout, []byte("\n"))
	if err := json.Unmarshal(line, &rep); err == nil && (rep.Available || rep.Step != "") {
		return rep
	}
	// The first line: a child's crash (Go's runtime prints a page) must
	// not make the one-line error that names it a page long.
	msg, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	switch {
	case ctx.Err() != nil:
		// A busy machine can hold clone for seconds (making a network
		// namespace waits for the teardown of old ones).
		return reply{Feature: timeout(name)}
	case waitErr != nil:
		msg = strings.TrimSpace(waitErr.Error() + " " + msg)
	default:
		msg = "no answer (does " + filepath.Base(p.exe) + " call probe.Child first in main?) " + msg
	}
	return reply{Feature: Feature{Step: "probe child " + name, Error: strings.TrimSpace(msg)}}
}

func timeout(name string) Feature {
	return Feature{Step: "probe child " + name, Error: "no answer within the time limit", Cause: CauseTimeout}
}

// startFailed returns the Feature of a child that could not be started.
func startFailed(ctx context.Context, name, step string, err error) Feature {
	if ctx.Err() != nil {
		return timeout(name)
	}
	return failed(step, err)
}

// failed returns a failed Feature for an error at step.
func failed(step string, err error) Feature {
	f := Feature{Step: step, Error: err.Error()}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		f.Errno = unix.ErrnoName(errno)
		f.Error = errno.Error()
	}
	return f
}

// namespaceCheck is a probe run in new namespaces.
type namespaceCheck struct {
	name  string
	flags uintptr
	// ns is the /proc/self/ns entry the child compares with the parent's.
	ns    string
	field func(*Result) *Feature
}

// namespaceChecks make each namespace together with a user namespace, as
// cordon's sandboxes do.
var namespaceChecks = []namespaceCheck{
	{"userns", unix.CLONE_NEWUSER, "user", func(r *Result) *Feature { return &r.UserNamespaces }},
	{"mount", unix.CLONE_NEWUSER | unix.CLONE_NEWNS, "mnt", func(r *Result) *Feature { return &r.MountNamespace }},
	{"pid", unix.CLONE_NEWUSER | unix.CLONE_NEWPID, "", func(r *Result) *Feature { return &r.PIDNamespace }},
	{"ipc", unix.CLONE_NEWUSER | unix.CLONE_NEWIPC, "ipc", func(r *Result) *Feature { return &r.IPCNamespace }},
	{"uts", unix.CLONE_NEWUSER | unix.CLONE_NEWUTS, "uts", func(r *Result) *Feature { return &r.UTSNamespace }},
	{"net", unix.CLONE_NEWUSER | unix.CLONE_NEWNET, "net", func(r *Result) *Feature { return &r.NetworkNamespace }},
	{"cgroupns", unix.CLONE_NEWUSER | unix.CLONE_NEWCGROUP, "cgroup", func(r *Result) *Feature { return &r.CgroupNamespace }},
	{"proc", unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID, "", func(r *Result) *Feature { return &r.Procfs }},
	{"overlay", unix.CLONE_NEWUSER | unix.CLONE_NEWNS, "", func(r *Result) *Feature { return &r.Overlayfs }},
}

// namespace runs a namespace check: the child is root of a new user
// namespace that maps uid and gid 0 to the caller's, nothing else.
func (p *prober) namespace(ctx context.Context, c namespaceCheck) Feature {
	var args []string
	if c.ns != "" {
		args = append(args, strconv.FormatUint(nsInode(c.ns), 10))
	}
	attr := &syscall.SysProcAttr{
		Cloneflags:  c.flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: p.uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: p.gid, Size: 1}},
		// "deny" in setgroups, which an unprivileged gid_map requires.
		GidMappingsEnableSetgroups: false,
	}
	return p.run(ctx, c.name, args, attr).Feature
}

// nsInode returns the inode of one of the caller's namespaces.
func nsInode(ns string) uint64 {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/"+ns, &st); err != nil {
		return 0
	}
	return st.Ino
}

// seccomp runs the seccomp child.
func (p *prober) seccomp(ctx context.Context) Seccomp {
	rep := p.run(ctx, "seccomp", nil, nil)
	s := Seccomp{Feature: rep.Feature, Actions: orEmpty(rep.Actions), Flags: orEmpty(rep.Flags)}
	switch {
	case rep.Notify != nil && rep.Notify.Available:
		s.UserNotify = true
	case rep.Notify != nil:
		s.UserNotifyFailure = rep.Notify
	case !rep.Available:
		f := rep.Feature
		s.UserNotifyFailure = &f
	}
	return s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// landlock runs the Landlock child.
func (p *prober) landlock(ctx context.Context) Landlock {
	rep := p.run(ctx, "landlock", nil, nil)
	return Landlock{Feature: rep.Feature, ABI: rep.ABI}
}

// pidfd starts a child that waits, opens a pidfd for it, kills it through
// the pidfd and waits for its exit with poll, as a runtime does.
func (p *prober) pidfd(ctx context.Context) Feature {
	cmd := p.command(ctx, "wait", nil, nil)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return failed("pipe", err)
	}
	if err := cmd.Start(); err != nil {
		return startFailed(ctx, "wait", "clone", err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		return failed("pidfd_open", err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		return failed("pidfd_send_signal", err)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 2000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return failed("poll pidfd", err)
		}
		if n != 1 {
			return Feature{Step: "poll pidfd", Error: "the child's exit was not seen"}
		}
		return Feature{Available: true}
	}
}
