package mounts

import (
	"io/fs"
	"syscall"

	"cordon.dev/cordon/internal/access"
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

// fileOf returns what decides access to a file the host file system
// described (or that a test gave as its Sys).
func fileOf(fi fs.FileInfo) (access.File, bool) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return access.File{UID: st.Uid, GID: st.Gid, Perm: uint32(st.Mode) & 0o777}, true
	case access.File:
		return st, true
	}
	return access.File{}, false
}
