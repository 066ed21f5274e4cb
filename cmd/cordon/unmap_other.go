//go:build !linux

package main

// unmapInitCode is Linux's (unmap_linux.go).
func unmapInitCode() {}
