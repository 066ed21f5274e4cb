// Package seccomp decides which system calls a sandboxed command may make.
//
// The profile is Docker's maintained default (github.com/moby/profiles/seccomp),
// resolved for a process with no capabilities, then tightened for coding
// agents: sockets only for IPv4, IPv6 and netlink (no AF_UNIX, no AF_VSOCK),
// no io_uring, no access to other processes' memory, no kernel keyrings, no
// BPF or perf, no namespace or mount changes, no file handles, and no
// terminal input injection (TIOCSTI, TIOCLINUX). Whatever the profile does
// not allow fails with EPERM; nothing is killed, except system calls from an
// ABI the profile does not cover at all (see Profile).
//
// Profile builds the value on every OS, so that compiled OCI specs can be
// golden-tested anywhere; Check compiles it with libseccomp the way runc's
// libcontainer does when it loads it.
package seccomp

import (
	"bytes"
	_ "embed" // the copy of moby's default profile
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	moby "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// mobyDefault is default.json of github.com/moby/profiles/seccomp v0.2.3,
// copied unmodified (go:embed cannot reach into another module).
// TestEmbeddedIsMobyDefault fails when it drifts from the version in go.mod.
//
//go:embed moby_default.json
var mobyDefault []byte

// Options says what the profile is resolved for.
type Options struct {
	// Arch is the GOARCH of the machine the sandbox runs on: "amd64",
	// "arm64" or "riscv64". Empty means runtime.GOARCH.
	Arch string
	// KernelVersion is the target kernel's release as uname -r prints it
	// ("6.18.44"); rules with a minimum kernel compare against its first two
	// numbers. Empty means newer than every rule's minimum.
	KernelVersion string
	// AllowSocketpair lets the command create connected AF_UNIX pairs with
	// socketpair(2), of type SOCK_STREAM or SOCK_SEQPACKET. Such a pair
	// reaches nothing outside the sandbox, but common runtimes need it:
	// Node's child_process pipes and Python's asyncio are built on
	// socketpair. A SOCK_DGRAM pair is refused: it can send to any unix
	// datagram socket by path. socket(AF_UNIX) stays refused either way.
	AllowSocketpair bool
	// Notify makes the refusals cordon records (the refused system calls
	// and AF_UNIX sockets) SCMP_ACT_NOTIFY: a supervisor on the host gets
	// each one, records it and answers EPERM. Without a supervisor the
	// kernel answers ENOSYS; everything else stays EPERM as before.
	Notify bool
	// NotifyWrites makes the system calls that change the file system
	// by path (see Writes) SCMP_ACT_NOTIFY, so that a supervisor sees
	// each one and records those the sandbox's mounts refuse. The
	// supervisor lets every one of them continue: the kernel's mounts,
	// not the supervisor, decide. A profile with NotifyWrites must only
	// run with a supervisor: without one these calls fail with ENOSYS.
	NotifyWrites bool
	// NotifyReads makes every open(2)-like call notify as well, for a
	// supervisor recording reads of hidden paths. It implies NotifyWrites.
	NotifyReads bool
	// AllowUnixSockets lets the command create AF_UNIX sockets of every
	// type, and AF_VSOCK ones, as sandbox-runtime's allowAllUnixSockets
	// does: it can then reach every socket file it can see (the Docker
	// daemon's, an ssh-agent's, D-Bus).
	AllowUnixSockets bool
	// AllowUserNamespaces lets the command make namespaces of its own and
	// mount in them (sandbox-runtime's allowNestedUserNamespaces: a
	// browser's sandbox, a nested bubblewrap, rootless podman). The
	// sandbox's own mounts are locked in a namespace the command makes,
	// and Landlock and this profile stay on whatever it runs there.
	AllowUserNamespaces bool
	// Contained is the container mode's profile (no network namespace
	// around the command): sockets of AF_INET and AF_INET6 only of TCP
	// (Landlock's port rules, which only know TCP, decide where they
	// connect), so no UDP, no ICMP and no raw socket reaches the host's
	// network.
	Contained bool
	// NoTCP refuses AF_INET and AF_INET6 sockets altogether: a contained
	// command on a kernel whose Landlock has no TCP rules (ABI < 4).
	NoTCP bool
	// Guard makes the system calls that make a name (Creates) and open
	// and openat with write access, O_CREAT or O_TRUNC SCMP_ACT_NOTIFY,
	// for a supervisor that performs each on the process's behalf and
	// refuses the names the policy protects: it never lets one continue,
	// which would have the kernel read the path again, after the check,
	// from memory the process may have changed. openat2, whose flags lie
	// behind a pointer a filter cannot read, fails with ENOSYS, as on a
	// kernel before 5.6, so that callers fall back to openat; umask
	// notifies, for the supervisor to create with the process's. The
	// filter waits killably once the supervisor has received a
	// notification (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19):
	// a signal handler must not restart a call the supervisor has made
	// already. A profile with Guard must only run with a supervisor.
	Guard bool
}

// GuardKernel reports whether a kernel of the release (as uname -r prints
// it; "" for an unknown one, taken as new) runs a Guard profile: the
// supervisor installs descriptors in the process (SECCOMP_IOCTL_NOTIF_ADDFD,
// Linux 5.9), and the filter waits killably (Linux 5.19).
func GuardKernel(release string) bool {
	v, err := parseKernel(release)
	if err != nil {
		return false
	}
	return v == nil || v.Kernel > 5 || v.Kernel == 5 && v.Major >= 19
}

// Creates are the system calls Guard stops always: each makes a name (a
// file, directory, node, link) or moves one.
var Creates = []string{
	"creat", "mkdir", "mkdirat", "mknod", "mknodat", "link", "linkat", "symlink", "symlinkat",
	"rename", "renameat", "renameat2",
}

// Writes are the system calls NotifyWrites stops: those that change the
// file system at a path, and open(2)-like calls whose flags ask for
// writing, creating or truncating (reads pass untouched). System calls
// working on an open descriptor are left out: the descriptor was opened
// for writing, or the call fails on it for the reason it always would.
var Writes = []string{
	"creat", "openat2",
	"mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	"truncate", "chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "removexattr", "lremovexattr", "setxattrat", "removexattrat",
}

// openFlags are the system calls taking open(2) flags, by the index of
// the flags argument. Their flags are the generic ones on every GOARCH in
// platforms.
var openFlags = map[string]uint{"open": 1, "openat": 2}

// open(2) flags that make an open a write.
const (
	oAccmode = 0x3
	oCreat   = 0x40
	oTrunc   = 0x200
)

// platform is what the profile needs to know about one GOARCH.
type platform struct {
	native string     // libseccomp's name, as moby's includes/excludes spell it
	arch   specs.Arch // the archMap entry
}

// platforms are the GOARCHes cordon builds profiles for. All of them use
// the generic ioctl numbers and have no socketcall(2) multiplexer in their
// main ABI; architectures that do (mips, ppc, s390x) would need their own
// rules and are refused rather than guessed.
var platforms = map[string]platform{
	"amd64":   {native: "amd64", arch: specs.ArchX86_64},
	"arm64":   {native: "arm64", arch: specs.ArchAARCH64},
	"riscv64": {native: "riscv64", arch: specs.ArchRISCV64},
}

// socketcallABIs are the seccomp architectures on which libseccomp (seen
// with 2.5.4, Debian 12's) turns every rule on socket(2) into an
// additional rule socketcall(SYS_SOCKET, ...) with the same action,
// dropping the rule's argument conditions: they are in memory behind
// socketcall's pointer, where a filter cannot look. With SCMP_ARCH_X86 in
// an amd64 profile, the allow rule for socket(AF_INET) becomes
// "socketcall(SYS_SOCKET) allowed", and a 32-bit program (or int 0x80 in
// a 64-bit one) creates AF_UNIX and AF_VSOCK sockets through it. No rule
// can take that back: a refusal equal to the default action is never
// added (see Profile). These ABIs are therefore left out of the filter;
// their system calls meet libseccomp's bad-architecture action, which
// kills the calling thread.
var socketcallABIs = []specs.Arch{
	specs.ArchX86, specs.ArchMIPS, specs.ArchMIPSEL, specs.ArchPPC,
	specs.ArchPPC64, specs.ArchPPC64LE, specs.ArchS390, specs.ArchS390X,
}

// refused are system calls no sandboxed command gets, whatever moby's
// default allows now or later (most are already refused there for a
// process without capabilities; naming them keeps them refused).
var refused = []string{
	// io_uring performs system calls the filter never sees, and is a
	// large source of kernel bugs.
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	// reading or writing another process's memory or state; moby allows
	// ptrace and process_vm_* without CAP_SYS_PTRACE on kernels >= 4.8.
	"ptrace", "process_vm_readv", "process_vm_writev",
	"kcmp", "pidfd_getfd", "process_madvise",
	// kernel keyrings are not namespaced: the user's keys are reachable.
	"keyctl", "add_key", "request_key",
	// kernel programs and counters: attack surface and side channels.
	"bpf", "perf_event_open",
	// userfaultfd stalls kernel code on a page fault the caller controls,
	// the classic way to widen a kernel race.
	"userfaultfd",
	"kexec_load", "kexec_file_load",
	// namespaces and mounts are cordon's to set up, never the command's.
	"unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
	"open_tree_attr", "mount_setattr",
	// file handles open files by inode, around path-based confinement.
	"name_to_handle_at", "open_by_handle_at",
	// the 32-bit x86 socket multiplexer: its arguments are behind a
	// pointer, so the socket family rule below cannot apply to it.
	"socketcall",
}

// Linux socket families (include/linux/socket.h), spelled out because the
// profile is built on every OS.
const (
	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16
	afVsock   = 40
)

// ipprotoTCP is IPPROTO_TCP.
const ipprotoTCP = 6

// Socket types (the low bits of socket(2)'s type argument; the rest are
// SOCK_NONBLOCK and SOCK_CLOEXEC), the generic values every GOARCH in
// platforms uses.
const (
	sockTypeMask  = 0xf
	sockStream    = 1
	sockSeqpacket = 5
)

// unixPairTypes are the socket types an AF_UNIX socketpair may have when
// AllowSocketpair is set: the connected ones, which stay tied to each
// other (connect(2) on them fails with EISCONN, an address given to
// sendto(2) is refused or ignored).
var unixPairTypes = []uint32{sockStream, sockSeqpacket}

// socketFamilies are the only families socket(2) may create. An allowlist,
// not a denylist: a family nobody listed is refused, which is what a
// sandbox wants from the ~45 families Linux has. Refused, among others:
//   - AF_UNIX: connects to any socket file bound into the sandbox
//     (docker.sock, ssh-agent, D-Bus) and around the network namespace;
//   - AF_VSOCK: on a VM it reaches the hypervisor host, outside any
//     network namespace (moby refuses it too, but with a 64-bit compare
//     that 0x1_0000_0028 passes);
//   - AF_ALG: kernel crypto sockets, unprivileged and a history of bugs;
//   - AF_PACKET, AF_KEY, AF_XDP: need capabilities the command lacks;
//   - AF_CAN, AF_TIPC, AF_RDS, AF_LLC, AF_X25, AF_BLUETOOTH and the like:
//     unprivileged, rarely used, and module autoloading exposes old code.
//
// AF_NETLINK stays: glibc's getifaddrs and if_nametoindex need it, and
// changing network state through it needs CAP_NET_ADMIN.
var socketFamilies = []uint32{afInet, afInet6, afNetlink}

// namespaceCalls are the refused system calls that AllowUserNamespaces
// lets through: making, entering and mounting in namespaces of the
// command's own.
var namespaceCalls = []string{
	"unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
	"open_tree_attr", "mount_setattr",
}

// refusedFor is refused, less what o lets through.
func refusedFor(o Options) []string {
	if !o.AllowUserNamespaces {
		return refused
	}
	return slices.DeleteFunc(slices.Clone(refused), func(n string) bool { return slices.Contains(namespaceCalls, n) })
}

// Terminal ioctls that are refused. TIOCSTI pushes bytes into a terminal's
// input queue: a command sharing the user's terminal could type commands
// into the shell that started the agent. TIOCLINUX can do the same on a
// virtual console (selection paste). Values are the generic ones, which
// every GOARCH in platforms uses.
const (
	tiocsti   = 0x5412
	tioclinux = 0x541c
)

// Profile returns the seccomp profile for a sandbox described by o.
//
// Everything the profile does not allow fails with EPERM (the default
// action); clone3 fails with ENOSYS so that libc falls back to clone, whose
// namespace flags are refused. System calls of ABIs the profile leaves out
// (32-bit x86 on amd64, see socketcallABIs) kill the calling thread.
//
// Rules that depend on an argument are written as allow rules only. The
// obvious form, "allow ioctl, but refuse it when the request is TIOCSTI",
// does not survive the way a profile is loaded: libcontainer skips every
// rule whose action equals the default action (libseccomp refuses to add
// it), so an EPERM refusal disappears without an error; and a refusal
// with another errno next to an unconditional allow is dropped by
// libseccomp 2.5.4, which keeps only the allow. Either way the filter
// would fail open. So each conditional system call gets allow rules whose
// union is exactly the permitted values, all SCMP_CMP_MASKED_EQ on the
// low 32 bits: socket and socketpair take an int family and ioctl an
// unsigned int request, the kernel ignores the high 32 bits, and any
// 64-bit compare (SCMP_CMP_EQ, SCMP_CMP_NE) would let 0x1_0000_0001 pass
// as AF_UNIX or 0x1_0000_5412 as TIOCSTI.
func Profile(o Options) (*specs.LinuxSeccomp, error) {
	goarch := o.Arch
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	plat, ok := platforms[goarch]
	if !ok {
		return nil, fmt.Errorf("seccomp profile for GOARCH %q: %w", goarch, errors.ErrUnsupported)
	}
	kernel, err := parseKernel(o.KernelVersion)
	if err != nil {
		return nil, err
	}

	base, err := loadMobyDefault()
	if err != nil {
		return nil, err
	}
	// every refusal below relies on the default being EPERM
	if base.DefaultAction != specs.ActErrno || base.DefaultErrnoRet == nil || *base.DefaultErrnoRet != 1 {
		return nil, fmt.Errorf("moby default profile: default action is %s, want %s with errno 1", base.DefaultAction, specs.ActErrno)
	}
	arches, err := archesFor(base, plat.arch, socketcallABIs)
	if err != nil {
		return nil, err
	}
	p, err := resolve(base, target{arch: plat.native, kernel: kernel})
	if err != nil {
		return nil, fmt.Errorf("resolve moby default profile: %w", err)
	}
	p.Architectures = arches
	tighten(p, o)
	return p, nil
}

// loadMobyDefault returns the embedded copy of moby's default profile,
// parsed once per process (a third of what compiling a spec costs): its
// users only read it.
var loadMobyDefault = sync.OnceValues(parseMobyDefault)

// Preload parses the embedded copy of moby's default profile now, so that
// a Profile soon after finds it parsed: for a process that starts it in
// the background while it does other work (runtime.Preheat).
func Preload() { _, _ = loadMobyDefault() }

// parseMobyDefault parses the embedded copy of moby's default profile,
// strictly, so that a field added upstream is noticed rather than ignored.
func parseMobyDefault() (*moby.Seccomp, error) {
	dec := json.NewDecoder(bytes.NewReader(mobyDefault))
	dec.DisallowUnknownFields()
	var p moby.Seccomp
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("parse moby default profile: %w", err)
	}
	return &p, nil
}

