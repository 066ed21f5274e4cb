// Package darwin compiles a sandbox policy into the Seatbelt profile (SBPL)
// that macOS's /usr/bin/sandbox-exec enforces, so that one settings file
// means the same thing on macOS as on Linux. The profile denies by default;
// it allows what a shell and the usual toolchains need, reads everywhere
// except the denied paths and the credential stores, writes only in the
// writable roots and the run's temporary directory minus the denied and
// always-protected paths of every writable root, and network connections
// only to cordon's filtering proxy on the loopback interface.
//
// Profile is a pure function apart from optionally reading the file system
// it is given, so it builds and is golden-tested on every OS, as are the
// parser of the unified log's reports (ParseViolation) and their
// explanation (Explainer). Running a command under sandbox-exec (Run) and
// following the unified log for the run's violations (StartMonitor) need
// macOS; they build on every Unix so that their process handling is
// tested elsewhere with stand-ins for sandbox-exec and log.
package darwin
