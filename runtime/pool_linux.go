package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// InitCommandFD is the unix socket on which the init of a pooled sandbox
// (cordon sandbox-init --command-fd) waits for its command: see
// Pooled.Run for the message.
const InitCommandFD = 8

// ErrNotIntact says that a pooled sandbox is no longer what a sandbox made
// now would be: a mount it was made with is gone or moved (a protected
// file was replaced on the host, say), or its init is gone.
var ErrNotIntact = errors.New("the pooled sandbox changed since it was made")

// Pooled is a sandbox made ahead of its command, for cordon serve: the
// container runs, with its namespaces, mounts, cgroup and proxy listeners
// in place and its seccomp program and Landlock rules read, and cordon's
// init waits on a socket for the command. Each is used for one command.
type Pooled struct {
	sb  *sandbox
	cmd *os.File // the daemon's end of the command socket
	// said is the read end of the init's stderr while it waits: where it
	// says why it failed before a command came (see initSaid).
	said *os.File
	// mounts is the init's mount table as it was once made.
	mounts string
	// grants are the paths the Landlock rules grant access beneath, and
	// the files they were when the sandbox was made: the init's rules
	// hold those files (see grantedFiles).
	grants  []string
	granted []fileID
	// used is the sandbox once Run took it, until Release.
	used *sandbox
	key  string
	// Made is when the sandbox was made.
	Made time.Time
}

// PoolKey names what a sandbox is apart from its command: s without the
// process's command, environment, working directory and terminal, its
// cgroup path (which names the run) and the matches that denyWrite globs
// had when it was compiled (the scrub after the run uses the command's
// own). Two specs with the same key make the same sandbox.
func PoolKey(s *specs.Spec) (string, error) {
	if s == nil || s.Process == nil || s.Linux == nil {
		return "", errors.New("pool key: incomplete spec")
	}
	if spec.Contained(s) {
		// Nothing to make ahead: the container mode's init costs a fork.
		return "", errors.New("pool key: the container mode is not pooled")
	}
	k := *s
	p := *s.Process
	p.Args = initArgs(p.Args)
	p.Env, p.Cwd, p.Terminal, p.ConsoleSize = nil, "", false, nil
	k.Process = &p
	l := *s.Linux
	l.CgroupsPath = ""
	k.Linux = &l
	if raw := s.Annotations[spec.AnnotationScrub]; raw != "" {
		var sc spec.Scrub
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return "", fmt.Errorf("pool key: %w", err)
		}
		for i := range sc.Globs {
			sc.Globs[i].Existing = nil
		}
		data, err := json.Marshal(sc)
		if err != nil {
			return "", fmt.Errorf("pool key: %w", err)
		}
		k.Annotations = maps.Clone(s.Annotations)
		k.Annotations[spec.AnnotationScrub] = string(data)
	}
	data, err := json.Marshal(&k)
	if err != nil {
		return "", fmt.Errorf("pool key: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// initArgs is the init's part of a process's arguments: up to "--".
func initArgs(args []string) []string {
	if i := slices.Index(args, "--"); i >= 0 {
		return slices.Clone(args[:i])
	}
	return slices.Clone(args)
}

// commandArgs is the command's part of a process's arguments: after "--".
func commandArgs(args []string) []string {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[i+1:]
	}
	return nil
}

// NewPooled makes the sandbox s describes and starts its init, which then
// waits for a command: s is a spec compiled for some command, which is
// left out. o are the sandbox's options (Root, Proxy); the run's own come
// with the command. The sandbox belongs to this process: it ends when the
// process does.
func NewPooled(s *specs.Spec, o Options) (_ *Pooled, err error) {
	if s.Process == nil || s.Process.Terminal {
		return nil, errors.New("a pooled sandbox has no terminal")
	}
	key, err := PoolKey(s)
	if err != nil {
		return nil, err
	}
	if o.ID == "" {
		o.ID = NewID()
	}
	ps := *s
	if s.Linux != nil && s.Linux.CgroupsPath != "" {
		// The sandbox's own cgroup (spec.WithCgroupsPath names it by the
		// run), not the one of the command s was compiled for.
		l := *s.Linux
		l.CgroupsPath = path.Join(path.Dir(l.CgroupsPath), o.ID)
		ps.Linux = &l
	}
	p := *s.Process
	p.Args = append(initArgs(p.Args), "--command-fd="+strconv.Itoa(InitCommandFD), "--")
	// The init's own; the command's come with it.
	p.Env, p.Cwd = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "/"
	ps.Process = &p
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("command socket: %w", err)
	}
	cmd, child := os.NewFile(uintptr(fds[0]), "command"), os.NewFile(uintptr(fds[1]), "command-init")
	defer child.Close()
	if o.Proxy != nil {
		// Its own: the sandbox's id goes into it.
		c := *o.Proxy
		o.Proxy = &c
	}
	o.Meta = Meta{Args: []string{"(pooled)"}, Workspace: s.Annotations[spec.AnnotationWorkspace]}
	o.Notify, o.Stats, o.Started = nil, nil, nil
	sb, err := newSandbox(&ps, o, map[int]*os.File{InitCommandFD: child})
	if err != nil {
		cmd.Close()
		return nil, err
	}
	sb.pooled = true
	pl := &Pooled{sb: sb, cmd: cmd, key: key, Made: time.Now(), grants: landlockGrants(s)}
	// Before the init opens them: a path replaced in between makes the
	// sandbox differ from the record, and it is not used.
	pl.granted = grantedFiles(pl.grants)
	defer func() {
		if err != nil {
			pl.Close()
		}
	}()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	said, stderr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	pl.said = said
	sb.process.Stdin, sb.process.Stdout, sb.process.Stderr = null, null, stderr
	err = sb.launch()
	stderr.Close()
	if err == nil {
		pl.mounts, err = pl.mountTable()
	}
	if err != nil {
		return nil, pl.failed(err)
	}
	// Fixed for the sandbox's life: read while it waits.
	sb.readCgroupPaths()
	return pl, nil
}

