package probe

import (
	"slices"
	"strings"
)

// Causes of failed probes: the values of Feature.Cause and Problem.Cause.
const (
	// CauseAppArmorUserns: kernel.apparmor_restrict_unprivileged_userns=1
	// (Ubuntu 23.10 and later): the user namespace is made, but its root
	// has no capabilities.
	CauseAppArmorUserns = "apparmor-restrict-unprivileged-userns"
	// CauseUnprivUsernsClone: kernel.unprivileged_userns_clone=0 (Debian
	// 10 and older, some hardened kernels).
	CauseUnprivUsernsClone = "unprivileged-userns-clone-disabled"
	// CauseMaxUserNamespaces: user.max_user_namespaces=0.
	CauseMaxUserNamespaces = "max-user-namespaces-zero"
	// CauseUserNSLimit: the user namespace limit, or the nesting depth
	// of 32, is reached.
	CauseUserNSLimit = "user-namespace-limit"
	// CauseNamespaceLimit: the limit on namespaces of another kind
	// (user.max_net_namespaces, ...) is reached, or 0.
	CauseNamespaceLimit = "namespace-limit"
	// CauseOuterSeccomp: the seccomp filter of the container cordon runs
	// in refuses the system call (Docker's default profile refuses
	// namespaces to a process without CAP_SYS_ADMIN).
	CauseOuterSeccomp = "outer-seccomp"
	// CauseOuterAppArmor: the AppArmor profile cordon runs under (e.g.
	// docker-default) refuses the operation.
	CauseOuterAppArmor = "outer-apparmor"
	// CauseProcMasked: parts of /proc are covered by an outer container's
	// masks, and the kernel refuses a fresh procfs in a user namespace.
	CauseProcMasked = "proc-masked"
	// CauseKernelConfig: the kernel is built without the feature.
	CauseKernelConfig = "kernel-config"
	// CauseKernelTooOld: the kernel predates the feature.
	CauseKernelTooOld = "kernel-too-old"
	// CauseLandlockNotEnabled: Landlock is built in but not in the lsm=
	// list it was booted with.
	CauseLandlockNotEnabled = "landlock-not-enabled"
	// CauseNotDelegated: the caller's cgroup v2 subtree is not delegated
	// to it.
	CauseNotDelegated = "cgroup-not-delegated"
	// CauseCgroupV1Rootless: the controllers are in cgroup v1, which is
	// never delegated to an unprivileged user.
	CauseCgroupV1Rootless = "cgroup-v1-rootless"
	// CauseCgroupReadOnly: the cgroup file system is mounted read-only
	// (a container's).
	CauseCgroupReadOnly = "cgroup-read-only"
	// CauseNoCgroupFS: no cgroup file system is mounted.
	CauseNoCgroupFS = "no-cgroup-fs"
	// CauseControllersMissing: the cgroups can be made but lack
	// controllers that limits need.
	CauseControllersMissing = "cgroup-controllers-missing"
	// CauseListenerExists: an outer sandbox already uses seccomp user
	// notification, and a process may have only one listener.
	CauseListenerExists = "seccomp-listener-exists"
	// CauseNoLibseccomp: cordon was built without libseccomp.
	CauseNoLibseccomp = "no-libseccomp"
	// CauseTimeout: the probe did not finish within its time limit; the
	// result is not cached.
	CauseTimeout = "probe-timeout"
	// CauseUnknown: none of the above explains the failure.
	CauseUnknown = "unknown"
)