// tighten removes what agents must not have from a resolved moby profile
// and replaces moby's rules for socket, socketpair and ioctl by
// conditional ones (see Profile for why they are all allow rules).
func tighten(p *specs.LinuxSeccomp, o Options) {
	// Only what moby allows outright becomes a write to notify: the
	// supervisor lets a notified call continue, which must never allow a
	// call the profile refuses.
	var writes, opens []string
	if o.NotifyWrites || o.NotifyReads || o.Guard {
		allowed := map[string]bool{}
		for _, rule := range p.Syscalls {
			if rule.Action == specs.ActAllow && len(rule.Args) == 0 {
				for _, name := range rule.Names {
					allowed[name] = true
				}
			}
		}
		var stopped []string
		if o.NotifyWrites || o.NotifyReads {
			stopped = slices.Clone(Writes)
		}
		if o.Guard {
			for _, n := range append(slices.Clone(Creates), "openat2", "umask") {
				if !slices.Contains(stopped, n) {
					stopped = append(stopped, n)
				}
			}
		}
		writes = slices.DeleteFunc(stopped, func(n string) bool { return !allowed[n] })
		for _, name := range slices.Sorted(maps.Keys(openFlags)) {
			if allowed[name] {
				opens = append(opens, name)
			}
		}
	}
	refused := refusedFor(o)
	drop := append(slices.Clone(refused), "socket", "socketpair", "ioctl")
	if o.AllowUserNamespaces {
		// moby's rules keep the namespace flags out of clone and clone3
		// out altogether (ENOSYS) for a process without CAP_SYS_ADMIN.
		drop = append(drop, "clone", "clone3")
	}
	drop = append(append(drop, writes...), opens...)
	kept := p.Syscalls[:0]
	for _, rule := range p.Syscalls {
		rule.Names = slices.DeleteFunc(rule.Names, func(name string) bool {
			return slices.Contains(drop, name)
		})
		if len(rule.Names) > 0 {
			kept = append(kept, rule)
		}
	}
	p.Syscalls = kept

	if o.AllowUserNamespaces {
		// moby's profile gives these to CAP_SYS_ADMIN only: they come
		// back for namespaces of the command's own, where it has the
		// capability (outside them the kernel refuses them still).
		p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{
			Names:  append([]string{"clone", "clone3", "sethostname", "setdomainname"}, namespaceCalls...),
			Action: specs.ActAllow,
		})
	}
	// socketpair follows the socket allowlist rather than being allowed
	// outright: any family that implements it would otherwise be a way
	// around that list.
	families := slices.Clone(socketFamilies)
	if o.NoTCP {
		families = []uint32{afNetlink}
	}
	if o.AllowUnixSockets {
		families = append(families, afUnix, afVsock)
	}
	for _, f := range families {
		if o.Contained && (f == afInet || f == afInet6) {
			// TCP only: a stream socket of the family's default protocol
			// or IPPROTO_TCP (not SCTP, not MPTCP, which Landlock's port
			// rules do not cover).
			for _, proto := range []uint32{0, ipprotoTCP} {
				p.Syscalls = append(p.Syscalls, allow("socket", maskedEqual(0, 0xffffffff, f),
					maskedEqual(1, sockTypeMask, sockStream), maskedEqual(2, 0xffffffff, proto)))
			}
			continue
		}
		p.Syscalls = append(p.Syscalls, allow("socket", maskedEqual(0, 0xffffffff, f)))
	}
	for _, f := range families {
		p.Syscalls = append(p.Syscalls, allow("socketpair", maskedEqual(0, 0xffffffff, f)))
	}
	if o.AllowSocketpair && !o.AllowUnixSockets {
		// Only connected kinds: a datagram socket of a pair is not bound
		// to its peer, and sendto(2) or connect(2) with an address take it
		// to any unix datagram socket a path names (journald's, a host
		// service's), around the refusal of socket(AF_UNIX).
		for _, typ := range unixPairTypes {
			p.Syscalls = append(p.Syscalls, allow("socketpair",
				maskedEqual(0, 0xffffffff, afUnix), maskedEqual(1, sockTypeMask, typ)))
		}
	}
	for _, arg := range low32Except(1, []uint32{tiocsti, tioclinux}) {
		p.Syscalls = append(p.Syscalls, allow("ioctl", arg))
	}
	if o.Notify {
		// socketcall stays a plain refusal: it is of the 32-bit ABI the
		// profile leaves out, and its arguments are behind a pointer.
		names := slices.DeleteFunc(slices.Clone(refused), func(n string) bool { return n == "socketcall" })
		p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: names, Action: specs.ActNotify})
		if !o.AllowUnixSockets {
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActNotify,
				Args: []specs.LinuxSeccompArg{maskedEqual(0, 0xffffffff, afUnix)}})
		}
	}
	if o.NotifyReads {
		p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: opens, Action: specs.ActNotify})
		opens = nil
	}
	if o.NotifyWrites || o.NotifyReads || o.Guard {
		// Every open is allowed or notified, never refused: the allow
		// rule takes the flags with none of the write bits, the notify
		// rules (one per condition, their union) the rest.
		for _, name := range opens {
			i := openFlags[name]
			p.Syscalls = append(p.Syscalls, allow(name, maskedEqual(i, oAccmode|oCreat|oTrunc, 0)))
			for _, cond := range []specs.LinuxSeccompArg{
				maskedEqual(i, oAccmode, 1), maskedEqual(i, oAccmode, 2), maskedEqual(i, oAccmode, 3),
				maskedEqual(i, oCreat, oCreat), maskedEqual(i, oTrunc, oTrunc),
			} {
				p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{name}, Action: specs.ActNotify, Args: []specs.LinuxSeccompArg{cond}})
			}
		}
		if o.Guard && slices.Contains(writes, "openat2") {
			writes = slices.DeleteFunc(writes, func(n string) bool { return n == "openat2" })
			enosys := uint(enosysErrno)
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &enosys})
		}
		if len(writes) > 0 {
			p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: writes, Action: specs.ActNotify})
		}
	}
	if o.Guard {
		p.Flags = append(p.Flags, specs.LinuxSeccompFlagWaitKillableRecv)
	}
}