// ID is the sandbox's id, which its run takes.
func (p *Pooled) ID() string { return p.sb.o.ID }

// Key is the sandbox's PoolKey.
func (p *Pooled) Key() string { return p.key }

// mountTable reads the init's mount table.
func (p *Pooled) mountTable() (string, error) {
	pid, err := p.sb.process.Pid()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return "", fmt.Errorf("pooled sandbox: %w", err)
	}
	return string(data), nil
}

// initSaidWait is how long failed waits for the init's last words: once
// it is gone its stderr reaches end of file at once.
const initSaidWait = 500 * time.Millisecond

// failed is err, or what the init said on its stderr when it said
// something: the init of a sandbox that fails before its command comes
// (a planned path that changed meanwhile, say) exits with a message
// there, and the error cordon meets then (its mount table gone, the
// command socket closed) does not say why.
func (p *Pooled) failed(err error) error {
	if said := initSaid(p.said, initSaidWait); said != "" {
		return errors.New(said)
	}
	return err
}

// initSaid reads what an init wrote on its stderr r, until end of file or
// for at most wait, without the "cordon: " its messages start with, one
// line for each message.
func initSaid(r *os.File, wait time.Duration) string {
	if r == nil {
		return ""
	}
	_ = r.SetReadDeadline(time.Now().Add(wait))
	data, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "cordon: ")); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// Intact checks that the sandbox is still what it was made: its init
// waits, and its mount table is the same, entry for entry. A bind whose
// mountpoint the host replaced (an editor saving a protected file by
// rename, git rewriting .git/config) is gone from it, and one whose
// source was moved shows the new path: a sandbox made now would differ.
//
// Each Landlock rule holds the file its path named when the init read the
// rules: a file or directory the host replaced since (an editor's save by
// rename, git config --global, rm -rf and mkdir) is one the command could
// not reach, where a cold run reaches it.
func (p *Pooled) Intact() error {
	mounts, err := p.mountTable()
	if err != nil || mounts != p.mounts {
		return ErrNotIntact
	}
	if !slices.Equal(grantedFiles(p.grants), p.granted) {
		return ErrNotIntact
	}
	return nil
}

// fileID identifies a file: zero when there is none.
type fileID struct{ dev, ino uint64 }

// landlockGrants are the paths the Landlock rules of s grant access
// beneath (not the checks, whose identities the spec, and so the pool
// key, holds already).
func landlockGrants(s *specs.Spec) []string {
	var rules []spec.LandlockRule
	if json.Unmarshal([]byte(s.Annotations[spec.AnnotationLandlock]), &rules) != nil {
		return nil
	}
	var paths []string
	for _, r := range rules {
		if !strings.HasPrefix(r.Access, "=") {
			paths = append(paths, r.Path)
		}
	}
	return paths
}

// grantedFiles are the files paths name now, followed as the init opens
// them. The host's paths are the sandbox's: the host view binds them at
// the same places (/tmp, /dev and /proc, the sandbox's own, are never
// replaced on the host).
func grantedFiles(paths []string) []fileID {
	ids := make([]fileID, len(paths))
	for i, p := range paths {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			ids[i] = fileID{st.Dev, st.Ino}
		}
	}
	return ids
}

// Close ends a sandbox that will run nothing.
func (p *Pooled) Close() {
	if p.sb == nil {
		return
	}
	p.cmd.Close()
	p.said.Close()
	// Nothing ran: nothing to check or record.
	p.sb.spec = &specs.Spec{}
	p.sb.o.Notify = nil
	p.sb.kill()
	p.sb.finish()
	p.sb = nil
}

