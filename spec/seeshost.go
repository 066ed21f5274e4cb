package spec

import (
	"path/filepath"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
)

// SeesHost reports whether the sandbox of s sees the host's own directory
// at p (absolute, clean): the last mount over p binds it from the same
// path on the host, recursively when p lies below it. A path under a
// tmpfs (the private /tmp, a hidden directory), a copy-on-write view, a
// mask, /proc or /dev, or in the sandbox's own root, shows something else
// inside than on the host.
func SeesHost(s *specs.Spec, p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	var last *specs.Mount
	for i, m := range s.Mounts {
		if paths.Under(p, filepath.Clean(m.Destination)) {
			last = &s.Mounts[i]
		}
	}
	if last == nil || filepath.Clean(last.Source) != filepath.Clean(last.Destination) {
		return false
	}
	rbind := slices.Contains(last.Options, "rbind")
	bind := rbind || slices.Contains(last.Options, "bind")
	// A bind that is not recursive leaves out the host's mounts below it.
	return bind && (last.Type == "bind" || last.Type == "") && (rbind || p == filepath.Clean(last.Destination))
}
