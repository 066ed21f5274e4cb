//go:build !linux

package probe

import "os"

func euid() int { return os.Geteuid() }

func kernelRelease() string { return "" }

func memTotal() uint64 { return 0 }
