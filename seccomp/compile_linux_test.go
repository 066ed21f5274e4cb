//go:build linux && cgo

package seccomp

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

const retEPERM = retErrno | uint32(unix.EPERM)

// mustCompile is Compile, failing t on an error.
func mustCompile(t testing.TB, p *specs.LinuxSeccomp) Program {
	t.Helper()
	prog, err := Compile(p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return prog
}

// libseccompProgram is the program libseccomp alone generates for p.
func libseccompProgram(t *testing.T, p *specs.LinuxSeccomp) []byte {
	t.Helper()
	f, err := compile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	prog, err := exportBPF(f)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// input is one system call as a filter sees it.
type input struct {
	audit, nr uint32
	args      []uint64
}

func (in input) String() string {
	return fmt.Sprintf("arch %#x nr %#x args %#x", in.audit, in.nr, in.args)
}

// inputs are the system calls the decision tests put to programs: every
// number up to 600 and a few far beyond, in both x86_64 ABIs, on the
// architectures cordon builds profiles for and on foreign ones, with
// arguments that matter to the profile's conditional rules.
func inputs() []input {
	audits := []uint32{
		unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM,
		unix.AUDIT_ARCH_RISCV64, unix.AUDIT_ARCH_S390X, 0,
	}
	var nrs []uint32
	for nr := range uint32(601) {
		nrs = append(nrs, nr, x32Bit|nr)
	}
	for nr := uint32(0xf0000); nr <= 0xf0010; nr++ {
		nrs = append(nrs, nr) // ARM's private system calls
	}
	nrs = append(nrs, 1000, x32Bit|1000, 4095, 4999, 5999, 6999, 0x3fffffff, 0x7fffffff, 0x80000000, 0xffffffff)
	rng := rand.New(rand.NewPCG(5, 6))
	argSets := [][]uint64{
		nil,
		{afUnix, unix.SOCK_STREAM, 0},
		{afInet, unix.SOCK_STREAM, 0},
		{1<<32 | afUnix, unix.SOCK_STREAM, 0},
		{3, tiocsti, 0},
		{3, 0x5413, 0}, // TIOCGWINSZ
		{uint64(unix.SIGCHLD) | unix.CLONE_NEWUSER},
		{uint64(unix.SIGCHLD)},
		{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)},
		{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()},
	}
	var out []input
	for _, audit := range audits {
		for _, nr := range nrs {
			for _, args := range argSets {
				out = append(out, input{audit, nr, args})
			}
		}
	}
	return out
}

// stubbed says, for an oracle written from patchbpf's description,
// whether libcontainer's stub answers ENOSYS for a system call: the
// architecture is one of the filter's (the profile's or the native one),
// and the number is above the largest the profile names for its ABI
// there (x86_64 and x32 share an audit architecture and differ in the x32
// bit). s390's multiplexer is answered too.
func stubbed(t *testing.T, p *specs.LinuxSeccomp) func(in input) bool {
	t.Helper()
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		t.Fatal(err)
	}
	largest := map[libseccomp.ScmpArch]uint32{}
	add := func(arch libseccomp.ScmpArch) {
		for _, call := range p.Syscalls {
			for _, name := range call.Names {
				nr, err := libseccomp.GetSyscallFromNameByArch(name, arch)
				if err == nil && nr > 0 && uint32(nr) > largest[arch] {
					largest[arch] = uint32(nr)
				}
			}
		}
	}
	add(native)
	for _, a := range p.Architectures {
		arch, err := libseccomp.GetArchFromString(archNames[a])
		if err != nil {
			t.Fatal(err)
		}
		add(arch)
	}
	return func(in input) bool {
		for arch, limit := range largest {
			if auditArches[arch] != in.audit || limit == 0 {
				continue
			}
			if in.audit == unix.AUDIT_ARCH_X86_64 && (in.nr&x32Bit != 0) != (arch == libseccomp.ArchX32) {
				continue
			}
			if (arch == libseccomp.ArchS390 || arch == libseccomp.ArchS390X) && in.nr == 0 {
				return true
			}
			return in.nr > limit
		}
		return false
	}
}

