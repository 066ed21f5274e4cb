package seccomp

import (
	"fmt"
	"slices"

	moby "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// target is what moby's conditional rules are resolved against.
type target struct {
	// arch is libseccomp's name for the native architecture ("amd64",
	// "arm64"), the spelling moby's includes/excludes arches use.
	arch string
	// kernel is the target kernel; nil means newer than every minKernel.
	kernel *moby.KernelVersion
	// caps is the bounding set of the sandboxed process (cordon: none).
	caps []string
}

// resolve does what moby's setupSeccomp does, in pure Go so that it builds
// on every OS: it keeps the rules whose includes/excludes match t and drops
// the conditions. Architectures are not resolved here (see archesFor).
func resolve(p *moby.Seccomp, t target) (*specs.LinuxSeccomp, error) {
	out := &specs.LinuxSeccomp{
		DefaultAction:   p.DefaultAction,
		DefaultErrnoRet: p.DefaultErrnoRet,
		Flags:           slices.Clone(p.Flags),
	}
	for i, call := range p.Syscalls {
		names := call.Names
		if call.Name != "" {
			if len(call.Names) != 0 {
				return nil, fmt.Errorf("syscall rule %d: both name and names are set", i)
			}
			names = []string{call.Name}
		}
		if !applies(call, t) {
			continue
		}
		rule := call.LinuxSyscall
		rule.Names = slices.Clone(names)
		rule.Args = slices.Clone(call.Args)
		out.Syscalls = append(out.Syscalls, rule)
	}
	return out, nil
}

// applies reports whether a conditional moby rule is part of the profile
// for t: every excludes condition must fail and every includes condition
// hold, as in moby's setupSeccomp.
func applies(call *moby.Syscall, t target) bool {
	if ex := call.Excludes; ex != nil {
		if slices.Contains(ex.Arches, t.arch) {
			return false
		}
		for _, c := range ex.Caps {
			if slices.Contains(t.caps, c) {
				return false
			}
		}
		if ex.MinKernel != nil && kernelAtLeast(t.kernel, *ex.MinKernel) {
			return false
		}
	}
	if in := call.Includes; in != nil {
		if len(in.Arches) > 0 && !slices.Contains(in.Arches, t.arch) {
			return false
		}
		for _, c := range in.Caps {
			if !slices.Contains(t.caps, c) {
				return false
			}
		}
		if in.MinKernel != nil && !kernelAtLeast(t.kernel, *in.MinKernel) {
			return false
		}
	}
	return true
}

// kernelAtLeast compares kernel and major revision only, as moby does
// ("3.12.25-gentoo" equals "3.12"); a nil kernel is newer than any.
func kernelAtLeast(kernel *moby.KernelVersion, minimum moby.KernelVersion) bool {
	if kernel == nil {
		return true
	}
	if kernel.Kernel != minimum.Kernel {
		return kernel.Kernel > minimum.Kernel
	}
	return kernel.Major >= minimum.Major
}

// parseKernel reads a release as uname -r prints it ("6.18.44-fc-v445");
// only the first two numbers count. An empty release gives nil.
func parseKernel(release string) (*moby.KernelVersion, error) {
	if release == "" {
		return nil, nil
	}
	var v moby.KernelVersion
	if _, err := fmt.Sscanf(release, "%d.%d", &v.Kernel, &v.Major); err != nil {
		return nil, fmt.Errorf("parse kernel version %q: %w", release, err)
	}
	return &v, nil
}

// archesFor returns the seccomp architectures of moby's archMap entry for
// the native architecture (the architecture and its sub-architectures),
// minus the ABIs in without.
func archesFor(p *moby.Seccomp, native specs.Arch, without []specs.Arch) ([]specs.Arch, error) {
	for _, a := range p.ArchMap {
		if a.Arch != native {
			continue
		}
		arches := []specs.Arch{a.Arch}
		for _, sub := range a.SubArches {
			if !slices.Contains(without, sub) {
				arches = append(arches, sub)
			}
		}
		return arches, nil
	}
	return nil, fmt.Errorf("architecture %s is not in the profile's archMap", native)
}
