package probe

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict levels.
const (
	// Full: every protection of cordon's sandbox is available.
	Full = "full"
	// Degraded: cordon can build a sandbox, without some protections
	// (Verdict.Lost).
	Degraded = "degraded"
	// ContainerMode: the full sandbox's namespaces are refused (an outer
	// container's seccomp filter, typically), but seccomp and Landlock
	// work: cordon runs commands in its container mode, without
	// namespaces (Verdict.Lost says what that loses).
	ContainerMode = "container"
	// Unavailable: cordon cannot build a sandbox that keeps its core
	// promises (the host read-only, no network, nothing outlives the
	// command).
	Unavailable = "unavailable"
)

// Verdict is what the probed facts mean for a sandboxed run.
type Verdict struct {
	// Level is Full, Degraded, ContainerMode or Unavailable.
	Level string `json:"verdict"`
	// HostProc: the full sandbox can be made with the host's /proc bound
	// in place of a fresh one, which is all an outer container's masks
	// forbid (sandbox.enableWeakerNestedSandbox).
	HostProc bool `json:"hostProc,omitempty"`
	// Lost lists the protections a run loses, one line each.
	Lost []string `json:"lost"`
	// Problems are the failures behind Lost, grouped by cause, each with
	// the commands that fix it.
	Problems []Problem `json:"problems"`
}

// Problem is one cause of lost protections.
type Problem struct {
	// Features are the JSON keys of the failed features, e.g.
	// "userNamespaces", "cgroups.create".
	Features []string `json:"features"`
	// Effect is Unavailable or Degraded.
	Effect string `json:"effect"`
	// Cause is one of the Cause* codes.
	Cause string `json:"cause"`
	// Message says what is wrong, in one line.
	Message string `json:"message"`
	// Fixes are ways to fix it, the recommended first; none when nothing
	// short of another kernel or machine helps.
	Fixes []Fix `json:"fixes"`
}

// Fix is one way to fix a problem.
type Fix struct {
	// On says where it applies, e.g. "Ubuntu 24.04", "Docker", "any".
	On string `json:"on"`
	// Command is a shell command to run, "" when Note says what to do.
	Command string `json:"command,omitempty"`
	// Note explains the command, or the fix when there is no command.
	Note string `json:"note,omitempty"`
}

// check is one feature as the verdict weighs it.
type check struct {
	key    string // JSON key
	name   string // for people
	effect string // Unavailable, Degraded, or "" for information only
	lost   string // what a run loses without it
	get    func(*Result) *Feature
}

// checks are the features in the order doctor shows them. The required
// ones (Unavailable) are what every sandbox is built of: cordon makes
// every sandbox in a user namespace, root's too; the mount namespace
// carries the file-system policy; the PID namespace and a fresh /proc keep
// the command's processes in and the host's out of view; the network
// namespace cuts the network off. Without any of them cordon does not
// pretend to sandbox.
var checks = []check{
	{"userNamespaces", "user namespaces", Unavailable,
		"no sandbox: cordon builds every sandbox in a user namespace",
		func(r *Result) *Feature { return &r.UserNamespaces }},
	{"mountNamespace", "mount namespace", Unavailable,
		"no sandbox: the file-system policy needs a mount namespace and recursive read-only binds",
		func(r *Result) *Feature { return &r.MountNamespace }},
	{"pidNamespace", "PID namespace", Unavailable,
		"no sandbox: without a PID namespace the command's processes are not contained",
		func(r *Result) *Feature { return &r.PIDNamespace }},
	{"procfs", "fresh /proc", Unavailable,
		"no sandbox: a fresh /proc cannot be mounted (the host's shows every process)",
		func(r *Result) *Feature { return &r.Procfs }},
	{"networkNamespace", "network namespace", Unavailable,
		"no sandbox: without a network namespace the network cannot be cut off",
		func(r *Result) *Feature { return &r.NetworkNamespace }},
	{"ipcNamespace", "IPC namespace", Degraded,
		"no IPC namespace: System V IPC and POSIX message queues are shared with the host",
		func(r *Result) *Feature { return &r.IPCNamespace }},
	{"utsNamespace", "UTS namespace", Degraded,
		"no UTS namespace: the host name is shared",
		func(r *Result) *Feature { return &r.UTSNamespace }},
	{"cgroupNamespace", "cgroup namespace", Degraded,
		"no cgroup namespace: the host's cgroup paths are visible",
		func(r *Result) *Feature { return &r.CgroupNamespace }},
	{"seccomp", "seccomp filter", Degraded,
		"no seccomp filter: system calls are not restricted (sockets to host daemons, io_uring, ptrace, ...)",
		func(r *Result) *Feature { return &r.Seccomp.Feature }},
	{"seccomp.userNotify", "seccomp user notification", Degraded,
		"no seccomp user notification: refused system calls cannot be reported",
		func(r *Result) *Feature { return notifyFeature(r) }},
	{"landlock", "Landlock", Degraded,
		"no Landlock: no second, inode-based file-system layer",
		func(r *Result) *Feature { return &r.Landlock.Feature }},
	{"seccomp.guard", "system-call guard", Degraded,
		"no system-call guard: the names the policy protects or denies are only protected where they exist when a run starts, and moved aside after it where it makes them",
		func(r *Result) *Feature { return guardFeature(r) }},
	{"cgroups.create", "cgroups", Degraded,
		"no cgroup limits",
		func(r *Result) *Feature { return &r.Cgroups.Create }},
	{"overlayfs", "overlayfs in a user namespace", "", "",
		func(r *Result) *Feature { return &r.Overlayfs }},
	{"pidfd", "pidfd", "", "",
		func(r *Result) *Feature { return &r.Pidfd }},
	{"clone3IntoCgroup", "clone3 into a cgroup", "", "",
		func(r *Result) *Feature { return &r.Clone3IntoCgroup }},
}

