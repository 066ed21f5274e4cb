//go:build linux && cgo

package seccomp

import (
	"fmt"
	"maps"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// retENOSYS is SECCOMP_RET_ERRNO with ENOSYS.
const retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

// x32Bit is set in the system call numbers of the x32 ABI
// (__X32_SYSCALL_BIT), which shares AUDIT_ARCH_X86_64 with x86_64.
const x32Bit = 0x40000000

// auditArches are the AUDIT_ARCH_* values the kernel puts in
// seccomp_data.arch for libseccomp's architectures, as libcontainer's
// patchbpf maps them.
var auditArches = map[libseccomp.ScmpArch]uint32{
	libseccomp.ArchX86:         unix.AUDIT_ARCH_I386,
	libseccomp.ArchAMD64:       unix.AUDIT_ARCH_X86_64,
	libseccomp.ArchX32:         unix.AUDIT_ARCH_X86_64,
	libseccomp.ArchARM:         unix.AUDIT_ARCH_ARM,
	libseccomp.ArchARM64:       unix.AUDIT_ARCH_AARCH64,
	libseccomp.ArchMIPS:        unix.AUDIT_ARCH_MIPS,
	libseccomp.ArchMIPS64:      unix.AUDIT_ARCH_MIPS64,
	libseccomp.ArchMIPS64N32:   unix.AUDIT_ARCH_MIPS64N32,
	libseccomp.ArchMIPSEL:      unix.AUDIT_ARCH_MIPSEL,
	libseccomp.ArchMIPSEL64:    unix.AUDIT_ARCH_MIPSEL64,
	libseccomp.ArchMIPSEL64N32: unix.AUDIT_ARCH_MIPSEL64N32,
	libseccomp.ArchPPC:         unix.AUDIT_ARCH_PPC,
	libseccomp.ArchPPC64:       unix.AUDIT_ARCH_PPC64,
	libseccomp.ArchPPC64LE:     unix.AUDIT_ARCH_PPC64LE,
	libseccomp.ArchS390:        unix.AUDIT_ARCH_S390,
	libseccomp.ArchS390X:       unix.AUDIT_ARCH_S390X,
	libseccomp.ArchRISCV64:     unix.AUDIT_ARCH_RISCV64,
	libseccomp.ArchLOONGARCH64: unix.AUDIT_ARCH_LOONGARCH64,
}

// abiLimit is the largest system call number a profile names for one ABI.
type abiLimit struct {
	arch libseccomp.ScmpArch
	max  uint32
}

// enosysStub returns the program runc's libcontainer (v1.5,
// libcontainer/seccomp/patchbpf) puts in front of libseccomp's: on each
// architecture of the filter, a system call numbered above the largest
// one the profile names fails with ENOSYS instead of meeting the default
// action. It is the answer a kernel too old for the call gives, so that
// programs probing for a newer system call (glibc's clone3, statx or
// close_range wrappers) fall back instead of failing with EPERM. Every
// other call falls through to libseccomp's program, which starts after
// the stub.
//
// The stub is libcontainer's in behaviour, not in bytes: architectures
// are ordered (libcontainer takes them in map order), and jumps are laid
// out by a small assembler. It is nil when libcontainer adds none: when
// the default action lets calls through (allow, log, trace); and when the
// default already answers ENOSYS, where libcontainer means to add none
// (its test compares errnoRet with SCMP_ACT_ERRNO(ENOSYS), not ENOSYS,
// so it adds one that answers as the default does).
func enosysStub(p *specs.LinuxSeccomp) ([]bpf.RawInstruction, error) {
	switch p.DefaultAction {
	case specs.ActAllow, specs.ActLog, specs.ActTrace:
		// a tracer should handle new system calls itself (libcontainer)
		return nil, nil
	case specs.ActErrno:
		if p.DefaultErrnoRet != nil && int16(*p.DefaultErrnoRet) == int16(unix.ENOSYS) {
			return nil, nil
		}
	}
	limits, err := largestSyscalls(p)
	if err != nil {
		return nil, err
	}
	if len(limits) == 0 {
		return nil, nil // libcontainer's stub would jump straight to the filter
	}

	var a asm
	enosys, filter := a.label(), a.label()
	audits := slices.Sorted(maps.Keys(limits))
	sections := make([]label, len(audits))
	a.insn(bpf.LoadAbsolute{Off: 4, Size: 4}) // seccomp_data.arch
	for i, audit := range audits {
		sections[i] = a.label()
		a.jumpIf(bpf.JumpEqual, audit, sections[i], next)
	}
	a.jump(filter) // another architecture: libseccomp's bad-architecture action
	for i, audit := range audits {
		a.place(sections[i])
		a.insn(bpf.LoadAbsolute{Off: 0, Size: 4}) // seccomp_data.nr
		abis := limits[audit]
		switch {
		case len(abis) == 1 && audit == unix.AUDIT_ARCH_X86_64:
			// the other ABI's calls, told apart by the x32 bit, go to
			// libseccomp's program, which answers them with the
			// bad-architecture action
			this := a.label()
			if abis[0].arch == libseccomp.ArchX32 {
				a.jumpIf(bpf.JumpBitsSet, x32Bit, this, filter)
			} else {
				a.jumpIf(bpf.JumpBitsSet, x32Bit, filter, this)
			}
			a.place(this)
			a.jumpIf(bpf.JumpGreaterThan, abis[0].max, enosys, filter)
		case len(abis) == 1:
			if abis[0].arch == libseccomp.ArchS390 || abis[0].arch == libseccomp.ArchS390X {
				// s390 multiplexes system calls with large numbers through
				// number 0, setup(2), which is left at 0 when the kernel
				// does not know the call; setup itself is long gone
				a.jumpIf(bpf.JumpEqual, 0, enosys, next)
			}
			a.jumpIf(bpf.JumpGreaterThan, abis[0].max, enosys, filter)
		case len(abis) == 2 && audit == unix.AUDIT_ARCH_X86_64:
			amd64, x32 := abis[0], abis[1]
			if amd64.arch == libseccomp.ArchX32 {
				amd64, x32 = x32, amd64
			}
			isX32 := a.label()
			a.jumpIf(bpf.JumpBitsSet, x32Bit, isX32, next)
			a.jumpIf(bpf.JumpGreaterThan, amd64.max, enosys, filter)
			a.place(isX32)
			a.jumpIf(bpf.JumpGreaterThan, x32.max, enosys, filter)
		default:
			return nil, fmt.Errorf("%d ABIs share audit architecture %#x", len(abis), audit)
		}
	}
	a.place(enosys)
	a.insn(bpf.RetConstant{Val: retENOSYS})
	a.place(filter)
	return a.assemble()
}

// largestSyscalls returns, by audit architecture, the largest system call
// number p names on each ABI of the filter, as libcontainer's
// findLastSyscalls computes it: over the names of every rule (including
// rules skipped because their action is the default), for the profile's
// architectures and the native one, which libseccomp always admits. An
// ABI on which p names no call gets no limit, so no stub.
func largestSyscalls(p *specs.LinuxSeccomp) (map[uint32][]abiLimit, error) {
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, fmt.Errorf("native architecture: %w", err)
	}
	arches := []libseccomp.ScmpArch{native}
	for _, a := range p.Architectures {
		name, ok := archNames[a]
		if !ok {
			return nil, fmt.Errorf("unknown architecture %q", a)
		}
		arch, err := libseccomp.GetArchFromString(name)
		if err != nil {
			return nil, fmt.Errorf("architecture %s: %w", a, err)
		}
		if !slices.Contains(arches, arch) {
			arches = append(arches, arch)
		}
	}
	limits := make(map[uint32][]abiLimit)
	for _, arch := range arches {
		audit, ok := auditArches[arch]
		if !ok {
			return nil, fmt.Errorf("no audit architecture for %v", arch)
		}
		var largest libseccomp.ScmpSyscall
		for _, call := range p.Syscalls {
			for _, name := range call.Names {
				// unknown names and libseccomp's negative pseudo-numbers
				// do not count
				if nr, err := libseccomp.GetSyscallFromNameByArch(name, arch); err == nil && nr > largest {
					largest = nr
				}
			}
		}
		if largest > 0 {
			limits[audit] = append(limits[audit], abiLimit{arch: arch, max: uint32(largest)})
		}
	}
	return limits, nil
}
