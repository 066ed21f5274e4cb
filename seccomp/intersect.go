package seccomp

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// ErrUnmergeable is returned by Intersect when the two profiles restrict
// a system call's arguments in ways one filter cannot hold together.
var ErrUnmergeable = errors.New("cannot apply both seccomp profiles in one filter")

// Intersect returns a profile that allows a system call only where both
// agent and bundle allow it: an OCI bundle's own profile kept under
// cordon's agent profile, which libcontainer installs alone. agent is a
// profile of this package, refusing by default, whose notify rules are
// refusals too (Options.Notify: the supervisor answers EPERM); bundle is
// anyone's. Intersect reads only agent's allow rules and leaves its
// other rules where they stand, so a profile made with NotifyWrites or
// NotifyReads, whose supervisor lets a notified call continue, must not
// be merged: a write it continued could be one bundle refuses.
//
// Each system call agent allows is looked up in bundle:
//   - allowed outright there: agent's rules stand;
//   - refused outright (by a rule or by bundle's default action): agent's
//     rules for it are dropped, and bundle's action (its errno, a kill)
//     is kept unless it is the merged default already;
//   - allowed for some argument values: agent's rules stand when what
//     they allow lies inside what bundle allows; bundle's rules replace
//     them when bundle's lie inside agent's (or agent allowed it
//     outright); otherwise ErrUnmergeable, and nothing runs.
//
// A call outside the arguments the kept rules allow gets agent's default
// refusal, even where bundle's default would have killed. Only
// architectures both admit are kept. bundle's flags, listener and
// notify rules (a seccomp agent of the bundle's) are not kept: a call
// bundle would have handed its agent is refused.
func Intersect(agent, bundle *specs.LinuxSeccomp) (*specs.LinuxSeccomp, error) {
	if allowing(agent.DefaultAction) {
		return nil, fmt.Errorf("%w: the agent profile allows by default", ErrUnmergeable)
	}
	out := *agent
	out.Syscalls = slices.Clone(agent.Syscalls)
	for i := range out.Syscalls {
		out.Syscalls[i].Names = slices.Clone(out.Syscalls[i].Names)
	}
	out.Architectures = intersectArches(agent.Architectures, bundle.Architectures)
	if len(out.Architectures) == 0 && len(agent.Architectures) > 0 {
		return nil, fmt.Errorf("%w: no architecture is in both (%v and %v)", ErrUnmergeable, agent.Architectures, bundle.Architectures)
	}

	var allowed []string
	for _, r := range agent.Syscalls {
		if allowing(r.Action) {
			for _, n := range r.Names {
				if !slices.Contains(allowed, n) {
					allowed = append(allowed, n)
				}
			}
		}
	}
	for _, name := range allowed {
		mine := rulesNaming(agent.Syscalls, name, allowing)
		v, err := verdictFor(bundle, name)
		if err != nil {
			return nil, err
		}
		switch v.kind {
		case allowedAll:
			continue
		case refusedAll:
			out.Syscalls = without(out.Syscalls, name, func(specs.LinuxSyscall) bool { return true })
			if v.action != agent.DefaultAction || v.action == specs.ActErrno && errnoOf(v.errno) != errnoOf(agent.DefaultErrnoRet) {
				out.Syscalls = append(out.Syscalls, specs.LinuxSyscall{Names: []string{name}, Action: v.action, ErrnoRet: v.errno})
			}
		case allowedIf:
			outright := slices.ContainsFunc(mine, func(r specs.LinuxSyscall) bool { return len(r.Args) == 0 })
			switch {
			case !outright && inside(mine, v.rules):
				// agent's are the narrower: they stand
			case outright || inside(v.rules, mine):
				out.Syscalls = without(out.Syscalls, name, func(r specs.LinuxSyscall) bool { return allowing(r.Action) })
				for _, r := range v.rules {
					out.Syscalls = append(out.Syscalls, specs.LinuxSyscall{Names: []string{name}, Action: specs.ActAllow, Args: r.Args})
				}
			default:
				return nil, fmt.Errorf("%w: the bundle's profile and the agent profile allow different arguments of %s", ErrUnmergeable, name)
			}
		case refusedIf:
			if !untouched(mine, v.rules) {
				return nil, fmt.Errorf("%w: the bundle's profile refuses arguments of %s that the agent profile allows", ErrUnmergeable, name)
			}
		}
	}
	return &out, nil
}

