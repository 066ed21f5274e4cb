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
