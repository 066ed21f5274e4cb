package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/mounts"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// Sandbox modes (Request.Mode, AnnotationSandbox), best first.
const (
	// ModeFull is the sandbox of namespaces, mounts, seccomp, Landlock and
	// cgroups that libcontainer builds.
	ModeFull = "full"
	// ModeContainer confines the command without any namespace, where the
	// kernel or an outer container refuses them (a `docker run` without
	// --privileged, a Kubernetes pod): cordon's init runs on the host as
	// the caller's child and applies Landlock as the file-system layer
	// (reads everywhere except the denied paths, writes only in the
	// writable roots and a private temporary directory, TCP only to the
	// proxy's ports, no signal or abstract unix socket beyond the run),
	// the agent's seccomp profile with UDP and every socket family but
	// TCP refused, no capabilities, no_new_privs and rlimits; it ends the
	// command's whole tree as its child subreaper.
	//
	// What it cannot do, and says (cordon doctor, docs/security.md): the
	// command sees the host's processes and /proc, shares its loopback
	// and its IPC, gets no cgroup limits; a TCP rule names a port, not an
	// address, so the command may connect to any address at the proxy's
	// two ports; Landlock grants a writable root with all it holds, so
	// the protected paths inside one are checked and put back after the
	// run instead of being read-only during it, and a denied path that
	// exists inside one is refused outright (see containerLandlock).
	ModeContainer = "container"
	// ModeUnconfined runs the command with no confinement at all, only
	// cordon's init around it (the environment filtered, the limits, the
	// whole tree ended with the command): where neither mode can be made
	// and the settings accept it (cordon.acceptUnconfined).
	ModeUnconfined = "unconfined"
)

// AnnotationSandbox is the mode the spec runs in: ModeFull or
// ModeContainer, with ", host /proc" when the host's /proc is bound
// (Request.HostProc).
const AnnotationSandbox = "dev.cordon.sandbox"

// Contained reports whether the spec runs without namespaces: in the
// container mode, or unconfined.
func Contained(s *specs.Spec) bool {
	m := s.Annotations[AnnotationSandbox]
	return m == ModeContainer || m == ModeUnconfined
}

// PrivateTmp is the container mode's temporary directory for the run id,
// below the runtime's state directory (hidden from every sandbox): the
// runtime makes it, empty and the caller's, before the command starts, and
// removes it after; the command's TMPDIR points at it.
func PrivateTmp(state, id string) string { return path.Join(state, id, "tmp") }

// containerDevices are the devices a contained command may open, as the
// full sandbox's minimal /dev has them; the rest of /dev is out of reach.
var containerDevices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/pts",
}

