//go:build !linux

package probe

import "os"

func euid() int { return os.Geteuid() }

func kernelRelease() string { return "" }

func memTotal() uint64 { return 0 }

// AnonFolios is nil on this OS: it has no such settings.
func AnonFolios() []string { return nil }
