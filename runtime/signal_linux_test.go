package runtime

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want unix.Signal // -1: an error
	}{
		{"9", unix.SIGKILL},
		{"0", 0},
		{"64", 64},
		{"KILL", unix.SIGKILL},
		{"kill", unix.SIGKILL},
		{"SIGTERM", unix.SIGTERM},
		{"sigterm", unix.SIGTERM},
		{"SIGRTMIN", -1}, // not a name unix knows
		{"-9", -1},
		{"65", -1},
		{"99999999999999999999", -1},
		{"", -1},
		{"SIG", -1},
		{"NOPE", -1},
	} {
		got, err := ParseSignal(tc.in)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("ParseSignal(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSignal(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseSignal: what parses is a signal the kernel takes, and its name
// or number parses back to it.
func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{"9", "KILL", "sigterm", "-1", "65", "SIGWINCH", "+9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := ParseSignal(s)
		if err != nil {
			return
		}
		if sig < 0 || sig > 64 {
			t.Fatalf("ParseSignal(%q) = %d, not a signal", s, sig)
		}
		if back, err := ParseSignal(strconv.Itoa(int(sig))); err != nil || back != sig {
			t.Fatalf("ParseSignal(%q) = %d; its number reads back as %d, %v", s, sig, back, err)
		}
		if name := unix.SignalName(sig); name != "" {
			if back, err := ParseSignal(strings.ToLower(name)); err != nil || back != sig {
				t.Fatalf("ParseSignal(%q) = %d; its name %s reads back as %d, %v", s, sig, name, back, err)
			}
		}
	})
}

func TestSigBlocked(t *testing.T) {
	// The init's mask once it blocks everything it may (not SIGKILL, SIGSTOP).
	const all = "Name:\tcordon\nState:\tS (sleeping)\nSigPnd:\t0000000000000000\nSigBlk:\tfffffffffffbfeff\nSigIgn:\t0000000000000000\n"
	for _, tc := range []struct {
		name    string
		status  string
		sig     unix.Signal
		blocked bool
		ok      bool
	}{
		{"blocked", all, unix.SIGTERM, true, true},
		{"SIGHUP, bit 0", all, unix.SIGHUP, true, true},
		{"SIGKILL never", all, unix.SIGKILL, false, true},
		{"nothing blocked yet", "SigBlk:\t0000000000000000\n", unix.SIGTERM, false, true},
		{"only SIGTERM", "SigBlk:\t0000000000004000\n", unix.SIGTERM, true, true},
		{"only SIGTERM, asked SIGINT", "SigBlk:\t0000000000004000\n", unix.SIGINT, false, true},
		{"no SigBlk line", "Name:\tx\n", unix.SIGTERM, false, false},
		{"garbage", "SigBlk:\tzz\n", unix.SIGTERM, false, false},
		{"signal 0", all, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocked, ok := sigBlocked(tc.status, tc.sig)
			if blocked != tc.blocked || ok != tc.ok {
				t.Errorf("sigBlocked(%q, %d) = %v, %v; want %v, %v", tc.status, tc.sig, blocked, ok, tc.blocked, tc.ok)
			}
		})
	}
}
