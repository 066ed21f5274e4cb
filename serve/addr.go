package serve

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// maxSocketPath is what a unix socket address holds, its NUL included.
const maxSocketPath = 108

// shortPath returns a name of path that fits a unix socket address: path
// itself, or one through a descriptor of its directory
// (/proc/self/fd/N/NAME), which done closes once the socket is bound or
// connected. State directories under deep homes are longer than 107 bytes.
func shortPath(path string) (name string, done func(), err error) {
	if len(path) < maxSocketPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path), func() { dir.Close() }, nil
}

// Listen listens on the unix socket path. The socket stays when the
// listener closes: the caller removes it.
func Listen(path string) (*net.UnixListener, error) {
	name, done, err := shortPath(path)
	if err != nil {
		return nil, err
	}
	defer done()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	return ln, nil
}

// Dial connects to the daemon's socket at path, and makes sure the daemon
// runs as this process's user (ErrForeign otherwise).
func Dial(ctx context.Context, path string) (*net.UnixConn, error) {
	name, done, err := shortPath(path)
	if err != nil {
		return nil, err
	}
	defer done()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", name)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UnixConn)
	if err := checkDaemon(uc, path); err != nil {
		uc.Close()
		return nil, err
	}
	return uc, nil
}

// ErrForeign says that the socket at the daemon's path is served by
// another user: nothing is sent to it.
var ErrForeign = errors.New("cordon serve: the socket is another user's")
