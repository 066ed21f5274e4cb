package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// Opt is one named transformation of a spec.
type Opt func(*specs.Spec) error

// WithRoot makes dir the sandbox's root, read-only.
func WithRoot(dir string) Opt {
	return func(s *specs.Spec) error {
		if dir == "" {
			return fmt.Errorf("%w: no root directory", ErrInvalid)
		}
		s.Root = &specs.Root{Path: dir, Readonly: true}
		return nil
	}
}

// sandboxEnv tells tools inside that they run in a sandbox.
var sandboxEnv = []string{"CORDON_SANDBOX=1", "SANDBOX_RUNTIME=1", "IS_SANDBOX=1", "TMPDIR=/tmp"}

const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// WithProcess sets the process: cordon's init running the command with the
// caller's ids, the filtered environment and no new privileges. With
// seccomp, the init installs the spec's seccomp profile, compiled by the
// runtime, in the command just before it executes it (see InitSeccompFD).
func WithProcess(p *policy.Policy, req Request, seccomp bool) Opt {
	return func(s *specs.Spec) error {
		env := p.Env.Filter(req.Env)
		env = withoutSecrets(env, p.Env.Allow)
		env = withoutNames(env, sandboxEnv)
		env = append(env, sandboxEnv...)
		contained := req.Mode == ModeContainer || req.Mode == ModeUnconfined
		if contained {
			// The host's /tmp is not the command's to write.
			env = append(withoutNames(env, []string{"TMPDIR="}), "TMPDIR="+PrivateTmp(req.Host.State, req.ID))
		}
		env = withMasked(env, p, req.Masked)
		if !hasName(env, "PATH") {
			env = append(env, defaultPath)
		}
		// Without one, libcontainer would set the home of the sandbox's
		// root, /root, not the caller's.
		if !hasName(env, "HOME") {
			env = append(env, "HOME="+p.Home)
		}
		args := []string{InitPath, InitCommand, fmt.Sprintf("--parent-fd=%d", InitParentFD)}
		user := specs.User{UID: 0, GID: 0}
		if contained {
			// cordon's own binary where it is: there is no mount of it.
			args[0] = req.Host.Executable
			args = append(args, "--contained")
			user = specs.User{UID: req.UID, GID: req.GID}
		}
		if seccomp {
			args = append(args, fmt.Sprintf("--seccomp-fd=%d", InitSeccompFD))
		}
		if Nested(req.UID, req.GID) && !contained {
			args = append(args, fmt.Sprintf("--uid=%d", req.UID), fmt.Sprintf("--gid=%d", req.GID))
		}
		args = append(append(args, "--"), req.Args...)
		s.Process = &specs.Process{
			Terminal:    req.Terminal,
			ConsoleSize: req.ConsoleSize,
			// Root of the sandbox's user namespace, which is the caller
			// (the caller itself in the container mode).
			User:            user,
			Args:            args,
			Env:             env,
			Cwd:             req.Cwd,
			NoNewPrivileges: true,
		}
		return nil
	}
}

// withMasked takes every masked variable's real value out of env (an
// env.allow must not let it through) and puts in its fake, and points
// the TLS clients at the trust bundle when TLS is terminated.
func withMasked(env []string, p *policy.Policy, m Masked) []string {
	var names []string
	for _, c := range p.Credentials.Masked {
		if c.Env != "" {
			names = append(names, c.Env+"=")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		names = append(names, k+"=")
	}
	env = withoutNames(env, names)
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		env = append(env, k+"="+m.Env[k])
	}
	if m.TrustBundle != "" {
		var vars []string
		for _, v := range TrustVars {
			vars = append(vars, v+"="+TrustBundlePath)
		}
		env = append(withoutNames(env, vars), vars...)
	}
	return env
}

// withoutSecrets drops the variables whose value is a URL carrying a
// password (postgres://app:pw@db/app, redis://:pw@cache), whatever their
// name, unless allow (cordon.env.allow) names them: a DATABASE_URL without
// one is kept. Secrets known by their names are the policy's
// cordon.env.deny.
func withoutSecrets(env, allow []string) []string {
	byValue := policy.Env{Deny: []string{"*"}, Allow: allow}
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, value, _ := strings.Cut(kv, "=")
		return urlPassword(value) && byValue.Denies(name)
	})
}

// urlPassword reports whether v is a URL with a password in its user
// information: scheme://user:password@host.
func urlPassword(v string) bool {
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return false
	}
	authority, _, _ := strings.Cut(rest, "/")
	userinfo, _, ok := strings.Cut(authority, "@")
	if !ok {
		return false
	}
	_, pw, ok := strings.Cut(userinfo, ":")
	return ok && pw != ""
}

