//go:build !amd64 && !arm64

package stack

// Grow does nothing on this architecture: the stack grows as it is used.
func Grow() {}
