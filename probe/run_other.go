//go:build !linux

package probe

import (
	"context"
	"errors"
	"fmt"
)

// Child does nothing on this OS.
func Child() {}

// Run is not supported on this OS.
func Run(context.Context, Options) (Result, error) {
	return Basic(), fmt.Errorf("probe: %w", errors.ErrUnsupported)
}

// Load is not supported on this OS.
func Load(context.Context, Options) (Result, error) {
	return Basic(), fmt.Errorf("probe: %w", errors.ErrUnsupported)
}

// CacheDir returns where Load would keep its cache.
func CacheDir() string { return "" }
