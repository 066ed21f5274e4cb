// Package integration holds cordon's end-to-end tests: they build the cordon
// binary, run real commands in real sandboxes (namespaces, mounts, seccomp,
// cgroups) as root and as an unprivileged user, and check from the host
// side that what the default policy promises holds — including the escape
// attempts a reviewer would try first — and drive the real Claude Code
// with cordon's hook (claude_test.go, with the stand-in for the Messages
// API of integration/claudecode). With CORDON_INTEGRATION=1 a missing
// capability (root, user namespaces, a tool) fails a test instead of
// skipping it.
package integration
