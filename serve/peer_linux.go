package serve

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}

// checkDaemon makes sure the daemon at the other end of c runs as this
// process's user, before anything is sent to it: a socket planted where
// the daemon's would be (a state directory under /tmp, CORDON_STATE_ROOT)
// must not get a command's arguments, environment and descriptors.
func checkDaemon(c *net.UnixConn, path string) error {
	uid, err := peerUID(c)
	if err != nil {
		return err
	}
	if uid != os.Geteuid() {
		return fmt.Errorf("%w: %s is served by uid %d, not %d", ErrForeign, path, uid, os.Geteuid())
	}
	return nil
}
