//go:build !linux

package runtime

import "os"

// Executable returns cordon's binary.
func Executable() (string, error) { return os.Executable() }

// SealSelf does nothing on this OS.
func SealSelf() error { return nil }
