//go:build linux && cgo

package seccomp

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	moby "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestCheck(t *testing.T) {
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(mustProfile(t, tc.opts)); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestCheckRejects(t *testing.T) {
	errno := uint(1)
	base := func() *specs.LinuxSeccomp {
		return &specs.LinuxSeccomp{
			DefaultAction:   specs.ActErrno,
			DefaultErrnoRet: &errno,
			Architectures:   []specs.Arch{specs.ArchX86_64},
			Syscalls:        []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActAllow}},
		}
	}
	tests := []struct {
		name   string
		change func(p *specs.LinuxSeccomp)
		want   string // in the error; "" means Check passes
	}{
		{"valid", func(*specs.LinuxSeccomp) {}, ""},
		{"unknown system call is ignored, as libcontainer does", func(p *specs.LinuxSeccomp) {
			p.Syscalls[0].Names = append(p.Syscalls[0].Names, "no_such_syscall")
		}, ""},
		{"rule equal to the default is skipped, as libcontainer does", func(p *specs.LinuxSeccomp) {
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"ptrace"}, Action: specs.ActErrno, ErrnoRet: &errno,
				Args: []specs.LinuxSeccompArg{{Index: 0, Value: 1, Op: specs.OpEqualTo}}})
		}, ""},
		{"unknown default action", func(p *specs.LinuxSeccomp) { p.DefaultAction = "SCMP_ACT_MAYBE" }, `unknown action "SCMP_ACT_MAYBE"`},
		{"unknown rule action", func(p *specs.LinuxSeccomp) { p.Syscalls[0].Action = "SCMP_ACT_MAYBE" }, `syscalls[0]: unknown action`},
		{"unknown operator", func(p *specs.LinuxSeccomp) {
			p.Syscalls[0].Args = []specs.LinuxSeccompArg{{Index: 0, Op: "SCMP_CMP_MASKED_NE"}}
		}, `unknown operator "SCMP_CMP_MASKED_NE"`},
		{"argument index out of range", func(p *specs.LinuxSeccomp) {
			p.Syscalls[0].Args = []specs.LinuxSeccompArg{{Index: 6, Op: specs.OpEqualTo}}
		}, "argument index 6 out of range"},
		{"unknown architecture", func(p *specs.LinuxSeccomp) { p.Architectures = []specs.Arch{"SCMP_ARCH_VAX"} }, `unknown architecture "SCMP_ARCH_VAX"`},
		{"unknown flag", func(p *specs.LinuxSeccomp) { p.Flags = []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_MAGIC"} }, `unknown flag`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.change(p)
			err := Check(p)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v, want nil", err)
			case tc.want != "" && err == nil:
				t.Errorf("Check: nil, want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("Check: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := Check(nil); err == nil {
		t.Error("Check(nil) = nil, want an error")
	}
}

func TestEmbeddedIsMobyDefault(t *testing.T) {
	// moby_default.json must be the default of the moby version go.mod
	// names; after bumping it, copy its default.json again.
	got, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(moby.DefaultProfile(), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("moby_default.json differs from moby.DefaultProfile() (-moby +copy):\n%s", diff)
	}
}

func TestResolveMatchesMoby(t *testing.T) {
	// resolve must agree with moby's own resolution (linux-only, host
	// architecture and kernel), for any capability set.
	plat, ok := platforms[runtime.GOARCH]
	if !ok {
		t.Skipf("no cordon profile for GOARCH %s", runtime.GOARCH)
	}
	kernel, err := parseKernel(uname(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		caps []string
	}{
		{"no capabilities", nil},
		{"CAP_SYS_ADMIN", []string{"CAP_SYS_ADMIN"}},
		{"ptrace and handles", []string{"CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH"}},
		{"bpf and perfmon", []string{"CAP_BPF", "CAP_PERFMON"}},
		{"many", []string{"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_CHROOT", "CAP_SYS_MODULE", "CAP_SYS_PACCT",
			"CAP_SYS_PTRACE", "CAP_SYS_RAWIO", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_SYS_NICE", "CAP_SYSLOG"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: tc.caps}}}
			want, err := moby.GetDefaultProfile(rs)
			if err != nil {
				t.Fatal(err)
			}
			base, err := loadMobyDefault()
			if err != nil {
				t.Fatal(err)
			}
			got, err := resolve(base, target{arch: plat.native, kernel: kernel, caps: tc.caps})
			if err != nil {
				t.Fatal(err)
			}
			if got.Architectures, err = archesFor(base, plat.arch, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("resolve differs from moby (-moby +resolve):\n%s", diff)
			}
		})
	}
}

func uname(t *testing.T) string {
	t.Helper()
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	return unix.ByteSliceToString(u.Release[:])
}

// Seccomp return values and audit architectures (linux/seccomp.h,
// linux/audit.h).
const (
	retKillThread = 0x00000000
	retErrno      = 0x00050000
	retAllow      = 0x7fff0000

	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAARCH64 = 0xc00000b7
	auditArchARM     = 0x40000028
	auditArchRISCV64 = 0xc00000f3
)

// abi is one architecture a filter may see system calls from.
type abi struct {
	scmp  libseccomp.ScmpArch
	audit uint32
}

var abis = map[specs.Arch]abi{
	specs.ArchX86_64:  {libseccomp.ArchAMD64, auditArchX86_64},
	specs.ArchX32:     {libseccomp.ArchX32, auditArchX86_64},
	specs.ArchX86:     {libseccomp.ArchX86, auditArchI386},
	specs.ArchAARCH64: {libseccomp.ArchARM64, auditArchAARCH64},
	specs.ArchARM:     {libseccomp.ArchARM, auditArchARM},
	specs.ArchRISCV64: {libseccomp.ArchRISCV64, auditArchRISCV64},
}

// filterVM runs a compiled profile's BPF program in userspace, so that
// thousands of argument values can be checked without a kernel.
type filterVM struct {
	t  *testing.T
	vm *bpf.VM
}

func newFilterVM(t *testing.T, p *specs.LinuxSeccomp) *filterVM {
	t.Helper()
	f, err := compile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	return newFilterVMFrom(t, f)
}

func newFilterVMFrom(t *testing.T, f *libseccomp.ScmpFilter) *filterVM {
	t.Helper()
	prog, err := exportBPF(f)
	if err != nil {
		t.Fatal(err)
	}
	return newProgramVM(t, prog)
}

// newProgramVM runs prog, struct sock_filter[] in native byte order.
func newProgramVM(t *testing.T, prog []byte) *filterVM {
	t.Helper()
	if len(prog)%8 != 0 {
		t.Fatalf("program of %d bytes", len(prog))
	}
	var raw []bpf.RawInstruction
	for i := 0; i+8 <= len(prog); i += 8 {
		var insn unix.SockFilter
		if _, err := binary.Decode(prog[i:i+8], binary.NativeEndian, &insn); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, bpf.RawInstruction{Op: insn.Code, Jt: insn.Jt, Jf: insn.Jf, K: insn.K})
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("cannot disassemble the filter")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	return &filterVM{t: t, vm: vm}
}

// eval returns the filter's verdict for one system call. The VM loads
// words big-endian, so struct seccomp_data is laid out with big-endian
// words at the offsets a little-endian kernel uses (an argument's low
// word first).
func (v *filterVM) eval(a abi, nr libseccomp.ScmpSyscall, args ...uint64) uint32 {
	v.t.Helper()
	return v.evalRaw(a.audit, uint32(int32(nr)), args...)
}

// evalRaw is eval for any audit architecture and system call number.
func (v *filterVM) evalRaw(audit, nr uint32, args ...uint64) uint32 {
	v.t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], nr)
	binary.BigEndian.PutUint32(data[4:], audit)
	for i, arg := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(arg))
		binary.BigEndian.PutUint32(data[20+8*i:], uint32(arg>>32))
	}
	ret, err := v.vm.Run(data)
	if err != nil {
		v.t.Fatal(err)
	}
	return uint32(ret)
}