func TestCompileMatchesLibseccomp(t *testing.T) {
	// Compile's program decides as libseccomp's alone, except that system
	// calls above the profile's largest on each of its ABIs get ENOSYS.
	ins := inputs()
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			plain := libseccompProgram(t, p)
			if n := len(plain) / 8; n <= 255 {
				t.Fatalf("libseccomp's program has %d instructions: too short to test jumps over it", n)
			}
			prog := mustCompile(t, p)
			if !bytes.HasSuffix(prog.Filter, plain) {
				t.Fatal("the program does not end with libseccomp's")
			}
			ours, theirs := newProgramVM(t, prog.Filter), newProgramVM(t, plain)
			isStubbed := stubbed(t, p)
			enosys := map[uint32]int{}
			for _, in := range ins {
				got, plain := ours.evalRaw(in.audit, in.nr, in.args...), theirs.evalRaw(in.audit, in.nr, in.args...)
				want := plain
				if isStubbed(in) {
					want = retENOSYS
					enosys[in.audit]++
				}
				if got != want {
					t.Fatalf("%v = %#x, want %#x (libseccomp alone: %#x)", in, got, want, plain)
				}
			}
			for _, a := range p.Architectures {
				if enosys[abis[a].audit] == 0 {
					t.Errorf("no system call on %s got ENOSYS from the stub", a)
				}
			}
		})
	}
}

func TestCompileDecisions(t *testing.T) {
	// ret values are SECCOMP_RET_*; nr is a number, or call a name looked
	// up for arch
	tests := []struct {
		variant string
		arch    specs.Arch
		call    string
		nr      uint32
		args    []uint64
		want    uint32
	}{
		{variant: "amd64", arch: specs.ArchX86_64, call: "getpid", want: retAllow},
		{variant: "amd64", arch: specs.ArchX86_64, call: "read", want: retAllow},
		{variant: "amd64", arch: specs.ArchX86_64, call: "ptrace", want: retEPERM},
		{variant: "amd64", arch: specs.ArchX86_64, call: "socket", args: []uint64{afUnix}, want: retEPERM},
		{variant: "amd64", arch: specs.ArchX86_64, call: "socket", args: []uint64{afInet}, want: retAllow},
		// a rule of the profile, not the stub
		{variant: "amd64", arch: specs.ArchX86_64, call: "clone3", want: retENOSYS},
		// the profile's largest (libseccomp 2.5.4), and the next
		{variant: "amd64", arch: specs.ArchX86_64, call: "futex_requeue", want: retAllow},
		{variant: "amd64", arch: specs.ArchX86_64, nr: 457, want: retENOSYS},
		{variant: "amd64", arch: specs.ArchX86_64, nr: 1000, want: retENOSYS},
		{variant: "amd64", arch: specs.ArchX86_64, nr: 0x3fffffff, want: retENOSYS},
		{variant: "amd64", arch: specs.ArchX32, call: "getpid", want: retAllow},
		{variant: "amd64", arch: specs.ArchX32, call: "ptrace", want: retEPERM},
		// x32's largest is its pwritev2 (0x40000223); x32 numbers up to
		// 511 are its own, so 457 is below it and meets the default
		{variant: "amd64", arch: specs.ArchX32, call: "pwritev2", want: retAllow},
		{variant: "amd64", arch: specs.ArchX32, nr: x32Bit | 0x224, want: retENOSYS},
		{variant: "amd64", arch: specs.ArchX32, nr: x32Bit | 457, want: retEPERM},
		{variant: "amd64", arch: specs.ArchX32, nr: x32Bit | 1000, want: retENOSYS},
		// numbers with the top bit are x32's to the stub
		{variant: "amd64", arch: specs.ArchX86_64, nr: 0xffffffff, want: retENOSYS},
		// foreign architectures meet libseccomp's bad-architecture action
		{variant: "amd64", arch: specs.ArchX86, call: "getpid", want: retKillThread},
		{variant: "amd64", arch: specs.ArchX86, nr: 1000, want: retKillThread},
		{variant: "amd64", arch: specs.ArchAARCH64, nr: 1000, want: retKillThread},

		{variant: "amd64_socketpair", arch: specs.ArchX86_64, call: "socketpair", args: []uint64{afUnix, sockStream}, want: retAllow},
		{variant: "amd64_socketpair", arch: specs.ArchX86_64, call: "socketpair", args: []uint64{afUnix, sockSeqpacket | 0x80800}, want: retAllow},
		// a datagram pair sends anywhere by path
		{variant: "amd64_socketpair", arch: specs.ArchX86_64, call: "socketpair", args: []uint64{afUnix, 2}, want: retEPERM},
		{variant: "amd64_socketpair", arch: specs.ArchX86_64, call: "socketpair", args: []uint64{afUnix, 2 | 0x80000}, want: retEPERM},
		{variant: "amd64", arch: specs.ArchX86_64, call: "socketpair", args: []uint64{afUnix, sockStream}, want: retEPERM},
		{variant: "amd64_socketpair", arch: specs.ArchX86_64, nr: 1000, want: retENOSYS},
		{variant: "amd64_socketpair", arch: specs.ArchX32, nr: x32Bit | 1000, want: retENOSYS},

		{variant: "arm64", arch: specs.ArchAARCH64, call: "getpid", want: retAllow},
		{variant: "arm64", arch: specs.ArchAARCH64, call: "ptrace", want: retEPERM},
		{variant: "arm64", arch: specs.ArchAARCH64, call: "clone3", want: retENOSYS},
		{variant: "arm64", arch: specs.ArchAARCH64, nr: 457, want: retENOSYS},
		{variant: "arm64", arch: specs.ArchARM, call: "getpid", want: retAllow},
		// the profile allows ARM's private set_tls (0xf0005), which makes
		// it the largest: ordinary numbers meet the default action
		{variant: "arm64", arch: specs.ArchARM, nr: 1000, want: retEPERM},
		{variant: "arm64", arch: specs.ArchARM, nr: 0xf0006, want: retENOSYS},

		{variant: "riscv64", arch: specs.ArchRISCV64, call: "getpid", want: retAllow},
		{variant: "riscv64", arch: specs.ArchRISCV64, call: "ptrace", want: retEPERM},
		{variant: "riscv64", arch: specs.ArchRISCV64, nr: 1000, want: retENOSYS},
	}
	vms := map[string]*filterVM{}
	for _, v := range variants {
		vms[v.name] = newProgramVM(t, mustCompile(t, mustProfile(t, v.opts)).Filter)
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/%s/%s%#x%#x", tc.variant, tc.arch, tc.call, tc.nr, tc.args)
		t.Run(name, func(t *testing.T) {
			a, ok := abis[tc.arch]
			if !ok {
				t.Fatalf("no test ABI for %s", tc.arch)
			}
			nr := tc.nr
			if tc.call != "" {
				n, ok := nrFor(t, a, tc.call)
				if !ok {
					t.Fatalf("%s has no %s", tc.arch, tc.call)
				}
				nr = n
			}
			if got := vms[tc.variant].evalRaw(a.audit, nr, tc.args...); got != tc.want {
				t.Errorf("%s nr %#x = %#x, want %#x", tc.arch, nr, got, tc.want)
			}
		})
	}
}

