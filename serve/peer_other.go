//go:build !linux

package serve

import (
	"errors"
	"net"
)

// checkDaemon cannot check the daemon's user on this system: it is not
// used.
func checkDaemon(*net.UnixConn, string) error {
	return errors.ErrUnsupported
}
