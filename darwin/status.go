//go:build unix

package darwin

import (
	"os"
	"syscall"
)

// ExitTimedOut is the status of a run its timeout ended, as coreutils'
// timeout gives.
const ExitTimedOut = 124

// runStatus is the status of a run: ExitTimedOut when the timeout ended
// it (cordon killed it, so a signal did; a command that exited as the
// timer fired keeps its status), exitStatus otherwise.
func runStatus(ps *os.ProcessState, timedOut bool) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && timedOut && ws.Signaled() {
		return ExitTimedOut
	}
	return exitStatus(ps)
}

// exitStatus maps how a process ended to the status cordon exits with:
// its own status, or 128+N when signal N ended it.
func exitStatus(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ps.ExitCode()
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// direct reports whether the command may be handed f itself. A pipe or a
// socket has no path for Seatbelt to refuse; a terminal or a file would be
// checked by path on every write (the user's terminal is not the command's
// to use, and a redirection target is usually outside the writable roots),
// so cordon copies through a pipe instead.
func direct(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}
