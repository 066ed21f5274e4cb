// Package probe finds out what this kernel and this user can do for a
// sandbox: it really attempts each feature (a namespace, a seccomp filter, a
// cgroup) instead of inferring it from files or binaries, and reports the
// facts that spec.Compile and `cordon doctor` decide with.
package probe

import "runtime"

// Result is what the probes found. The zero value describes a machine on
// which nothing has been probed.
type Result struct {
	// EUID is the effective user id of the caller.
	EUID int
	// Arch is the GOARCH of the host.
	Arch string
	// Kernel is the kernel release, e.g. "6.18.44".
	Kernel string
}

// Root reports whether the caller is root.
func (r Result) Root() bool { return r.EUID == 0 }

// Basic returns the facts that cost nothing to learn: the caller's euid, the
// architecture and the kernel release.
func Basic() Result {
	return Result{EUID: euid(), Arch: runtime.GOARCH, Kernel: kernelRelease()}
}
