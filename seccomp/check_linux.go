//go:build linux && cgo

package seccomp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// bpfMaxInsns is the kernel's limit on a classic BPF program (BPF_MAXINSNS).
const bpfMaxInsns = 4096

// Check compiles p with libseccomp the way runc's libcontainer does before
// loading it, and generates the BPF program with libcontainer's ENOSYS
// stub (see Compile), but loads nothing. It reports what would make the
// sandbox fail to start: an unknown action, operator, flag or
// architecture, a rule libseccomp rejects, a program longer than the
// kernel takes. Like libcontainer, it ignores system calls libseccomp does
// not know and rules whose action is the default action.
func Check(p *specs.LinuxSeccomp) error {
	_, err := build(p)
	return err
}

// build compiles p into the program libcontainer would load: libseccomp's
// program behind the ENOSYS stub, and the flags it would pass to
// seccomp(2). It refuses a program longer than the kernel takes.
func build(p *specs.LinuxSeccomp) (Program, error) {
	// SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV is a flag of seccomp(2), not
	// of the program, which libseccomp before 2.6 (Debian 12's 2.5.4)
	// refuses to carry: it is passed on here instead.
	waitKill := p != nil && slices.Contains(p.Flags, specs.LinuxSeccompFlagWaitKillableRecv)
	if waitKill {
		q := *p
		q.Flags = slices.DeleteFunc(slices.Clone(p.Flags), func(f specs.LinuxSeccompFlag) bool {
			return f == specs.LinuxSeccompFlagWaitKillableRecv
		})
		p = &q
	}
	f, err := compile(p)
	if err != nil {
		return Program{}, err
	}
	defer f.Release()
	filter, err := exportBPF(f)
	if err != nil {
		return Program{}, err
	}
	flags, err := filterFlags(p, f)
	if err != nil {
		return Program{}, fmt.Errorf("compile seccomp profile: %w", err)
	}
	if waitKill {
		if flags&unix.SECCOMP_FILTER_FLAG_NEW_LISTENER == 0 {
			return Program{}, fmt.Errorf("compile seccomp profile: %s without a notifying rule: %w", specs.LinuxSeccompFlagWaitKillableRecv, errors.ErrUnsupported)
		}
		flags |= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	}
	stub, err := enosysStub(p)
	if err != nil {
		return Program{}, fmt.Errorf("compile seccomp profile: ENOSYS stub: %w", err)
	}
	prog := appendSockFilters(make([]byte, 0, 8*len(stub)+len(filter)), stub)
	prog = append(prog, filter...)
	if n := len(prog) / 8; n > bpfMaxInsns {
		return Program{}, fmt.Errorf("seccomp filter has %d instructions, more than the kernel's %d", n, bpfMaxInsns)
	}
	return Program{Filter: prog, Flags: flags}, nil
}

// appendSockFilters appends insns to b as struct sock_filter[] in native
// byte order: u16 code, u8 jt, u8 jf, u32 k.
func appendSockFilters(b []byte, insns []bpf.RawInstruction) []byte {
	for _, insn := range insns {
		b = binary.NativeEndian.AppendUint16(b, insn.Op)
		b = append(b, insn.Jt, insn.Jf)
		b = binary.NativeEndian.AppendUint32(b, insn.K)
	}
	return b
}

// filterFlags returns the SECCOMP_FILTER_FLAG_* bits libcontainer passes
// to seccomp(2) with f's program (patchbpf's filterFlags): the attributes
// set on f, each read where libseccomp's API level has it, and
// NEW_LISTENER when a rule notifies.
func filterFlags(p *specs.LinuxSeccomp, f *libseccomp.ScmpFilter) (uint, error) {
	// before libseccomp 2.4 there is no API level: level 0
	api, _ := libseccomp.GetAPI()
	var flags uint
	attrs := []struct {
		level uint
		get   func() (bool, error)
		flag  uint
	}{
		{3, f.GetLogBit, unix.SECCOMP_FILTER_FLAG_LOG},
		{4, f.GetSSB, unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW},
		{7, f.GetWaitKill, unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV},
	}
	for _, attr := range attrs {
		if api < attr.level {
			continue
		}
		set, err := attr.get()
		if err != nil {
			return 0, fmt.Errorf("read filter flag %#x: %w", attr.flag, err)
		}
		if set {
			flags |= attr.flag
		}
	}
	for _, call := range p.Syscalls {
		if call.Action == specs.ActNotify {
			flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
			break
		}
	}
	return flags, nil
}

