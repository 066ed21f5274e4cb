//go:build !linux

package serve

import (
	"context"
	"errors"
	"net"
)

// state is a serving daemon's.
type state struct{}

// Serve is not supported on this OS.
func (s *Server) Serve(context.Context, *net.UnixListener) error { return errors.ErrUnsupported }
