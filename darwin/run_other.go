//go:build !unix

package darwin

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// Options are the host side of one run; see the darwin build.
type Options struct {
	Dir            string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	PTY            *PTY
	Timeout        time.Duration
	OutputLimit    int64
	Rlimits        []Rlimit
	Self           string
	Started        func(pid int)
}

// Result is how a run ended; see the darwin build.
type Result struct {
	Status   int
	TimedOut bool
	State    *os.ProcessState
}

// Run is not supported on this OS: sandbox-exec is macOS's.
func Run(context.Context, string, []string, Options) (Result, error) {
	return Result{Status: ExitCordonFailed}, errors.ErrUnsupported
}

// Check is not supported on this OS.
func Check(context.Context, string) error { return errors.ErrUnsupported }

// LimitChild does nothing on this OS.
func LimitChild() {}

// Monitor follows the unified log; only darwin has one.
type Monitor struct{}

// StartMonitor is not supported on this OS.
func StartMonitor(context.Context, string, func(Violation)) (*Monitor, error) {
	return nil, errors.ErrUnsupported
}

// Stop does nothing.
func (*Monitor) Stop(time.Duration) error { return nil }
