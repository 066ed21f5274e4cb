//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	moby "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// A container made as `docker run IMAGE` makes one by default, without
// Docker: what users who run agents in a devcontainer, a CI job or a pod
// have. Docker's 14 default capabilities, its default seccomp profile
// (moby's, for those capabilities), its masked and read-only /proc and
// /sys paths, its mounts, no user namespace, the host's RLIMIT_NOFILE;
// new pid, mount, IPC and UTS namespaces. The root is a directory of its
// own (pivot_root into / fails) with the host's /usr and /etc bound
// read-only in it (Debian's merged /usr: bin, lib, lib64 and sbin are
// links), the suite's workspaces bound read-write at their own paths, as
// `docker run -v "$PWD:$PWD"` binds a project, and cordon's binary
// read-only. It shares the host's network (`docker run --network host`):
// the test network of netfixture_test.go is reachable from inside.
//
// The container is made by cordon's own OCI verbs with a plain bundle (no
// cordon policy, no runtime configuration: `cordon create` is then
// libcontainer as runc drives it), and every command runs in it as
// `docker exec` runs one: `cordon exec` with a whole process, as root or
// as the unprivileged test user.

// dockerVariant is what the container lets through.
type dockerVariant int

const (
	// dockerDefault is `docker run`: user namespaces refused by the
	// seccomp profile (clone's namespace flags, unshare), Landlock and
	// seccomp available.
	dockerDefault dockerVariant = iota
	// dockerUserNS is `docker run --security-opt seccomp=unconfined`: user
	// namespaces work, but a fresh procfs cannot be mounted in one (the
	// masked paths cover parts of the container's /proc).
	dockerUserNS
	// dockerNoLandlock is dockerDefault under a profile that refuses
	// Landlock's calls with ENOSYS, as a kernel without Landlock answers
	// them: neither of cordon's modes can be made there.
	dockerNoLandlock
)

func (v dockerVariant) String() string {
	return [...]string{"docker-default", "docker-userns", "docker-no-landlock"}[v]
}

// dockerCaps are Docker's default capabilities (moby's
// oci/caps.DefaultCapabilities).
var dockerCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// Docker's masked and read-only paths (moby's oci.DefaultLinuxSpec).
var (
	dockerMasked = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	dockerReadonly = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// needDocker: root on the host, which makes the container as Docker's
// daemon does.
func needDocker() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("root to make a container as docker run does (the suite runs as uid %d)", os.Geteuid())
	}
	return ""
}

// dockerLike is one running container.
type dockerLike struct {
	t       testing.TB
	variant dockerVariant
	id      string
	// dir holds the bundle, the runtime's state and log, and the process
	// files of cordon exec.
	dir string
	// init is the pid of the container's first process on the host.
	init int
}

// ociArgs are cordon's global flags for the container, as containerd's
// shim passes them.
func (d *dockerLike) ociArgs(verb ...string) []string {
	return append([]string{"--root", filepath.Join(d.dir, "state"), "--log", filepath.Join(d.dir, "log.json"), "--log-format", "json"}, verb...)
}

// ociEnv is the environment of cordon's OCI verbs here: no runtime
// configuration of the host's may give the bundle a cordon policy, the
// container must be Docker's and nothing more.
var ociEnvPlain = []string{"PATH=" + sandboxPath, "CORDON_RUNTIME_CONFIG=-"}

// oci runs one of cordon's OCI verbs on the container, with no stdio.
func (d *dockerLike) oci(verb ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cordonBin, d.ociArgs(verb...)...)
	cmd.Env = ociEnvPlain
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cordon %s: %w (%s)", strings.Join(verb, " "), err, lastLogError(d.t, filepath.Join(d.dir, "log.json")))
	}
	return nil
}

