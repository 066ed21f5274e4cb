// Package access decides what a process without capabilities may do to a
// file, from the file's owner, group and permission bits, as the kernel's
// generic_permission does. cordon asks it where the sandboxed command and
// cordon itself see the file system differently: a root caller's command
// runs as uid 0 and gid 0 with no capability and, in the full sandbox, no
// supplementary group, so another user's private directory is closed to
// it, while cordon, planning and cleaning up as the real root, could
// enter it. (In the container mode the command keeps the caller's
// supplementary groups.)
//
// POSIX ACLs are not read here: a file that has one is said to grant what
// the bits of its group class (the ACL's mask, the most any named entry
// can grant) or its other class grant, which may be more than it grants,
// never less.
package access

import (
	"os"
	"slices"
)

// Who is a process without capabilities.
type Who struct {
	UID, GID uint32
	// Groups are its supplementary groups.
	Groups []uint32
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
	case f.GID == w.GID || slices.Contains(w.Groups, f.GID):
		return group&want == want
	}
	return other&want == want
}

// Groups returns this process's supplementary groups (none where the
// system cannot say).
func Groups() []uint32 {
	gs, _ := os.Getgroups()
	out := make([]uint32, 0, len(gs))
	for _, g := range gs {
		out = append(out, uint32(g))
	}
	return out
}