func hasName(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// withoutNames drops the variables of env whose names are set in vars.
func withoutNames(env, vars []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		drop := false
		for _, v := range vars {
			name, _, _ := strings.Cut(v, "=")
			if strings.HasPrefix(kv, name+"=") {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// WithNamespaces gives the sandbox new user, mount, pid, ipc, uts, network
// (loopback only) and cgroup namespaces — the last three only where the
// probe found them (a degraded sandbox; the caller has said so).
func WithNamespaces(pr probe.Result) Opt {
	return func(s *specs.Spec) error {
		probed := !pr.ProbedAt.IsZero()
		s.Linux.Namespaces = nil
		for _, ns := range []struct {
			t        specs.LinuxNamespaceType
			optional *probe.Feature
		}{
			{specs.UserNamespace, nil},
			{specs.MountNamespace, nil},
			{specs.PIDNamespace, nil},
			{specs.IPCNamespace, &pr.IPCNamespace},
			{specs.UTSNamespace, &pr.UTSNamespace},
			{specs.NetworkNamespace, nil},
			{specs.CgroupNamespace, &pr.CgroupNamespace},
		} {
			if probed && ns.optional != nil && !ns.optional.Available {
				continue
			}
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: ns.t})
		}
		// Host mounts made while the command runs must not appear inside,
		// where they would arrive writable: the root is private, and so is
		// every bind below it (see mounts).
		s.Linux.RootfsPropagation = "private"
		return nil
	}
}

// Nested reports whether the command needs a user namespace of its own to
// run with the caller's ids: libcontainer maps only root into the
// sandbox's user namespace, so a caller other than root runs as root there
// until cordon's init moves the command into a namespace that maps the
// caller's ids back.
func Nested(uid, gid uint32) bool { return uid != 0 || gid != 0 }

// WithIDMappings maps the caller's uid and gid, and nothing else, into the
// sandbox's user namespace, as its root: every other owner shows as the
// overflow id and no setuid helper is needed. See Nested for how the
// command gets the caller's own ids back.
func WithIDMappings(uid, gid uint32) Opt {
	return func(s *specs.Spec) error {
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uid, Size: 1}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: gid, Size: 1}}
		return nil
	}
}

// WithCapabilities leaves every capability set empty: even a caller who is
// root has none inside. With setfcap the init gets CAP_SETFCAP, which the
// kernel requires to map the sandbox's root into a user namespace below
// it. When the command needs a namespace of its own (see Nested), the init
// makes it and drops the capability before the command runs, which never
// has it. Otherwise (allowNestedUserNamespaces, a root caller) the command
// keeps it and nothing else, to map its root into namespaces of its own
// (sandbox-runtime gives a root caller's command the same): it can then
// set file capabilities on files it owns, which it could make setuid
// already.
func WithCapabilities(setfcap bool) Opt {
	return func(s *specs.Spec) error {
		if s.Process == nil {
			return fmt.Errorf("%w: capabilities before process", ErrInvalid)
		}
		initCaps := []string{}
		if setfcap {
			initCaps = []string{"CAP_SETFCAP"}
		}
		s.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding:    initCaps,
			Effective:   initCaps,
			Inheritable: []string{},
			Permitted:   initCaps,
			Ambient:     []string{},
		}
		return nil
	}
}

// WithMounts sets the mount list.
func WithMounts(ms []specs.Mount) Opt {
	return func(s *specs.Spec) error {
		s.Mounts = ms
		return nil
	}
}

// WithProcMasks hides the parts of /proc and /sys that leak host
// information or reach the kernel, as runc's default spec does.
func WithProcMasks() Opt {
	return func(s *specs.Spec) error {
		s.Linux.MaskedPaths = []string{
			"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
			"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
			"/proc/sched_debug", "/proc/scsi", "/sys/firmware",
			"/sys/devices/virtual/powercap",
		}
		s.Linux.ReadonlyPaths = []string{
			"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
		}
		return nil
	}
}

// WithSeccomp sets the seccomp profile. A profile with notify rules gets
// the init the descriptor on which it hands the runtime the listener (see
// InitNotifyFD).
func WithSeccomp(profile *specs.LinuxSeccomp) Opt {
	return func(s *specs.Spec) error {
		s.Linux.Seccomp = profile
		if profile == nil || !slices.ContainsFunc(profile.Syscalls, func(c specs.LinuxSyscall) bool { return c.Action == specs.ActNotify }) {
			return nil
		}
		if s.Process == nil {
			return fmt.Errorf("%w: a notifying seccomp profile needs the process set first", ErrInvalid)
		}
		i := slices.Index(s.Process.Args, "--")
		if i < 0 || !slices.Contains(s.Process.Args[:i], fmt.Sprintf("--seccomp-fd=%d", InitSeccompFD)) {
			return fmt.Errorf("%w: a notifying seccomp profile needs cordon's init to install it", ErrInvalid)
		}
		s.Process.Args = slices.Insert(s.Process.Args, i, fmt.Sprintf("--notify-fd=%d", InitNotifyFD))
		return nil
	}
}

// WithCgroupsPath puts a root caller's sandbox in its own cgroup under
// /cordon. A rootless sandbox gets none here: the runtime uses a delegated
// subtree when there is one. Nor does a root caller's where no cgroup can
// be made (a container's read-only cgroup file system): the runtime then
// makes none.
func WithCgroupsPath(pr probe.Result, id string) Opt {
	return func(s *specs.Spec) error {
		if pr.Root() && cgroupUsable(pr) && id != "" {
			s.Linux.CgroupsPath = "/cordon/" + id
		}
		return nil
	}
}

// WithAnnotations adds annotations.
func WithAnnotations(a map[string]string) Opt {
	return func(s *specs.Spec) error {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		maps.Copy(s.Annotations, a)
		return nil
	}
}

// WithScrub records what the runtime must clear after the run (see
// AnnotationScrub).
func WithScrub(sc Scrub) Opt {
	return func(s *specs.Spec) error {
		if len(sc.Paths) == 0 && len(sc.Globs) == 0 && len(sc.Roots) == 0 && len(sc.Links) == 0 && len(sc.Protected) == 0 {
			return nil
		}
		data, err := json.Marshal(sc)
		if err != nil {
			return err
		}
		return WithAnnotations(map[string]string{AnnotationScrub: string(data)})(s)
	}
}

// withJSONAnnotation records v, as JSON, in an annotation.
func withJSONAnnotation(s *specs.Spec, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WithAnnotations(map[string]string{key: string(data)})(s)
}
