package probe

import (
	"os"

	"golang.org/x/sys/unix"
)

func euid() int { return os.Geteuid() }

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
