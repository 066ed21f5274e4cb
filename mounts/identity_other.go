//go:build !linux

package mounts

import (
	"io/fs"

	"cordon.dev/cordon/internal/access"
)

// identityOf returns the identity a test gave as a file's Sys: plans made
// on other systems (golden tests, cordon spec for a Linux machine) carry
// no identities of their own.
func identityOf(fi fs.FileInfo) (Identity, bool) {
	id, ok := fi.Sys().(Identity)
	return id, ok
}

// fileOf returns the owner and bits a test gave as a file's Sys.
func fileOf(fi fs.FileInfo) (access.File, bool) {
	f, ok := fi.Sys().(access.File)
	return f, ok
}
