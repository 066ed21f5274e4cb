// Package access decides what a process without capabilities may do to a
// file, from the file's owner, group and permission bits, as the kernel's
// generic_permission does. cordon asks it where the sandboxed command and
// cordon itself see the file system differently: a root caller's command
// runs as uid 0 and gid 0 with no capability and no supplementary group,
// so another user's private directory is closed to it, while cordon,
// planning and cleaning up as the real root, could enter it.
//
// POSIX ACLs are not read here: a file that has one is said to grant what
// the bits of its group class (the ACL's mask, the most any named entry
// can grant) or its other class grant, which may be more than it grants,
// never less.
package access

// Who is a process without capabilities or supplementary groups.
type Who struct {
	UID, GID uint32
}

// The permissions asked for, as in the mode's "other" bits.
const (
	Read   = 4
	Write  = 2
	Search = 1
)

// File is what decides access to a file: its owner, group, permission
// bits (the low nine of the mode) and whether it has an access ACL.
type File struct {
	UID, GID uint32
	Perm     uint32
	ACL      bool
}

// May reports whether w may do all of want (Read|Write|Search) to f.
func (w Who) May(f File, want uint32) bool {
	owner, group, other := f.Perm>>6&7, f.Perm>>3&7, f.Perm&7
	switch {
	case f.UID == w.UID:
		return owner&want == want
	case f.ACL:
		// A named user or group entry may match w: it grants at most
		// the mask (the group class bits).
		return group&want == want || other&want == want
	case f.GID == w.GID:
		return group&want == want
	}
	return other&want == want
}
