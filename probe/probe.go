// Package probe finds out what this kernel and this user can do for a
// sandbox: it really attempts each feature (a namespace, a fresh /proc, a
// seccomp filter, a Landlock ruleset, a cgroup) instead of inferring it
// from files or binaries, and reports the facts that spec.Compile, the
// runtime and `cordon doctor` decide with. Assess turns those facts into a
// verdict — a full sandbox, a degraded one (and which protections are
// lost), or none — with the likely cause of every failure and the commands
// that fix it on common distributions.
//
// # How the probes run
//
// Every attempt that changes the state of the process that makes it (new
// namespaces, mounts, a seccomp filter, Landlock) runs in a child process,
// and the children run concurrently. A child is the probing program
// itself, re-executed as "PROGRAM probe-child NAME" with CORDON_PROBE=NAME
// as its whole environment: Go's os/exec creates it with the clone flags
// and the uid/gid mapping under test (SysProcAttr.Cloneflags,
// UidMappings: uid 0 inside mapped to the caller, exactly as cordon's
// sandboxes are made), and Child, called first in main, performs the rest
// of the attempt inside (mount a tmpfs, a fresh procfs, an overlay, set the
// host name, bring up loopback, install a filter) and answers with one JSON
// line. Running /bin/true in the new namespaces would only show that clone
// succeeded: on Ubuntu 24.04 clone succeeds and AppArmor then denies every
// capability inside, so a probe has to use the namespace to tell the
// truth. The child is recognised by its arguments and its environment
// together, so neither a stray CORDON_PROBE in a user's shell nor a
// command line alone can turn cordon into a probe. Facts that need no
// attempt (the cgroup layout, the libseccomp version, whether this is a
// container) are read in the calling process.
//
// A program that probes must call Child first thing in main (after
// libcontainer's runtime.Init), or name another executable that does in
// Options.Executable; Run refuses to run inside a child that was not
// intercepted, so a program without the hook cannot recurse.
//
// # Cache
//
// Load keeps the result per boot in a file (see CacheDir), keyed by
// /proc/sys/kernel/random/boot_id, the identity of the cordon binary, the
// caller's ids, namespaces, cgroup, seccomp and AppArmor confinement and
// the sysctls that decide user namespaces, so that a repeated call costs a
// few small reads and a changed system is probed again. A cache file that
// is not the caller's own, is writable by others, does not parse strictly
// or has another key is ignored and replaced, never trusted.
package probe

import (
	"runtime"
	"slices"
	"time"
)

// Result is what the probes found. The zero value describes a machine on
// which nothing has been probed. Its JSON keys are stable (docs/doctor.md).
type Result struct {
	// EUID is the effective user id of the caller.
	EUID int `json:"euid"`
	// Arch is the GOARCH of the host.
	Arch string `json:"arch"`
	// Kernel is the kernel release, e.g. "6.18.44".
	Kernel string `json:"kernel"`
	// MemTotal is the machine's memory in bytes (limits given as a share
	// of it are computed from it).
	MemTotal uint64 `json:"memTotal,omitempty"`

	// CordonVersion is the version of the probing binary's main module.
	CordonVersion string `json:"cordonVersion,omitempty"`
	// Executable is the probing binary (the one an AppArmor profile must
	// name).
	Executable string `json:"executable,omitempty"`
	// BootID is /proc/sys/kernel/random/boot_id at the time of probing.
	BootID string `json:"bootId,omitempty"`
	// ProbedAt is when the probes ran; ProbeMillis how long they took.
	ProbedAt    time.Time `json:"probedAt"`
	ProbeMillis float64   `json:"probeMillis"`
	// Cached is set when Load answered from its cache.
	Cached bool `json:"cached"`

	// UserNamespaces: the caller becomes root of a new user namespace
	// (uid and gid 0 inside mapped to its own, nothing else) and can use
	// that root's capabilities there.
	UserNamespaces Feature `json:"userNamespaces"`
	// The other namespaces, each made together with a user namespace as
	// cordon makes them, and used: a tmpfs and a recursive read-only bind
	// (mount), PID 1 (pid), a host name (uts), loopback up and no other
	// interface (network), a root cgroup view (cgroup).
	MountNamespace   Feature `json:"mountNamespace"`
	PIDNamespace     Feature `json:"pidNamespace"`
	IPCNamespace     Feature `json:"ipcNamespace"`
	UTSNamespace     Feature `json:"utsNamespace"`
	NetworkNamespace Feature `json:"networkNamespace"`
	CgroupNamespace  Feature `json:"cgroupNamespace"`
	// Procfs: a fresh procfs mounted inside new user, pid and mount
	// namespaces.
	Procfs Feature `json:"procfs"`
	// Overlayfs: an overlay mounted inside a user namespace.
	Overlayfs Feature `json:"overlayfs"`
	// Seccomp: a filter installed with no_new_privs, its actions and
	// flags, and user notification.
	Seccomp Seccomp `json:"seccomp"`
	// Landlock: the ABI version, and a ruleset really enforced.
	Landlock Landlock `json:"landlock"`
	// Cgroups: the layout, and whether the caller can create the cgroups
	// of its sandboxes.
	Cgroups Cgroups `json:"cgroups"`
	// Pidfd: pidfd_open on a child, a signal through it, its exit seen by
	// poll.
	Pidfd Feature `json:"pidfd"`
	// Clone3IntoCgroup: clone3 with CLONE_INTO_CGROUP into a new cgroup
	// where sandboxes go.
	Clone3IntoCgroup Feature `json:"clone3IntoCgroup"`
	// Libseccomp is the libseccomp linked into the probing binary.
	Libseccomp Libseccomp `json:"libseccomp"`
	// Container says whether cordon runs inside a container, and which.
	Container Container `json:"container"`
	// Host is the evidence the causes of failures are inferred from.
	Host Host `json:"host"`
}