// containerLandlock is the container mode's file-system layer. It is the
// full sandbox's complement of the denied paths (landlockRules), with
// /dev among them (only containerDevices are granted back), and with the
// run's private temporary directory as the only writable place besides
// the writable roots: the host's /tmp, /dev/shm and /proc stay read-only.
//
// Landlock grants a directory with everything below it, and cannot take a
// path back out of a grant. A writable root built from its parts (every
// entry but the protected ones granted, the root itself only its
// directory rights) would leave every file the command creates in the root
// unwritable once made: a grant is inherited by path, and a new file's
// path has only the root's rule. So a writable root is granted whole, and:
//   - the protected paths inside it (.git/hooks, .bashrc, the settings
//     files, ...) are writable during the run: the runtime records them
//     before it and puts back after it whatever changed (Scrub.Restore),
//     as it moves aside whatever appeared (Scrub.Paths);
//   - a denied path that exists inside it cannot be hidden, and the run is
//     refused with a line that says so (a denied path that does not exist
//     yet is the command's own if it makes it).
func containerLandlock(fsys fs.FS, req Request, writable, denied, allowRead, caches []string) ([]LandlockRule, error) {
	if req.Host.State == "" || req.ID == "" {
		return nil, fmt.Errorf("%w: the container mode needs the run's id and state directory", ErrInvalid)
	}
	for _, d := range denied {
		real, _, err := mounts.Resolve(fsys, d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, w := range writable {
			if paths.Under(real, w) {
				return nil, fmt.Errorf("%w: the container mode cannot hide %s from the command: it is inside the writable %s, and Landlock "+
					"grants a directory with everything in it; move it out of %s, take it out of denyRead (the settings, or a Read() deny rule), "+
					"or run where cordon gets user namespaces, whose full sandbox hides it (cordon doctor says how)", ErrUnsupported, real, w, w)
			}
		}
	}
	hidden := append(slices.Clone(denied), "/dev")
	rules, err := landlockRules(fsys, append([]string{PrivateTmp(req.Host.State, req.ID)}, caches...), writable, hidden, allowRead)
	if err != nil {
		return nil, err
	}
	for _, d := range containerDevices {
		rules = append(rules, LandlockRule{Path: d, Access: "w"})
	}
	return rules, nil
}

// ErrUnsupported is wrapped by errors about a policy the chosen mode cannot
// enforce.
var ErrUnsupported = errors.New("not enforceable in this sandbox mode")

// containerOpts are the transformations of the container mode: a process,
// its Landlock rules and seccomp profile, its limits; no namespaces, no
// mounts, no cgroup.
func containerOpts(p *policy.Policy, req Request, pr probe.Result, pl plan, profile *specs.LinuxSeccomp) []Opt {
	lims, _, rl := limits(p, pr, true)
	if req.Mode == ModeUnconfined {
		return []Opt{
			WithRoot("/"),
			WithProcess(p, req, false),
			WithProxy(p, req),
			WithLimits(nil, rl, lims),
			WithAnnotations(map[string]string{
				AnnotationWorkspace: p.Workspace,
				AnnotationMode:      p.Mode.String(),
				AnnotationSandbox:   ModeUnconfined,
			}),
		}
	}
	return []Opt{
		WithRoot("/"),
		WithProcess(p, req, profile != nil),
		WithCacheEnv(pl.env),
		WithLandlock(pl.landlock),
		WithLandlockStatus(pr),
		WithProxy(p, req),
		WithLimits(nil, rl, lims),
		WithSeccomp(profile),
		WithAnnotations(map[string]string{
			AnnotationWorkspace: p.Workspace,
			AnnotationMode:      p.Mode.String(),
			AnnotationSandbox:   ModeContainer,
		}),
		WithScrub(pl.scrub),
		// The guard is the only layer that keeps the protected paths of a
		// writable root from being made or written during the run here:
		// Landlock grants the root whole.
		WithGuard(pl.guard),
	}
}

// withHostProc replaces the fresh procfs of ms by a bind of the host's
// /proc (with the outer container's masks, recursively) when hostProc is
// set: sandbox-runtime's enableWeakerNestedSandbox, for a container whose
// masked /proc forbids mounting a fresh one. The command then sees the
// host's processes (not their memory or environment: another user
// namespace's processes are not its to trace). The fresh sysfs goes the
// same way, for the same reason (the container masks /sys/firmware): the
// host's /sys, read-only.
func withHostProc(ms []specs.Mount, hostProc bool) []specs.Mount {
	if !hostProc {
		return ms
	}
	out := slices.Clone(ms)
	for i, m := range out {
		switch {
		case m.Destination == "/proc" && m.Type == "proc":
			out[i] = specs.Mount{Destination: "/proc", Type: "bind", Source: "/proc",
				Options: []string{"rbind", "nosuid", "nodev", "noexec"}}
		case m.Destination == "/sys" && m.Type == "sysfs":
			out[i] = specs.Mount{Destination: "/sys", Type: "bind", Source: "/sys",
				Options: []string{"rbind", "rro", "nosuid", "nodev", "noexec"}}
		}
	}
	return out
}

// withHostProcAnnotation records a full sandbox with the host's /proc.
func withHostProcAnnotation(hostProc bool) Opt {
	return func(s *specs.Spec) error {
		if !hostProc {
			return nil
		}
		return WithAnnotations(map[string]string{AnnotationSandbox: ModeFull + ", host /proc"})(s)
	}
}
