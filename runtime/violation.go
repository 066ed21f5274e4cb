package runtime

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kinds of violation.
const (
	// KindSyscall is a system call the seccomp profile refuses in every
	// sandbox (mount, ptrace, bpf, unshare, ...).
	KindSyscall = "syscall"
	// KindSocket is a socket of a family the sandbox does not get
	// (AF_UNIX: it would reach sockets outside the sandbox).
	KindSocket = "socket"
	// KindWrite is a change to the file system that the sandbox's mounts
	// refused: a read-only path, or a hidden one.
	KindWrite = "write"
	// KindRead is an open of a path hidden from the sandbox.
	KindRead = "read"
	// KindNetwork is a connection the network proxy refused (on macOS
	// also one the sandbox refused: only the proxy is reachable).
	KindNetwork = "network"
	// KindOperation is another operation macOS's sandbox refused: a Mach
	// service, a sysctl, IOKit, a signal to a process outside the
	// sandbox, listening on a port. Syscall is the Seatbelt operation,
	// Args what it was refused.
	KindOperation = "operation"
	// KindCredential is a masked credential the proxy saw on the wire:
	// its real value put into a request to one of its hosts
	// (Substituted), or its fake on its way elsewhere — another host, or
	// its own over plain HTTP — which went out as it is.
	KindCredential = "credential"
)

// Kinds are the kinds of violation.
var Kinds = []string{KindSyscall, KindSocket, KindWrite, KindRead, KindNetwork, KindOperation, KindCredential}

