package seccomp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	moby "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestApplies(t *testing.T) {
	kv := func(k, m uint64) *moby.KernelVersion { return &moby.KernelVersion{Kernel: k, Major: m} }
	amd64 := target{arch: "amd64", kernel: kv(6, 18)}
	tests := []struct {
		name     string
		includes *moby.Filter
		excludes *moby.Filter
		target   target
		want     bool
	}{
		{"unconditional", nil, nil, amd64, true},

		{"includes this arch", &moby.Filter{Arches: []string{"amd64", "x32"}}, nil, amd64, true},
		{"includes other arches", &moby.Filter{Arches: []string{"arm", "arm64"}}, nil, amd64, false},
		{"excludes this arch", nil, &moby.Filter{Arches: []string{"s390", "amd64"}}, amd64, false},
		{"excludes other arches", nil, &moby.Filter{Arches: []string{"s390", "s390x"}}, amd64, true},
		// a sub-architecture's name never matches: moby compares the
		// native architecture only
		{"includes only a sub-arch", &moby.Filter{Arches: []string{"x86"}}, nil, amd64, false},

		{"includes a missing cap", &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, nil, amd64, false},
		{"includes a present cap", &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, nil,
			target{arch: "amd64", caps: []string{"CAP_SYS_ADMIN"}}, true},
		{"includes caps, one missing", &moby.Filter{Caps: []string{"CAP_SYS_ADMIN", "CAP_BPF"}}, nil,
			target{arch: "amd64", caps: []string{"CAP_SYS_ADMIN"}}, false},
		{"includes caps, all present", &moby.Filter{Caps: []string{"CAP_SYS_ADMIN", "CAP_BPF"}}, nil,
			target{arch: "amd64", caps: []string{"CAP_BPF", "CAP_SYS_ADMIN"}}, true},
		{"excludes a missing cap", nil, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, amd64, true},
		{"excludes a present cap", nil, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}},
			target{arch: "amd64", caps: []string{"CAP_SYS_ADMIN"}}, false},
		{"excludes caps, any present", nil, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN", "CAP_BPF"}},
			target{arch: "amd64", caps: []string{"CAP_BPF"}}, false},

		{"includes min kernel, older", &moby.Filter{MinKernel: kv(4, 8)}, nil, target{arch: "amd64", kernel: kv(4, 7)}, false},
		{"includes min kernel, equal", &moby.Filter{MinKernel: kv(4, 8)}, nil, target{arch: "amd64", kernel: kv(4, 8)}, true},
		{"includes min kernel, newer major", &moby.Filter{MinKernel: kv(4, 8)}, nil, target{arch: "amd64", kernel: kv(5, 0)}, true},
		{"includes min kernel, older major", &moby.Filter{MinKernel: kv(4, 8)}, nil, target{arch: "amd64", kernel: kv(3, 19)}, false},
		{"includes min kernel, unknown kernel", &moby.Filter{MinKernel: kv(4, 8)}, nil, target{arch: "amd64"}, true},
		{"excludes min kernel, older", nil, &moby.Filter{MinKernel: kv(4, 8)}, target{arch: "amd64", kernel: kv(4, 7)}, true},
		{"excludes min kernel, newer", nil, &moby.Filter{MinKernel: kv(4, 8)}, target{arch: "amd64", kernel: kv(4, 9)}, false},
		{"excludes min kernel, unknown kernel", nil, &moby.Filter{MinKernel: kv(4, 8)}, target{arch: "amd64"}, false},

		// moby's s390 clone rule: includes s390 arches, excludes CAP_SYS_ADMIN
		{"both, includes fail", &moby.Filter{Arches: []string{"s390", "s390x"}}, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, amd64, false},
		{"both, excludes fail", &moby.Filter{Arches: []string{"amd64"}}, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}},
			target{arch: "amd64", caps: []string{"CAP_SYS_ADMIN"}}, false},
		{"both hold", &moby.Filter{Arches: []string{"amd64"}}, &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, amd64, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call := &moby.Syscall{Includes: tc.includes, Excludes: tc.excludes}
			if got := applies(call, tc.target); got != tc.want {
				t.Errorf("applies = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	errno := uint(1)
	enosys := uint(38)
	p := &moby.Seccomp{
		LinuxSeccomp: specs.LinuxSeccomp{DefaultAction: specs.ActErrno, DefaultErrnoRet: &errno},
		Syscalls: []*moby.Syscall{
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"read", "write"}, Action: specs.ActAllow}},
			{LinuxSyscall: specs.LinuxSyscall{Action: specs.ActAllow}, Name: "getpid"},
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"ptrace"}, Action: specs.ActAllow},
				Includes: &moby.Filter{MinKernel: &moby.KernelVersion{Kernel: 4, Major: 8}}},
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"mount"}, Action: specs.ActAllow},
				Includes: &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}},
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
				Excludes: &moby.Filter{Caps: []string{"CAP_SYS_ADMIN"}}, Comment: "dropped"},
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"arch_prctl"}, Action: specs.ActAllow},
				Includes: &moby.Filter{Arches: []string{"amd64", "x32"}}},
			{LinuxSyscall: specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow,
				Args: []specs.LinuxSeccompArg{{Index: 0, Value: 8, Op: specs.OpEqualTo}}}},
		},
	}
	tests := []struct {
		name   string
		target target
		want   []specs.LinuxSyscall
	}{
		{"amd64, old kernel, no caps", target{arch: "amd64", kernel: &moby.KernelVersion{Kernel: 4, Major: 4}}, []specs.LinuxSyscall{
			{Names: []string{"read", "write"}, Action: specs.ActAllow},
			{Names: []string{"getpid"}, Action: specs.ActAllow},
			{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
			{Names: []string{"arch_prctl"}, Action: specs.ActAllow},
			{Names: []string{"personality"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Index: 0, Value: 8, Op: specs.OpEqualTo}}},
		}},
		{"arm64, new kernel, CAP_SYS_ADMIN", target{arch: "arm64", caps: []string{"CAP_SYS_ADMIN"}}, []specs.LinuxSyscall{
			{Names: []string{"read", "write"}, Action: specs.ActAllow},
			{Names: []string{"getpid"}, Action: specs.ActAllow},
			{Names: []string{"ptrace"}, Action: specs.ActAllow},
			{Names: []string{"mount"}, Action: specs.ActAllow},
			{Names: []string{"personality"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Index: 0, Value: 8, Op: specs.OpEqualTo}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(p, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			want := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, DefaultErrnoRet: &errno, Syscalls: tc.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("name and names", func(t *testing.T) {
		bad := &moby.Seccomp{Syscalls: []*moby.Syscall{{LinuxSyscall: specs.LinuxSyscall{Names: []string{"read"}}, Name: "write"}}}
		if _, err := resolve(bad, target{arch: "amd64"}); err == nil {
			t.Error("resolve accepted a rule with both name and names")
		}
	})
}

func TestParseKernel(t *testing.T) {
	tests := []struct {
		release string
		want    *moby.KernelVersion
		wantErr bool
	}{
		{"", nil, false},
		{"6.18.44", &moby.KernelVersion{Kernel: 6, Major: 18}, false},
		{"6.18.44-fc-v445", &moby.KernelVersion{Kernel: 6, Major: 18}, false},
		{"3.12-1-amd64", &moby.KernelVersion{Kernel: 3, Major: 12}, false},
		{"5.4", &moby.KernelVersion{Kernel: 5, Major: 4}, false},
		{"6", nil, true},
		{"v6.1", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.release, func(t *testing.T) {
			got, err := parseKernel(tc.release)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseKernel(%q) error = %v, want error %v", tc.release, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseKernel(%q) (-want +got):\n%s", tc.release, diff)
			}
		})
	}
}

func TestArchesFor(t *testing.T) {
	p, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		native  specs.Arch
		without []specs.Arch
		want    []specs.Arch
		wantErr bool
	}{
		{"x86_64 as moby has it", specs.ArchX86_64, nil, []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}, false},
		{"x86_64 without socketcall ABIs", specs.ArchX86_64, socketcallABIs, []specs.Arch{specs.ArchX86_64, specs.ArchX32}, false},
		{"aarch64", specs.ArchAARCH64, socketcallABIs, []specs.Arch{specs.ArchAARCH64, specs.ArchARM}, false},
		{"riscv64 has no sub-architectures", specs.ArchRISCV64, socketcallABIs, []specs.Arch{specs.ArchRISCV64}, false},
		{"mips64 loses o32", specs.ArchMIPS64, socketcallABIs, []specs.Arch{specs.ArchMIPS64, specs.ArchMIPS64N32}, false},
		{"not a main architecture", specs.ArchX86, nil, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := archesFor(p, tc.native, tc.without)
			if (err != nil) != tc.wantErr {
				t.Fatalf("archesFor error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("archesFor (-want +got):\n%s", diff)
			}
		})
	}
}
