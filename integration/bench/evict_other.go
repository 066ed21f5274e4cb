//go:build !linux

package main

// evict does nothing where the bench cannot drop a file's cached pages:
// the peak RSS figures then depend on how the executables were cached.
func evict(path string) error { return nil }
