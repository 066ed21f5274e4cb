package darwin

import (
	"fmt"
	"strconv"
	"strings"

	"cordon.dev/cordon/policy"
)

// Rlimit is a resource limit the command gets as its hard and soft
// rlimit: set on the process that then executes sandbox-exec, inherited
// by the command and everything it starts, and not to be raised by them.
type Rlimit struct {
	// Name is the resource: "fsize" (RLIMIT_FSIZE, the largest file in
	// bytes) or "nofile" (RLIMIT_NOFILE, open files per process).
	Name  string
	Value uint64
}

// rlimitNames are the resources an Rlimit may name.
var rlimitNames = []string{"fsize", "nofile"}

// Limits splits the policy's resource limits into the rlimits macOS
// enforces per process (file size, open files) and, for the caller to
// warn about, those it cannot enforce for a sandbox: memory (macOS does
// not enforce RLIMIT_AS or RLIMIT_RSS and has no cgroups), processes
// (RLIMIT_NPROC counts every process of the user, not the sandbox's),
// CPUs, and the size of the temporary directory (an ordinary directory).
// The timeout and the output limit are cordon's own, on every system.
func Limits(l policy.Limits) (rl []Rlimit, lost []string) {
	if l.FileSize > 0 {
		rl = append(rl, Rlimit{"fsize", uint64(l.FileSize)})
	}
	if l.OpenFiles > 0 {
		rl = append(rl, Rlimit{"nofile", uint64(l.OpenFiles)})
	}
	switch {
	case l.Memory > 0:
		lost = append(lost, "memory "+human(l.Memory)+": not enforced on macOS")
	case l.MemoryPercent > 0:
		lost = append(lost, fmt.Sprintf("memory %g%%: not enforced on macOS", l.MemoryPercent))
	}
	if l.Pids > 0 {
		lost = append(lost, fmt.Sprintf("pids %d: not enforced on macOS", l.Pids))
	}
	if l.CPUs > 0 {
		lost = append(lost, fmt.Sprintf("cpus %g: not enforced on macOS", l.CPUs))
	}
	if l.TmpSize > 0 {
		lost = append(lost, "tmpSize "+human(l.TmpSize)+": not enforced on macOS")
	}
	return rl, lost
}

// human writes a byte count for people: 1.5G, 512M, 4096B.
func human(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// LimitCommand is the first argument of cordon re-executed to set the
// command's rlimits before it executes sandbox-exec (Go cannot set a
// child's rlimits between fork and exec, and cordon must not lower its
// own hard limits): "cordon darwin-rlimit-exec fsize=N nofile=N --
// SANDBOX-EXEC-ARGS...". See LimitChild.
const LimitCommand = "darwin-rlimit-exec"

// LimitArgs returns the argv that runs sandbox-exec with args under the
// rlimits, through cordon's binary at self.
func LimitArgs(self string, rl []Rlimit, args []string) []string {
	argv := []string{self, LimitCommand}
	for _, r := range rl {
		argv = append(argv, r.Name+"="+strconv.FormatUint(r.Value, 10))
	}
	return append(append(argv, "--"), args...)
}

// ParseLimitArgs reads the arguments after LimitCommand: the rlimits,
// each resource at most once, then "--" and sandbox-exec's arguments.
func ParseLimitArgs(args []string) ([]Rlimit, []string, error) {
	var rl []Rlimit
	for i, a := range args {
		if a == "--" {
			if len(args[i+1:]) == 0 {
				return nil, nil, fmt.Errorf("%w: %s: nothing to run", ErrInvalid, LimitCommand)
			}
			return rl, args[i+1:], nil
		}
		name, value, ok := strings.Cut(a, "=")
		known := false
		for _, n := range rlimitNames {
			known = known || n == name
		}
		if !ok || !known {
			return nil, nil, fmt.Errorf("%w: %s: bad limit %q", ErrInvalid, LimitCommand, a)
		}
		for _, r := range rl {
			if r.Name == name {
				return nil, nil, fmt.Errorf("%w: %s: %s given twice", ErrInvalid, LimitCommand, name)
			}
		}
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: bad limit %q", ErrInvalid, LimitCommand, a)
		}
		rl = append(rl, Rlimit{name, v})
	}
	return nil, nil, fmt.Errorf("%w: %s: no \"--\"", ErrInvalid, LimitCommand)
}

// clampRlimit is the value an unprivileged process can set as both soft
// and hard limit: never above the current hard limit, which it cannot
// raise.
func clampRlimit(want, hard uint64) uint64 { return min(want, hard) }