// Feature is one attempted feature. When it is not available, the other
// fields say where the attempt failed and why.
type Feature struct {
	Available bool `json:"available"`
	// Step is the operation that failed, e.g. "clone", "sethostname",
	// "mount proc".
	Step string `json:"step,omitempty"`
	// Errno is the error number's name, e.g. "EPERM", when there is one.
	Errno string `json:"errno,omitempty"`
	// Error is the error as the probe saw it.
	Error string `json:"error,omitempty"`
	// Cause is the likely cause, one of the Cause* codes.
	Cause string `json:"cause,omitempty"`
}

// StepUntested is the Step of a feature that could not be attempted
// because something it needs is missing; Error says what.
const StepUntested = "untested"

// Seccomp is the seccomp probe's result.
type Seccomp struct {
	Feature
	// Actions are the filter return actions the kernel supports
	// (SECCOMP_GET_ACTION_AVAIL), by their OCI names, e.g. "SCMP_ACT_ERRNO".
	Actions []string `json:"actions"`
	// Flags are the filter flags the kernel accepted, by their OCI names,
	// e.g. "SECCOMP_FILTER_FLAG_LOG".
	Flags []string `json:"flags"`
	// UserNotify: a filter installed with SECCOMP_FILTER_FLAG_NEW_LISTENER
	// stopped a system call and a supervisor thread answered it.
	UserNotify bool `json:"userNotify"`
	// UserNotifyFailure says why user notification failed.
	UserNotifyFailure *Feature `json:"userNotifyFailure,omitempty"`
}

// Landlock is the Landlock probe's result.
type Landlock struct {
	Feature
	// ABI is the Landlock ABI version, 0 without Landlock.
	ABI int `json:"abi"`
}

// Cgroup layouts.
const (
	LayoutV1     = "v1"     // controllers in cgroup v1 hierarchies only
	LayoutV2     = "v2"     // the unified hierarchy only
	LayoutHybrid = "hybrid" // v1 controller hierarchies and a cgroup2 mount
	LayoutNone   = "none"   // no cgroup file system mounted
)

// Cgroups is the cgroup probe's result.
type Cgroups struct {
	// Layout is LayoutV1, LayoutV2, LayoutHybrid or LayoutNone, from
	// /proc/self/mountinfo.
	Layout string `json:"layout"`
	// V1Controllers are the controllers of the mounted v1 hierarchies
	// (named hierarchies as "name=systemd").
	V1Controllers []string `json:"v1Controllers"`
	// V2Mount is where the unified hierarchy is mounted, and V2Controllers
	// its root's cgroup.controllers.
	V2Mount       string   `json:"v2Mount,omitempty"`
	V2Controllers []string `json:"v2Controllers"`
	// Own is the caller's cgroup in the unified hierarchy ("0::" in
	// /proc/self/cgroup).
	Own string `json:"own,omitempty"`
	// Parents are the directories under which cordon would create its
	// sandboxes' cgroups: for root "/cordon" in every hierarchy, for
	// everyone else the caller's own v2 cgroup (a delegated subtree).
	Parents []string `json:"parents"`
	// Create: a child cgroup was created (and removed) under every parent
	// and, in the unified hierarchy, a process started in it.
	Create Feature `json:"create"`
	// Controllers are the controllers the sandboxes' cgroups can use for
	// limits: those of the writable parents.
	Controllers []string `json:"controllers"`
	// FavorDynmods: a cgroup hierarchy is mounted with favordynmods. Then
	// moving a process into a cgroup does not wait for an RCU grace period
	// (the kernel's lock for it is global, so one mount is enough); without
	// it, the first such move after a quiet spell waits one (7-14 ms seen),
	// and a cold run pays it (docs/performance.md).
	FavorDynmods bool `json:"favorDynmods"`
}

