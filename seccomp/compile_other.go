//go:build !linux || !cgo

package seccomp

import (
	"errors"
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Compile compiles p into the program runc's libcontainer would load. It
// needs Linux and cgo; elsewhere it returns errors.ErrUnsupported.
func Compile(p *specs.LinuxSeccomp) (Program, error) {
	return Program{}, fmt.Errorf("compile seccomp profile: %w", errors.ErrUnsupported)
}
