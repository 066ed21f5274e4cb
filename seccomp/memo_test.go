package seccomp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The parsed moby profile is shared by every Profile call of a process:
// none may change it.
func TestProfileLeavesMobyDefaultAlone(t *testing.T) {
	for _, o := range []Options{
		{KernelVersion: "6.1.0", Notify: true, NotifyWrites: true, NotifyReads: true},
		{KernelVersion: "5.10.0", AllowSocketpair: true},
		{Arch: "arm64", KernelVersion: "6.8.0", Notify: true},
	} {
		if _, err := Profile(o); err != nil {
			t.Fatal(err)
		}
	}
	shared, err := loadMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := parseMobyDefault()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, shared); diff != "" {
		t.Errorf("the shared moby profile changed (-fresh +shared):\n%s", diff)
	}
}
