//go:build cgo

package runtime

// The comment right above import "C" is C source: sandboxinit.c, cordon's
// init inside the sandbox, runs from a C constructor and needs nothing from
// Go; this import only makes cgo build it.

import "C"
