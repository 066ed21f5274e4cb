//go:build !linux || !cgo

package seccomp

import (
	"errors"
	"fmt"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Check compiles p with libseccomp the way runc's libcontainer does. It
// needs Linux and cgo; elsewhere it returns errors.ErrUnsupported.
func Check(p *specs.LinuxSeccomp) error {
	return fmt.Errorf("check seccomp profile: %w", errors.ErrUnsupported)
}
