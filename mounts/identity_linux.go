package mounts

import (
	"io/fs"
	"syscall"
)

// identityOf returns the device and inode numbers of a file the host file
// system described (or that a test gave as its Sys).
func identityOf(fi fs.FileInfo) (Identity, bool) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return Identity{Dev: st.Dev, Ino: st.Ino}, true
	case Identity:
		return st, true
	}
	return Identity{}, false
}