// guardFeature returns the system-call guard as a Feature: user
// notification with descriptors installed in the process (Linux 5.9) and
// killable waits, Linux 5.19.
func guardFeature(r *Result) *Feature {
	if f := notifyFeature(r); !f.Available {
		return f
	}
	if !kernelAtLeast(r.Kernel, 5, 19) {
		return &Feature{Step: StepUntested, Error: "needs Linux 5.19", Cause: CauseKernelTooOld}
	}
	return &Feature{Available: true}
}

// notifyFeature returns user notification as a Feature.
func notifyFeature(r *Result) *Feature {
	if r.Seccomp.UserNotify {
		return &Feature{Available: true}
	}
	if r.Seccomp.UserNotifyFailure != nil {
		return r.Seccomp.UserNotifyFailure
	}
	if !r.Seccomp.Available {
		f := r.Seccomp.Feature
		return &f
	}
	return &Feature{Error: "not attempted", Cause: CauseUnknown}
}

// transient reports whether a probe of r failed for a reason of the
// moment, not of the machine: it ran out of time, it lacked resources
// (EAGAIN, ENOMEM, EMFILE, ENFILE: the caller's process or descriptor
// limit, memory), or its child ended without an answer (Go's runtime
// dies when it cannot start a thread). Such a result is not cached: it
// would refuse every run until the next boot or cordon doctor --fresh.
func transient(r Result) bool {
	for _, c := range checks {
		f := c.get(&r)
		switch {
		case f.Available:
		case f.Cause == CauseTimeout,
			strings.HasPrefix(f.Step, "probe child "),
			f.Errno == "EAGAIN", f.Errno == "ENOMEM", f.Errno == "EMFILE", f.Errno == "ENFILE":
			return true
		}
	}
	return false
}

// limitControllers are the controllers behind --memory, --pids and --cpus.
var limitControllers = []string{"memory", "pids", "cpu"}

