//go:build !unix

package darwin

import (
	"context"
	"errors"
	"time"
)

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
