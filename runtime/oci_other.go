//go:build !linux

package runtime

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/opencontainers/runtime-spec/specs-go/features"
)

// DefaultOCIRoot returns the OCI state directory.
func DefaultOCIRoot() (string, error) { return "", nil }

// LoadBundle is not supported on this OS.
func LoadBundle(string) (*specs.Spec, error) { return nil, errors.ErrUnsupported }

// Create is not supported on this OS.
func (OCI) Create(string, CreateOptions) error { return errors.ErrUnsupported }

// Start is not supported on this OS.
func (OCI) Start(string) error { return errors.ErrUnsupported }

// State is not supported on this OS.
func (OCI) State(string) (*ContainerState, error) { return nil, errors.ErrUnsupported }

// List is not supported on this OS.
func (OCI) List(bool) ([]ContainerState, error) { return nil, errors.ErrUnsupported }

// ParseSignal is not supported on this OS.
func ParseSignal(string) (syscall.Signal, error) { return 0, errors.ErrUnsupported }

// Kill is not supported on this OS.
func (OCI) Kill(string, syscall.Signal, bool) error { return errors.ErrUnsupported }

// Delete is not supported on this OS.
func (OCI) Delete(string, bool) error { return errors.ErrUnsupported }

// Pause is not supported on this OS.
func (OCI) Pause(string) error { return errors.ErrUnsupported }

// Resume is not supported on this OS.
func (OCI) Resume(string) error { return errors.ErrUnsupported }

// Processes is not supported on this OS.
func (OCI) Processes(string) ([]int, error) { return nil, errors.ErrUnsupported }

// BundleProcess is not supported on this OS.
func (OCI) BundleProcess(string) (*specs.Process, error) { return nil, errors.ErrUnsupported }

// Exec is not supported on this OS.
func (OCI) Exec(string, *specs.Process, ExecOptions) (int, error) { return -1, errors.ErrUnsupported }

// Update is not supported on this OS.
func (OCI) Update(string, *specs.LinuxResources) error { return errors.ErrUnsupported }

// Events is not supported on this OS.
func (OCI) Events(string, time.Duration, bool, func(*Event) error) error {
	return errors.ErrUnsupported
}

// ConfigureLog is not supported on this OS.
func ConfigureLog(string, string, bool) error { return errors.ErrUnsupported }

// LogError does nothing on this OS.
func LogError(error) bool { return false }

// Features is not supported on this OS.
func Features() *features.Features { return nil }

// ExampleSpec is not supported on this OS.
func ExampleSpec(bool) *specs.Spec { return nil }

// RunMonitor is not supported on this OS.
func RunMonitor(*os.File) error { return errors.ErrUnsupported }

// ProxyListen is not supported on this OS.
func ProxyListen(io.Reader, string) error { return errors.ErrUnsupported }

// IsolateNetwork is not supported on this OS.
func IsolateNetwork(io.Reader) error { return errors.ErrUnsupported }
