//go:build !darwin

package darwin

import (
	"errors"
	"io"
	"os/exec"
	"time"
)

// PTY is a pseudo-terminal for one command; only darwin has them here.
type PTY struct{}

// OpenPTY is not supported on this OS.
func OpenPTY() (*PTY, error) { return nil, errors.ErrUnsupported }

// Name returns "".
func (*PTY) Name() string { return "" }

// Close does nothing.
func (*PTY) Close() error { return nil }

func (*PTY) attach(*exec.Cmd, io.Reader, io.Writer) (func(), error) {
	return nil, errors.ErrUnsupported
}

func (*PTY) started()            {}
func (*PTY) drain(time.Duration) {}
