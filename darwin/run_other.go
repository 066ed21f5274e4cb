//go:build !darwin

package darwin

import (
	"context"
	"errors"
	"io"
)

// Options are the host side of one run; see the darwin build.
type Options struct {
	Dir            string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	PTY            *PTY
}

// PTY is a pseudo-terminal for one command; only darwin has them here.
type PTY struct{}

// OpenPTY is not supported on this OS.
func OpenPTY() (*PTY, error) { return nil, errors.ErrUnsupported }

// Name returns "".
func (*PTY) Name() string { return "" }

// Close does nothing.
func (*PTY) Close() error { return nil }

// Run is not supported on this OS: sandbox-exec is macOS's.
func Run(context.Context, string, []string, Options) (int, error) {
	return ExitCordonFailed, errors.ErrUnsupported
}

// Check is not supported on this OS.
func Check(context.Context, string) error { return errors.ErrUnsupported }

// Monitor follows the unified log; only darwin has one.
type Monitor struct{}

// StartMonitor is not supported on this OS.
func StartMonitor(context.Context, string, func(Violation)) (*Monitor, error) {
	return nil, errors.ErrUnsupported
}

// Stop does nothing.
func (*Monitor) Stop() error { return nil }