// diagnose fills in the likely cause of every failed feature of r that has
// none. It is a pure function of the recorded facts.
func diagnose(r *Result) {
	set := func(f *Feature, cause func(Feature) string) {
		if !f.Available && f.Cause == "" && f.Step != StepUntested && (f.Step != "" || f.Error != "") {
			f.Cause = cause(*f)
		}
	}
	set(&r.UserNamespaces, func(f Feature) string { return usernsCause(f, r) })
	for _, ns := range []struct {
		key string
		f   *Feature
	}{
		{"mountNamespace", &r.MountNamespace}, {"pidNamespace", &r.PIDNamespace},
		{"ipcNamespace", &r.IPCNamespace}, {"utsNamespace", &r.UTSNamespace},
		{"networkNamespace", &r.NetworkNamespace}, {"cgroupNamespace", &r.CgroupNamespace},
		{"procfs", &r.Procfs}, {"overlayfs", &r.Overlayfs},
	} {
		set(ns.f, func(f Feature) string { return namespaceCause(ns.key, f, r) })
	}
	set(&r.Seccomp.Feature, func(f Feature) string { return seccompCause(f, r) })
	if n := r.Seccomp.UserNotifyFailure; n != nil {
		// A copy: the caller's Result shares the pointer.
		c := *n
		set(&c, func(f Feature) string { return notifyCause(f, r) })
		r.Seccomp.UserNotifyFailure = &c
	}
	set(&r.Landlock.Feature, func(f Feature) string { return landlockCause(f, r) })
	set(&r.Cgroups.Create, func(f Feature) string { return cgroupCause(f, r) })
	set(&r.Clone3IntoCgroup, func(f Feature) string { return kernelCause(f, r, 5, 7) })
	set(&r.Pidfd, func(f Feature) string { return kernelCause(f, r, 5, 3) })
}

func denied(errno string) bool { return errno == "EPERM" || errno == "EACCES" }

// confined reports whether an AppArmor profile other than unconfined
// applies to the caller.
func (h Host) confined() bool {
	l := h.AppArmor
	return l != "" && l != "unconfined" && !strings.HasSuffix(l, "(unconfined)")
}

// usernsCause explains why the caller cannot become root of a new user
// namespace.
func usernsCause(f Feature, r *Result) string {
	h := r.Host
	if f.Step == "clone" {
		switch f.Errno {
		case "ENOSPC":
			if h.Sysctls[SysctlMaxUserNS] == "0" {
				return CauseMaxUserNamespaces
			}
			return CauseUserNSLimit
		case "EUSERS":
			return CauseUserNSLimit
		case "EINVAL":
			return CauseKernelConfig
		}
	}
	if f.Step == "unshare" && f.Errno == "ENOSPC" && namespaceLimit("userNamespaces", h) != "" {
		return CauseNamespaceLimit
	}
	if !denied(f.Errno) {
		return CauseUnknown
	}
	switch {
	case !r.Root() && h.Sysctls[SysctlUnprivUserns] == "0":
		return CauseUnprivUsernsClone
	case h.SeccompFilters > 0 && f.Step == "clone":
		return CauseOuterSeccomp
	case !r.Root() && h.Sysctls[SysctlAppArmorRestrict] == "1" && !h.confined():
		return CauseAppArmorUserns
	case h.confined():
		return CauseOuterAppArmor
	case h.SeccompFilters > 0:
		return CauseOuterSeccomp
	}
	return CauseUnknown
}

// namespaceLimit returns the sysctl whose limit a namespace feature may
// have met (ENOSPC): the one that is 0, else the feature's own; "" when
// none applies. The user namespace probe makes a UTS namespace to prove
// its capabilities; procfs makes a mount and a PID namespace.
func namespaceLimit(key string, h Host) string {
	var names []string
	switch key {
	case "userNamespaces":
		names = []string{namespaceLimits["utsNamespace"]}
	case "procfs":
		names = []string{namespaceLimits["pidNamespace"], namespaceLimits["mountNamespace"]}
	default:
		if n, ok := namespaceLimits[key]; ok {
			names = []string{n}
		}
	}
	for _, n := range names {
		if h.Sysctls[n] == "0" {
			return n
		}
	}
	if key == "userNamespaces" || len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}