// Release destroys the sandbox once Run has returned: its cgroup and its
// state. Run leaves it out so that the caller can tell the client first
// (removing a cgroup can wait for the kernel for milliseconds).
func (p *Pooled) Release() {
	if p.used != nil {
		p.used.release()
		p.used = nil
	}
}

// Run runs a command in the sandbox and waits for it, as Run does in a
// sandbox of its own. s is the spec compiled for the command, whose
// PoolKey must be the sandbox's; its process gives the command, the
// environment and the working directory. o are the run's options as for
// Run (ID and Root are the sandbox's; a terminal is not supported). sigs
// are the signals for the command, as Run takes its own: SIGTSTP stops the
// command and leaves stopping the caller to the caller. The sandbox is
// used up: call Release once the result is passed on.
func (p *Pooled) Run(ctx context.Context, s *specs.Spec, o Options, sigs <-chan os.Signal) (int, error) {
	sb := p.sb
	if sb == nil {
		return 0, errors.New("the pooled sandbox was used or closed")
	}
	p.sb, p.used = nil, sb
	// The rest, Release.
	defer sb.report()
	defer p.cmd.Close()
	defer p.said.Close()
	if key, err := PoolKey(s); err != nil || key != p.key {
		sb.kill()
		return 0, errors.New("the command's sandbox is not the pooled one")
	}
	if s.Process.Terminal {
		sb.kill()
		return 0, errors.New("a pooled sandbox has no terminal")
	}
	o.ID, o.Root, o.Proxy = sb.o.ID, sb.o.Root, sb.o.Proxy
	o.Meta.Scrub = s.Annotations[spec.AnnotationScrub]
	o.Meta.Created = time.Time{}
	if err := writeMeta(o.Root, o.ID, o.Meta); err != nil {
		sb.kill()
		return 0, err
	}
	// From here on the run is the command's.
	sb.o, sb.spec, sb.started, sb.since = o, s, time.Now(), scrubClock()
	sb.record.o = o
	sb.record.rec.reset(o.ID, strings.Join(o.Meta.Args, " "), o.Meta.Workspace, o.Ignore)

	stdin, stdout, stderr := o.Stdin, o.Stdout, o.Stderr
	if stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			sb.kill()
			return 0, err
		}
		defer null.Close()
		stdin = null
	}
	var out *limitedOutput
	if o.OutputLimit > 0 {
		var err error
		if out, err = newLimitedOutput(o.Stdout, o.Stderr, o.OutputLimit); err != nil {
			sb.kill()
			return 0, err
		}
		stdout, stderr = out.stdoutW, out.stderrW
	}
	sb.tr.mark("prestart")
	files := []*os.File{stdin, stdout, stderr}
	if o.Fd3 != nil {
		files = append(files, o.Fd3)
	}
	err := sendCommand(p.cmd, s.Process.Cwd, commandArgs(s.Process.Args), s.Process.Env, files)
	if out != nil {
		out.started()
	}
	if err != nil {
		sb.kill()
		if out != nil {
			out.wait()
		}
		return 0, p.failed(fmt.Errorf("start the command in the pooled sandbox: %w", err))
	}
	sb.tr.mark("started")
	if o.Started != nil {
		o.Started()
	}
	return sb.wait(ctx, sigs, nil, out)
}

// sendCommand writes the command message the init reads (see
// receive_command in sandboxinit.c): the length of the message, the
// number of arguments and of environment entries (little-endian uint32s),
// then the working directory, the arguments and the environment, each
// ending in NUL, with the standard descriptors (and the command's
// descriptor 3, when it has one) attached to its first bytes.
func sendCommand(sock *os.File, cwd string, args, env []string, stdio []*os.File) error {
	if len(args) == 0 {
		return errors.New("no command")
	}
	msg := make([]byte, 12, 12+len(cwd)+1)
	for _, s := range append(append([]string{cwd}, args...), env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%q holds a NUL byte", s)
		}
		msg = append(append(msg, s...), 0)
	}
	if len(msg) > 4<<20 {
		return errors.New("command and environment too long")
	}
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.LittleEndian.PutUint32(msg[4:], uint32(len(args)))
	binary.LittleEndian.PutUint32(msg[8:], uint32(len(env)))
	fds := make([]int, len(stdio))
	for i, f := range stdio {
		fds[i] = int(f.Fd())
	}
	raw, err := sock.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Write(func(fd uintptr) bool {
		var n int
		n, serr = unix.SendmsgN(int(fd), msg[:12], unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL)
		if serr == nil && n != 12 {
			serr = fmt.Errorf("short write")
		}
		return serr != unix.EAGAIN
	})
	// The descriptors must stay open until sent.
	goruntime.KeepAlive(stdio)
	if err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	_, err = sock.Write(msg[12:])
	return err
}