// nrFor is nr as an unsigned number.
func nrFor(t *testing.T, a abi, name string) (uint32, bool) {
	t.Helper()
	n, ok := nr(t, a, name)
	return uint32(n), ok
}

func TestCompileFlags(t *testing.T) {
	api, _ := libseccomp.GetAPI()
	spec := uint(unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW)
	tests := []struct {
		name  string
		flags []specs.LinuxSeccompFlag
		want  uint
		level uint // the libseccomp API level the flags need
	}{
		{"no flags list: runc's default", nil, spec, 4},
		{"empty flags list", []specs.LinuxSeccompFlag{}, 0, 0},
		{"log", []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagLog}, unix.SECCOMP_FILTER_FLAG_LOG, 3},
		{"spec allow", []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagSpecAllow}, spec, 4},
		{"log and spec allow", []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagLog, specs.LinuxSeccompFlagSpecAllow},
			unix.SECCOMP_FILTER_FLAG_LOG | spec, 4},
		{"wait killable", []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagWaitKillableRecv},
			unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, Options{Arch: "amd64"})
			p.Flags = tc.flags
			prog, err := Compile(p)
			switch {
			case api < tc.level && tc.flags == nil:
				// runc leaves the default out where libseccomp lacks it
				if err != nil || prog.Flags != 0 {
					t.Errorf("Compile with libseccomp API %d: flags %#x, %v; want 0, nil", api, prog.Flags, err)
				}
			case api < tc.level:
				if err == nil {
					t.Errorf("Compile with libseccomp API %d: flags %#x, want an error", api, prog.Flags)
				}
			case err != nil:
				t.Errorf("Compile: %v", err)
			default:
				if diff := cmp.Diff(tc.want, prog.Flags); diff != "" {
					t.Errorf("flags (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
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
		name        string
		change      func(p *specs.LinuxSeccomp)
		want        string // in Compile's error
		unsupported bool   // the error wraps errors.ErrUnsupported
		check       bool   // Check accepts it, as libcontainer does
	}{
		{"notify default", func(p *specs.LinuxSeccomp) { p.DefaultAction = specs.ActNotify },
			"default action SCMP_ACT_NOTIFY", true, true},
		{"TSYNC", func(p *specs.LinuxSeccomp) { p.Flags = []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_TSYNC"} },
			"flag SECCOMP_FILTER_FLAG_TSYNC", true, true},
		{"NEW_LISTENER", func(p *specs.LinuxSeccomp) {
			p.Flags = []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagLog, "SECCOMP_FILTER_FLAG_NEW_LISTENER"}
		}, "flag SECCOMP_FILTER_FLAG_NEW_LISTENER: implied by SCMP_ACT_NOTIFY rules", true, false},
		{"unknown flag", func(p *specs.LinuxSeccomp) { p.Flags = []specs.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_MAGIC"} },
			`unknown flag "SECCOMP_FILTER_FLAG_MAGIC"`, false, false},
		{"unknown action", func(p *specs.LinuxSeccomp) { p.Syscalls[0].Action = "SCMP_ACT_MAYBE" },
			`syscalls[0]: unknown action "SCMP_ACT_MAYBE"`, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.change(p)
			_, err := Compile(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile: %v, want an error containing %q", err, tc.want)
			}
			if got := errors.Is(err, errors.ErrUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(%v, errors.ErrUnsupported) = %v, want %v", err, got, tc.unsupported)
			}
			if err := Check(p); (err == nil) != tc.check {
				t.Errorf("Check: %v, want an error: %v", err, !tc.check)
			}
		})
	}
	if _, err := Compile(nil); err == nil {
		t.Error("Compile(nil) = nil error, want one")
	}
}

func TestCompileWithoutStub(t *testing.T) {
	// libcontainer adds no stub where the default action lets calls
	// through or already answers ENOSYS; with any other default it does
	enosys, eperm := uint(unix.ENOSYS), uint(unix.EPERM)
	tests := []struct {
		name   string
		action specs.LinuxSeccompAction
		errno  *uint
		stub   bool
	}{
		{"allow", specs.ActAllow, nil, false},
		{"log", specs.ActLog, nil, false},
		{"trace", specs.ActTrace, nil, false},
		{"errno ENOSYS", specs.ActErrno, &enosys, false},
		{"errno EPERM", specs.ActErrno, &eperm, true},
		{"errno without errnoRet", specs.ActErrno, nil, true},
		{"kill process", specs.ActKillProcess, nil, true},
		{"trap", specs.ActTrap, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &specs.LinuxSeccomp{
				DefaultAction:   tc.action,
				DefaultErrnoRet: tc.errno,
				Architectures:   []specs.Arch{specs.ArchX86_64},
				Syscalls: []specs.LinuxSyscall{
					{Names: []string{"read"}, Action: specs.ActErrno, ErrnoRet: new(uint(unix.EACCES))},
					{Names: []string{"write"}, Action: specs.ActKillThread},
				},
			}
			prog, plain := mustCompile(t, p), libseccompProgram(t, p)
			if got := !bytes.Equal(prog.Filter, plain); got != tc.stub {
				t.Errorf("stub added: %v, want %v", got, tc.stub)
			}
			if got := newProgramVM(t, prog.Filter).evalRaw(unix.AUDIT_ARCH_X86_64, 1000); tc.stub && got != retENOSYS {
				t.Errorf("nr 1000 = %#x, want ENOSYS", got)
			}
		})
	}
}

