package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runc/libcontainer/utils"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/seccomp"
	"cordon.dev/cordon/spec"
)

// DefaultOCIRoot returns the state directory of OCI containers when no
// --root is given: /run/cordon-oci for root, $XDG_RUNTIME_DIR/cordon-oci
// or /tmp/cordon-oci-UID for everyone else. It is not under StateRoot:
// `cordon gc` there removes whatever no live cordon run owns.
//
// The one in /tmp is made here, or must be the caller's and closed to
// others: another user who made it first could read the containers' state
// and swap in his own (a state's hooks run as the caller on delete).
func DefaultOCIRoot() (string, error) {
	if os.Geteuid() == 0 {
		return "/run/cordon-oci", nil
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && ownedDir(d) {
		return filepath.Join(d, "cordon-oci"), nil
	}
	dir := filepath.Join("/tmp", "cordon-oci-"+strconv.Itoa(os.Geteuid()))
	return dir, ensureStateDir(dir)
}

var errEmptyID = errors.New("container id cannot be empty")

func (o OCI) load(id string) (*libcontainer.Container, error) {
	if id == "" {
		return nil, errEmptyID
	}
	return libcontainer.Load(o.Root, id)
}

// LoadBundle reads BUNDLE/config.json as runc does, and checks the process.
func LoadBundle(bundle string) (*specs.Spec, error) {
	path := filepath.Join(bundle, "config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("JSON specification file %s not found", path)
	}
	if err != nil {
		return nil, err
	}
	var s *specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s == nil {
		return nil, errors.New("config cannot be null")
	}
	return s, validateProcess(s.Process)
}

func validateProcess(p *specs.Process) error {
	switch {
	case p == nil:
		return errors.New("process property must not be empty")
	case p.Cwd == "":
		return errors.New("Cwd property must not be empty")
	case !filepath.IsAbs(p.Cwd):
		return errors.New("Cwd must be an absolute path")
	case len(p.Args) == 0:
		return errors.New("args must not be empty")
	case p.SelinuxLabel != "":
		// cordon is built without SELinux support, as libcontainer
		// reports it disabled here.
		if _, err := os.Stat("/sys/fs/selinux/enforce"); err != nil {
			return errors.New("selinux label is specified in config, but selinux is disabled or not supported")
		}
	}
	return nil
}

// Create sets up container id from a bundle and leaves its process waiting
// at libcontainer's exec barrier until Start. The container's init is a
// child of this process; when the caller exits it is reparented to the
// nearest subreaper (containerd's shim), which reaps it and learns the
// workload's exit status. The policy the container's annotations or the
// runtime configuration ask for is applied to the spec first.
func (o OCI) Create(id string, opts CreateOptions) error {
	if id == "" {
		return errEmptyID
	}
	pidFile, err := absPath(opts.PidFile)
	if err != nil {
		return err
	}
	if opts.Bundle != "" {
		// Relative paths in the spec (root.path) are the bundle's.
		if err := os.Chdir(opts.Bundle); err != nil {
			return err
		}
	}
	s, err := LoadBundle(".")
	if err != nil {
		return err
	}
	a, pod, err := o.tighten(s, id)
	if err != nil {
		return err
	}
	defer closeFiles(pod.proxy)
	if a != nil && a.EgressRules {
		// Before anything of the container exists: a pod's namespace may
		// already hold other containers.
		if err := confineEgress(pod.netns); err != nil {
			return fmt.Errorf("cordon policy: %w", err)
		}
	}
	rootlessCg, err := o.rootlessCgroups()
	if err != nil {
		return err
	}
	config, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:       id,
		UseSystemdCgroup: o.SystemdCgroup,
		NoPivotRoot:      opts.NoPivot,
		NoNewKeyring:     opts.NoNewKeyring,
		Spec:             s,
		RootlessEUID:     os.Geteuid() != 0,
		RootlessCgroups:  rootlessCg,
	})
	if err != nil {
		return err
	}
	container, err := libcontainer.Create(o.Root, id, config)
	if err != nil {
		return err
	}
	r := &ociRunner{
		container:     container,
		init:          true,
		destroy:       true,
		detach:        true,
		pidFile:       pidFile,
		consoleSocket: opts.ConsoleSocket,
		preserveFDs:   opts.PreserveFDs,
		listenFDs:     listenFiles(),
		stdin:         os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
	}
	if a.Monitor() {
		// Before the container's processes exist: libcontainer hands the
		// init's seccomp listener to the monitor during Start.
		mon, err := o.startMonitor(id, s, a, pod)
		if err != nil {
			if e := container.Destroy(); e != nil {
				logrus.Warn(e)
			}
			return err
		}
		defer mon.abort()
		r.started = mon.attach
	}
	_, err = r.run(s.Process)
	if err != nil && a.Records() && strings.Contains(err.Error(), unix.EBUSY.Error()) {
		// The kernel allows one seccomp listener in a process's filter
		// chain: cordon itself runs under a filter that has one (cordon
		// inside cordon run, or under another supervisor).
		return fmt.Errorf("the container's policy records violations through a seccomp listener, and cordon runs under a seccomp filter that already has one (the kernel allows one per process): refusing to run the container without its records: %w", err)
	}
	return err
}