// enosysErrno is ENOSYS, the same on every GOARCH in platforms.
const enosysErrno = 38

// allow is a rule allowing name when every arg holds.
func allow(name string, args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
	return specs.LinuxSyscall{Names: []string{name}, Action: specs.ActAllow, Args: args}
}

// maskedEqual holds when argument index, masked with mask, equals value.
// The OCI spec carries the mask in Value and the datum in ValueTwo.
func maskedEqual(index uint, mask, value uint32) specs.LinuxSeccompArg {
	return specs.LinuxSeccompArg{Index: index, Value: uint64(mask), ValueTwo: uint64(value), Op: specs.OpMaskedEqual}
}

// low32Except returns conditions on argument index, one per rule, whose
// union is every value with low 32 bits outside refused; the high 32 bits
// never matter. A filter cannot say "masked value not equal", so the
// complement is spelled out: the refused values form a binary trie, most
// significant bit first, and every branch the trie lacks is one condition
// (the bits above it as in the trie, its own bit, the bits below free). A
// value that is not refused leaves the trie at exactly one missing branch;
// a refused value never leaves it. Two refused values sharing 28 high bits
// take 34 conditions.
func low32Except(index uint, refused []uint32) []specs.LinuxSeccompArg {
	var out []specs.LinuxSeccompArg
	var walk func(mask, value uint32, bit int, set []uint32)
	walk = func(mask, value uint32, bit int, set []uint32) {
		if bit < 0 {
			return // a refused value
		}
		b := uint32(1) << bit
		var zero, one []uint32
		for _, v := range set {
			if v&b == 0 {
				zero = append(zero, v)
			} else {
				one = append(one, v)
			}
		}
		for _, branch := range []struct {
			value uint32
			set   []uint32
		}{{value, zero}, {value | b, one}} {
			if len(branch.set) == 0 {
				out = append(out, maskedEqual(index, mask|b, branch.value))
			} else {
				walk(mask|b, branch.value, bit-1, branch.set)
			}
		}
	}
	walk(0, 0, 31, refused)
	return out
}

// IsCreate reports whether name is one of the system calls a Guard
// supervisor performs for the process: Creates, and open and openat (which
// notify only with write access, O_CREAT or O_TRUNC).
func IsCreate(name string) bool {
	_, open := openFlags[name]
	return open || slices.Contains(Creates, name)
}

// IsFileAccess reports whether name is one of the system calls
// NotifyWrites and NotifyReads stop: a supervisor lets them continue, and
// answers every other notification of a cordon profile with EPERM.
func IsFileAccess(name string) bool {
	_, open := openFlags[name]
	return open || slices.Contains(Writes, name)
}