func TestCompileLength(t *testing.T) {
	// A profile whose libseccomp program fits the kernel's limit and
	// whose stub takes it over: the limit applies to the whole program.
	if testing.Short() {
		t.Skip("compiles profiles of 4000 rules")
	}
	errno := uint(1)
	profile := func(rules int) *specs.LinuxSeccomp {
		p := &specs.LinuxSeccomp{
			DefaultAction:   specs.ActErrno,
			DefaultErrnoRet: &errno,
			Architectures:   []specs.Arch{specs.ArchX86_64},
			Syscalls:        []specs.LinuxSyscall{{Names: []string{"read"}, Action: specs.ActAllow}},
		}
		for i := range rules {
			p.Syscalls = append(p.Syscalls, allow("ioctl", specs.LinuxSeccompArg{Index: 1, Value: uint64(i), Op: specs.OpEqualTo}))
		}
		return p
	}
	stub, err := enosysStub(profile(1))
	if err != nil {
		t.Fatal(err)
	}
	// each rule is about one instruction: home in on the window
	rules, target := bpfMaxInsns-len(stub)/2, bpfMaxInsns-len(stub)/2
	var p *specs.LinuxSeccomp
	for range 6 {
		p = profile(rules)
		n := len(libseccompProgram(t, p)) / 8
		if n > bpfMaxInsns-len(stub) && n <= bpfMaxInsns {
			break
		}
		rules += target - n
		p = nil
	}
	if p == nil {
		t.Fatal("no profile with a libseccomp program just under the limit")
	}
	if err := Check(p); err == nil || !strings.Contains(err.Error(), "instructions, more than the kernel's 4096") {
		t.Errorf("Check: %v, want the length error", err)
	}
	if _, err := Compile(p); err == nil || !strings.Contains(err.Error(), "instructions, more than the kernel's 4096") {
		t.Errorf("Compile: %v, want the length error", err)
	}
}

