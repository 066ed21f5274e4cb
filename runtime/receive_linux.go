package runtime

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// receiveFDs waits on sock for the one message the sandbox's init sends
// it, carrying between one and max descriptors, and returns them. The
// init closing its end first is an error (errNothingSent).
func receiveFDs(sock *os.File, max int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*max))
	raw, err := sock.SyscallConn()
	if err != nil {
		return nil, err
	}
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errNothingSent
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("bad message from the init: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) == 0 || len(fds) > max {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("bad message from the init: %d descriptors (%v)", len(fds), err)
	}
	return fds, nil
}

// errNothingSent: the init closed its end of the socket without sending.
var errNothingSent = errors.New("the init closed the socket")
