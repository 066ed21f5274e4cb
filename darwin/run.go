package darwin

import (
	"io"
	"os"
	"time"
)

// Options are the host side of one run.
type Options struct {
	// Dir is the command's working directory.
	Dir string
	// Env is the command's environment (see Environ); nil is an empty one,
	// never cordon's own.
	Env []string
	// Stdin, Stdout and Stderr are the command's. A pipe or socket is
	// handed over as it is; anything else (a terminal, a file) is copied
	// through a pipe, so that the command never holds the user's terminal.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// PTY, when set, is the command's terminal: its controlling terminal
	// and its stdio. Stdin is copied to it (in raw mode when Stdin is a
	// terminal, whose size it follows) and its output to Stdout. Compile
	// the profile with its Name as Request.TTY.
	PTY *PTY
	// Timeout ends the command and the rest of its process group when it
	// runs longer; the status is then 124, as coreutils' timeout gives.
	Timeout time.Duration
	// OutputLimit keeps the first OutputLimit bytes of stdout and of
	// stderr (of the terminal's output with a PTY) and drops the rest,
	// with a marker line (0: no limit).
	OutputLimit int64
	// Rlimits are set on the command, hard and soft (see Limits). Setting
	// them takes cordon's own binary, at Self, executed once more before
	// sandbox-exec (see LimitChild).
	Rlimits []Rlimit
	Self    string
	// Started, when set, is called once the command runs.
	Started func(pid int)
}

// Result is how a run ended.
type Result struct {
	// Status is the command's exit status: its own, 128+N when signal N
	// ended it, ExitTimedOut when the timeout did.
	Status   int
	TimedOut bool
	// State is the process's end as wait(2) reported it (its resource
	// usage); nil when the command did not start.
	State *os.ProcessState
}
