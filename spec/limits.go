package spec

import (
	"fmt"
	"math"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

// AnnotationLimits is a JSON Enforcement: how each resource limit of the
// policy is enforced in this sandbox.
const AnnotationLimits = "dev.cordon.limits"

// Ways a limit is enforced.
const (
	ByCgroup = "cgroup"
	ByRlimit = "rlimit"
	ByTmpfs  = "tmpfs"
	ByCordon = "cordon" // the runtime on the host (timeout, output)
	ByNone   = "none"   // not enforced on this machine
)

// Limit is one resource limit as the sandbox enforces it.
type Limit struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	By    string `json:"by"`
}

// cgroupUsable reports whether the sandbox gets a cgroup with the given
// controllers: as root the runtime makes one under /cordon, otherwise it
// needs a delegated subtree (the probe says).
func cgroupUsable(pr probe.Result, controllers ...string) bool {
	if pr.ProbedAt.IsZero() {
		// Not probed (tests, cordon spec on a foreign machine): as the
		// caller would get on a typical machine.
		return pr.Root()
	}
	return pr.CgroupLimits(controllers...)
}

// MemoryLimit returns the policy's memory limit in bytes for a machine,
// 0 for none: the size, the share of the machine's memory, or the smaller
// of the two when both are set.
func MemoryLimit(l policy.Limits, pr probe.Result) int64 {
	mem := l.Memory
	if l.MemoryPercent > 0 && pr.MemTotal > 0 {
		// A share too small to be a byte is still a limit, not none.
		share := max(int64(float64(pr.MemTotal)*l.MemoryPercent/100), 1)
		if mem <= 0 || share < mem {
			mem = share
		}
	}
	return max(mem, 0)
}

// limits computes how each limit is enforced: cgroups where the sandbox
// gets one, rlimits where they come close (processes: RLIMIT_NPROC counts
// the sandbox's own user namespace; memory: RLIMIT_DATA, each process's
// private writable memory, see below), the runtime for the wall clock and
// the output.
//
// In the container mode (contained) there is no cgroup, tmpfs or user
// namespace of the sandbox's: RLIMIT_NPROC would count every process of
// the caller's, so pids, cpus and the size of /tmp are not enforced.
func limits(p *policy.Policy, pr probe.Result, contained bool) ([]Limit, *specs.LinuxResources, []specs.POSIXRlimit) {
	l := p.Limits
	if contained {
		pr.Cgroups.Create.Available = false
	}
	var (
		out  []Limit
		res  = &specs.LinuxResources{}
		rl   []specs.POSIXRlimit
		used bool
	)
	add := func(name, value, by string) { out = append(out, Limit{name, value, by}) }
	if mem := MemoryLimit(l, pr); mem > 0 {
		v := human(mem)
		if mem != l.Memory {
			v += fmt.Sprintf(" (%g%% of the machine)", l.MemoryPercent)
		}
		switch {
		case cgroupUsable(pr, "memory"):
			// Swap off: memory and swap together may not exceed memory.
			res.Memory = &specs.LinuxMemory{Limit: &mem, Swap: &mem}
			used = true
			add("memory", v, ByCgroup)
		case !pr.Root():
			// Per process, its private writable memory: what malloc,
			// brk and anonymous mmap take, once writable. Not address
			// space (RLIMIT_AS): V8 reserves some 10 GiB of it, never
			// touched, for each WebAssembly memory (Node's fetch parses
			// HTTP with one), and a machine's half was less than two.
			// Shared memory (/dev/shm, memfd) is not counted.
			rl = append(rl, specs.POSIXRlimit{Type: "RLIMIT_DATA", Hard: uint64(mem), Soft: uint64(mem)})
			add("memory", v+", as each process's data size", ByRlimit)
		default:
			add("memory", v, ByNone)
		}
	}
	if l.Pids > 0 {
		v := fmt.Sprintf("%d", l.Pids)
		switch {
		case cgroupUsable(pr, "pids"):
			pids := l.Pids
			res.Pids = &specs.LinuxPids{Limit: &pids}
			used = true
			add("pids", v, ByCgroup)
		case !pr.Root() && !contained:
			// The command's user namespace is its own: RLIMIT_NPROC counts
			// the sandbox's processes, not the caller's others.
			rl = append(rl, specs.POSIXRlimit{Type: "RLIMIT_NPROC", Hard: uint64(l.Pids), Soft: uint64(l.Pids)})
			add("pids", v, ByRlimit)
		default:
			add("pids", v, ByNone)
		}
	}
	if l.CPUs > 0 {
		v := fmt.Sprintf("%g", l.CPUs)
		if cgroupUsable(pr, "cpu") {
			period := uint64(100000)
			quota := int64(math.Ceil(l.CPUs * float64(period)))
			res.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
			used = true
			add("cpus", v, ByCgroup)
		} else {
			add("cpus", v, ByNone)
		}
	}
	if l.FileSize > 0 {
		rl = append(rl, specs.POSIXRlimit{Type: "RLIMIT_FSIZE", Hard: uint64(l.FileSize), Soft: uint64(l.FileSize)})
		add("fileSize", human(l.FileSize), ByRlimit)
	}
	if l.OpenFiles > 0 {
		rl = append(rl, specs.POSIXRlimit{Type: "RLIMIT_NOFILE", Hard: uint64(l.OpenFiles), Soft: uint64(l.OpenFiles)})
		add("openFiles", fmt.Sprintf("%d", l.OpenFiles), ByRlimit)
	}
	if l.TmpSize > 0 && contained {
		add("tmpSize", human(l.TmpSize), ByNone)
	} else if l.TmpSize > 0 {
		add("tmpSize", human(l.TmpSize), ByTmpfs)
	}
	if l.Timeout > 0 {
		add("timeout", l.Timeout.String(), ByCordon)
	}
	if l.OutputLimit > 0 {
		add("outputLimit", human(l.OutputLimit), ByCordon)
	}
	if !used {
		res = nil
	}
	return out, res, rl
}

// Unenforced lists the limits of a spec that this machine does not
// enforce, or enforces only approximately, for the caller to say so.
func Unenforced(ls []Limit) []string {
	var out []string
	for _, l := range ls {
		switch l.By {
		case ByNone:
			why := "no cgroup for the sandbox"
			if l.Name == "tmpSize" {
				why = "no private /tmp"
			}
			out = append(out, l.Name+" "+l.Value+": not enforced ("+why+")")
		case ByRlimit:
			if l.Name == "memory" || l.Name == "pids" {
				out = append(out, l.Name+" "+l.Value+": by rlimit (no cgroup for the sandbox)")
			}
		}
	}
	return out
}

// WithLimits applies the resource limits: cgroup resources and rlimits.
func WithLimits(res *specs.LinuxResources, rl []specs.POSIXRlimit, ls []Limit) Opt {
	return func(s *specs.Spec) error {
		if s.Process == nil {
			return fmt.Errorf("%w: limits before process", ErrInvalid)
		}
		s.Linux.Resources = res
		s.Process.Rlimits = append(s.Process.Rlimits, rl...)
		if len(ls) == 0 {
			return nil
		}
		return withJSONAnnotation(s, AnnotationLimits, ls)
	}
}

// human writes a byte count for people: 1.5G, 512M, 4096B.
func human(n int64) string {
	for _, u := range []struct {
		size int64
		unit string
	}{{1 << 40, "T"}, {1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if n >= u.size {
			return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(u.size)), "0"), ".") + u.unit
		}
	}
	return fmt.Sprintf("%dB", n)
}
