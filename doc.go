// Package cordon is the root of cordon's module: it holds no code, only
// the tests that keep the architecture of docs/architecture.md (which
// package may import which, a doc comment on every package). The
// packages below it are the architecture: policy decides, spec compiles,
// mounts and seccomp are the pieces spec compiles from, probe finds out
// what the machine can do, runtime executes, cmd/cordon is the CLI.
package cordon
