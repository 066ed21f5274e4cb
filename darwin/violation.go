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
	Time      time.Time
	Process   string // the process's name
	PID       int
	Operation string // the SBPL operation: file-read-data, network-outbound, mach-lookup, ...
	Target    string // what it was refused: a path, an address, a service or sysctl name
	Tag       string // the run's tag, from the denying rule's message
}

// Predicate returns the `log stream --predicate` that selects the
// violations of the run tagged tag: kernel reports of the Sandbox kext (or
// of the sandbox reporting subsystem) that carry the message every deny of
// its profile reports. CONTAINS also matches longer tags that start with
// this one; the monitor compares the parsed tag exactly.
func Predicate(tag string) string {
	return `eventMessage CONTAINS "` + MessagePrefix + tag + `"` +
		` AND (senderImagePath CONTAINS "/Sandbox" OR subsystem == "com.apple.sandbox.reporting")`
}

// logEntry is the part of one `log stream --style ndjson` line read here.
type logEntry struct {
	Timestamp    string `json:"timestamp"`
	EventMessage string `json:"eventMessage"`
}

var (
	// "Sandbox: cat(4242) deny(1) file-read-data /Users/u/.ssh/id_ed25519",
	// optionally "N duplicate reports for " first.
	reportPattern = regexp.MustCompile(`^(?:\d+ duplicate reports? for )?Sandbox: (.+)\((\d+)\) deny\(\d+\) (\S+)(?: (.*))?$`)
	tagToken      = regexp.MustCompile(regexp.QuoteMeta(MessagePrefix) + `([A-Za-z0-9._-]{1,64})`)
)

// logTime is the layout of the log's timestamps.
const logTime = "2006-01-02 15:04:05.000000-0700"

// ParseViolation reads one line of `log stream --style ndjson` output. ok
// is false for lines that are not a sandbox denial (the stream's own
// "Filtering the log data using ..." line, other messages).
func ParseViolation(line []byte) (v Violation, ok bool) {
	var e logEntry
	if err := json.Unmarshal(line, &e); err != nil || e.EventMessage == "" {
		return v, false
	}
	for _, l := range strings.Split(e.EventMessage, "\n") {
		m := reportPattern.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		if t := tagToken.FindStringSubmatch(e.EventMessage); t != nil {
			v.Tag = t[1]
		}
		v.Process, v.Operation = m[1], m[3]
		v.PID, _ = strconv.Atoi(m[2])
		// The message may follow the target on the same line.
		v.Target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[4]), MessagePrefix+v.Tag))
		v.Time, _ = time.Parse(logTime, e.Timestamp)
		return v, true
	}
	return v, false
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
// passing, which a report to the user should leave out.
func (v Violation) Noise() bool {
	for _, n := range noise {
		if v.Operation == n.operation && v.Target == n.target {
			return true
		}
	}
	return false
}
