package darwin

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Violation is one operation Seatbelt refused a sandboxed process, as the
// unified log reports it.
type Violation struct {
	Time time.Time
	// Process is the process's name as the kernel keeps it (p_comm: at
	// most 16 bytes, cut without notice), PID its pid.
	Process string
	PID     int
	// Operation is the SBPL operation: file-read-data, file-write-create,
	// network-outbound, mach-lookup, sysctl-read, ...
	Operation string
	// Target is what it was refused: a path, an address, a service or
	// sysctl name; empty for operations without one (signal, ...).
	Target string
	// Tag is the run's tag, from the denying rule's message.
	Tag string
}

// Where Seatbelt's reports come from: the kernel (process 0) logging from
// the Sandbox kernel extension, or the sandbox reporting subsystem that
// newer macOS releases use for the same messages.
const (
	senderSandbox    = "/Sandbox" // .../Sandbox.kext/Contents/MacOS/Sandbox
	subsystemReports = "com.apple.sandbox.reporting"
)

// LogCommand is the unified log's command-line tool.
const LogCommand = "/usr/bin/log"

// StreamArgs are the arguments of LogCommand that follow the run tagged
// tag: every matching entry as it is logged, one JSON object a line.
func StreamArgs(tag string) []string {
	return []string{"stream", "--style", "ndjson", "--predicate", Predicate(tag)}
}

// Predicate returns the `log stream --predicate` that selects the
// violations of the run tagged tag: reports of the Sandbox kernel
// extension (process 0: no sandboxed process can log as the kernel) or of
// the sandbox reporting subsystem that carry the message every deny of the
// run's profile reports. CONTAINS also matches longer tags that start with
// this one, and a tag named in a refused path; the monitor compares the
// parsed tag exactly. The tag is one of tagPattern's, which needs no
// quoting in a predicate.
func Predicate(tag string) string {
	return `eventMessage CONTAINS "` + MessagePrefix + tag + `"` +
		` AND ((processID == 0 AND senderImagePath CONTAINS "` + senderSandbox + `")` +
		` OR subsystem == "` + subsystemReports + `")`
}

// logEntry is the part of one `log stream --style ndjson` line read here.
type logEntry struct {
	Timestamp       string `json:"timestamp"`
	EventMessage    string `json:"eventMessage"`
	ProcessID       *int64 `json:"processID"`
	SenderImagePath string `json:"senderImagePath"`
	Subsystem       string `json:"subsystem"`
}

// fromSandbox reports whether the entry is Seatbelt's, as Predicate
// selects: checked again here so that a line the predicate should not
// have let through (a forged report of a sandboxed process's own) is not
// taken for one.
func (e logEntry) fromSandbox() bool {
	kernel := e.ProcessID != nil && *e.ProcessID == 0 && strings.Contains(e.SenderImagePath, senderSandbox)
	return kernel || e.Subsystem == subsystemReports
}

// reportPattern is the kernel's report, "Sandbox: cat(4242) deny(1)
// file-read-data /Users/u/.ssh/id_ed25519", possibly counting repeats
// first ("3 duplicate reports for Sandbox: ..."). The process's name is
// the shortest that fits, so that a refused path that itself reads
// "(1) deny(1) ..." cannot pose as the report.
var reportPattern = regexp.MustCompile(`(?s)^(?:\d+ duplicate reports? for )?Sandbox: (.+?)\((\d+)\) deny\(\d+\) (\S+)(?: (.*))?$`)

// logTime is the layout of the log's timestamps.
const logTime = "2006-01-02 15:04:05.000000-0700"

// ParseViolation reads one line of `log stream --style ndjson` output. ok
// is false for lines that are not a sandbox denial carrying a cordon tag:
// the stream's own "Filtering the log data using ..." line, other
// messages, reports of other sources.
//
// The deny's message (MessagePrefix and the tag) ends the event message,
// on a line of its own after the report (or, if a release puts it there,
// after a space on the report's line). The last one is the tag: a refused
// path may name another run's, never after it.
func ParseViolation(line []byte) (v Violation, ok bool) {
	var e logEntry
	if err := json.Unmarshal(line, &e); err != nil || e.EventMessage == "" || !e.fromSandbox() {
		return v, false
	}
	msg := strings.TrimRight(e.EventMessage, " \t\r\n")
	i := strings.LastIndex(msg, MessagePrefix)
	if i <= 0 || (msg[i-1] != '\n' && msg[i-1] != ' ') {
		return v, false
	}
	tag := msg[i+len(MessagePrefix):]
	if !tagPattern.MatchString(tag) {
		return v, false
	}
	m := reportPattern.FindStringSubmatch(strings.TrimSpace(msg[:i]))
	if m == nil {
		return v, false
	}
	pid, err := strconv.Atoi(m[2])
	if err != nil {
		return v, false
	}
	v = Violation{Process: m[1], PID: pid, Operation: m[3], Target: strings.TrimSpace(m[4]), Tag: tag}
	v.Time, _ = time.Parse(logTime, e.Timestamp)
	return v, true
}

// noise are denials a sandboxed process makes in passing, by design: the
// system's telemetry daemons and the DTrace helper that dyld and runtimes
// probe for at startup.
var noise = []struct{ operation, target string }{
	{"mach-lookup", "com.apple.diagnosticd"},
	{"mach-lookup", "com.apple.analyticsd"},
	{"mach-lookup", "com.apple.analyticsd.messagetracer"},
	{"file-read-data", "/dev/dtracehelper"},
	{"file-write-data", "/dev/dtracehelper"},
	{"file-ioctl", "/dev/dtracehelper"},
}

// Noise reports whether v is a denial every sandboxed process meets in
// passing, which is neither recorded nor reported.
func (v Violation) Noise() bool {
	for _, n := range noise {
		if v.Operation == n.operation && v.Target == n.target {
			return true
		}
	}
	return false
}
