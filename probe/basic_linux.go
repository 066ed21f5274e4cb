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

func memTotal() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// AnonFolios reads the sizes of folio, larger than a page, that the kernel
// gives anonymous memory on a page fault (Host.AnonFolios), now.
func AnonFolios() []string { return readAnonFolios() }
