package darwin

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

func TestLimits(t *testing.T) {
	rl, lost := Limits(policy.Limits{
		Memory: 2 << 30, Pids: 100, CPUs: 1.5, FileSize: 1 << 20, OpenFiles: 256, TmpSize: 512 << 20,
		Timeout: 1, OutputLimit: 1,
	})
	if diff := cmp.Diff([]Rlimit{{"fsize", 1 << 20}, {"nofile", 256}}, rl); diff != "" {
		t.Errorf("rlimits (-want +got):\n%s", diff)
	}
	want := []string{
		"memory 2G: not enforced on macOS", "pids 100: not enforced on macOS",
		"cpus 1.5: not enforced on macOS", "tmpSize 512M: not enforced on macOS",
	}
	if diff := cmp.Diff(want, lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	_, lost = Limits(policy.Limits{MemoryPercent: 25})
	if diff := cmp.Diff([]string{"memory 25%: not enforced on macOS"}, lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	if rl, lost := Limits(policy.Limits{}); rl != nil || lost != nil {
		t.Errorf("no limits: %v %v", rl, lost)
	}
}

func TestParseLimitArgs(t *testing.T) {
	rl := []Rlimit{{"fsize", 4096}, {"nofile", 64}}
	args := []string{"-p", "(version 1)", "--", "ls"}
	argv := LimitArgs("/bin/cordon", rl, args)
	gotRL, gotArgs, err := ParseLimitArgs(argv[2:])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rl, gotRL); diff != "" {
		t.Errorf("rlimits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(args, gotArgs); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	for _, bad := range [][]string{
		nil,
		{"fsize=1"},                       // no --
		{"fsize=1", "--"},                 // nothing to run
		{"as=1", "--", "-p", "x"},         // a resource Rlimit does not name
		{"fsize", "--", "-p", "x"},        // no value
		{"fsize=-1", "--", "-p", "x"},     // negative
		{"fsize=1e3", "--", "-p", "x"},    // not a number
		{"fsize=1", "fsize=2", "--", "x"}, // twice
	} {
		if _, _, err := ParseLimitArgs(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLimitArgs(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if got := clampRlimit(1000, 256); got != 256 {
		t.Errorf("clampRlimit above the hard limit = %d", got)
	}
	if got := clampRlimit(100, 256); got != 100 {
		t.Errorf("clampRlimit below the hard limit = %d", got)
	}
}

func FuzzParseLimitArgs(f *testing.F) {
	f.Add("fsize=1\x00nofile=2\x00--\x00-p\x00x")
	f.Add("--\x00a")
	f.Add("nofile=18446744073709551615\x00--\x00-f\x00/p")
	f.Fuzz(func(t *testing.T, joined string) {
		args := splitNUL(joined)
		rl, rest, err := ParseLimitArgs(args)
		if err != nil {
			return
		}
		if len(rest) == 0 {
			t.Fatalf("nothing to run from %q", args)
		}
		again, rest2, err := ParseLimitArgs(LimitArgs("/c", rl, rest)[2:])
		if err != nil || !cmp.Equal(rl, again) || !cmp.Equal(rest, rest2) {
			t.Fatalf("round trip of %q: %v %v %v", args, again, rest2, err)
		}
	})
}

func splitNUL(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