// podNetwork is a network namespace the container joins and keeps under
// a policy that confines its egress (a pod's): where the rules go, and the
// proxy's listening sockets made there.
type podNetwork struct {
	netns string
	proxy []*os.File // HTTP, SOCKS5
}

// tighten applies the container policy, if any, to container id's spec s.
func (o OCI) tighten(s *specs.Spec, id string) (a *spec.Applied, pod podNetwork, err error) {
	defer func() {
		if err != nil {
			closeFiles(pod.proxy)
		}
	}()
	cfg, err := o.runtimeConfig()
	if err != nil {
		return nil, pod, err
	}
	dir := o.policyDir()
	pol, source, err := spec.ContainerPolicyFor(s.Annotations, cfg, func(path string) ([]byte, error) {
		return readPolicyFile(dir, path)
	})
	if err != nil {
		return nil, pod, fmt.Errorf("cordon policy: %w", err)
	}
	opts := spec.ContainerOpts{
		Seccomp: seccomp.Options{AllowSocketpair: true, KernelVersion: kernelRelease()},
	}
	if pol == nil {
		a, err := spec.Tighten(s, pol, source, opts)
		return a, pod, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, pod, fmt.Errorf("find cordon's own binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, pod, fmt.Errorf("find cordon's own binary: %w", err)
	}
	sock, err := monitorSocketPath(o.Root, id)
	if err != nil {
		return nil, pod, fmt.Errorf("cordon policy: %w", err)
	}
	if os.Geteuid() == 0 {
		opts.NetworkHook = []string{exe, NetworkHookCommand, NetworkHookIsolate}
		// A pod's network namespace is kept, its egress confined by
		// rules of cordon's (confineEgress), so that what connects to
		// the pod still reaches it.
		pod.netns = joinedNetwork(s)
		if pod.netns != "" && (pol.Network == spec.NetworkNone || pol.Proxied()) {
			opts.KeepJoinedNetwork = true
			if pol.Proxied() {
				if opts.ProxyPorts, pod.proxy, err = proxyListeners(pod.netns); err != nil {
					return nil, pod, fmt.Errorf("cordon policy: %w", err)
				}
			}
		} else {
			pod.netns = ""
		}
	} else {
		// A rootless runtime cannot enter the container's network
		// namespace from outside its user namespace (setns needs
		// CAP_SYS_ADMIN in the caller's own user namespace too): no
		// interface-removing hook (docs/kubernetes.md), and the proxy's
		// sockets are made from inside, by a createContainer hook.
		opts.ProxyHook = []string{exe, NetworkHookCommand, NetworkHookProxy, sock}
	}
	if pol.Seccomp && pol.RecordViolations {
		opts.ListenerPath = sock
	}
	a, err = spec.Tighten(s, pol, source, opts)
	if err != nil {
		return nil, pod, fmt.Errorf("cordon policy: %w", err)
	}
	if a.Proxy == nil {
		closeFiles(pod.proxy)
		pod.proxy = nil
	}
	return a, pod, nil
}

// maxPolicyFile bounds a policy file an annotation names.
const maxPolicyFile = 1 << 20

// readPolicyFile reads the policy file an annotation names, which must be
// in dir. The pod's author writes the annotation: cordon, root on the node,
// must read no other file of it (an error would tell whether it exists, its
// first character, its first key); a device (/dev/zero read until cordon
// ran out of memory), a FIFO (create held for ever) or a large file must
// fail at once, and only a regular file is opened (opening a device is the
// device's business: /dev/watchdog starts its timer). The path is resolved
// once, to an O_PATH descriptor, checked (still in dir once its symlinks
// are followed), and reopened through it: a symlink swapped meanwhile
// changes nothing.
func readPolicyFile(dir, path string) ([]byte, error) {
	outside := fmt.Errorf("%s: a policy file must be in %s (cordon reads no other file of the node for a container)", path, dir)
	if !paths.Below(filepath.Clean(path), dir) {
		return nil, outside
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, outside
	}
	pf, err := os.OpenFile(path, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	if real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(pf.Fd()))); err != nil || !paths.Below(real, realDir) {
		return nil, outside
	}
	return readRegular(pf, path, maxPolicyFile)
}