// newDockerLike starts a container of the variant, its first process a
// sleep that holds it (as a `docker run -d IMAGE sleep infinity` of a
// devcontainer), and removes it with everything in it when the test ends.
func newDockerLike(t testing.TB, v dockerVariant) *dockerLike {
	t.Helper()
	requires(t, needDocker)
	dir := t.TempDir()
	d := &dockerLike{t: t, variant: v, dir: dir, id: ociID(fmt.Sprintf("%s-%s", v, randomHex(3)))}
	rootfs := filepath.Join(dir, "rootfs")
	dockerRoot(t, rootfs)
	for _, c := range callers {
		if c.missing == "" {
			p := filepath.Join(rootfs, dockerCache(c))
			must(t, os.Mkdir(p, 0o700))
			must(t, os.Chown(p, c.uid, c.gid))
		}
	}
	s, err := dockerSpec(rootfs, v)
	must(t, err)
	data, err := json.MarshalIndent(s, "", "\t")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	pidFile := filepath.Join(dir, "init.pid")
	if err := d.oci("create", "--bundle", dir, "--pid-file", pidFile, d.id); err != nil {
		t.Fatalf("create the %s container: %v", v, err)
	}
	t.Cleanup(func() {
		_ = d.oci("kill", "--all", d.id, "KILL")
		_ = d.oci("delete", "--force", d.id)
	})
	if err := d.oci("start", d.id); err != nil {
		t.Fatalf("start the %s container: %v", v, err)
	}
	d.init, err = strconv.Atoi(strings.TrimSpace(readFile(pidFile)))
	must(t, err)
	return d
}

// dockerCache is the caller's XDG_CACHE_HOME in the container.
func dockerCache(c *caller) string { return fmt.Sprintf("/var/cache/cordon-it-%d", c.uid) }

// dockerRoot fills dir as an image's root would be before Docker mounts
// anything on it: the host's top-level links (bin -> usr/bin, ...), and
// empty directories for the rest, /tmp and /var/tmp open to everyone.
func dockerRoot(t testing.TB, dir string) {
	t.Helper()
	for _, d := range []string{"usr", "etc", "proc", "sys", "dev", "tmp", "run", "root", "home", "var/tmp", "var/cache"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.Chmod(filepath.Join(dir, "tmp"), 0o1777))
	must(t, os.Chmod(filepath.Join(dir, "var", "tmp"), 0o1777))
	entries, err := os.ReadDir("/")
	must(t, err)
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(filepath.Join("/", e.Name()))
		must(t, err)
		must(t, os.Symlink(target, filepath.Join(dir, e.Name())))
	}
}

// dockerSpec is the config.json of a `docker run` of the variant, rooted at
// rootfs.
func dockerSpec(rootfs string, v dockerVariant) (*specs.Spec, error) {
	var hard uint64 = 1 << 20
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Max < hard {
		hard = rl.Max // above the host's hard limit, the start fails
	}
	s := &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: rootfs},
		Hostname: "cordon-it-docker",
		Process: &specs.Process{
			Args: []string{"sleep", "infinity"},
			Env:  []string{"PATH=" + sandboxPath, "HOSTNAME=cordon-it-docker", suiteEnv + "=" + suiteToken},
			Cwd:  "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding: dockerCaps, Effective: dockerCaps, Permitted: dockerCaps,
			},
			Rlimits: []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: hard, Soft: hard}},
		},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"ro", "nosuid", "noexec", "nodev"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			// The image's system, the host's here.
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"rbind", "ro"}},
			{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro"}},
			// cordon, and the project directories (the helper among them).
			{Destination: filepath.Dir(cordonBin), Type: "bind", Source: filepath.Dir(cordonBin), Options: []string{"rbind", "ro"}},
			{Destination: wsRootOutside, Type: "bind", Source: wsRootOutside, Options: []string{"rbind", "rw"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
				{Type: specs.MountNamespace},
			},
			MaskedPaths:   dockerMasked,
			ReadonlyPaths: dockerReadonly,
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
		},
	}
	if v == dockerUserNS {
		return s, nil
	}
	profile, err := moby.GetDefaultProfile(s)
	if err != nil {
		return nil, fmt.Errorf("Docker's default seccomp profile: %w", err)
	}
	if v == dockerNoLandlock {
		landlock := []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}
		for i := range profile.Syscalls {
			profile.Syscalls[i].Names = slices.DeleteFunc(profile.Syscalls[i].Names, func(n string) bool { return slices.Contains(landlock, n) })
		}
		nosys := uint(unix.ENOSYS)
		profile.Syscalls = append(profile.Syscalls, specs.LinuxSyscall{Names: landlock, Action: specs.ActErrno, ErrnoRet: &nosys})
	}
	s.Linux.Seccomp = profile
	return s, nil
}

