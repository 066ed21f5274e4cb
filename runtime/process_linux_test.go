package runtime

import (
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// TestNewProcessRlimits: the rlimits of cordon's init go to the init as
// arguments (it sets them before it starts the command), those of any
// other process to libcontainer.
func TestNewProcessRlimits(t *testing.T) {
	rl := []specs.POSIXRlimit{{Type: "RLIMIT_AS", Soft: 1 << 30, Hard: 1 << 30}, {Type: "RLIMIT_NOFILE", Soft: 64, Hard: 128}}
	init := &specs.Process{Args: []string{spec.InitPath, spec.InitCommand, "--parent-fd=3", "--", "make", "test"}, Rlimits: rl}
	lp, err := newProcess(init)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{spec.InitPath, spec.InitCommand, "--parent-fd=3", "--rlimit=9:1073741824:1073741824", "--rlimit=7:64:128", "--", "make", "test"}
	if diff := cmp.Diff(want, lp.Args); diff != "" || len(lp.Rlimits) != 0 {
		t.Errorf("init args (-want +got):\n%s\nlibcontainer rlimits: %v", diff, lp.Rlimits)
	}
	if init.Args[3] != "--" {
		t.Errorf("the spec's args changed: %v", init.Args)
	}
	other := &specs.Process{Args: []string{"/bin/sh"}, Rlimits: rl}
	lp, err = newProcess(other)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Rlimits) != 2 || lp.Rlimits[0].Type != unix.RLIMIT_AS || len(lp.Args) != 1 {
		t.Errorf("a process of its own: args %v, rlimits %+v", lp.Args, lp.Rlimits)
	}
	if _, err := newProcess(&specs.Process{Args: []string{"x"}, Rlimits: []specs.POSIXRlimit{{Type: "RLIMIT_NOPE"}}}); err == nil {
		t.Error("an unknown rlimit was accepted")
	}
}

func TestWriterGone(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	open, openW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	defer openW.Close()
	r.Close()
	for _, tc := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"a pipe whose reader is gone", w, true},
		{"a pipe with its reader", openW, false},
		{"/dev/null", devNull, false},
		{"not a file", io.Discard, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := writerGone(tc.w)(); got != tc.want {
				t.Errorf("writerGone = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestKillNeverStarted: ending a sandbox whose init never started (making
// it failed half way: out of descriptors) does nothing; libcontainer
// panics signalling such a container, and cordon serve died of it.
func TestKillNeverStarted(t *testing.T) {
	sb := &sandbox{process: &libcontainer.Process{}}
	if sb.initStarted() {
		t.Error("an init that never started says it did")
	}
	sb.kill()
	(&sandbox{}).kill()
}