// allowing reports whether a lets the call through (a logged call runs).
func allowing(a specs.LinuxSeccompAction) bool {
	return a == specs.ActAllow || a == specs.ActLog
}

// severity orders refusals, as the kernel orders the actions of stacked
// filters: a call both refuse gets the stronger.
func severity(a specs.LinuxSeccompAction) int {
	switch a {
	case specs.ActKillProcess:
		return 6
	case specs.ActKill, specs.ActKillThread:
		return 5
	case specs.ActTrap:
		return 4
	case specs.ActErrno:
		return 3
	case specs.ActNotify:
		return 2
	case specs.ActTrace:
		return 1
	}
	return 0
}

func errnoOf(p *uint) uint {
	if p == nil {
		return 1 // EPERM, libcontainer's default
	}
	return *p
}

type verdictKind int

const (
	allowedAll verdictKind = iota
	refusedAll
	allowedIf // allowed where one of rules holds
	refusedIf // allowed except where one of rules holds
)

type verdict struct {
	kind   verdictKind
	action specs.LinuxSeccompAction // refusedAll: how
	errno  *uint
	rules  []specs.LinuxSyscall
}

// verdictFor says what p does with the system call name.
func verdictFor(p *specs.LinuxSeccomp, name string) (verdict, error) {
	rules := rulesNaming(p.Syscalls, name, func(specs.LinuxSeccompAction) bool { return true })
	var plain, cond []specs.LinuxSyscall
	for _, r := range rules {
		if r.Action == p.DefaultAction && (r.Action != specs.ActErrno || errnoOf(r.ErrnoRet) == errnoOf(p.DefaultErrnoRet)) {
			continue // libcontainer skips a rule that does what the default does
		}
		if len(r.Args) == 0 {
			plain = append(plain, r)
		} else {
			cond = append(cond, r)
		}
	}
	// The strongest unconditional refusal decides, even next to an
	// unconditional allow: which one a filter keeps is libseccomp's
	// choice, and the stricter reading is the safe one.
	strongest := func(rs []specs.LinuxSyscall) (verdict, bool) {
		var v verdict
		for _, r := range rs {
			if !allowing(r.Action) && severity(r.Action) > severity(v.action) {
				v = verdict{kind: refusedAll, action: r.Action, errno: r.ErrnoRet}
			}
		}
		return v, v.kind == refusedAll
	}
	if v, ok := strongest(plain); ok {
		return normalise(v), nil
	}
	if len(cond) == 0 {
		if len(plain) > 0 || allowing(p.DefaultAction) {
			return verdict{kind: allowedAll}, nil
		}
		return normalise(verdict{kind: refusedAll, action: p.DefaultAction, errno: p.DefaultErrnoRet}), nil
	}
	allows := slices.ContainsFunc(cond, func(r specs.LinuxSyscall) bool { return allowing(r.Action) })
	refuses := slices.ContainsFunc(cond, func(r specs.LinuxSyscall) bool { return !allowing(r.Action) })
	switch {
	case allows && !refuses && len(plain) == 0 && !allowing(p.DefaultAction):
		return verdict{kind: allowedIf, rules: cond}, nil
	case allows && !refuses:
		return verdict{kind: allowedAll}, nil // allowed outright anyway
	case refuses && !allows && (len(plain) > 0 || allowing(p.DefaultAction)):
		return verdict{kind: refusedIf, rules: cond}, nil
	case !allows:
		return verdict{}, fmt.Errorf("%w: the bundle's profile refuses %s by default, and some of its arguments with another action", ErrUnmergeable, name)
	}
	return verdict{}, fmt.Errorf("%w: the bundle's profile both allows and refuses arguments of %s", ErrUnmergeable, name)
}

// normalise turns a refusal the merged profile cannot keep as such (a
// seccomp agent's or a tracer's, neither of which is there) into plain
// EPERM.
func normalise(v verdict) verdict {
	if v.action == specs.ActNotify || v.action == specs.ActTrace {
		v.action, v.errno = specs.ActErrno, nil
	}
	return v
}

