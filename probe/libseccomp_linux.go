//go:build linux && cgo

package probe

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// libseccompVersion returns the version of the libseccomp linked in, and
// its API level for this kernel.
func libseccompVersion() Libseccomp {
	major, minor, micro := libseccomp.GetLibraryVersion()
	l := Libseccomp{Version: fmt.Sprintf("%d.%d.%d", major, minor, micro)}
	if api, err := libseccomp.GetAPI(); err == nil {
		l.API = int(api)
	}
	return l
}
