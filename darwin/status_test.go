//go:build unix

package darwin

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

func TestExitStatus(t *testing.T) {
	for script, want := range map[string]int{
		"exit 0":        0,
		"exit 3":        3,
		"kill -TERM $$": 128 + 15,
		"kill -KILL $$": 128 + 9,
	} {
		err := exec.Command("/bin/sh", "-c", script).Run()
		var ee *exec.ExitError
		var ps *os.ProcessState
		switch {
		case err == nil:
			if want != 0 {
				t.Fatalf("%s: no error", script)
			}
			continue
		case errors.As(err, &ee):
			ps = ee.ProcessState
		default:
			t.Fatal(err)
		}
		if got := exitStatus(ps); got != want {
			t.Errorf("%s: status %d, want %d", script, got, want)
		}
	}
}

func TestDirect(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !direct(r) || !direct(w) {
		t.Error("a pipe is handed over as it is")
	}
	if direct(f) {
		t.Error("a file is copied through a pipe")
	}
}

func TestRunStatus(t *testing.T) {
	state := func(script string) *os.ProcessState {
		cmd := exec.Command("/bin/sh", "-c", script)
		_ = cmd.Run()
		return cmd.ProcessState
	}
	killed, exited := state("kill -KILL $$"), state("exit 3")
	for _, tc := range []struct {
		name     string
		ps       *os.ProcessState
		timedOut bool
		want     int
	}{
		{"killed by the timeout", killed, true, ExitTimedOut},
		{"killed otherwise", killed, false, 128 + 9},
		{"exited as the timer fired", exited, true, 3},
		{"exited", exited, false, 3},
	} {
		if got := runStatus(tc.ps, tc.timedOut); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}
