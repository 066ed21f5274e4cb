package seccomp

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// variants are the profiles the tests build, compile and load.
var variants = []struct {
	name string
	opts Options
}{
	{"amd64", Options{Arch: "amd64", KernelVersion: "6.18.0"}},
	{"amd64_socketpair", Options{Arch: "amd64", KernelVersion: "6.18.0", AllowSocketpair: true}},
	{"arm64", Options{Arch: "arm64", KernelVersion: "6.18.0"}},
	{"riscv64", Options{Arch: "riscv64", KernelVersion: "6.18.0"}},
}

func mustProfile(t testing.TB, o Options) *specs.LinuxSeccomp {
	t.Helper()
	p, err := Profile(o)
	if err != nil {
		t.Fatalf("Profile(%+v): %v", o, err)
	}
	return p
}

func TestProfileGolden(t *testing.T) {
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.MarshalIndent(mustProfile(t, tc.opts), "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s mismatch (-want +got, -update to accept):\n%s", path, diff)
			}
		})
	}
}

func TestProfileErrors(t *testing.T) {
	tests := []struct {
		name        string
		opts        Options
		unsupported bool
	}{
		{"32-bit x86", Options{Arch: "386"}, true},
		{"s390x multiplexes socketcall", Options{Arch: "s390x"}, true},
		{"mips64 has other ioctl numbers", Options{Arch: "mips64le"}, true},
		{"not a GOARCH", Options{Arch: "vax"}, true},
		{"kernel without a minor", Options{Arch: "amd64", KernelVersion: "6"}, false},
		{"kernel not a number", Options{Arch: "amd64", KernelVersion: "latest"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Profile(tc.opts)
			if err == nil {
				t.Fatalf("Profile(%+v) = %d rules, want an error", tc.opts, len(p.Syscalls))
			}
			if got := errors.Is(err, errors.ErrUnsupported); got != tc.unsupported {
				t.Errorf("Profile(%+v) = %v; errors.Is(err, ErrUnsupported) = %v, want %v", tc.opts, err, got, tc.unsupported)
			}
		})
	}
}

func TestProfileDefaults(t *testing.T) {
	p := mustProfile(t, Options{Arch: "amd64"})
	if p.DefaultAction != specs.ActErrno || p.DefaultErrnoRet == nil || *p.DefaultErrnoRet != 1 {
		t.Errorf("default action = %s errno %v, want %s errno 1", p.DefaultAction, p.DefaultErrnoRet, specs.ActErrno)
	}
	for _, rule := range p.Syscalls {
		if rule.Action != specs.ActAllow && rule.Action != specs.ActErrno {
			t.Errorf("rule %v has action %s; only ALLOW and ERRNO may appear (never KILL)", rule.Names, rule.Action)
		}
	}
	// a profile is a fresh value: changing one must not change the next
	p.Syscalls[0].Names[0] = "changed"
	if q := mustProfile(t, Options{Arch: "amd64"}); q.Syscalls[0].Names[0] == "changed" {
		t.Error("Profile returns shared state")
	}
}

func TestProfileArchitectures(t *testing.T) {
	tests := []struct {
		arch string
		want []specs.Arch
	}{
		// no SCMP_ARCH_X86: see socketcallABIs
		{"amd64", []specs.Arch{specs.ArchX86_64, specs.ArchX32}},
		{"arm64", []specs.Arch{specs.ArchAARCH64, specs.ArchARM}},
		{"riscv64", []specs.Arch{specs.ArchRISCV64}},
	}
	for _, tc := range tests {
		t.Run(tc.arch, func(t *testing.T) {
			got := mustProfile(t, Options{Arch: tc.arch}).Architectures
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Architectures (-want +got):\n%s", diff)
			}
		})
	}
}

// ruleSummary is a rule as the tests below reason about it.
type ruleSummary struct {
	Action   specs.LinuxSeccompAction
	ErrnoRet uint
	Args     []specs.LinuxSeccompArg
}