// Assess weighs the probed facts: which protections a sandboxed run keeps,
// which it loses and why, and how to fix each problem. It is a pure
// function of r.
func Assess(r Result) Verdict {
	diagnose(&r)
	v := Verdict{Level: Full, Lost: []string{}, Problems: []Problem{}}
	byCause := map[string]int{}
	usernsCause := ""
	if !r.UserNamespaces.Available {
		usernsCause = r.UserNamespaces.Cause
	}
	add := func(key, effect, lost string, f Feature) {
		if effect == Unavailable || v.Level == Full {
			v.Level = effect
		}
		cause := f.Cause
		if cause == "" {
			cause = CauseUnknown
		}
		// What fails because user namespaces fail is lost with the
		// sandbox: one line says so.
		if key == "userNamespaces" || cause != usernsCause || cause == CauseUnknown {
			v.Lost = append(v.Lost, lost)
		}
		// Failures with the same cause are one problem, except unknown
		// ones, whose errors differ, and an outer filter's refusals of
		// different calls (clone for the namespaces,
		// landlock_create_ruleset for Landlock).
		msg := message(cause, key, f, &r)
		group := cause
		if cause == CauseOuterSeccomp || cause == CauseOuterAppArmor {
			group += "\x00" + msg
		}
		if i, ok := byCause[group]; ok && cause != CauseUnknown {
			p := &v.Problems[i]
			p.Features = append(p.Features, key)
			if effect == Unavailable {
				p.Effect = Unavailable
			}
			return
		}
		byCause[group] = len(v.Problems)
		v.Problems = append(v.Problems, Problem{
			Features: []string{key},
			Effect:   effect,
			Cause:    cause,
			Message:  msg,
			Fixes:    fixes(cause, key, &r),
		})
	}
	for _, c := range checks {
		if c.effect == "" {
			continue
		}
		f := *c.get(&r)
		if f.Available {
			continue
		}
		lost := c.lost
		if c.key == "cgroups.create" {
			lost += ": " + message(f.Cause, c.key, f, &r)
		}
		add(c.key, c.effect, lost, f)
	}
	if r.Seccomp.Available && r.Libseccomp.Version == "" {
		add("libseccomp", Degraded, "no seccomp filter: cordon was built without libseccomp",
			Feature{Cause: CauseNoLibseccomp})
	}
	if r.Cgroups.Create.Available {
		var missing []string
		for _, c := range limitControllers {
			if !slices.Contains(r.Cgroups.Controllers, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			f := Feature{Cause: CauseControllersMissing, Error: strings.Join(missing, ", ")}
			add("cgroups.controllers", Degraded,
				fmt.Sprintf("no cgroup limits on %s: the controllers are not available", strings.Join(missing, ", ")), f)
		}
	}
	if v.Level == Unavailable {
		v.HostProc = hostProcWorks(r)
		if containerWorks(r) {
			v.Level = ContainerMode
			v.Lost = append(containerLost(r), slices.DeleteFunc(v.Lost, func(l string) bool {
				return strings.HasPrefix(l, "no sandbox:") || strings.HasPrefix(l, "no cgroup limits")
			})...)
		} else if outerSupervisor(r) {
			v.Lost = append(v.Lost, "no container mode: an outer sandbox's seccomp supervisor performs file calls itself, where Landlock rules added below it do not apply")
		}
	}
	if v.Level == Unavailable || v.Level == ContainerMode {
		// The degraded problems are moot without a sandbox: list the
		// unavailable ones first.
		slices.SortStableFunc(v.Problems, func(a, b Problem) int {
			return boolInt(b.Effect == Unavailable) - boolInt(a.Effect == Unavailable)
		})
	}
	return v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// message says in one line what a cause means for the feature.
func message(cause, key string, f Feature, r *Result) string {
	h := r.Host
	switch cause {
	case CauseAppArmorUserns:
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1): the namespace is made, but its root gets no capabilities"
	case CauseUnprivUsernsClone:
		return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"
	case CauseMaxUserNamespaces:
		return "user namespaces are disabled (user.max_user_namespaces=0)"
	case CauseUserNSLimit:
		return fmt.Sprintf("the user namespace limit is reached (user.max_user_namespaces=%s, or 32 nested levels)", orUnknown(h.Sysctls[SysctlMaxUserNS]))
	case CauseNamespaceLimit:
		name := namespaceLimit(key, h)
		kind := strings.TrimSuffix(strings.TrimPrefix(name, "user.max_"), "_namespaces")
		return fmt.Sprintf("the limit on %s namespaces is reached (%s=%s)", kind, name, orUnknown(h.Sysctls[name]))
	case CauseOuterSeccomp:
		return fmt.Sprintf("the seccomp filter of the %s cordon runs in refuses %s (%s)", containerName(r), stepName(f), f.Errno)
	case CauseOuterAppArmor:
		return fmt.Sprintf("the AppArmor profile cordon runs under (%s) refuses %s (%s)", h.AppArmor, stepName(f), f.Errno)
	case CauseProcMasked:
		return fmt.Sprintf("the %s cordon runs in masks parts of /proc (%s), so the kernel refuses a fresh procfs in a user namespace", containerName(r), strings.Join(h.ProcMasked, ", "))
	case CauseKernelConfig:
		return fmt.Sprintf("the kernel (%s) is built without %s", r.Kernel, kernelFeature(key))
	case CauseKernelTooOld:
		return fmt.Sprintf("the kernel (%s) is too old for %s", r.Kernel, kernelFeature(key))
	case CauseLandlockNotEnabled:
		return "Landlock is built into the kernel but was not enabled at boot (the lsm= list)"
	case CauseNotDelegated:
		return fmt.Sprintf("the caller's cgroup (%s) is not delegated to it, so it cannot create cgroups for its sandboxes", orUnknown(r.Cgroups.Own))
	case CauseCgroupV1Rootless:
		return "the controllers are in cgroup v1 hierarchies, which are never delegated to an unprivileged user"
	case CauseCgroupReadOnly:
		return fmt.Sprintf("the cgroup file system is read-only here (%s)", containerName(r))
	case CauseNoCgroupFS:
		return "no cgroup file system is mounted"
	case CauseControllersMissing:
		return fmt.Sprintf("the %s controllers are not available where the sandboxes' cgroups go (%s)", f.Error, strings.Join(r.Cgroups.Parents, ", "))
	case CauseListenerExists:
		return "an outer sandbox already supervises system calls with seccomp user notification (a process gets one listener), and may perform file calls itself, where no Landlock rule of a sandbox inside it applies"
	case CauseNoLibseccomp:
		return "cordon was built without cgo and libseccomp, so it cannot compile its seccomp profile"
	case CauseTimeout:
		return "the probe did not finish in time, so this is unknown, not missing"
	}
	msg := f.Error
	if f.Step != "" && !strings.HasPrefix(msg, f.Step) {
		msg = f.Step + ": " + msg
	}
	if msg == "" {
		msg = "failed"
	}
	return key + ": " + msg
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func containerName(r *Result) string {
	switch r.Container.Kind {
	case "":
		return "environment"
	case ContainerCordon:
		return "cordon sandbox"
	case ContainerWSL:
		return "WSL distribution"
	}
	return r.Container.Kind + " container"
}

func stepName(f Feature) string {
	if f.Step == "" {
		return "the attempt"
	}
	return f.Step
}

// kernelFeature names what a feature needs of the kernel.
func kernelFeature(key string) string {
	switch key {
	case "userNamespaces", "pidNamespace", "ipcNamespace", "utsNamespace",
		"networkNamespace", "cgroupNamespace", "procfs":
		return "namespaces (CONFIG_USER_NS and the CONFIG_*_NS of each)"
	case "mountNamespace":
		return "recursive read-only binds (mount_setattr, Linux 5.12)"
	case "overlayfs":
		return "overlayfs in user namespaces (CONFIG_OVERLAY_FS, Linux 5.11)"
	case "seccomp":
		return "seccomp filters (CONFIG_SECCOMP_FILTER)"
	case "seccomp.userNotify":
		return "seccomp user notification (Linux 5.0)"
	case "seccomp.guard":
		return "seccomp user notification that installs descriptors and waits killably (Linux 5.19)"
	case "landlock":
		return "Landlock (CONFIG_SECURITY_LANDLOCK, Linux 5.13)"
	case "pidfd":
		return "pidfd_open (Linux 5.3)"
	case "clone3IntoCgroup":
		return "clone3 with CLONE_INTO_CGROUP (Linux 5.7)"
	}
	return key
}

// sysctlFix writes a sysctl setting where it survives a reboot and applies
// it now.
func sysctlFix(name, value string) string {
	return fmt.Sprintf("echo %s=%s | sudo tee /etc/sysctl.d/60-cordon.conf && sudo sysctl --system", name, value)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// appArmorProfile is a profile that lets the cordon binary at exe create
// user namespaces, confining nothing else (as Ubuntu's own profiles for
// browsers do), one line per element.
func appArmorProfile(exe string) []string {
	if strings.ContainsAny(exe, " \t\"") {
		exe = `"` + strings.ReplaceAll(exe, `"`, `\"`) + `"`
	}
	return []string{
		"abi <abi/4.0>,",
		"include <tunables/global>",
		"profile cordon " + exe + " flags=(unconfined) {",
		"  userns,",
		"  include if exists <local/cordon>",
		"}",
	}
}

// printfLines is a printf command that prints the lines.
func printfLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		l = strings.ReplaceAll(l, `\`, `\\`)
		b.WriteString(strings.ReplaceAll(l, "%", "%%") + `\n`)
	}
	return "printf " + shellQuote(b.String())
}

// lsmList is the lsm= kernel argument that adds Landlock to the security
// modules the kernel runs now (Ubuntu's default list when unknown).
func lsmList(h Host) string {
	list := []string{"landlock"}
	if h.LSMs == nil {
		return "landlock,lockdown,yama,integrity,apparmor,bpf"
	}
	for _, m := range h.LSMs {
		if m != "capability" && m != "landlock" {
			list = append(list, m)
		}
	}
	return strings.Join(list, ",")
}

// kernelArgFixes add arg to the kernel command line with the common boot
// loaders.
func kernelArgFixes(arg string) []Fix {
	return []Fix{
		{On: "Debian, Ubuntu with GRUB",
			Command: fmt.Sprintf(`sudo sed -i 's/^GRUB_CMDLINE_LINUX="/&%s /' /etc/default/grub && sudo update-grub`, arg),
			Note:    "then reboot"},
		{On: "Fedora, RHEL",
			Command: "sudo grubby --update-kernel=ALL --args=" + arg,
			Note:    "then reboot"},
	}
}

// containerFixes returns the fixes for the container kind, or for the
// common ones when it is unknown.
func containerFixes(r *Result, by map[string]Fix) []Fix {
	if r.Container.Kind == ContainerCordon {
		return []Fix{{On: "cordon", Note: "cordon runs inside a cordon sandbox, which forbids new namespaces and mounts by design: run it outside"}}
	}
	if f, ok := by[r.Container.Kind]; ok {
		return []Fix{f}
	}
	var out []Fix
	for _, k := range []string{ContainerDocker, ContainerPodman, ContainerKubernetes, ContainerLXC} {
		if f, ok := by[k]; ok {
			out = append(out, f)
		}
	}
	return out
}

// notPrivileged is the note every container fix carries.
const notPrivileged = "not --privileged, which also hands the container every capability and device: " +
	"cordon needs only that the container's own filters let it create namespaces, and it confines each command with its own seccomp filter"

// fixes returns the fixes of a cause.
func fixes(cause, key string, r *Result) []Fix {
	exe := r.Executable
	if exe == "" {
		exe = "/usr/local/bin/cordon"
	}
	switch cause {
	case CauseAppArmorUserns:
		return []Fix{
			{On: "Ubuntu 23.10+, recommended: cordon alone",
				Command: printfLines(appArmorProfile(exe)) + " | sudo tee /etc/apparmor.d/cordon >/dev/null && sudo apparmor_parser -r /etc/apparmor.d/cordon",
				Note:    "the profile names the binary by path: run it again when cordon moves"},
			{On: "Ubuntu 23.10+, every program",
				Command: sysctlFix(SysctlAppArmorRestrict, "0"),
				Note:    "lifts the restriction for every program, now and after reboots"},
		}
	case CauseUnprivUsernsClone:
		return []Fix{{On: "Debian 10 and older, kernels with Debian's patch", Command: sysctlFix(SysctlUnprivUserns, "1")}}
	case CauseMaxUserNamespaces:
		return []Fix{{On: "RHEL/CentOS 7, hardened kernels", Command: sysctlFix(SysctlMaxUserNS, "15000")}}
	case CauseNamespaceLimit:
		return []Fix{{On: "any", Command: sysctlFix(namespaceLimit(key, r.Host), "15000"),
			Note: "every sandbox holds one namespace of each kind while it runs"}}
	case CauseUserNSLimit:
		return []Fix{{On: "any", Command: sysctlFix(SysctlMaxUserNS, "15000"),
			Note: "raises the limit; when cordon runs 32 user namespaces deep, run it from an outer level instead"}}
	case CauseOuterSeccomp:
		return containerFixes(r, map[string]Fix{
			ContainerDocker: {On: "Docker",
				Command: "docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined ...",
				Note:    notPrivileged + "; tighter: Docker's default profile with clone, clone3, unshare, setns, mount, umount2, pivot_root and sethostname allowed, as --security-opt seccomp=FILE"},
			ContainerPodman: {On: "Podman",
				Command: "podman run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt unmask=ALL ...",
				Note:    notPrivileged},
			ContainerKubernetes: {On: "Kubernetes",
				Note: "in the pod: hostUsers: false; in the container's securityContext: seccompProfile: {type: Unconfined}, appArmorProfile: {type: Unconfined}, procMount: Unmasked (not privileged: true)"},
			ContainerLXC: {On: "LXC/Incus/LXD", Command: "lxc config set CONTAINER security.nesting=true"},
		})
	case CauseOuterAppArmor:
		if r.Container.Kind == "" {
			return []Fix{{On: "any", Note: fmt.Sprintf("the AppArmor profile %q must allow userns and mount for cordon; edit it under /etc/apparmor.d and reload it with sudo apparmor_parser -r FILE", r.Host.AppArmor)}}
		}
		return containerFixes(r, map[string]Fix{
			ContainerDocker:     {On: "Docker", Command: "docker run --security-opt apparmor=unconfined ...", Note: notPrivileged},
			ContainerPodman:     {On: "Podman", Command: "podman run --security-opt apparmor=unconfined ...", Note: notPrivileged},
			ContainerKubernetes: {On: "Kubernetes", Note: "in the container's securityContext: appArmorProfile: {type: Unconfined}"},
			ContainerLXC:        {On: "LXC/Incus/LXD", Command: "lxc config set CONTAINER security.nesting=true"},
		})
	case CauseProcMasked:
		return containerFixes(r, map[string]Fix{
			ContainerDocker:     {On: "Docker", Command: "docker run --security-opt systempaths=unconfined ...", Note: "unmasks /proc for the container; cordon masks it again in each sandbox"},
			ContainerPodman:     {On: "Podman", Command: "podman run --security-opt unmask=ALL ...", Note: "unmasks /proc for the container; cordon masks it again in each sandbox"},
			ContainerKubernetes: {On: "Kubernetes", Note: "procMount: Unmasked in the container's securityContext (needs hostUsers: false on the pod)"},
			ContainerLXC:        {On: "LXC/Incus/LXD", Command: "lxc config set CONTAINER security.nesting=true"},
		})
	case CauseKernelConfig, CauseKernelTooOld:
		return []Fix{{On: "any", Note: "boot a kernel with " + kernelFeature(key) + ": the current kernel of any mainstream distribution has it"}}
	case CauseLandlockNotEnabled:
		return kernelArgFixes("lsm=" + lsmList(r.Host))
	case CauseNotDelegated:
		return delegationFixes(r)
	case CauseCgroupV1Rootless:
		asRoot := Fix{On: "any", Note: "run cordon as root, which creates cgroups in the v1 hierarchies"}
		out := kernelArgFixes("systemd.unified_cgroup_hierarchy=1")
		for i := range out {
			out[i].Note = "boots with cgroup v2 only (needs systemd); then reboot and delegate a subtree (see docs/doctor.md)"
		}
		if !r.Host.Systemd {
			return append([]Fix{asRoot}, out...)
		}
		return append(out, asRoot)
	case CauseCgroupReadOnly:
		return containerFixes(r, map[string]Fix{
			ContainerDocker:     {On: "Docker", Command: "docker run --memory=4g --pids-limit=4096 --cpus=2 ...", Note: "limits the container as a whole: cordon cannot make cgroups in a read-only cgroup file system"},
			ContainerPodman:     {On: "Podman", Command: "podman run --memory=4g --pids-limit=4096 --cpus=2 ...", Note: "limits the container as a whole"},
			ContainerKubernetes: {On: "Kubernetes", Note: "set resources.limits on the container: they bound everything cordon runs in it"},
		})
	case CauseControllersMissing:
		if !r.Root() && r.Host.Systemd {
			return []Fix{delegateDropIn}
		}
		return []Fix{{On: "any", Note: "the controllers must be enabled in cgroup.subtree_control of every ancestor of " + strings.Join(r.Cgroups.Parents, ", ")}}
	case CauseNoCgroupFS:
		if r.Container.Kind != "" {
			return fixes(CauseCgroupReadOnly, key, r)
		}
		return []Fix{{On: "any", Command: "sudo mount -t cgroup2 none /sys/fs/cgroup"}}
	case CauseTimeout:
		return []Fix{{On: "any", Command: "cordon doctor --fresh", Note: "a heavily loaded machine can delay the probes; this result was not cached"}}
	case CauseNoLibseccomp:
		return []Fix{{On: "Debian, Ubuntu", Command: "sudo apt-get install libseccomp-dev && make build", Note: "builds cordon with cgo and libseccomp"}}
	}
	return []Fix{}
}

var delegateDropIn = Fix{On: "systemd, every user session",
	Command: `sudo mkdir -p /etc/systemd/system/user@.service.d && printf '[Service]\nDelegate=cpu cpuset io memory pids\n' | sudo tee /etc/systemd/system/user@.service.d/delegate.conf && sudo systemctl daemon-reload`,
	Note:    "then log in again"}

func delegationFixes(r *Result) []Fix {
	if r.Host.Systemd {
		return []Fix{
			{On: "systemd, one run", Command: "systemd-run --user --scope -p Delegate=yes -- cordon run -- COMMAND",
				Note: "runs cordon in a delegated scope; start the agent the same way to cover all its commands"},
			delegateDropIn,
		}
	}
	mnt := r.Cgroups.V2Mount
	if mnt == "" {
		mnt = "/sys/fs/cgroup"
	}
	dir := mnt + "/cordon-$USER"
	return []Fix{{On: "without systemd",
		Command: fmt.Sprintf(`sudo mkdir -p %[1]s && sudo chown -R "$USER" %[1]s && echo $$ | sudo tee %[1]s/cgroup.procs`, dir),
		Note:    "as root, delegates a cgroup and moves the current shell into it; run cordon from that shell"}}
}

// containerWorks reports whether the container mode can confine commands
// here: seccomp filters cordon can compile, and Landlock, its file-system
// layer.
//
// Not below an outer seccomp supervisor (another cordon sandbox's
// system-call guard): it performs the file calls it is asked about itself,
// where the Landlock rules this process would add do not apply, so the
// container mode's file-system layer would not hold.
func containerWorks(r Result) bool {
	return r.Seccomp.Available && r.Libseccomp.Version != "" && r.Landlock.Available && r.Landlock.ABI > 0 && !outerSupervisor(r)
}

// outerSupervisor reports whether an outer sandbox supervises this
// process's system calls with seccomp user notification.
func outerSupervisor(r Result) bool {
	return r.Seccomp.UserNotifyFailure != nil && r.Seccomp.UserNotifyFailure.Errno == "EBUSY"
}

// hostProcWorks reports whether the full sandbox would work but for a
// fresh /proc, which an outer container's masks forbid.
func hostProcWorks(r Result) bool {
	if r.Procfs.Available || r.Procfs.Cause != CauseProcMasked {
		return false
	}
	for _, c := range checks {
		if c.effect == Unavailable && c.key != "procfs" && !c.get(&r).Available {
			return false
		}
	}
	return true
}

// containerLost is what a run in the container mode loses, compared with
// the full sandbox, on this machine.
func containerLost(r Result) []string {
	lost := []string{
		"no namespaces: commands run in the container mode (Landlock and seccomp, on the host's own processes, network and /proc)",
		"no private /proc or PID namespace: the command sees the host's processes and their command lines (not their memory or environment)",
		"no private /tmp: /tmp is read-only, TMPDIR is a directory of the run's own",
		"no private IPC and host name: System V IPC, POSIX message queues and the host name are shared",
		"the protected paths inside the workspace are put back after the command rather than read-only during it, and a denied path that exists inside a writable root refuses the run",
		"no cgroup limits: memory only as each process's data size limit (rlimit), no limit on processes or CPU",
		"no per-user limits of its own: the command can take every inotify instance and watch of the caller's",
		"metadata outside the writable roots: the command can change the mode, times, extended attributes and ACLs of the caller's own files anywhere (Landlock has no rule for them)",
	}
	if r.Landlock.ABI >= 4 {
		lost = append(lost, "no private loopback: TCP reaches only the proxy's two ports (Landlock's rules name ports, not addresses: any address at those ports), nothing may listen, UDP is refused")
	} else {
		lost = append(lost, fmt.Sprintf("no network at all: Landlock ABI %d has no TCP rules (4, Linux 6.7), so TCP is refused with UDP, and the proxy is out of reach", r.Landlock.ABI))
	}
	if r.Landlock.ABI < 6 {
		lost = append(lost, fmt.Sprintf("signals reach the caller's other processes here, and abstract unix sockets are not scoped: Landlock ABI %d has no scoping (6, Linux 6.12)", r.Landlock.ABI))
	}
	return lost
}