// compile builds the libseccomp filter for p as libcontainer's
// specconv.SetupSeccomp and seccomp.InitSeccomp (runc v1.5) do: one rule
// per system call name, in order; rules equal to the default action
// skipped; conditions sharing an argument index added as separate rules;
// SPEC_ALLOW when the profile has no flags list; the no_new_privs bit left
// to the caller. The caller releases the filter.
func compile(p *specs.LinuxSeccomp) (*libseccomp.ScmpFilter, error) {
	if p == nil {
		return nil, errors.New("compile seccomp profile: no profile")
	}
	def, err := scmpAction(p.DefaultAction, p.DefaultErrnoRet)
	if err != nil {
		return nil, fmt.Errorf("compile seccomp profile: default action: %w", err)
	}
	f, err := libseccomp.NewFilter(def)
	if err != nil {
		return nil, fmt.Errorf("compile seccomp profile: %w", err)
	}
	if err := addToFilter(f, p, def); err != nil {
		f.Release()
		return nil, fmt.Errorf("compile seccomp profile: %w", err)
	}
	return f, nil
}

// addToFilter adds p's architectures, flags and rules to f.
func addToFilter(f *libseccomp.ScmpFilter, p *specs.LinuxSeccomp, def libseccomp.ScmpAction) error {
	for _, a := range p.Architectures {
		name, ok := archNames[a]
		if !ok {
			return fmt.Errorf("unknown architecture %q", a)
		}
		arch, err := libseccomp.GetArchFromString(name)
		if err != nil {
			return fmt.Errorf("architecture %s: %w", a, err)
		}
		if err := f.AddArch(arch); err != nil {
			return fmt.Errorf("add architecture %s: %w", a, err)
		}
	}
	for _, flag := range p.Flags {
		if err := setFlag(f, flag); err != nil {
			return err
		}
	}
	if p.Flags == nil {
		// runc's specconv.SetupSeccomp: a profile without a flags list,
		// not even an empty one, gets SPEC_ALLOW where libseccomp has it
		var old *libseccomp.VersionError
		if err := f.SetSSB(true); err != nil && !errors.As(err, &old) {
			return fmt.Errorf("flag %s: %w", specs.LinuxSeccompFlagSpecAllow, err)
		}
	}
	rules := 0
	for _, call := range p.Syscalls {
		rules += len(call.Names)
	}
	// libcontainer asks for the binary tree above 32 rules; libseccomp
	// versions without it are not an error
	if rules > 32 {
		_ = f.SetOptimize(2)
	}
	if err := f.SetNoNewPrivsBit(false); err != nil {
		return fmt.Errorf("clear no_new_privs attribute: %w", err)
	}
	for i, call := range p.Syscalls {
		act, err := scmpAction(call.Action, call.ErrnoRet)
		if err != nil {
			return fmt.Errorf("syscalls[%d]: %w", i, err)
		}
		conds, separate, err := conditions(call.Args)
		if err != nil {
			return fmt.Errorf("syscalls[%d]: %w", i, err)
		}
		if act == def {
			continue
		}
		for _, name := range call.Names {
			nr, err := libseccomp.GetSyscallFromName(name)
			if err != nil {
				continue // unknown to this libseccomp, as libcontainer does
			}
			if err := addRule(f, nr, act, conds, separate); err != nil {
				return fmt.Errorf("syscalls[%d] %s: %w", i, name, err)
			}
		}
	}
	return nil
}

// addRule adds one rule; with separate, each condition becomes its own
// rule, libcontainer's behaviour when two conditions test the same
// argument.
func addRule(f *libseccomp.ScmpFilter, nr libseccomp.ScmpSyscall, act libseccomp.ScmpAction, conds []libseccomp.ScmpCondition, separate bool) error {
	switch {
	case len(conds) == 0:
		return f.AddRule(nr, act)
	case separate:
		for _, c := range conds {
			if err := f.AddRuleConditional(nr, act, []libseccomp.ScmpCondition{c}); err != nil {
				return err
			}
		}
		return nil
	default:
		return f.AddRuleConditional(nr, act, conds)
	}
}

// conditions converts args; separate reports two of them on one index.
func conditions(args []specs.LinuxSeccompArg) (conds []libseccomp.ScmpCondition, separate bool, err error) {
	var seen [6]bool
	for _, a := range args {
		op, ok := operators[a.Op]
		if !ok {
			return nil, false, fmt.Errorf("unknown operator %q", a.Op)
		}
		if a.Index >= uint(len(seen)) {
			return nil, false, fmt.Errorf("argument index %d out of range", a.Index)
		}
		separate = separate || seen[a.Index]
		seen[a.Index] = true
		c, err := libseccomp.MakeCondition(a.Index, op, a.Value, a.ValueTwo)
		if err != nil {
			return nil, false, fmt.Errorf("condition on argument %d: %w", a.Index, err)
		}
		conds = append(conds, c)
	}
	return conds, separate, nil
}

