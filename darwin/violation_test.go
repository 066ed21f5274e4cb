package darwin

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseViolation(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 891011000, time.FixedZone("", -8*3600))
	for _, tc := range []struct {
		name string
		line string
		want Violation
		ok   bool
	}{
		{
			name: "message on its own line",
			line: `{"timestamp":"2025-03-04 05:06:07.891011-0800","eventMessage":"Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519\ncordon:run1","processID":0,"senderImagePath":"/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox"}`,
			want: Violation{Time: at, Process: "cat", PID: 4242, Operation: "file-read-data", Target: "/Users/u/.ssh/id_ed25519", Tag: "run1"},
			ok:   true,
		},
		{
			name: "message on the same line, path with spaces and parentheses",
			line: `{"timestamp":"2025-03-04 05:06:07.891011-0800","eventMessage":"Sandbox: node (helper)(77) deny(1) file-write-create /Users/u/My Proj (v2)/.git/hooks/pre-commit cordon:run-2.x"}`,
			want: Violation{Time: at, Process: "node (helper)", PID: 77, Operation: "file-write-create", Target: "/Users/u/My Proj (v2)/.git/hooks/pre-commit", Tag: "run-2.x"},
			ok:   true,
		},
		{
			name: "duplicate reports, network",
			line: `{"timestamp":"bad","eventMessage":"3 duplicate reports for Sandbox: curl(9) deny(1) network-outbound 93.184.216.34:443\ncordon:t"}`,
			want: Violation{Process: "curl", PID: 9, Operation: "network-outbound", Target: "93.184.216.34:443", Tag: "t"},
			ok:   true,
		},
		{
			name: "mach-lookup",
			line: `{"eventMessage":"Sandbox: go(1) deny(1) mach-lookup com.apple.trustd.agent\ncordon:t"}`,
			want: Violation{Process: "go", PID: 1, Operation: "mach-lookup", Target: "com.apple.trustd.agent", Tag: "t"},
			ok:   true,
		},
		{name: "the stream's banner", line: `Filtering the log data using "eventMessage CONTAINS ..."`},
		{name: "another message", line: `{"eventMessage":"something else cordon:t"}`},
		{name: "empty", line: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseViolation([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPredicate(t *testing.T) {
	want := `eventMessage CONTAINS "cordon:run1" AND (senderImagePath CONTAINS "/Sandbox" OR subsystem == "com.apple.sandbox.reporting")`
	if got := Predicate("run1"); got != want {
		t.Errorf("Predicate = %s\nwant        %s", got, want)
	}
}

func TestNoise(t *testing.T) {
	if !(Violation{Operation: "mach-lookup", Target: "com.apple.diagnosticd"}).Noise() {
		t.Error("diagnosticd lookups are noise")
	}
	if (Violation{Operation: "file-read-data", Target: "/Users/u/.ssh/id_rsa"}).Noise() {
		t.Error("a credential read is not noise")
	}
}

func FuzzParseViolation(f *testing.F) {
	f.Add([]byte(`{"eventMessage":"Sandbox: cat(4242) deny(1) file-read-data /x\ncordon:run1"}`))
	f.Add([]byte(`{"eventMessage":"1 duplicate report for Sandbox: a(b)(1) deny(2) op"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		v, ok := ParseViolation(line)
		if ok && (v.Operation == "" || v.Process == "") {
			t.Fatalf("parsed %+v from %q", v, line)
		}
	})
}
