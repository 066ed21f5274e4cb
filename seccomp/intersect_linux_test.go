package seccomp

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestLeastMasked(t *testing.T) {
	for _, tc := range []struct {
		lo, mask, value uint64
		want            uint64
		ok              bool
	}{
		{0, 0xffffffff, 2, 2, true},
		{2, 0xffffffff, 2, 2, true},
		{3, 0xffffffff, 2, 1<<32 | 2, true},
		{38, 0xffffffff, 2, 1<<32 | 2, true},
		{0, 0, 0, 0, true},
		{12345, 0, 0, 12345, true},
		{5, 0b100, 0b100, 5, true},
		{3, 0b100, 0, 3, true},
		{4, 0b100, 0, 8, true},
		{1, 0b1010, 0b1010, 0b1010, true},
		{0, 0b10, 0b01, 0, false}, // value outside the mask: nothing matches
		{math.MaxUint64, 0xffffffff, 2, 0, false},
		{1 << 63, 1 << 63, 0, 0, false},
	} {
		got, ok := leastMasked(tc.lo, tc.mask, tc.value)
		if got != tc.want || ok != tc.ok {
			t.Errorf("leastMasked(%#x, %#x, %#x) = %#x, %v; want %#x, %v", tc.lo, tc.mask, tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

// TestIntersect checks, with the compiled filters run in a BPF VM, that
// the merged profile refuses a call exactly when the agent profile or
// the bundle's refuses it, and that what one filter cannot hold is an
// error; with the agent profile alone and as the OCI runtime asks for it
// (socketpair allowed, refusals notified to the monitor, which answers
// EPERM).
func TestIntersect(t *testing.T) {
	native := platforms[runtime.GOARCH].arch
	if native == "" {
		t.Skipf("no agent profile for %s", runtime.GOARCH)
	}
	agents := []struct {
		name     string
		profile  *specs.LinuxSeccomp
		notifies bool
	}{
		{"agent", mustProfile(t, Options{KernelVersion: "6.18.0"}), false},
		{"container", mustProfile(t, Options{KernelVersion: "6.18.0", AllowSocketpair: true, Notify: true}), true},
	}
	moby, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	runtimeDefault, err := resolve(moby, target{arch: runtime.GOARCH})
	if err != nil {
		t.Fatal(err)
	}
	runtimeDefault.Architectures = []specs.Arch{native}
	errno := func(n uint) *uint { return &n }
	// allowlist is the runtime default with edits.
	allowlist := func(edit func(*specs.LinuxSeccomp)) *specs.LinuxSeccomp {
		p := *runtimeDefault
		p.Syscalls = nil
		for _, r := range runtimeDefault.Syscalls {
			r.Names = slices.Clone(r.Names)
			p.Syscalls = append(p.Syscalls, r)
		}
		edit(&p)
		return &p
	}
	drop := func(p *specs.LinuxSeccomp, names ...string) {
		for _, n := range names {
			p.Syscalls = without(p.Syscalls, n, func(specs.LinuxSyscall) bool { return true })
		}
	}
	eq := func(i uint, v uint64) []specs.LinuxSeccompArg {
		return []specs.LinuxSeccompArg{{Index: i, Value: v, Op: specs.OpEqualTo}}
	}
	blocklist := func(rules ...specs.LinuxSyscall) *specs.LinuxSeccomp {
		return &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: rules}
	}

	for _, tc := range []struct {
		name    string
		bundle  *specs.LinuxSeccomp
		wantErr bool
	}{
		{"runtime default", runtimeDefault, false},
		{"runtime default without mkdir", allowlist(func(p *specs.LinuxSeccomp) { drop(p, "mkdir", "mkdirat") }), false},
		{"runtime default, personality 0 only", allowlist(func(p *specs.LinuxSeccomp) {
			drop(p, "personality")
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow, Args: eq(0, 0)})
		}), false},
		{"runtime default, socket allowed outright", allowlist(func(p *specs.LinuxSeccomp) {
			drop(p, "socket")
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActAllow})
		}), false},
		{"runtime default, getpid errno 38", allowlist(func(p *specs.LinuxSeccomp) {
			drop(p, "getpid")
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"getpid"}, Action: specs.ActErrno, ErrnoRet: errno(38)})
		}), false},
		{"allow by default, kill chmod, refuse vsock", blocklist(
			specs.LinuxSyscall{Names: []string{"chmod", "fchmodat"}, Action: specs.ActKillProcess},
			specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: errno(97), Args: eq(0, 40)},
		), false},
		{"allow by default, a seccomp agent's mkdir", blocklist(
			specs.LinuxSyscall{Names: []string{"mkdirat"}, Action: specs.ActNotify},
		), false},
		{"allow by default, refuse IPv6 sockets", blocklist(
			specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: errno(97), Args: eq(0, 10)},
		), true},
		{"socket both allowed and refused by arguments", blocklist(
			specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActAllow, Args: eq(0, 2)},
			specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActErrno, Args: eq(0, 10)},
		), true},
		{"runtime default, personality 1 only", allowlist(func(p *specs.LinuxSeccomp) {
			// neither inside the other: personality(1) is not the agent's
			drop(p, "personality")
			p.Syscalls = append(p.Syscalls,
				specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow, Args: eq(0, 0)},
				specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow, Args: eq(0, 1)})
		}), true},
		{"runtime default, personality 0 or 1 in one rule", allowlist(func(p *specs.LinuxSeccomp) {
			// two conditions on one argument: libcontainer adds one rule
			// per condition, so the rule allows personality(1) too
			drop(p, "personality")
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow,
				Args: append(eq(0, 0), eq(0, 1)...)})
		}), true},
		{"runtime default, ioctl TIOCGWINSZ or on descriptor 0 or 1", allowlist(func(p *specs.LinuxSeccomp) {
			// two conditions on argument 0: libcontainer adds each of
			// the three as a rule of its own, so the rule allows
			// ioctl(0, TIOCSTI), which the agent profile refuses
			drop(p, "ioctl")
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"ioctl"}, Action: specs.ActAllow,
				Args: append(append(eq(0, 0), eq(0, 1)...), eq(1, 0x5413)...)})
		}), true},
		{"refuse by default, kill getpid(1)", &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{
			// every getpid is refused, how depending on its argument:
			// Intersect does not merge that, and says why
			{Names: []string{"getpid"}, Action: specs.ActKillProcess, Args: eq(0, 1)},
		}}, true},
		{"another architecture only", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Architectures: []specs.Arch{specs.ArchS390X}}, true},
	} {
		for _, ag := range agents {
			agent := ag.profile
			t.Run(ag.name+"/"+tc.name, func(t *testing.T) {
				merged, err := Intersect(agent, tc.bundle)
				if tc.wantErr {
					if !errors.Is(err, ErrUnmergeable) {
						t.Fatalf("Intersect: %v, want %v", err, ErrUnmergeable)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := Check(merged); err != nil {
					t.Fatalf("merged profile does not load: %v", err)
				}
				args := map[string][][]uint64{
					"socket":      {{1}, {2}, {10}, {16}, {38}, {39}, {40}, {41}, {1<<32 | 2}, {1<<32 | 1}},
					"socketpair":  {{1}, {2}},
					"personality": {{0}, {1}, {8}, {0x20000}, {0xffffffff}},
					"ioctl":       {{0, 0x5412}, {0, 0x5413}, {0, 1<<32 | 0x5412}},
					"clone":       {{0}, {0x10000000}, {0x00020000}, {0x01200011}},
				}
				names := []string{"getpid", "read", "mkdir", "mkdirat", "chmod", "fchmodat", "socket", "socketpair",
					"personality", "ioctl", "clone", "clone3", "ptrace", "mount", "unshare", "bpf", "io_uring_setup", "keyctl"}
				eachSample(t, agent, tc.bundle, merged, names, args, func(name string, av []uint64, m, a, b uint32) {
					got := m
					if ag.notifies {
						got = normVerdict(m) // the monitor answers EPERM
					}
					if want := stricter(a, b); got != want {
						t.Errorf("%s%#x: merged %#x, want %#x (agent %#x, bundle %#x)", name, av, m, want, a, b)
					}
				})
			})
		}
	}
}

// stricter is the verdict of two stacked filters: the action of higher
// precedence (the least as a signed number), a refusal's errno with it.
// A seccomp agent's or a tracer's refusal, which the merged profile cannot
// keep, counts as EPERM; a logged call as an allowed one.
func stricter(a, b uint32) uint32 {
	a, b = normVerdict(a), normVerdict(b)
	if int32(b&0xffff0000) < int32(a&0xffff0000) {
		return b
	}
	return a
}

// normVerdict is a verdict as the merged profile can keep it.
func normVerdict(v uint32) uint32 {
	switch v & 0xffff0000 {
	case 0x7fc00000, 0x7ff00000: // SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE
		return 0x00050000 | 1
	case 0x7ffc0000: // SECCOMP_RET_LOG
		return 0x7fff0000
	}
	return v
}

// FuzzIntersect builds bundle profiles from the input and checks, for the
// agent profile alone and as the OCI runtime asks for it, that
// Intersect either says it cannot merge them or returns a profile that
// loads and, run in a BPF VM, refuses every sampled call that the agent
// profile or the bundle's refuses. (How: a call outside the arguments a
// rule allows gets the agent's refusal, where the bundle's might have
// killed; TestIntersect checks the exact verdicts on real profiles.)
func FuzzIntersect(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 0, 0})
	f.Add([]byte{1, 6, 0, 1, 1, 3, 2, 5, 2, 0, 0, 4, 1})
	f.Add([]byte{2, 4, 3, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	native := platforms[runtime.GOARCH].arch
	if native == "" {
		f.Skipf("no agent profile for %s", runtime.GOARCH)
	}
	// the agent profile alone, and as the OCI runtime asks for it
	agents := []*specs.LinuxSeccomp{
		mustProfile(f, Options{KernelVersion: "6.18.0"}),
		mustProfile(f, Options{KernelVersion: "6.18.0", AllowSocketpair: true, Notify: true}),
	}
	names := []string{"getpid", "mkdirat", "socket", "personality", "ioctl", "clone", "read", "fchmodat"}
	actions := []specs.LinuxSeccompAction{specs.ActAllow, specs.ActErrno, specs.ActKillProcess, specs.ActLog, specs.ActTrap, specs.ActNotify}
	ops := []specs.LinuxSeccompOperator{specs.OpEqualTo, specs.OpNotEqual, specs.OpLessThan, specs.OpLessEqual, specs.OpGreaterThan, specs.OpGreaterEqual, specs.OpMaskedEqual}
	values := []uint64{0, 1, 2, 8, 10, 16, 38, 40, 0x5412, 0xffffffff, 1<<32 | 2}
	samples := map[string][][]uint64{
		"socket":      {{1}, {2}, {10}, {16}, {40}, {1<<32 | 2}},
		"personality": {{0}, {8}, {1}},
		"ioctl":       {{0, 0x5412}, {0, 1}},
		"clone":       {{0}, {0x10000000}},
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		next := func() int {
			if len(in) == 0 {
				return 0
			}
			b := int(in[0])
			in = in[1:]
			return b
		}
		bundle := &specs.LinuxSeccomp{DefaultAction: actions[next()%3]}
		for n := next() % 6; n > 0; n-- {
			r := specs.LinuxSyscall{Names: []string{names[next()%len(names)]}, Action: actions[next()%len(actions)]}
			if r.Action == specs.ActErrno {
				e := uint(next()%3 + 1)
				r.ErrnoRet = &e
			}
			for range next() % 4 { // none to three conditions
				r.Args = append(r.Args, specs.LinuxSeccompArg{Index: uint(next() % 2), Value: values[next()%len(values)], ValueTwo: values[next()%len(values)], Op: ops[next()%len(ops)]})
			}
			bundle.Syscalls = append(bundle.Syscalls, r)
		}
		if Check(bundle) != nil {
			t.Skip("the bundle's profile does not load by itself")
		}
		for _, agent := range agents {
			merged, err := Intersect(agent, bundle)
			if err != nil {
				if !errors.Is(err, ErrUnmergeable) {
					t.Fatalf("Intersect: %v", err)
				}
				continue
			}
			if err := Check(merged); err != nil {
				t.Fatalf("merged profile does not load: %v\nbundle: %+v", err, bundle)
			}
			eachSample(t, agent, bundle, merged, names, samples, func(name string, av []uint64, m, a, b uint32) {
				if want := stricter(a, b); normVerdict(m) == retAllow && want != retAllow {
					t.Fatalf("%s%#x: merged allows, stacked %#x\nbundle: %+v", name, av, want, bundle)
				}
			})
		}
	})
}

// eachSample runs the agent's, the bundle's and the merged filters, for
// the native architecture, on each named system call with each argument
// list samples holds for it ({0} for a call it does not name), and hands
// f the three verdicts. A name the architecture lacks is left out.
func eachSample(t *testing.T, agent, bundle, merged *specs.LinuxSeccomp, names []string, samples map[string][][]uint64, f func(name string, args []uint64, merged, agent, bundle uint32)) {
	t.Helper()
	a, b, m := newFilterVM(t, agent), newFilterVM(t, bundle), newFilterVM(t, merged)
	abi := abis[platforms[runtime.GOARCH].arch]
	for _, name := range names {
		n, ok := nr(t, abi, name)
		if !ok {
			continue
		}
		list := samples[name]
		if list == nil {
			list = [][]uint64{{0}}
		}
		for _, av := range list {
			f(name, av, m.eval(abi, n, av...), a.eval(abi, n, av...), b.eval(abi, n, av...))
		}
	}
}
