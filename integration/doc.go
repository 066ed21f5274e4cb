// Package integration holds cordon's end-to-end tests: they build the cordon
// binary, run real commands in real sandboxes (namespaces, mounts, seccomp,
// cgroups) as root and as an unprivileged user, and check from the host
// side that what the default policy promises holds — including the escape
// attempts a reviewer would try first. With CORDON_INTEGRATION=1 a missing
// capability (root, user namespaces, a tool) fails a test instead of
// skipping it.
package integration