// i386Syscalls are kernel numbers on 32-bit x86, where libseccomp
// resolves the socket calls to pseudo-numbers.
var i386Syscalls = map[string]libseccomp.ScmpSyscall{"getpid": 20, "socketcall": 102, "socket": 359, "socketpair": 360}

// nr resolves name for a, or reports false when a has no such call.
func nr(t *testing.T, a abi, name string) (libseccomp.ScmpSyscall, bool) {
	t.Helper()
	n, err := libseccomp.GetSyscallFromNameByArch(name, a.scmp)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func TestFilterDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	highs := []uint64{0, 1, 0x80000000, 0xffffffff}
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			vm := newFilterVM(t, p)
			pairFamilies := socketFamilies
			if tc.opts.AllowSocketpair {
				pairFamilies = append(slices.Clone(socketFamilies), afUnix)
			}
			for _, arch := range p.Architectures {
				a, ok := abis[arch]
				if !ok {
					t.Fatalf("no test ABI for %s", arch)
				}
				verdict := func(name string, want func(args ...uint64) uint32, argsList ...[]uint64) {
					t.Helper()
					n, ok := nr(t, a, name)
					if !ok {
						t.Fatalf("%s: no %s", arch, name)
					}
					for _, args := range argsList {
						if got, want := vm.eval(a, n, args...), want(args...); got != want {
							t.Fatalf("%s: %s%#x = %#x, want %#x", arch, name, args, got, want)
						}
					}
				}
				lowIn := func(allowed []uint32) func(args ...uint64) uint32 {
					return func(args ...uint64) uint32 {
						if slices.Contains(allowed, uint32(args[0])) {
							return retAllow
						}
						return retErrno | 1
					}
				}
				var families [][]uint64
				for lo := range uint64(64) {
					for _, hi := range highs {
						families = append(families, []uint64{hi<<32 | lo, 1, 0})
					}
				}
				verdict("socket", lowIn(socketFamilies), families...)
				verdict("socketpair", lowIn(pairFamilies), families...)
				// AF_UNIX pairs: connected types only, whatever the flags
				// and the high bits; never a datagram pair.
				pairType := func(args ...uint64) uint32 {
					if tc.opts.AllowSocketpair && slices.Contains(unixPairTypes, uint32(args[1])&sockTypeMask) {
						return retAllow
					}
					return retErrno | 1
				}
				var types [][]uint64
				for typ := range uint64(16) {
					for _, flags := range []uint64{0, 0x800, 0x80000, 0x80800} {
						for _, hi := range highs {
							types = append(types, []uint64{hi<<32 | afUnix, hi<<32 | typ | flags, 0})
						}
					}
				}
				verdict("socketpair", pairType, types...)

				var requests [][]uint64
				for _, lo := range []uint32{tiocsti, tioclinux, 0x5413, 0x541b, 0x5410, 0x541e, 0, 0xffffffff} {
					for _, hi := range highs {
						requests = append(requests, []uint64{3, hi<<32 | uint64(lo), 0})
					}
					for bit := range 32 {
						requests = append(requests, []uint64{3, uint64(lo ^ 1<<bit), 0})
					}
				}
				for range 2000 {
					requests = append(requests, []uint64{3, rng.Uint64(), 0})
				}
				verdict("ioctl", func(args ...uint64) uint32 {
					if r := uint32(args[1]); r == tiocsti || r == tioclinux {
						return retErrno | 1
					}
					return retAllow
				}, requests...)

				var cloneFlags [][]uint64
				for bit := range 64 {
					cloneFlags = append(cloneFlags, []uint64{uint64(unix.SIGCHLD) | 1<<bit})
				}
				for range 2000 {
					cloneFlags = append(cloneFlags, []uint64{rng.Uint64()})
				}
				verdict("clone", func(args ...uint64) uint32 {
					if uint32(args[0])&0x7e020000 != 0 {
						return retErrno | 1
					}
					return retAllow
				}, cloneFlags...)

				verdict("clone3", func(...uint64) uint32 { return retErrno | 38 }, []uint64{0, 88})
				verdict("getpid", func(...uint64) uint32 { return retAllow }, nil)
				for _, name := range refused {
					if n, ok := nr(t, a, name); ok {
						if got := vm.eval(a, n); got != retErrno|1 {
							t.Errorf("%s: %s = %#x, want ERRNO(1)", arch, name, got)
						}
					}
				}
			}
			if tc.opts.Arch == "amd64" {
				// 32-bit x86 is not in the filter: all of its system calls,
				// socketcall included, meet the bad-architecture action
				for name, n := range i386Syscalls {
					if got := vm.eval(abis[specs.ArchX86], n, 1); got != retKillThread {
						t.Errorf("i386 %s = %#x, want KILL_THREAD", name, got)
					}
				}
			}
		})
	}
}

