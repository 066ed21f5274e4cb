//go:build linux && !cgo

package probe

// libseccompVersion reports that this build links no libseccomp.
func libseccompVersion() Libseccomp { return Libseccomp{} }