// Violation is one thing the sandbox refused.
type Violation struct {
	Time time.Time `json:"time"`
	// Run is the sandbox's id.
	Run  string `json:"run"`
	Kind string `json:"kind"`
	// Command is the refused process's command line, as far as it could
	// be read; PID its pid on the host.
	Command string `json:"command,omitempty"`
	PID     int    `json:"pid,omitempty"`
	// Syscall and Args: the refused system call, with the arguments
	// decoded where that is safe (numbers, flags, strings).
	Syscall string   `json:"syscall,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Path is the file a refused write was to, absolute inside the
	// sandbox (the same path on the host).
	Path string `json:"path,omitempty"`
	// Host and Port are a refused connection's destination, or where a
	// masked credential went.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// Credential names a masked credential ("env GH_TOKEN", "file
	// /home/u/.npmrc"), never its value; Substituted: its real value went
	// in, else its fake went out. Count is how many of the run's requests
	// did the same (the record is the first).
	Credential  string `json:"credential,omitempty"`
	Substituted bool   `json:"substituted,omitempty"`
	Count       int    `json:"count,omitempty"`
	// Reason says why it was refused, and Hint how to allow it when it
	// can be.
	Reason string `json:"reason"`
	Hint   string `json:"hint,omitempty"`
	// Workspace is the run's workspace.
	Workspace string `json:"workspace,omitempty"`
}

// Target is what was refused: the path, destination, or system call.
func (v Violation) Target() string {
	switch {
	case v.Path != "":
		return v.Path
	case v.Host != "":
		return v.Host + ":" + strconv.Itoa(v.Port)
	case v.Kind == KindOperation && len(v.Args) > 0:
		return v.Syscall + " " + strings.Join(v.Args, " ")
	}
	return v.Syscall
}

// Summary is the violation in one line, as the end-of-run note gives it:
// "blocked write to /etc/hosts (read-only outside the workspace; allow
// with --allow-write /etc)".
func (v Violation) Summary() string {
	var what string
	switch v.Kind {
	case KindWrite:
		what = "blocked write to " + v.Path
	case KindRead:
		what = "blocked read of " + v.Path
	case KindNetwork:
		what = "blocked connection to " + v.Target()
	case KindSocket:
		what = "blocked " + v.Syscall + "(" + strings.Join(v.Args, ", ") + ")"
	case KindOperation:
		what = "blocked " + v.Target()
	case KindCredential:
		if v.Substituted {
			what = "sent " + v.Credential + "'s real value to " + v.Target()
		} else {
			what = "kept " + v.Credential + " from " + v.Target()
		}
		if v.Count > 1 {
			what += fmt.Sprintf(" in %d requests", v.Count)
		}
	default:
		what = "blocked system call " + v.Syscall
	}
	if cmd := v.commandName(); cmd != "" {
		what += " by " + cmd
	}
	detail := v.Reason
	if v.Hint != "" {
		detail += "; " + v.Hint
	}
	if detail != "" {
		what += " (" + detail + ")"
	}
	return what
}

// commandName is the program name of Command.
func (v Violation) commandName() string {
	name, _, _ := strings.Cut(v.Command, " ")
	if name == "" {
		return ""
	}
	return filepath.Base(name)
}

// Ignore is sandbox-runtime's ignoreViolations: command patterns ("*" for
// every command) to the paths, hosts or system calls whose violations are
// neither recorded nor reported. A command pattern matches when the run's
// command line or the refused process's contains it; an entry matches when
// the violation's target contains it.
type Ignore map[string][]string

// Match reports whether v is ignored; command is the run's command line.
func (ig Ignore) Match(command string, v Violation) bool {
	target := v.Target()
	for pattern, entries := range ig {
		if pattern != "*" && !strings.Contains(command, pattern) && !strings.Contains(v.Command, pattern) {
			continue
		}
		if slices.ContainsFunc(entries, func(e string) bool { return e != "" && strings.Contains(target, e) }) {
			return true
		}
	}
	return false
}

// maxRunViolations bounds what one run keeps: a command that retries a
// refused write in a loop must not fill memory or the store.
const maxRunViolations = 1000

// recorder collects a run's violations as they happen.
type recorder struct {
	mu      sync.Mutex
	run     string
	command string
	ws      string
	ignore  Ignore
	list    []Violation
	seen    map[string]int // a record's key → its index in list
	dropped int
}

func newRecorder(run, command, workspace string, ignore Ignore) *recorder {
	return &recorder{run: run, command: command, ws: workspace, ignore: ignore, seen: map[string]int{}}
}

// add records v unless it is ignored. Repeats of the same refusal (same
// kind, target and process) are kept once.
func (r *recorder) add(v Violation) {
	if r == nil {
		return
	}
	if v.Time.IsZero() {
		v.Time = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v.Run, v.Workspace = r.run, r.ws
	if r.ignore.Match(r.command, v) {
		return
	}
	key := v.Kind + "\x00" + v.Target() + "\x00" + v.Command + "\x00" + v.Credential + "\x00" + strconv.FormatBool(v.Substituted)
	if i, ok := r.seen[key]; ok {
		if v.Kind == KindCredential {
			r.list[i].Count++
		}
		return
	}
	if len(r.list) >= maxRunViolations {
		r.dropped++
		return
	}
	if v.Kind == KindCredential {
		v.Count = 1
	}
	r.seen[key] = len(r.list)
	r.list = append(r.list, v)
}

// reset names the run the recorder records for: a sandbox made ahead of
// its command (cordon serve) learns it only when the command comes.
func (r *recorder) reset(run, command, workspace string, ignore Ignore) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run, r.command, r.ws, r.ignore = run, command, workspace, ignore
}

// violations returns what was recorded, and how many more were dropped.
func (r *recorder) violations() ([]Violation, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list), r.dropped
}

// maxNotes is how many refusals the end-of-run note lists.
const maxNotes = 5

// notes is the end-of-run note: one line per distinct refusal, the first
// few of them, and where to find the rest. Refused unix sockets are
// recorded, not noted: glibc tries nscd's socket whenever it looks up a
// user name (ls -l, tar, id, bash), and syslog(3) /dev/log, so nearly
// every command meets that refusal, and a note on each would drown the
// ones that matter. A masked credential's real value put in where it
// belongs is no refusal: recorded, not noted.
func notes(run string, vs []Violation, dropped int) []string {
	var out []string
	seen := map[string]bool{}
	more := dropped
	for _, v := range vs {
		if v.Kind == KindSocket || v.Kind == KindCredential && v.Substituted {
			continue
		}
		line := v.Summary()
		if seen[line] {
			continue
		}
		seen[line] = true
		if len(out) == maxNotes {
			more++
			continue
		}
		out = append(out, line)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more refusals: cordon violations --run %s", more, run))
	}
	return out
}