// scmpAction converts an OCI action; errno-returning actions without an
// errnoRet return EPERM, as in libcontainer.
func scmpAction(a specs.LinuxSeccompAction, errnoRet *uint) (libseccomp.ScmpAction, error) {
	ret := int16(1) // EPERM
	if errnoRet != nil {
		ret = int16(*errnoRet)
	}
	switch a {
	case specs.ActKill, specs.ActKillThread:
		return libseccomp.ActKillThread, nil
	case specs.ActKillProcess:
		return libseccomp.ActKillProcess, nil
	case specs.ActErrno:
		return libseccomp.ActErrno.SetReturnCode(ret), nil
	case specs.ActTrace:
		return libseccomp.ActTrace.SetReturnCode(ret), nil
	case specs.ActTrap:
		return libseccomp.ActTrap, nil
	case specs.ActAllow:
		return libseccomp.ActAllow, nil
	case specs.ActLog:
		return libseccomp.ActLog, nil
	case specs.ActNotify:
		return libseccomp.ActNotify, nil
	}
	return libseccomp.ActInvalid, fmt.Errorf("unknown action %q", a)
}

// setFlag applies a filter flag as libcontainer does.
func setFlag(f *libseccomp.ScmpFilter, flag specs.LinuxSeccompFlag) error {
	var err error
	switch flag {
	case "SECCOMP_FILTER_FLAG_TSYNC":
		return nil // libseccomp-golang always synchronises threads
	case specs.LinuxSeccompFlagLog:
		err = f.SetLogBit(true)
	case specs.LinuxSeccompFlagSpecAllow:
		err = f.SetSSB(true)
	case specs.LinuxSeccompFlagWaitKillableRecv:
		err = f.SetWaitKill(true)
	default:
		return fmt.Errorf("unknown flag %q", flag)
	}
	if err != nil {
		return fmt.Errorf("flag %s: %w", flag, err)
	}
	return nil
}

// operators are the OCI comparison operators libcontainer accepts.
var operators = map[specs.LinuxSeccompOperator]libseccomp.ScmpCompareOp{
	specs.OpNotEqual:     libseccomp.CompareNotEqual,
	specs.OpLessThan:     libseccomp.CompareLess,
	specs.OpLessEqual:    libseccomp.CompareLessOrEqual,
	specs.OpEqualTo:      libseccomp.CompareEqual,
	specs.OpGreaterEqual: libseccomp.CompareGreaterEqual,
	specs.OpGreaterThan:  libseccomp.CompareGreater,
	specs.OpMaskedEqual:  libseccomp.CompareMaskedEqual,
}

// archNames maps OCI architectures to libseccomp's names, as libcontainer
// does.
var archNames = map[specs.Arch]string{
	specs.ArchX86:         "x86",
	specs.ArchX86_64:      "amd64",
	specs.ArchX32:         "x32",
	specs.ArchARM:         "arm",
	specs.ArchAARCH64:     "arm64",
	specs.ArchMIPS:        "mips",
	specs.ArchMIPS64:      "mips64",
	specs.ArchMIPS64N32:   "mips64n32",
	specs.ArchMIPSEL:      "mipsel",
	specs.ArchMIPSEL64:    "mipsel64",
	specs.ArchMIPSEL64N32: "mipsel64n32",
	specs.ArchPPC:         "ppc",
	specs.ArchPPC64:       "ppc64",
	specs.ArchPPC64LE:     "ppc64le",
	specs.ArchRISCV64:     "riscv64",
	specs.ArchS390:        "s390",
	specs.ArchS390X:       "s390x",
	specs.ArchLOONGARCH64: "loong64",
}

// exportBPF returns f's program as the kernel would receive it.
func exportBPF(f *libseccomp.ScmpFilter) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("export seccomp filter: %w", err)
	}
	defer r.Close()
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&buf, r)
		done <- err
	}()
	err = f.ExportBPF(w)
	w.Close()
	if copyErr := <-done; err == nil {
		err = copyErr
	}
	if err != nil {
		return nil, fmt.Errorf("export seccomp filter: %w", err)
	}
	return buf.Bytes(), nil
}
