//go:build linux && cgo

package seccomp

import (
	"errors"
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Compile compiles p into the program runc's libcontainer (v1.5) would
// load for it, without loading it: libseccomp's program, compiled as Check
// compiles it, behind libcontainer's ENOSYS stub, so that a system call
// numbered above every one the profile names fails with ENOSYS rather than
// the default action, as on a kernel too old for it. Flags are those
// libcontainer would pass to seccomp(2): SECCOMP_FILTER_FLAG_LOG,
// SPEC_ALLOW and WAIT_KILLABLE_RECV from the profile's flags, and
// SPEC_ALLOW when the profile has no flags list at all (runc's default).
//
// The program is for the machine that compiles it: its byte order, and
// its native architecture, which libseccomp admits in every filter. The
// caller sets no_new_privs (or holds CAP_SYS_ADMIN) before loading it.
//
// Compile refuses what a Program cannot carry: SCMP_ACT_NOTIFY, as a rule
// or default action, and SECCOMP_FILTER_FLAG_NEW_LISTENER, since the
// listener descriptor seccomp(2) would return needs plumbing to a
// supervisor that cordon does not have yet; and
// SECCOMP_FILTER_FLAG_TSYNC, which libcontainer ignores and which cannot
// mean anything for a filter installed in one process just before execve.
// These errors wrap errors.ErrUnsupported.
func Compile(p *specs.LinuxSeccomp) (Program, error) {
	if err := loadable(p); err != nil {
		return Program{}, fmt.Errorf("compile seccomp profile: %w", err)
	}
	return build(p)
}

// loadable refuses the actions and flags Compile does not support.
func loadable(p *specs.LinuxSeccomp) error {
	if p == nil {
		return nil // compile reports it
	}
	const noListener = "cordon has no seccomp notify listener"
	if p.DefaultAction == specs.ActNotify {
		return fmt.Errorf("default action %s: %s: %w", p.DefaultAction, noListener, errors.ErrUnsupported)
	}
	for i, call := range p.Syscalls {
		if call.Action == specs.ActNotify {
			return fmt.Errorf("syscalls[%d]: action %s: %s: %w", i, call.Action, noListener, errors.ErrUnsupported)
		}
	}
	for _, flag := range p.Flags {
		switch flag {
		case "SECCOMP_FILTER_FLAG_TSYNC":
			return fmt.Errorf("flag %s: the filter is installed in a single-threaded process: %w", flag, errors.ErrUnsupported)
		case "SECCOMP_FILTER_FLAG_NEW_LISTENER":
			return fmt.Errorf("flag %s: %s: %w", flag, noListener, errors.ErrUnsupported)
		}
	}
	return nil
}