func TestEnosysStubArchitectures(t *testing.T) {
	// The stub alone, in front of a program that returns a marker, for
	// every architecture libseccomp names (libseccomp itself refuses to
	// mix byte orders in one filter, so Compile cannot be used here).
	const marker = 0x7ff00000 | 0x1234 // SECCOMP_RET_TRACE with data
	errno := uint(1)
	p := &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &errno,
		Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read", "getpid", "futex_requeue", "pwritev2", "set_tls", "no_such_call"}, Action: specs.ActAllow},
			// counts although libcontainer skips the rule
			{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: &errno},
		},
	}
	for a, name := range archNames {
		if _, err := libseccomp.GetArchFromString(name); err == nil {
			p.Architectures = append(p.Architectures, a)
		}
	}
	slices.Sort(p.Architectures)
	stub, err := enosysStub(p)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := bpf.RetConstant{Val: marker}.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	vm := newProgramVM(t, appendSockFilters(nil, append(stub, ret)))
	isStubbed := stubbed(t, p)
	audits := map[uint32]bool{}
	for _, arch := range p.Architectures {
		a, err := libseccomp.GetArchFromString(archNames[arch])
		if err != nil {
			t.Fatal(err)
		}
		audits[auditArches[a]] = true
	}
	var nrs []uint32
	for nr := range uint32(7000) {
		nrs = append(nrs, nr, x32Bit|nr)
	}
	nrs = append(nrs, 0xf0005, 0xf0006, 0x7fffffff, 0xffffffff)
	seen := 0
	for audit := range audits {
		for _, nr := range nrs {
			want := uint32(marker)
			if isStubbed(input{audit: audit, nr: nr}) {
				want = retENOSYS
				seen++
			}
			if got := vm.evalRaw(audit, nr); got != want {
				t.Fatalf("arch %#x nr %#x = %#x, want %#x", audit, nr, got, want)
			}
		}
	}
	if got := vm.evalRaw(unix.AUDIT_ARCH_S390X, 0); got != retENOSYS {
		t.Errorf("s390x nr 0 (the multiplexer) = %#x, want ENOSYS", got)
	}
	if got := vm.evalRaw(unix.AUDIT_ARCH_SPARC64, 1000); got != marker {
		t.Errorf("an architecture not in the filter = %#x, want the filter's answer", got)
	}
	t.Logf("%d architectures, stub of %d instructions, %d ENOSYS", len(audits), len(stub), seen)
}

func BenchmarkCompile(b *testing.B) {
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			p, err := Profile(v.opts)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Compile(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEnosysStub(b *testing.B) {
	p, err := Profile(Options{Arch: "amd64"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := enosysStub(p); err != nil {
			b.Fatal(err)
		}
	}
}