func TestLibseccompPitfalls(t *testing.T) {
	// The libseccomp behaviour the profile's rules are shaped around (see
	// Profile and socketcallABIs). If one of these starts failing, a newer
	// libseccomp behaves better; the profile stays correct either way.
	x86_64 := abis[specs.ArchX86_64]
	ioctl, _ := nr(t, x86_64, "ioctl")
	isTIOCSTI, err := libseccomp.MakeCondition(1, libseccomp.CompareMaskedEqual, 0xffffffff, tiocsti)
	if err != nil {
		t.Fatal(err)
	}
	newFilter := func(t *testing.T) *libseccomp.ScmpFilter {
		f, err := libseccomp.NewFilter(libseccomp.ActErrno.SetReturnCode(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Release)
		return f
	}

	t.Run("a refusal equal to the default action is rejected", func(t *testing.T) {
		// and libcontainer therefore skips it without a word
		f := newFilter(t)
		if err := f.AddRuleConditional(ioctl, libseccomp.ActErrno.SetReturnCode(1), []libseccomp.ScmpCondition{isTIOCSTI}); err == nil {
			t.Error("libseccomp accepted a rule with the default action")
		}
	})

	t.Run("an unconditional allow swallows a conditional refusal", func(t *testing.T) {
		f := newFilter(t)
		if err := f.AddRule(ioctl, libseccomp.ActAllow); err != nil {
			t.Fatal(err)
		}
		if err := f.AddRuleConditional(ioctl, libseccomp.ActErrno.SetReturnCode(int16(unix.EACCES)), []libseccomp.ScmpCondition{isTIOCSTI}); err != nil {
			t.Fatal(err)
		}
		if got := newFilterVMFrom(t, f).eval(x86_64, ioctl, 0, tiocsti); got != retAllow {
			t.Skipf("ioctl(TIOCSTI) = %#x: this libseccomp keeps the refusal", got)
		}
	})

	t.Run("a 64-bit not-equal misses high bits", func(t *testing.T) {
		f := newFilter(t)
		ne, err := libseccomp.MakeCondition(1, libseccomp.CompareNotEqual, tiocsti)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.AddRuleConditional(ioctl, libseccomp.ActAllow, []libseccomp.ScmpCondition{ne}); err != nil {
			t.Fatal(err)
		}
		if got := newFilterVMFrom(t, f).eval(x86_64, ioctl, 0, 1<<32|tiocsti); got != retAllow {
			t.Errorf("ioctl(1<<32|TIOCSTI) = %#x, want ALLOW: the kernel would run TIOCSTI", got)
		}
	})

	t.Run("a conditional socket rule opens socketcall on x86", func(t *testing.T) {
		f := newFilter(t)
		if err := f.AddArch(libseccomp.ArchX86); err != nil {
			t.Fatal(err)
		}
		i386 := abis[specs.ArchX86]
		// by name, as libcontainer adds rules: libseccomp adds them for
		// every architecture in the filter
		socket, err := libseccomp.GetSyscallFromName("socket")
		if err != nil {
			t.Fatal(err)
		}
		isInet, err := libseccomp.MakeCondition(0, libseccomp.CompareMaskedEqual, 0xffffffff, afInet)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.AddRuleConditional(socket, libseccomp.ActAllow, []libseccomp.ScmpCondition{isInet}); err != nil {
			t.Fatal(err)
		}
		vm := newFilterVMFrom(t, f)
		if got := vm.eval(i386, i386Syscalls["socket"], afInet); got != retAllow {
			t.Errorf("i386 socket(AF_INET) = %#x, want ALLOW", got)
		}
		if got := vm.eval(i386, i386Syscalls["socket"], afUnix); got != retErrno|1 {
			t.Errorf("i386 socket(AF_UNIX) = %#x, want ERRNO(1)", got)
		}
		// socketcall(SYS_SOCKET, args): the family is behind the pointer
		if got := vm.eval(i386, i386Syscalls["socketcall"], 1, 0x10000); got != retAllow {
			t.Skipf("i386 socketcall(SYS_SOCKET) = %#x: this libseccomp no longer allows it", got)
		}
	})
}

// TestFilterHatches checks what sandbox-runtime's escape hatches and the
// container mode change in the filter, call by call, on amd64.
func TestFilterHatches(t *testing.T) {
	const (
		afUnixDgram = 2 // SOCK_DGRAM
		afVsock     = 40
		sockRaw     = 3
	)
	newUser := uint64(unix.CLONE_NEWUSER | unix.SIGCHLD)
	type call struct {
		name string
		args []uint64
	}
	namespaces := []call{
		{"unshare", []uint64{unix.CLONE_NEWUSER}}, {"setns", []uint64{3, 0}}, {"clone", []uint64{newUser}},
		{"clone3", []uint64{0, 88}}, {"mount", nil}, {"umount2", nil}, {"pivot_root", nil}, {"chroot", nil},
		{"sethostname", nil}, {"fsopen", nil}, {"open_tree", nil},
	}
	unixSockets := []call{
		{"socket", []uint64{afUnix, sockStream, 0}}, {"socket", []uint64{afUnix, afUnixDgram, 0}},
		{"socket", []uint64{afVsock, sockStream, 0}}, {"socketpair", []uint64{afUnix, afUnixDgram, 0}},
	}
	udp := []call{
		{"socket", []uint64{afInet, afUnixDgram, 0}}, {"socket", []uint64{afInet6, sockRaw, 0}},
		{"socket", []uint64{afInet, sockStream, 132}}, // SCTP
	}
	tcp := []call{{"socket", []uint64{afInet, sockStream, 0}}, {"socket", []uint64{afInet6, sockStream | 0x80000, 6}}}
	tests := []struct {
		name          string
		opts          Options
		allow, refuse []call
	}{
		{"defaults", Options{}, tcp, slices.Concat(namespaces, unixSockets)},
		{"allowNestedUserNamespaces", Options{AllowUserNamespaces: true}, namespaces, unixSockets},
		{"allowAllUnixSockets", Options{AllowUnixSockets: true}, unixSockets, namespaces},
		{"container mode", Options{Contained: true}, tcp, slices.Concat(udp, unixSockets, namespaces)},
		{"container mode without TCP rules", Options{Contained: true, NoTCP: true}, nil, slices.Concat(tcp, udp)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Arch, tc.opts.KernelVersion = "amd64", "6.18.0"
			vm := newFilterVM(t, mustProfile(t, tc.opts))
			a := abis[specs.ArchX86_64]
			for _, c := range tc.allow {
				n, _ := nr(t, a, c.name)
				if got := vm.eval(a, n, c.args...); got != retAllow {
					t.Errorf("%s%#x = %#x, want ALLOW", c.name, c.args, got)
				}
			}
			for _, c := range tc.refuse {
				n, _ := nr(t, a, c.name)
				if got := vm.eval(a, n, c.args...); got == retAllow {
					t.Errorf("%s%#x = ALLOW, want a refusal", c.name, c.args)
				}
			}
		})
	}
}