// rulesFor returns every rule naming name.
func rulesFor(p *specs.LinuxSeccomp, name string) []ruleSummary {
	var out []ruleSummary
	for _, rule := range p.Syscalls {
		if !slices.Contains(rule.Names, name) {
			continue
		}
		s := ruleSummary{Action: rule.Action, Args: rule.Args}
		if rule.ErrnoRet != nil {
			s.ErrnoRet = *rule.ErrnoRet
		}
		out = append(out, s)
	}
	return out
}

func TestProfileRefused(t *testing.T) {
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			for _, name := range refused {
				if rules := rulesFor(p, name); len(rules) > 0 {
					t.Errorf("%s has rules %+v, want none (refused by the default action)", name, rules)
				}
			}
		})
	}
}

func TestProfileCapabilityGated(t *testing.T) {
	// Every system call moby allows only with some capability stays
	// refused, since the sandboxed process has none. The exception is
	// clone, which moby also allows without CAP_SYS_ADMIN when no
	// namespace flag is set (checked in TestProfileClone).
	base, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	var gated []string
	for _, call := range base.Syscalls {
		if call.Includes != nil && len(call.Includes.Caps) > 0 {
			gated = append(gated, call.Names...)
		}
	}
	if len(gated) < 40 {
		t.Fatalf("found %d capability-gated system calls in moby's profile; did its format change?", len(gated))
	}
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			var allowed []string
			for _, rule := range p.Syscalls {
				for _, name := range rule.Names {
					if rule.Action == specs.ActAllow && slices.Contains(gated, name) && !slices.Contains(allowed, name) {
						allowed = append(allowed, name)
					}
				}
			}
			if diff := cmp.Diff([]string{"clone"}, allowed); diff != "" {
				t.Errorf("capability-gated system calls allowed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileClone(t *testing.T) {
	// moby's rules for a process without CAP_SYS_ADMIN: clone only
	// without any CLONE_NEW* flag (CLONE_NEWTIME cannot be passed to
	// clone, it overlaps the exit signal), and clone3, whose flags are
	// behind a pointer, ENOSYS so that libc falls back to clone.
	const cloneNewFlags = 0x7e020000
	want := map[string][]ruleSummary{
		"clone":  {{Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Index: 0, Value: cloneNewFlags, Op: specs.OpMaskedEqual}}}},
		"clone3": {{Action: specs.ActErrno, ErrnoRet: 38}},
	}
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			got := map[string][]ruleSummary{"clone": rulesFor(p, "clone"), "clone3": rulesFor(p, "clone3")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("clone rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileSocketFamilies(t *testing.T) {
	tests := []struct {
		name            string
		opts            Options
		socket, socket2 []uint64
	}{
		{"default", Options{Arch: "amd64"}, []uint64{afInet, afInet6, afNetlink}, []uint64{afInet, afInet6, afNetlink}},
		{"socketpair allowed", Options{Arch: "amd64", AllowSocketpair: true}, []uint64{afInet, afInet6, afNetlink}, []uint64{afInet, afInet6, afNetlink, afUnix}},
	}
	// families returns the family each rule allows, checking that every
	// rule is an allow with one low-32-bit compare on the family; an
	// AF_UNIX socketpair rule must also name a connected socket type
	// (a datagram pair sends to any unix socket by path).
	families := func(t *testing.T, p *specs.LinuxSeccomp, name string) []uint64 {
		var out []uint64
		var unixTypes []uint64
		for _, r := range rulesFor(p, name) {
			if r.Action != specs.ActAllow || len(r.Args) == 0 || len(r.Args) > 2 {
				t.Fatalf("%s rule %+v: want an allow rule with one or two conditions", name, r)
			}
			a := r.Args[0]
			if a.Index != 0 || a.Op != specs.OpMaskedEqual || a.Value != 0xffffffff {
				t.Fatalf("%s rule %+v: want arg 0 & 0xffffffff == family", name, r)
			}
			if len(r.Args) == 2 {
				b := r.Args[1]
				if name != "socketpair" || a.ValueTwo != afUnix || b.Index != 1 || b.Op != specs.OpMaskedEqual || b.Value != sockTypeMask {
					t.Fatalf("%s rule %+v: want socketpair(AF_UNIX, type & 0xf == T)", name, r)
				}
				unixTypes = append(unixTypes, b.ValueTwo)
			} else if name == "socketpair" && a.ValueTwo == afUnix {
				t.Fatalf("%s rule %+v: AF_UNIX pairs of any type (datagram ones included)", name, r)
			}
			if !slices.Contains(out, a.ValueTwo) {
				out = append(out, a.ValueTwo)
			}
		}
		if unixTypes != nil {
			if diff := cmp.Diff([]uint64{sockStream, sockSeqpacket}, unixTypes); diff != "" {
				t.Errorf("%s AF_UNIX types (-want +got):\n%s", name, diff)
			}
		}
		return out
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustProfile(t, tc.opts)
			if diff := cmp.Diff(tc.socket, families(t, p, "socket")); diff != "" {
				t.Errorf("socket families (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.socket2, families(t, p, "socketpair")); diff != "" {
				t.Errorf("socketpair families (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileIoctl(t *testing.T) {
	p := mustProfile(t, Options{Arch: "amd64"})
	var args []specs.LinuxSeccompArg
	for _, r := range rulesFor(p, "ioctl") {
		if r.Action != specs.ActAllow || len(r.Args) != 1 {
			t.Fatalf("ioctl rule %+v: want an allow rule with one condition", r)
		}
		args = append(args, r.Args[0])
	}
	if diff := cmp.Diff(low32Except(1, []uint32{tiocsti, tioclinux}), args); diff != "" {
		t.Errorf("ioctl conditions (-want +got):\n%s", diff)
	}
}

// matches reports whether value satisfies a MASKED_EQ condition the way
// the kernel's filter evaluates it.
func matches(a specs.LinuxSeccompArg, value uint64) bool {
	return value&a.Value == a.ValueTwo
}

func TestLow32Except(t *testing.T) {
	tests := []struct {
		name    string
		refused []uint32
		count   int
	}{
		{"TIOCSTI and TIOCLINUX", []uint32{tiocsti, tioclinux}, 34},
		{"one value", []uint32{afUnix}, 32},
		{"zero", []uint32{0}, 32},
		{"all ones", []uint32{0xffffffff}, 32},
		{"duplicates", []uint32{7, 7}, 32},
		{"adjacent", []uint32{0x40, 0x41}, 31},
		{"far apart", []uint32{1, 0x80000000}, 62},
		{"nothing refused", nil, 2},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conds := low32Except(3, tc.refused)
			if len(conds) != tc.count {
				t.Errorf("%d conditions, want %d", len(conds), tc.count)
			}
			for _, c := range conds {
				if c.Index != 3 || c.Op != specs.OpMaskedEqual || c.Value > 0xffffffff || c.ValueTwo&^c.Value != 0 {
					t.Fatalf("condition %+v: want a MASKED_EQ on arg 3 within the low 32 bits", c)
				}
			}
			// probes: each refused value, every one-bit neighbour of it,
			// random values; each with several high halves
			var probes []uint32
			for _, v := range tc.refused {
				probes = append(probes, v)
				for bit := range 32 {
					probes = append(probes, v^1<<bit)
				}
			}
			for range 5000 {
				probes = append(probes, rng.Uint32())
			}
			for _, lo := range probes {
				for _, hi := range []uint64{0, 1, 0x80000000, 0xffffffff, rng.Uint64() >> 32} {
					value := hi<<32 | uint64(lo)
					n := 0
					for _, c := range conds {
						if matches(c, value) {
							n++
						}
					}
					// the trie's branches are disjoint: exactly one matches
					// an allowed value, none a refused one
					want := 1
					if slices.Contains(tc.refused, lo) {
						want = 0
					}
					if n != want {
						t.Fatalf("%#x matches %d conditions, want %d", value, n, want)
					}
				}
			}
		})
	}
}

func TestEmbeddedIsStrictJSON(t *testing.T) {
	// loadMobyDefault refuses unknown fields; the copy must parse, and
	// re-encoding it must lose nothing
	p, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(p, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(mobyDefault, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("moby_default.json does not round-trip (-file +re-encoded):\n%s", diff)
	}
	if !bytes.Contains(mobyDefault, []byte(`"SCMP_ARCH_X86_64"`)) {
		t.Error("moby_default.json has no SCMP_ARCH_X86_64 entry")
	}
}
