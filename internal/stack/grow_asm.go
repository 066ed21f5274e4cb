//go:build amd64 || arm64

package stack

// Grow makes the calling goroutine's stack large enough for a frame of
// the given size and what it already holds, in one copy.
func Grow()
