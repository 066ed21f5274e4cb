package runtime

import (
	"slices"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// TestWithoutSeccomp: libcontainer's copy of the spec has no profile, and
// the spec it came from keeps its own: the program cordon's init installs
// is compiled from it, and a spec left without one would run unfiltered.
func TestWithoutSeccomp(t *testing.T) {
	profile := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}
	s := &specs.Spec{Linux: &specs.Linux{Seccomp: profile, MaskedPaths: []string{"/proc/kcore"}}}
	got := withoutSeccomp(s)
	if got.Linux.Seccomp != nil {
		t.Errorf("libcontainer's spec has a seccomp profile")
	}
	if s.Linux.Seccomp != profile {
		t.Errorf("the spec lost its seccomp profile")
	}
	if !slices.Equal(got.Linux.MaskedPaths, s.Linux.MaskedPaths) {
		t.Errorf("masked paths %q; want %q", got.Linux.MaskedPaths, s.Linux.MaskedPaths)
	}
	if none := (&specs.Spec{}); withoutSeccomp(none) != none {
		t.Errorf("a spec without a profile was copied")
	}
}
