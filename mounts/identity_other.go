//go:build !linux

package mounts

import "io/fs"

// identityOf returns the identity a test gave as a file's Sys: plans made
// on other systems (golden tests, cordon spec for a Linux machine) carry
// no identities of their own.
func identityOf(fi fs.FileInfo) (Identity, bool) {
	id, ok := fi.Sys().(Identity)
	return id, ok
}
