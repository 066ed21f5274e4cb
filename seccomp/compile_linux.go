//go:build linux && cgo

package seccomp

import (
	"errors"
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
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
// A profile with SCMP_ACT_NOTIFY rules compiles to a program with
// SECCOMP_FILTER_FLAG_NEW_LISTENER in its flags, as libcontainer loads it:
// seccomp(2) then returns the listener descriptor, which whoever loads the
// program hands to the supervisor answering the notifications. Without a
// listener the kernel fails a notifying system call with ENOSYS.
//
// Compile refuses what a Program cannot carry: SCMP_ACT_NOTIFY as the
// default action (every system call the profile does not name would stop
// for the supervisor); SECCOMP_FILTER_FLAG_NEW_LISTENER in the profile's
// flags, which libcontainer refuses too (notify rules imply it); and
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
	if p.DefaultAction == specs.ActNotify {
		return fmt.Errorf("default action %s: every system call would wait for the supervisor: %w", p.DefaultAction, errors.ErrUnsupported)
	}
	for _, flag := range p.Flags {
		switch flag {
		case "SECCOMP_FILTER_FLAG_TSYNC":
			return fmt.Errorf("flag %s: the filter is installed in a single-threaded process: %w", flag, errors.ErrUnsupported)
		case "SECCOMP_FILTER_FLAG_NEW_LISTENER":
			return fmt.Errorf("flag %s: implied by SCMP_ACT_NOTIFY rules, not a flag of its own: %w", flag, errors.ErrUnsupported)
		}
	}
	return nil
}

// NativeNumbers maps the native architecture's numbers of the named
// system calls to their names; names libseccomp does not know there are
// left out. A supervisor uses it to name the system calls it is notified
// of (a cordon profile only admits the native architecture's).
func NativeNumbers(names []string) map[int32]string {
	out := make(map[int32]string, len(names))
	for _, name := range names {
		nr, err := libseccomp.GetSyscallFromName(name)
		if err == nil && nr >= 0 {
			out[int32(nr)] = name
		}
	}
	return out
}
