package access

import "testing"

func TestMay(t *testing.T) {
	root := Who{UID: 0, GID: 0, Groups: []uint32{27}}
	for _, tc := range []struct {
		name string
		f    File
		want uint32
		may  bool
	}{
		{"own private directory", File{UID: 0, GID: 0, Perm: 0o700}, Search, true},
		{"own directory without search", File{UID: 0, GID: 0, Perm: 0o600}, Search, false},
		{"another user's private directory", File{UID: 1001, GID: 1001, Perm: 0o700}, Search, false},
		{"another user's traversable directory", File{UID: 1001, GID: 1001, Perm: 0o711}, Search, true},
		{"another user's, not listable", File{UID: 1001, GID: 1001, Perm: 0o711}, Read, false},
		{"group root", File{UID: 1001, GID: 0, Perm: 0o750}, Read | Search, true},
		{"another group", File{UID: 1001, GID: 1001, Perm: 0o750}, Search, false},
		{"a supplementary group", File{UID: 1001, GID: 27, Perm: 0o750}, Search, true},
		// The owner's bits decide for the owner, whatever the others'.
		{"owner bits only", File{UID: 0, GID: 0, Perm: 0o077}, Search, false},
		{"group bits not for others", File{UID: 1001, GID: 0, Perm: 0o707}, Search, false},
		// An ACL may name root: its mask (the group bits) is the most
		// it could grant.
		{"acl within the mask", File{UID: 1001, GID: 1001, Perm: 0o750, ACL: true}, Search, true},
		{"acl mask closed", File{UID: 1001, GID: 1001, Perm: 0o700, ACL: true}, Search, false},
		{"acl, other bits", File{UID: 1001, GID: 1001, Perm: 0o701, ACL: true}, Search, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := root.May(tc.f, tc.want); got != tc.may {
				t.Errorf("May(%+v, %o) = %v, want %v", tc.f, tc.want, got, tc.may)
			}
		})
	}
}