// Libseccomp is the libseccomp library linked into cordon.
type Libseccomp struct {
	// Version is "major.minor.micro", "" when cordon was built without it.
	Version string `json:"version"`
	// API is libseccomp's API level for this kernel (seccomp_api_get).
	API int `json:"api"`
}

// Container kinds.
const (
	ContainerDocker     = "docker"
	ContainerPodman     = "podman"
	ContainerKubernetes = "kubernetes"
	ContainerLXC        = "lxc"
	ContainerNspawn     = "systemd-nspawn"
	ContainerWSL        = "wsl"
	ContainerCordon     = "cordon" // a cordon sandbox (CORDON_SANDBOX=1)
	ContainerOther      = "other"
)

// Container says whether cordon runs inside a container.
type Container struct {
	// Kind is one of the Container* kinds, or "" on a host.
	Kind string `json:"kind"`
	// Evidence lists what was found, e.g. "/.dockerenv exists".
	Evidence []string `json:"evidence"`
}

// Host is what the caller's process and the kernel say about
// confinement: the evidence the causes of failures are inferred from.
type Host struct {
	// Sysctls are the values of the sysctls in SysctlNames that exist.
	Sysctls map[string]string `json:"sysctls"`
	// SeccompFilters is the number of seccomp filters on the caller
	// (an outer container's, typically).
	SeccompFilters int `json:"seccompFilters"`
	// NoNewPrivs is the caller's no_new_privs bit.
	NoNewPrivs bool `json:"noNewPrivs"`
	// AppArmor is the caller's AppArmor label, e.g. "unconfined" or
	// "docker-default (enforce)"; "" without AppArmor.
	AppArmor string `json:"apparmor"`
	// LSMs are the active security modules (/sys/kernel/security/lsm), nil
	// when securityfs is not readable.
	LSMs []string `json:"lsms"`
	// Systemd is set when systemd is the init system (/run/systemd/system).
	Systemd bool `json:"systemd"`
	// ProcMasked lists mounts over parts of /proc (an outer container's
	// masks), which forbid mounting a fresh procfs in a user namespace.
	ProcMasked []string `json:"procMasked"`
	// AnonFolios are the sizes of folio, larger than a page, that the
	// kernel gives any process's anonymous memory on a page fault
	// (transparent huge pages of that size set to "always", or to
	// "inherit" under an "always" top-level setting), smallest first, e.g.
	// ["64kB"]. Empty when every fault gets a single page, as by default;
	// nil when the kernel has no such settings (or the result is older).
	// A cold run takes about half the page faults with 64 kB folios
	// (docs/performance.md).
	AnonFolios []string `json:"anonFolios"`
}

// The sysctls recorded in Host.Sysctls.
const (
	SysctlUnprivUserns     = "kernel.unprivileged_userns_clone"
	SysctlMaxUserNS        = "user.max_user_namespaces"
	SysctlAppArmorRestrict = "kernel.apparmor_restrict_unprivileged_userns"
)

// namespaceLimits are the sysctls that limit, per user namespace and its
// descendants, the namespaces of each other kind a sandbox is made of,
// by the features that make them.
var namespaceLimits = map[string]string{
	"mountNamespace":   "user.max_mnt_namespaces",
	"pidNamespace":     "user.max_pid_namespaces",
	"ipcNamespace":     "user.max_ipc_namespaces",
	"utsNamespace":     "user.max_uts_namespaces",
	"networkNamespace": "user.max_net_namespaces",
	"cgroupNamespace":  "user.max_cgroup_namespaces",
}

// SysctlNames are the sysctls that decide whether the caller may create
// the namespaces of a sandbox: user namespaces first, then each kind's
// limit (a change to any of them must re-probe).
var SysctlNames = []string{SysctlUnprivUserns, SysctlMaxUserNS, SysctlAppArmorRestrict,
	"user.max_mnt_namespaces", "user.max_pid_namespaces", "user.max_ipc_namespaces",
	"user.max_uts_namespaces", "user.max_net_namespaces", "user.max_cgroup_namespaces"}

// Root reports whether the caller is root.
func (r Result) Root() bool { return r.EUID == 0 }

// LandlockABI returns the Landlock ABI version a sandbox can use, 0 when
// none.
func (r Result) LandlockABI() int {
	if !r.Landlock.Available {
		return 0
	}
	return r.Landlock.ABI
}

// CgroupLimits reports whether the sandboxes' cgroups can be created and
// carry the given controllers ("memory", "pids", "cpu").
func (r Result) CgroupLimits(controllers ...string) bool {
	if !r.Cgroups.Create.Available {
		return false
	}
	for _, c := range controllers {
		if !slices.Contains(r.Cgroups.Controllers, c) {
			return false
		}
	}
	return true
}

// Basic returns the facts that cost nothing to learn: the caller's euid, the
// architecture, the kernel release and the memory.
func Basic() Result {
	return Result{EUID: euid(), Arch: runtime.GOARCH, Kernel: kernelRelease(), MemTotal: memTotal()}
}