// readRegular reads the file pf, an O_PATH descriptor of path, when it is a
// regular file of at most limit bytes: only then is it opened.
func readRegular(pf *os.File, path string, limit int) ([]byte, error) {
	fi, err := pf.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(pf.Fd())))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// configFile is the runtime-level configuration file: "-" for none,
// explicit when the caller named it.
func (o OCI) configFile() (path string, explicit bool) {
	path = o.Config
	if path == "" {
		path = os.Getenv("CORDON_RUNTIME_CONFIG")
	}
	if path == "" {
		return RuntimeConfigFile, false
	}
	return path, true
}

// policyDir is where the policy files an annotation names must be: the
// directory of the runtime-level configuration file (/etc/cordon).
func (o OCI) policyDir() string {
	path, _ := o.configFile()
	if path == "-" || !filepath.IsAbs(path) {
		path = RuntimeConfigFile
	}
	return filepath.Dir(filepath.Clean(path))
}

// runtimeConfig reads the runtime-level configuration; a missing default
// file means none.
func (o OCI) runtimeConfig() (*spec.RuntimeConfig, error) {
	path, explicit := o.configFile()
	if path == "-" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runtime configuration: %w", err)
	}
	cfg, err := spec.ParseRuntimeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("runtime configuration %s: %w", path, err)
	}
	return cfg, nil
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// rootlessCgroups decides, as runc does, whether cgroup errors are
// tolerated: for a caller other than root, or root in a user namespace.
func (o OCI) rootlessCgroups() (bool, error) {
	switch strings.ToLower(o.Rootless) {
	case "", "auto":
	default:
		b, err := strconv.ParseBool(o.Rootless)
		if err != nil {
			return false, fmt.Errorf("--rootless: %w", err)
		}
		return b, nil
	}
	if os.Geteuid() != 0 {
		return true, nil
	}
	return inUserNS(), nil
}

// inUserNS reports whether this process runs in a user namespace other
// than the initial one.
func inUserNS() bool {
	data, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
}

// Start lets a created container's process run its program.
func (o OCI) Start(id string) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	status, err := c.Status()
	if err != nil {
		return err
	}
	switch status {
	case libcontainer.Created:
		return c.Exec()
	case libcontainer.Stopped:
		return errors.New("cannot start a container that has stopped")
	case libcontainer.Running:
		return errors.New("cannot start an already running container")
	}
	return fmt.Errorf("cannot start a container in the %s state", status)
}

// State returns the state of container id.
func (o OCI) State(id string) (*ContainerState, error) {
	c, err := o.load(id)
	if err != nil {
		return nil, err
	}
	return containerState(c, o.Root, "")
}

