package runtime

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestStartTime(t *testing.T) {
	self := os.Getpid()
	st := startTime(self)
	if st == 0 {
		t.Fatal("no start time for this process")
	}
	if !alive(self, st) {
		t.Error("this process is not alive")
	}
	if alive(self, st+1) {
		t.Error("a different start time (a reused pid) counts as alive")
	}
	if alive(0, st) || startTime(1<<30) != 0 {
		t.Error("a pid that cannot exist is alive")
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -TERM $$", 143},
		{"kill -KILL $$", 137},
	}
	for _, tc := range tests {
		cmd := exec.Command("sh", "-c", tc.script)
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		got, err := exitStatus(cmd.ProcessState, nil)
		if err != nil || got != tc.want {
			t.Errorf("%s: exitStatus = %d, %v; want %d", tc.script, got, err, tc.want)
		}
	}
	if _, err := exitStatus(nil, errors.New("boom")); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a wait error is lost: %v", err)
	}
}

func TestNewID(t *testing.T) {
	a, b := NewID(), NewID()
	if a == b || !strings.HasPrefix(a, "run-") {
		t.Errorf("ids %q and %q", a, b)
	}
}
