// Package stack gives goroutines their stack at once.
//
// A goroutine starts on a 2 KiB stack and, whenever a call needs more,
// the Go runtime copies the whole stack to one twice the size, looking
// up every frame's function in the binary's function table (pclntab) to
// adjust its pointers. A cold `cordon run` does that some twenty times,
// on deep stacks (package initialisation, encoding/json, libcontainer),
// and each lookup faults in the kernel's read-around window of the table
// (64 KiB): about 1.2 MB of a run's peak RSS was the table's pages that
// stack copies touched, more than the copies' own time.
//
// Grow, called where a goroutine's stack is still shallow, makes one copy
// of a few frames to a stack big enough for what follows. The memory is
// reserved, not touched: only the pages the goroutine then uses become
// resident. Importing the package grows the main goroutine's stack before
// any other package is initialised (it imports nothing, so it is among the
// first).
package stack

// frame is the frame of Grow, in bytes, in grow_*.s: the stack it leaves
// is the next power of two above it and what was in use (128 KiB).
const frame = 64 << 10

func init() { Grow() }