func containerState(c *libcontainer.Container, root, owner string) (*ContainerState, error) {
	status, err := c.Status()
	if err != nil {
		return nil, err
	}
	st, err := c.State()
	if err != nil {
		return nil, err
	}
	pid := st.BaseState.InitProcessPid
	if status == libcontainer.Stopped {
		pid = 0
	}
	bundle, annotations := utils.Annotations(st.Config.Labels)
	cs := &ContainerState{
		Version:     st.BaseState.Config.Version,
		ID:          st.BaseState.ID,
		Pid:         pid,
		Status:      status.String(),
		Bundle:      bundle,
		Rootfs:      st.BaseState.Config.Rootfs,
		Created:     st.BaseState.Created,
		Annotations: annotations,
		Owner:       owner,
	}
	cs.Cordon = appliedOf(annotations)
	if cs.Cordon.Monitor() {
		cs.Monitor = monitorState(root, cs.ID)
	}
	return cs, nil
}

// appliedOf is what cordon applied to a container, from its annotations
// (only cordon writes spec.AnnotationApplied); nil when nothing.
func appliedOf(annotations map[string]string) *spec.Applied {
	raw := annotations[spec.AnnotationApplied]
	if raw == "" {
		return nil
	}
	var a spec.Applied
	if json.Unmarshal([]byte(raw), &a) != nil {
		return nil
	}
	return &a
}

// List returns the containers under the root, as runc's list does. A
// missing root is an error only when explicit.
func (o OCI) List(explicit bool) ([]ContainerState, error) {
	entries, err := os.ReadDir(o.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return nil, nil
		}
		return nil, err
	}
	var out []ContainerState
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		owner := "#" + strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))
		if u, err := user.LookupId(owner[1:]); err == nil {
			owner = u.Username
		}
		c, err := libcontainer.Load(o.Root, e.Name())
		if err != nil {
			fmt.Fprintf(os.Stderr, "load container %s: %v\n", e.Name(), err)
			continue
		}
		cs, err := containerState(c, o.Root, owner)
		if err != nil {
			fmt.Fprintf(os.Stderr, "state for %s: %v\n", e.Name(), err)
			continue
		}
		out = append(out, *cs)
	}
	return out, nil
}

// ParseSignal reads a signal as runc does: a number, or a name with or
// without SIG, in any case.
func ParseSignal(raw string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(raw); err == nil {
		// 0 checks that the process exists; 64 is SIGRTMAX.
		if n < 0 || n > 64 {
			return -1, fmt.Errorf("signal %d is out of range (0 to 64)", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(raw)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig := unix.SignalNum(name)
	if sig == 0 {
		return -1, fmt.Errorf("unknown signal %q", raw)
	}
	return sig, nil
}

// Kill sends sig to the container's init (to every process of a container
// without its own pid namespace, for SIGKILL). With all, a container that
// is not running is not an error (runc's obsolete --all).
func (o OCI) Kill(id string, sig syscall.Signal, all bool) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	err = c.Signal(sig)
	if errors.Is(err, libcontainer.ErrNotRunning) && all {
		return nil
	}
	return err
}

// Delete removes a stopped or created container; with force also a running
// one (killed first), and an unknown id is no error.
func (o OCI) Delete(id string, force bool) (err error) {
	c, err := o.load(id)
	if err == nil {
		// The monitor writes the container's records once its init has
		// ended: they are in the store when delete returns.
		if f, e := os.Open(filepath.Join(o.Root, id, monitorPidName)); e == nil {
			defer func() {
				if err == nil {
					waitMonitor(f, 3*time.Second)
				}
				f.Close()
			}()
		}
	}
	if err != nil {
		if errors.Is(err, libcontainer.ErrNotExist) {
			// An aborted create may leave a directory without state.
			path := filepath.Join(o.Root, id)
			if e := os.RemoveAll(path); e != nil {
				fmt.Fprintf(os.Stderr, "remove %s: %v\n", path, e)
			}
			if force {
				return nil
			}
		}
		return err
	}
	if force {
		// Also a stopped container: without its own pid namespace,
		// processes may be left in its cgroup.
		return killContainer(c)
	}
	s, err := c.Status()
	if err != nil {
		return err
	}
	switch s {
	case libcontainer.Stopped:
		return c.Destroy()
	case libcontainer.Created:
		return killContainer(c)
	}
	return fmt.Errorf("cannot delete container %s that is not stopped: %s", id, s)
}

func killContainer(c *libcontainer.Container) error {
	_ = c.Signal(unix.SIGKILL)
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		if err := c.Signal(unix.Signal(0)); err != nil {
			return c.Destroy()
		}
	}
	return errors.New("container init still running")
}

// Pause freezes every process of the container.
func (o OCI) Pause(id string) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	return cgroupHint("pause", c.Pause())
}

