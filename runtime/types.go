package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cordon.dev/cordon/netproxy"
)

// Sandbox describes a sandbox cordon knows of.
type Sandbox struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Pid       int       `json:"pid"`
	Owner     int       `json:"owner"`
	Args      []string  `json:"args"`
	Workspace string    `json:"workspace"`
	Created   time.Time `json:"created"`
	// Orphaned is set when the cordon process that ran it is gone.
	Orphaned bool `json:"orphaned,omitempty"`
	// Mode is the sandbox's mode when it is not the full sandbox:
	// spec.ModeContainer or spec.ModeUnconfined (no libcontainer state;
	// Pid is cordon's init on the host).
	Mode string `json:"mode,omitempty"`
}

// Meta is what cordon records about a live sandbox besides libcontainer's
// state.
type Meta struct {
	Owner     int       `json:"owner"`
	OwnerTime uint64    `json:"ownerStartTime"`
	Args      []string  `json:"args"`
	Workspace string    `json:"workspace"`
	Created   time.Time `json:"created"`
	// Scrub is the spec's AnnotationScrub, for GC to apply when the run
	// crashed.
	Scrub string `json:"scrub,omitempty"`
	// Mode, Init and InitTime are a contained run's (see Sandbox.Mode):
	// its mode, and the pid and start time of its init, which no
	// libcontainer state records.
	Mode     string `json:"mode,omitempty"`
	Init     int    `json:"init,omitempty"`
	InitTime uint64 `json:"initStartTime,omitempty"`
}

// Options are the host side of one run.
type Options struct {
	// ID names the sandbox. It must be unique among live sandboxes.
	ID string
	// Root is the state directory (StateRoot by default).
	Root string
	// Stdin, Stdout and Stderr are passed to the command as they are, or,
	// when the spec asks for a terminal, copied to and from it.
	Stdin, Stdout, Stderr *os.File
	// Meta is recorded with the sandbox for `cordon list`.
	Meta Meta
	// Notify receives the notes for the caller at the end of the run: what
	// the sandbox refused, what cordon had to clean up.
	Notify func(msg string)
	// Proxy configures the network proxy when the spec asks for it
	// (spec.AnnotationProxy); Run serves it for the length of the run.
	Proxy *netproxy.Config
	// Timeout ends the command and everything it started when it runs
	// longer; the status is then 124, as coreutils' timeout gives.
	Timeout time.Duration
	// OutputLimit keeps the first OutputLimit bytes of stdout and of
	// stderr and drops the rest, with a marker line (0: no limit).
	OutputLimit int64
	// Stats, when set, receives the run's resource usage.
	Stats func(Usage)
	// Store is the directory the run's violations are recorded in
	// (StoreDir by default).
	Store string
	// Ignore silences violations: they are neither recorded nor noted.
	Ignore Ignore
	// Started, when set, is called once the command is running.
	Started func()
	// Fd3, when set, is the command's descriptor 3, the one it gets
	// besides its standard descriptors (cordon run --cwd-fd passes the
	// pipe on which the command's shell says where it ended).
	Fd3 *os.File
}

// Usage is what a run used, from the sandbox's cgroup where it has one,
// from the kernel's accounting of the reaped processes otherwise.
type Usage struct {
	Wall time.Duration `json:"wall"`
	// User and System CPU time of every process of the sandbox.
	User   time.Duration `json:"user"`
	System time.Duration `json:"system"`
	// PeakMemory in bytes: the cgroup's peak, or the largest process's
	// resident set when there is no cgroup.
	PeakMemory int64 `json:"peakMemory"`
	// Pids is the cgroup's peak number of processes and threads where the
	// kernel keeps it, 0 otherwise.
	Pids int64 `json:"pids,omitempty"`
	// OOMKills counts processes the kernel killed for the sandbox's memory
	// limit; MemoryLimit is that limit (0: none).
	OOMKills    int64 `json:"oomKills,omitempty"`
	MemoryLimit int64 `json:"memoryLimit,omitempty"`
	// FromCgroup says where the figures come from.
	FromCgroup bool `json:"fromCgroup"`
}

// String is the one-line summary of `cordon run --stats`.
func (u Usage) String() string {
	s := fmt.Sprintf("wall %s, cpu %s (user %s, sys %s), peak memory %s",
		u.Wall.Round(time.Millisecond), (u.User + u.System).Round(time.Millisecond),
		u.User.Round(time.Millisecond), u.System.Round(time.Millisecond), size(u.PeakMemory))
	if u.Pids > 0 {
		s += fmt.Sprintf(", pids %d", u.Pids)
	}
	if !u.FromCgroup {
		s += " (no cgroup: largest process)"
	}
	return s
}

// size writes a byte count for people.
func size(n int64) string {
	switch {
	case n <= 0:
		return "none"
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// RunFilesDir is where a run's compilation keeps what it makes on the
// host before the sandbox exists and what the sandbox binds from it (the
// fakes of masked credentials, their trust bundle), under the state root
// root: its cordon removes it when the run is over, and GC once the run
// is gone without it (its run lock free, or none and older than a
// minute).
func RunFilesDir(root, id string) string { return filepath.Join(root, runFilesPrefix+id) }

// runFilesPrefix begins the name of a RunFilesDir.
const runFilesPrefix = "files-"

// Directories of the state root that hold no run, which List and GC
// leave alone: what cordon keeps between runs. SaidDir holds the records
// of the warnings said once per agent session (cordon run --session),
// TrackedDir what cordon found of the tracked files a policy hides.
const (
	SaidDir    = "said"
	TrackedDir = "tracked"
)

// ownDirs are the state root's directories that are no run's.
var ownDirs = []string{"rootfs", "seccomp", SaidDir, TrackedDir}
