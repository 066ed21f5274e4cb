//go:build linux

// Package dirent reads directories with getdents(2), for the walks that
// run on every command (the searches below writable roots before and
// after it): a name and its type, nothing allocated per entry.
package dirent

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Read calls fn with the name of every entry of the open directory fd
// but . and .., and whether it is a directory (not a symlink to one), as
// getdents(2) reads them into buf; name is only valid during the call.
// When the file system does not say an entry's type, fstatat does.
func Read(fd int, buf []byte, fn func(name []byte, isDir bool)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: d_ino, d_off (8 bytes each), d_reclen
		// (2), d_type (1), then the name up to a NUL.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ, name := b[18], b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			isDir := typ == unix.DT_DIR
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				isDir = unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
			}
			fn(name, isDir)
		}
	}
}