// wrap changes cmd, made to run on the host as caller c (its path,
// arguments, environment, directory, descriptors, credentials), into the
// same command run inside the container, as `docker exec --user UID:GID`
// runs one: `cordon exec --process FILE` as root on the host, with
// Docker's capabilities for the process (an unprivileged user's execve
// drops them, as in Docker), the descriptors of cmd.ExtraFiles passed on
// (--preserve-fds) and its host pid in the returned file. Call it last,
// before Start.
func (d *dockerLike) wrap(cmd *exec.Cmd, c *caller) (pidFile string) {
	d.t.Helper()
	dir := cmd.Dir
	if dir == "" {
		dir = "/"
	}
	env := slices.Clone(cmd.Env)
	if env == nil {
		env = os.Environ()
	}
	// The probe's cache: the container's own, for each caller (the
	// host's is not reachable there, and is about the host).
	for i, kv := range env {
		if strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			env[i] = "XDG_CACHE_HOME=" + dockerCache(c)
		}
	}
	p := specs.Process{
		User: specs.User{UID: uint32(c.uid), GID: uint32(c.gid)},
		// As on the host: argv[0] as given, found on PATH.
		Args: append([]string{cmd.Args[0]}, cmd.Args[1:]...),
		Env:  env, Cwd: dir,
		Capabilities: &specs.LinuxCapabilities{
			Bounding: dockerCaps, Effective: dockerCaps, Permitted: dockerCaps,
		},
	}
	f, err := os.CreateTemp(d.dir, "process-*.json")
	must(d.t, err)
	must(d.t, json.NewEncoder(f).Encode(&p))
	must(d.t, f.Close())
	pidFile = strings.TrimSuffix(f.Name(), ".json") + ".pid"
	args := append([]string{cordonBin}, d.ociArgs("exec", "--process", f.Name(), "--pid-file", pidFile)...)
	if n := len(cmd.ExtraFiles); n > 0 {
		args = append(args, "--preserve-fds", strconv.Itoa(n))
	}
	cmd.Path, cmd.Args = cordonBin, append(args, d.id)
	cmd.Dir = ""
	cmd.Env = ociEnvPlain
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = nil
	return pidFile
}

// pid waits for cordon exec to write the pid file wrap named, and returns
// the process's pid on the host and in the container.
func (d *dockerLike) pid(pidFile string) (host, inside int) {
	d.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, err := os.ReadFile(pidFile)
		if host, err = strconv.Atoi(strings.TrimSpace(string(data))); err == nil && host > 0 {
			break
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("cordon exec wrote no pid to %s", pidFile)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// NSpid: the pid in each namespace, the innermost last.
	status := readFile(fmt.Sprintf("/proc/%d/status", host))
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			inside, _ = strconv.Atoi(f[len(f)-1])
		}
	}
	if inside == 0 {
		d.t.Fatalf("no NSpid for pid %d: %q", host, status)
	}
	return host, inside
}

// box makes a box whose cordon runs (b.cordon's, b.start's) go through
// wrap into this container.
func (d *dockerLike) box(t *testing.T, c *caller) *box {
	b := newBox(t, c)
	b.ctr = d
	return b
}

// start starts argv in the container as caller c, a process outside any
// run for the runs to see, and ends it when the test ends.
func (d *dockerLike) start(t testing.TB, c *caller, argv ...string) (host, inside int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + sandboxPath, suiteEnv + "=" + suiteToken}
	pidFile := d.wrap(cmd, c)
	must(t, cmd.Start())
	host, inside = d.pid(pidFile)
	t.Cleanup(func() {
		_ = syscall.Kill(host, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return host, inside
}

// path is the container's path p as the host reaches it.
func (d *dockerLike) path(p string) string { return fmt.Sprintf("/proc/%d/root%s", d.init, p) }
