//go:build !linux

package access

// HasACL reports whether the file at path has a POSIX access ACL: on
// systems without them, it has none.
func HasACL(string) bool { return false }