// namespaceCause explains a failed namespace, procfs or overlay attempt.
func namespaceCause(key string, f Feature, r *Result) string {
	if !r.UserNamespaces.Available && r.UserNamespaces.Cause != "" {
		// Every namespace is made with a user namespace: the same cause.
		return r.UserNamespaces.Cause
	}
	switch {
	case f.Errno == "ENOSYS":
		return CauseKernelTooOld
	case f.Step == "mount overlay" && (f.Errno == "ENODEV" || f.Errno == "EINVAL" && kernelAtLeast(r.Kernel, 5, 11)):
		return CauseKernelConfig
	case f.Step == "mount overlay" && !kernelAtLeast(r.Kernel, 5, 11):
		return CauseKernelTooOld
	case f.Step == "mount proc" && denied(f.Errno) && len(r.Host.ProcMasked) > 0:
		return CauseProcMasked
	case f.Step == "clone" && f.Errno == "EINVAL":
		return CauseKernelConfig
	case f.Step == "clone" && f.Errno == "ENOSPC" && namespaceLimit(key, r.Host) != "":
		return CauseNamespaceLimit
	}
	if denied(f.Errno) {
		return usernsCause(f, r)
	}
	return CauseUnknown
}

func seccompCause(f Feature, r *Result) string {
	switch {
	case f.Step == "libseccomp":
		return CauseNoLibseccomp
	case f.Errno == "ENOSYS" || f.Errno == "EINVAL":
		return CauseKernelConfig
	case denied(f.Errno) && r.Host.SeccompFilters > 0:
		return CauseOuterSeccomp
	}
	return CauseUnknown
}

func notifyCause(f Feature, r *Result) string {
	switch {
	case f.Errno == "EBUSY":
		return CauseListenerExists
	case f.Errno == "EINVAL" && !kernelAtLeast(r.Kernel, 5, 0):
		return CauseKernelTooOld
	case denied(f.Errno) && r.Host.SeccompFilters > 0:
		return CauseOuterSeccomp
	}
	return seccompCause(f, r)
}

func landlockCause(f Feature, r *Result) string {
	h := r.Host
	switch f.Errno {
	case "EOPNOTSUPP":
		return CauseLandlockNotEnabled
	case "ENOSYS", "EPERM":
		// An outer filter may answer ENOSYS or EPERM for a system call it
		// does not know; the kernel's list of security modules decides.
		switch {
		case h.LSMs != nil && slices.Contains(h.LSMs, "landlock"):
			return CauseOuterSeccomp
		case h.LSMs == nil && h.SeccompFilters > 0:
			return CauseOuterSeccomp
		case f.Errno == "EPERM":
			return CauseUnknown
		case !kernelAtLeast(r.Kernel, 5, 13):
			return CauseKernelTooOld
		}
		return CauseKernelConfig
	}
	return CauseUnknown
}

func cgroupCause(f Feature, r *Result) string {
	c := r.Cgroups
	switch {
	case c.Layout == LayoutNone:
		return CauseNoCgroupFS
	case f.Errno == "EROFS":
		return CauseCgroupReadOnly
	case !r.Root() && (c.Layout == LayoutV1 || c.Layout == LayoutHybrid):
		return CauseCgroupV1Rootless
	case !r.Root():
		return CauseNotDelegated
	case denied(f.Errno) && r.Container.Kind != "":
		return CauseCgroupReadOnly
	}
	return CauseUnknown
}

// kernelCause explains a failed system call that a kernel older than
// major.minor lacks.
func kernelCause(f Feature, r *Result, major, minor int) string {
	switch {
	case f.Errno == "ENOSYS" && r.Host.SeccompFilters > 0 && kernelAtLeast(r.Kernel, major, minor):
		return CauseOuterSeccomp
	case f.Errno == "ENOSYS" || f.Errno == "EINVAL" && !kernelAtLeast(r.Kernel, major, minor):
		return CauseKernelTooOld
	case denied(f.Errno) && r.Host.SeccompFilters > 0:
		return CauseOuterSeccomp
	}
	return CauseUnknown
}
