package access

import "golang.org/x/sys/unix"

// HasACL reports whether the file at path (not followed if a symlink) has
// a POSIX access ACL. An error reading it counts as one: the caller then
// assumes the most the file could grant.
func HasACL(path string) bool {
	n, err := unix.Lgetxattr(path, "system.posix_acl_access", nil)
	switch err {
	case nil:
		return n > 0
	case unix.ENODATA, unix.EOPNOTSUPP:
		return false
	}
	return true
}