// Resume thaws a paused container.
func (o OCI) Resume(id string) error {
	c, err := o.load(id)
	if err != nil {
		return err
	}
	return cgroupHint("resume", c.Resume())
}

func cgroupHint(op string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		logrus.Warn("cordon " + op + " failure might be caused by lack of full access to cgroups")
	}
	return err
}

// Processes returns the pids of the container's processes, in this pid
// namespace.
func (o OCI) Processes(id string) ([]int, error) {
	c, err := o.load(id)
	if err != nil {
		return nil, err
	}
	pids, err := c.Processes()
	return pids, cgroupHint("ps", err)
}

// BundleProcess returns the process of the bundle container id was created
// from: `exec` without --process starts from it.
func (o OCI) BundleProcess(id string) (*specs.Process, error) {
	c, err := o.load(id)
	if err != nil {
		return nil, err
	}
	bundle, ok := utils.SearchLabels(c.Config().Labels, "bundle")
	if !ok {
		return nil, errors.New("bundle not found in labels")
	}
	s, err := LoadBundle(bundle)
	if err != nil {
		return nil, err
	}
	return s.Process, nil
}

// Exec runs p as a new process of container id. Detached, it returns once
// the process runs (its pid in PidFile; it is a child of this process
// until this process exits, then of the nearest subreaper); otherwise it
// waits and returns the process's exit status.
func (o OCI) Exec(id string, p *specs.Process, opts ExecOptions) (int, error) {
	if err := validateProcess(p); err != nil {
		return -1, err
	}
	pidFile, err := absPath(opts.PidFile)
	if err != nil {
		return -1, err
	}
	c, err := o.load(id)
	if err != nil {
		return -1, err
	}
	status, err := c.Status()
	if err != nil {
		return -1, err
	}
	if status == libcontainer.Stopped {
		return -1, errors.New("cannot exec in a stopped container")
	}
	if status == libcontainer.Paused && !opts.IgnorePaused {
		return -1, errors.New("cannot exec in a paused container (use --ignore-paused to override)")
	}
	// The client sends the process of the bundle as it was: it gets what
	// cordon applied to the container's own process.
	_, annotations := utils.Annotations(c.Config().Labels)
	spec.TightenProcess(p, appliedOf(annotations))
	r := &ociRunner{
		container:     c,
		detach:        opts.Detach,
		pidFile:       pidFile,
		consoleSocket: opts.ConsoleSocket,
		preserveFDs:   opts.PreserveFDs,
		stdin:         opts.Stdin, stdout: opts.Stdout, stderr: opts.Stderr,
	}
	return r.run(p)
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

// ociProcess converts the spec's process to libcontainer's, field for
// field as runc does.
func ociProcess(p *specs.Process) (*libcontainer.Process, error) {
	lp := &libcontainer.Process{
		Args:            p.Args,
		Env:             p.Env,
		UID:             int(p.User.UID),
		GID:             int(p.User.GID),
		Cwd:             p.Cwd,
		Label:           p.SelinuxLabel,
		NoNewPrivileges: &p.NoNewPrivileges,
		AppArmorProfile: p.ApparmorProfile,
		Scheduler:       p.Scheduler,
		IOPriority:      p.IOPriority,
	}
	if p.ConsoleSize != nil {
		lp.ConsoleWidth = uint16(p.ConsoleSize.Width)
		lp.ConsoleHeight = uint16(p.ConsoleSize.Height)
	}
	if c := p.Capabilities; c != nil {
		lp.Capabilities = &configs.Capabilities{
			Bounding: c.Bounding, Effective: c.Effective, Inheritable: c.Inheritable,
			Permitted: c.Permitted, Ambient: c.Ambient,
		}
	}
	for _, g := range p.User.AdditionalGids {
		lp.AdditionalGroups = append(lp.AdditionalGroups, int(g))
	}
	// specconv does not convert rlimits: they go on the process.
	for _, rl := range p.Rlimits {
		t, ok := rlimitTypes[rl.Type]
		if !ok {
			return nil, fmt.Errorf("wrong rlimit value: %s", rl.Type)
		}
		lp.Rlimits = append(lp.Rlimits, configs.Rlimit{Type: t, Hard: rl.Hard, Soft: rl.Soft})
	}
	aff, err := configs.ConvertCPUAffinity(p.ExecCPUAffinity)
	if err != nil {
		return nil, err
	}
	lp.CPUAffinity = aff
	return lp, nil
}

// listenFiles returns the sockets systemd passed for socket activation
// (LISTEN_FDS, for this process), which go on to the container.
func listenFiles() []*os.File {
	if pid, err := strconv.Atoi(os.Getenv("LISTEN_PID")); err != nil || pid != os.Getpid() {
		return nil
	}
	n, err := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if err != nil || n <= 0 {
		return nil
	}
	os.Unsetenv("LISTEN_PID")
	os.Unsetenv("LISTEN_FDS")
	os.Unsetenv("LISTEN_FDNAMES")
	var files []*os.File
	for fd := 3; fd < 3+n; fd++ {
		unix.CloseOnExec(fd)
		files = append(files, os.NewFile(uintptr(fd), "LISTEN_FD_"+strconv.Itoa(fd)))
	}
	return files
}

// ociRunner starts one process in a container, as runc's runner does.
type ociRunner struct {
	container     *libcontainer.Container
	init          bool // the container's first process (create)
	destroy       bool // remove the container when starting fails
	detach        bool
	pidFile       string
	consoleSocket string
	preserveFDs   int
	listenFDs     []*os.File
	// started, when set, is told the pid of the process once it exists,
	// before the pid file is written; an error kills the process.
	started func(pid int) error

	stdin, stdout, stderr *os.File
}

func (r *ociRunner) run(sp *specs.Process) (status int, err error) {
	defer func() {
		if err != nil && r.destroy {
			if e := r.container.Destroy(); e != nil {
				logrus.Warn(e)
			}
		}
	}()
	if r.detach && sp.Terminal && r.consoleSocket == "" {
		return -1, errors.New("cannot allocate tty if runc will detach without setting console socket")
	}
	if (!r.detach || !sp.Terminal) && r.consoleSocket != "" {
		return -1, errors.New("cannot use console socket if runc will not detach or allocate tty")
	}
	p, err := ociProcess(sp)
	if err != nil {
		return -1, err
	}
	p.Init = r.init
	p.LogLevel = strconv.Itoa(int(logrus.GetLevel()))
	if len(r.listenFDs) > 0 {
		p.Env = append(p.Env, "LISTEN_FDS="+strconv.Itoa(len(r.listenFDs)), "LISTEN_PID=1")
		p.ExtraFiles = append(p.ExtraFiles, r.listenFDs...)
	}
	base := 3 + len(p.ExtraFiles)
	for fd := base; fd < base+r.preserveFDs; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return -1, fmt.Errorf("unable to stat preserved-fd %d (of %d): %w", fd-base, r.preserveFDs, err)
		}
		p.ExtraFiles = append(p.ExtraFiles, os.NewFile(uintptr(fd), "PreserveFD:"+strconv.Itoa(fd)))
	}
	// a caller's descriptor must not pass for cordon's host view
	if err := refuseHostView(p.ExtraFiles); err != nil {
		return -1, err
	}

	var (
		closeAfterStart []func()
		term            *terminal
		copied          = func() {}
		closeChildEnds  = func() {}
	)
	defer func() {
		for _, f := range closeAfterStart {
			f()
		}
	}()
	switch {
	case sp.Terminal && r.detach:
		// The caller (containerd's shim) receives the pty master.
		conn, err := net.Dial("unix", r.consoleSocket)
		if err != nil {
			return -1, err
		}
		closeAfterStart = append(closeAfterStart, func() { conn.Close() })
		sock, err := conn.(*net.UnixConn).File()
		if err != nil {
			return -1, err
		}
		closeAfterStart = append(closeAfterStart, func() { sock.Close() })
		p.ConsoleSocket = sock
	case sp.Terminal:
		host, err := hostConsole(r.stdin, r.stdout, r.stderr)
		if err != nil {
			return -1, err
		}
		if term, err = newTerminalOn(p, host, r.stdin, r.stdout); err != nil {
			return -1, err
		}
		defer term.close()
	case r.detach:
		// The caller (the shim) hands the process its stdio through ours.
		p.Stdin, p.Stdout, p.Stderr = r.stdin, r.stdout, r.stderr
	default:
		// Attached, the process gets pipes of ours, as runc's: our stdio
		// may be the user's terminal, which a process of the container
		// that kept it could read after exec returned (keystrokes, a
		// password), write to, or reconfigure.
		pipes, err := newStdioPipes(r.container, p, r.stdin, r.stdout, r.stderr)
		if err != nil {
			return -1, err
		}
		copied = pipes.wait
		closeChildEnds = pipes.closeChildEnds
		defer closeChildEnds()
	}

	var sigs chan os.Signal
	if !r.detach {
		sigs = notifyAll()
		defer stopNotify(sigs)
	}
	if r.init {
		err = r.container.Start(p)
	} else {
		err = r.container.Run(p)
	}
	if err != nil {
		return -1, err
	}
	// The process has its ends of the pipes: ours must go for their
	// readers to see the end of the output.
	closeChildEnds()
	if r.started != nil {
		pid, err := p.Pid()
		if err == nil {
			err = r.started(pid)
		}
		if err != nil {
			_ = p.Signal(unix.SIGKILL)
			_, _ = p.Wait()
			return -1, err
		}
	}
	if term != nil {
		if err := term.attach(); err != nil {
			_ = p.Signal(unix.SIGKILL)
			_, _ = p.Wait()
			return -1, err
		}
	}
	if r.pidFile != "" {
		if err := writePidFile(r.pidFile, p); err != nil {
			_ = p.Signal(unix.SIGKILL)
			_, _ = p.Wait()
			return -1, err
		}
	}
	if r.detach {
		return 0, nil
	}
	status, err = waitForwarding(p, term, sigs)
	// As runc: all the output, also of processes the exec'd one left
	// holding the pipes, before returning.
	copied()
	return status, err
}