// rulesNaming returns the rules of rs naming name whose action keep accepts.
func rulesNaming(rs []specs.LinuxSyscall, name string, keep func(specs.LinuxSeccompAction) bool) []specs.LinuxSyscall {
	var out []specs.LinuxSyscall
	for _, r := range rs {
		if keep(r.Action) && slices.Contains(r.Names, name) {
			out = append(out, r)
		}
	}
	return out
}

// without removes name from the rules drop accepts (and a rule left with
// no name).
func without(rs []specs.LinuxSyscall, name string, drop func(specs.LinuxSyscall) bool) []specs.LinuxSyscall {
	out := rs[:0]
	for _, r := range rs {
		if drop(r) {
			r.Names = slices.DeleteFunc(r.Names, func(n string) bool { return n == name })
		}
		if len(r.Names) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// intersectArches keeps agent's architectures that bundle admits; a
// profile naming none admits the native one only.
func intersectArches(agent, bundle []specs.Arch) []specs.Arch {
	if len(bundle) == 0 {
		if p, ok := platforms[runtime.GOARCH]; ok {
			bundle = []specs.Arch{p.arch}
		}
	}
	return slices.DeleteFunc(slices.Clone(agent), func(a specs.Arch) bool { return !slices.Contains(bundle, a) })
}

// inside reports whether every call one of rs allows is allowed by one of
// in (both lists of conditional allow rules; false when it cannot tell).
func inside(rs, in []specs.LinuxSyscall) bool {
	for _, r := range rs {
		if !slices.ContainsFunc(in, func(q specs.LinuxSyscall) bool { return slices.Equal(r.Args, q.Args) }) && !covered(r.Args, in) {
			return false
		}
	}
	return true
}

// covered reports whether the calls args admit are all admitted by one of
// rules, when every rule holds one condition on the same argument.
func covered(args []specs.LinuxSeccompArg, rules []specs.LinuxSyscall) bool {
	index, ok := singleIndex(rules)
	if !ok {
		return false
	}
	mine := valuesOf(args, index)
	var union []valueSet
	for _, r := range rules {
		union = append(union, setOf(r.Args[0]))
	}
	// mine lies inside the union when nothing of mine is left in the gaps
	// between the union's intervals; a masked set of the union counts
	// only when it holds all of mine by itself.
	for _, s := range union {
		if s.masked && mine.within(s) {
			return true
		}
	}
	var spans []span
	for _, s := range union {
		if !s.masked {
			spans = append(spans, s.spans...)
		}
	}
	for _, g := range gaps(spans) {
		if mine.meets(g) {
			return false
		}
	}
	return true
}

// untouched reports whether none of the calls rs allow is one refusals
// (each one condition on the same argument) refuse.
func untouched(rs, refusals []specs.LinuxSyscall) bool {
	index, ok := singleIndex(refusals)
	if !ok {
		return false
	}
	for _, r := range rs {
		mine := valuesOf(r.Args, index)
		for _, q := range refusals {
			if mine.meetsSet(setOf(q.Args[0])) {
				return false
			}
		}
	}
	return true
}

// singleIndex returns the argument every rule's one condition is on.
func singleIndex(rules []specs.LinuxSyscall) (uint, bool) {
	if len(rules) == 0 || len(rules[0].Args) != 1 {
		return 0, false
	}
	index := rules[0].Args[0].Index
	for _, r := range rules {
		if len(r.Args) != 1 || r.Args[0].Index != index {
			return 0, false
		}
	}
	return index, true
}

// valuesOf is the set of values argument index may take under args, or
// every value: when args say nothing of it, and when two of them are on
// one argument (this one or another), which libcontainer loads as one
// rule per condition, each allowing what its own condition admits. It
// never holds less than the rule allows: it is what the callers ask to
// be inside something else.
func valuesOf(args []specs.LinuxSeccompArg, index uint) valueSet {
	every := valueSet{spans: []span{{0, math.MaxUint64}}}
	var found []specs.LinuxSeccompArg
	for i, a := range args {
		if slices.ContainsFunc(args[i+1:], func(b specs.LinuxSeccompArg) bool { return b.Index == a.Index }) {
			return every
		}
		if a.Index == index {
			found = append(found, a)
		}
	}
	if len(found) == 1 {
		return setOf(found[0])
	}
	return every
}

// span is the values lo..hi, both included.
type span struct{ lo, hi uint64 }

// valueSet is a set of 64-bit argument values: either the values x with
// x&mask == value, or a union of spans.
type valueSet struct {
	masked      bool
	mask, value uint64
	spans       []span
}

// setOf is the set of values a condition admits. libseccomp compares all
// 64 bits.
func setOf(a specs.LinuxSeccompArg) valueSet {
	v := a.Value
	switch a.Op {
	case specs.OpEqualTo:
		return valueSet{spans: []span{{v, v}}}
	case specs.OpNotEqual:
		var s []span
		if v > 0 {
			s = append(s, span{0, v - 1})
		}
		if v < math.MaxUint64 {
			s = append(s, span{v + 1, math.MaxUint64})
		}
		return valueSet{spans: s}
	case specs.OpLessThan:
		if v == 0 {
			return valueSet{}
		}
		return valueSet{spans: []span{{0, v - 1}}}
	case specs.OpLessEqual:
		return valueSet{spans: []span{{0, v}}}
	case specs.OpGreaterThan:
		if v == math.MaxUint64 {
			return valueSet{}
		}
		return valueSet{spans: []span{{v + 1, math.MaxUint64}}}
	case specs.OpGreaterEqual:
		return valueSet{spans: []span{{v, math.MaxUint64}}}
	case specs.OpMaskedEqual:
		// libseccomp masks the datum too: bits of it outside the mask
		// do not make the set empty, they are ignored
		return valueSet{masked: true, mask: a.Value, value: a.ValueTwo & a.Value}
	}
	return valueSet{spans: []span{{0, math.MaxUint64}}} // unknown: assume any
}

// gaps returns the values no span holds.
func gaps(spans []span) []span {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b span) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	var out []span
	next, done := uint64(0), false // next: the lowest value not yet held
	for _, s := range spans {
		if done {
			break
		}
		if s.lo > next {
			out = append(out, span{next, s.lo - 1})
		}
		if s.hi >= next {
			if s.hi == math.MaxUint64 {
				done = true
			}
			next = s.hi + 1
		}
	}
	if !done {
		out = append(out, span{next, math.MaxUint64})
	}
	return out
}

// meets reports whether s holds a value in g.
func (s valueSet) meets(g span) bool {
	if s.masked {
		x, ok := leastMasked(g.lo, s.mask, s.value)
		return ok && x <= g.hi
	}
	for _, t := range s.spans {
		if t.lo <= g.hi && g.lo <= t.hi {
			return true
		}
	}
	return false
}

// meetsSet reports whether s and t share a value.
func (s valueSet) meetsSet(t valueSet) bool {
	switch {
	case s.masked && t.masked:
		return (s.value^t.value)&s.mask&t.mask == 0
	case t.masked:
		return t.meetsSet(s)
	}
	for _, g := range t.spans {
		if s.meets(g) {
			return true
		}
	}
	return false
}

// within reports whether every value of s is in the masked set t.
func (s valueSet) within(t valueSet) bool {
	if s.masked {
		// t's bits are fixed in s to the same values
		return t.mask&^s.mask == 0 && s.value&t.mask == t.value
	}
	for _, sp := range s.spans {
		if sp.lo != sp.hi || sp.lo&t.mask != t.value {
			return false // a span of more than one value: not worked out
		}
	}
	return true
}

// leastMasked returns the least x >= lo with x&mask == value.
func leastMasked(lo, mask, value uint64) (uint64, bool) {
	if value&^mask != 0 {
		return 0, false
	}
	var x uint64   // the bits chosen so far, from the top
	var alt uint64 // the least choice found above lo, if any
	haveAlt := false
	for b := 63; b >= 0; b-- {
		bit := uint64(1) << b
		want := lo & bit
		if mask&bit != 0 {
			got := value & bit
			switch {
			case got > want: // above lo from here: the rest as low as they go
				return x | got | value&(bit-1), true
			case got < want:
				return alt, haveAlt
			}
			x |= got
			continue
		}
		if want == 0 {
			// setting this free bit instead would put x above lo
			alt, haveAlt = x|bit|value&(bit-1), true
		}
		x |= want
	}
	return x, true // x == lo
}
