package paths

import "testing"

func TestUnderBelow(t *testing.T) {
	for _, tc := range []struct {
		p, dir       string
		under, below bool
	}{
		{"/a/b", "/a", true, true},
		{"/a", "/a", true, false},
		{"/ab", "/a", false, false},
		{"/a", "/a/b", false, false},
		{"/a/b", "/a/", true, true},
		{"/", "/", true, false},
		{"/a", "/", true, true},
		{"/a/b/c", "/", true, true},
		{"", "/", false, false},
		{"/a", "", true, true}, // "" is "/" without its slash, as a trimmed "/"
		{"a/b", "a", true, true},
		{"/x/.cordon", "/x/.cordon-quarantine", false, false},
	} {
		if got := Under(tc.p, tc.dir); got != tc.under {
			t.Errorf("Under(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.under)
		}
		if got := Below(tc.p, tc.dir); got != tc.below {
			t.Errorf("Below(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.below)
		}
	}
}
