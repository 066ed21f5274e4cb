//go:build !linux

package runtime

import (
	"context"
	"errors"
	"os"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/spec"
)

// Init does nothing on this OS.
func Init() {}

// StateRoot returns the state directory.
func StateRoot() string { return os.TempDir() }

// HostPaths is not supported on this OS.
func HostPaths(string) (spec.Host, error) { return spec.Host{}, errors.ErrUnsupported }

// Prepare is not supported on this OS.
func Prepare(spec.Host) error { return errors.ErrUnsupported }

// Run is not supported on this OS.
func Run(context.Context, *specs.Spec, Options) (int, error) { return 0, errors.ErrUnsupported }

// List is not supported on this OS.
func List(string) ([]Sandbox, error) { return nil, errors.ErrUnsupported }

// GC is not supported on this OS.
func GC(string) ([]string, error) { return nil, errors.ErrUnsupported }

// GCBeforeRun is not supported on this OS.
func GCBeforeRun(string) ([]string, error) { return nil, errors.ErrUnsupported }

// Preheat does nothing on this OS.
func Preheat() {}

// NewID returns a sandbox id.
func NewID() string { return "run" }

// CloseOnExecFrom does nothing on this OS.
func CloseOnExecFrom(int) error { return nil }
