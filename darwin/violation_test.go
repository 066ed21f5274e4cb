package darwin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// kernelLine is one line of `log stream --style ndjson` as the Sandbox
// kernel extension's reports look: the report, then the deny's message on
// a line of its own.
func kernelLine(t testing.TB, msg string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"timestamp":       "2025-03-04 05:06:07.891011-0800",
		"eventMessage":    msg,
		"processID":       0,
		"senderImagePath": "/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox",
		"messageType":     "Error",
		"eventType":       "logEvent",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

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
			line: kernelLine(t, "Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519\ncordon:run1"),
			want: Violation{Time: at, Process: "cat", PID: 4242, Operation: "file-read-data", Target: "/Users/u/.ssh/id_ed25519", Tag: "run1"},
			ok:   true,
		},
		{
			name: "message on the same line, path with spaces and parentheses",
			line: kernelLine(t, "Sandbox: node (helper)(77) deny(1) file-write-create /Users/u/My Proj (v2)/.git/hooks/pre-commit cordon:run-2.x"),
			want: Violation{Time: at, Process: "node (helper)", PID: 77, Operation: "file-write-create", Target: "/Users/u/My Proj (v2)/.git/hooks/pre-commit", Tag: "run-2.x"},
			ok:   true,
		},
		{
			name: "duplicate reports, network",
			line: `{"timestamp":"bad","processID":0,"senderImagePath":"/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox","eventMessage":"3 duplicate reports for Sandbox: curl(9) deny(1) network-outbound 93.184.216.34:443\ncordon:t"}`,
			want: Violation{Process: "curl", PID: 9, Operation: "network-outbound", Target: "93.184.216.34:443", Tag: "t"},
			ok:   true,
		},
		{
			name: "one duplicate report",
			line: kernelLine(t, "1 duplicate report for Sandbox: sh(5) deny(1) file-write-data /dev/dtracehelper\ncordon:t"),
			want: Violation{Time: at, Process: "sh", PID: 5, Operation: "file-write-data", Target: "/dev/dtracehelper", Tag: "t"},
			ok:   true,
		},
		{
			name: "mach-lookup, from the reporting subsystem",
			line: `{"subsystem":"com.apple.sandbox.reporting","category":"violation","eventMessage":"Sandbox: go(1) deny(1) mach-lookup com.apple.trustd.agent\ncordon:t"}`,
			want: Violation{Process: "go", PID: 1, Operation: "mach-lookup", Target: "com.apple.trustd.agent", Tag: "t"},
			ok:   true,
		},
		{
			name: "an operation without a target",
			line: kernelLine(t, "Sandbox: Gradle Worker(10) deny(1) signal\ncordon:t"),
			want: Violation{Time: at, Process: "Gradle Worker", PID: 10, Operation: "signal", Tag: "t"},
			ok:   true,
		},
		{
			name: "the command's exec refused, reported for sandbox-exec",
			line: kernelLine(t, "Sandbox: sandbox-exec(22391) deny(1) process-exec* /Users/u/secret/tool\ncordon:t"),
			want: Violation{Time: at, Process: "sandbox-exec", PID: 22391, Operation: "process-exec*", Target: "/Users/u/secret/tool", Tag: "t"},
			ok:   true,
		},
		{
			name: "a trailing newline",
			line: kernelLine(t, "Sandbox: ls(3) deny(1) file-read-metadata /private/var/db\ncordon:t\n"),
			want: Violation{Time: at, Process: "ls", PID: 3, Operation: "file-read-metadata", Target: "/private/var/db", Tag: "t"},
			ok:   true,
		},
		{
			name: "a refused path naming another run's tag: the last tag counts",
			line: kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /tmp/x\ncordon:victim\ncordon:attacker"),
			want: Violation{Time: at, Process: "cat", PID: 1, Operation: "file-read-data", Target: "/tmp/x\ncordon:victim", Tag: "attacker"},
			ok:   true,
		},
		{
			name: "a refused path posing as a report",
			line: kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /tmp/a(2) deny(1) mach-lookup x\ncordon:t"),
			want: Violation{Time: at, Process: "cat", PID: 1, Operation: "file-read-data", Target: "/tmp/a(2) deny(1) mach-lookup x", Tag: "t"},
			ok:   true,
		},
		{name: "a report of a process of its own, not the kernel's", line: `{"processID":4242,"senderImagePath":"/tmp/x/Sandbox","eventMessage":"Sandbox: cat(1) deny(1) file-write-data /\ncordon:t"}`},
		{name: "no provenance", line: `{"eventMessage":"Sandbox: cat(1) deny(1) file-write-data /\ncordon:t"}`},
		{name: "no tag", line: kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /x")},
		{name: "a tag glued to the target", line: kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /xcordon:t")},
		{name: "a tag with characters a tag has not", line: kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /x\ncordon:t/../u")},
		{name: "a tag alone", line: kernelLine(t, "cordon:t")},
		{name: "an allow report", line: kernelLine(t, "Sandbox: sh(84401) allow process-exec* /usr/bin/curl\ncordon:t")},
		{name: "the stream's banner", line: `Filtering the log data using "eventMessage CONTAINS ..."`},
		{name: "another message", line: kernelLine(t, "something else\ncordon:t")},
		{name: "a pid out of range", line: kernelLine(t, "Sandbox: cat(99999999999999999999) deny(1) file-read-data /x\ncordon:t")},
		{name: "empty", line: `{}`},
		{name: "not JSON", line: `{"eventMessage": TRUNCATED`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseViolation([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.ok, got)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPredicate(t *testing.T) {
	want := `eventMessage CONTAINS "cordon:run1" AND ((processID == 0 AND senderImagePath CONTAINS "/Sandbox") OR subsystem == "com.apple.sandbox.reporting")`
	if got := Predicate("run1"); got != want {
		t.Errorf("Predicate = %s\nwant        %s", got, want)
	}
	wantArgs := []string{"stream", "--style", "ndjson", "--predicate", want}
	if diff := cmp.Diff(wantArgs, StreamArgs("run1")); diff != "" {
		t.Errorf("StreamArgs (-want +got):\n%s", diff)
	}
}

// TestPredicateSelectsWhatParses checks that the predicate and the parser
// agree on the fields they read: every line the parser accepts has the
// fields the predicate tests, with the values it wants.
func TestPredicateSelectsWhatParses(t *testing.T) {
	line := kernelLine(t, "Sandbox: cat(1) deny(1) file-read-data /x\ncordon:run1")
	var fields map[string]any
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		t.Fatal(err)
	}
	p := Predicate("run1")
	for _, key := range []string{"eventMessage", "processID", "senderImagePath", "subsystem"} {
		if !strings.Contains(p, key+" ") {
			t.Errorf("the predicate does not test %s", key)
		}
	}
	if !strings.Contains(fields["eventMessage"].(string), "cordon:run1") || fields["processID"].(float64) != 0 ||
		!strings.Contains(fields["senderImagePath"].(string), senderSandbox) {
		t.Errorf("the predicate would not select %s", line)
	}
	if _, ok := ParseViolation([]byte(line)); !ok {
		t.Errorf("ParseViolation refused %s", line)
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
	f.Add([]byte(kernelLine(f, "Sandbox: cat(4242) deny(1) file-read-data /x\ncordon:run1")))
	f.Add([]byte(kernelLine(f, "1 duplicate report for Sandbox: a(b)(1) deny(2) op\ncordon:t")))
	f.Add([]byte(`{"subsystem":"com.apple.sandbox.reporting","eventMessage":"Sandbox: go(1) deny(1) mach-lookup x cordon:t"}`))
	f.Add([]byte(`Filtering the log data using "x"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		v, ok := ParseViolation(line)
		if !ok {
			return
		}
		if v.Operation == "" || v.Process == "" || v.PID < 0 || !tagPattern.MatchString(v.Tag) {
			t.Fatalf("parsed %+v from %q", v, line)
		}
		if strings.ContainsAny(v.Operation, " \t\n") {
			t.Fatalf("operation %q has a space", v.Operation)
		}
		if !strings.Contains(string(line), MessagePrefix) {
			t.Fatalf("parsed %+v from a line without a tag", v)
		}
	})
}