// stdioPipes connects the caller's stdio to a process through pipes, as
// runc's setupProcessPipes.
type stdioPipes struct {
	child  []*os.File // the process's ends
	copies sync.WaitGroup
}

// newStdioPipes gives p pipes owned by the container's root (which a user
// namespace maps) and copies the caller's stdin into one and the others
// out to stdout and stderr.
func newStdioPipes(c *libcontainer.Container, p *libcontainer.Process, stdin, stdout, stderr *os.File) (*stdioPipes, error) {
	config := c.Config()
	uid, err := config.HostRootUID()
	if err != nil {
		return nil, err
	}
	gid, err := config.HostRootGID()
	if err != nil {
		return nil, err
	}
	pio, err := p.InitializeIO(uid, gid)
	if err != nil {
		return nil, err
	}
	sp := &stdioPipes{}
	for _, f := range []any{p.Stdin, p.Stdout, p.Stderr} {
		if f, ok := f.(*os.File); ok {
			sp.child = append(sp.child, f)
		}
	}
	// Not waited for: a read of the caller's stdin may block for ever.
	go func() {
		_, _ = io.Copy(pio.Stdin, stdin)
		_ = pio.Stdin.Close()
	}()
	for _, c := range []struct {
		w io.Writer
		r io.ReadCloser
	}{{stdout, pio.Stdout}, {stderr, pio.Stderr}} {
		sp.copies.Go(func() {
			_, _ = io.Copy(c.w, c.r)
			_ = c.r.Close()
		})
	}
	return sp, nil
}

// closeChildEnds closes this process's copies of the process's ends.
func (sp *stdioPipes) closeChildEnds() {
	for _, f := range sp.child {
		_ = f.Close()
	}
}

// wait returns once the output is copied: every writer has closed.
func (sp *stdioPipes) wait() { sp.copies.Wait() }

// writePidFile writes the process's pid atomically (create and rename).
func writePidFile(path string, p *libcontainer.Process) error {
	pid, err := p.Pid()
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_SYNC, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.Itoa(pid))
	f.Close()
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
