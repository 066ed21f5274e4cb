package spec

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
)

// SeesHost reports whether the sandbox of s sees the host's own directory
// at p (absolute, clean). In a full sandbox, the last mount over p binds
// it from the same path on the host, recursively when p lies below it: a
// path under a tmpfs (the private /tmp, a hidden directory), a
// copy-on-write view, a mask, /proc or /dev, or in the sandbox's own
// root, shows something else inside than on the host. In the container
// mode the command sees the host itself, where its Landlock rules let it
// read (a directory on the way to a hidden one, whose listing they
// grant, included); unconfined, everywhere.
func SeesHost(s *specs.Spec, p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	switch s.Annotations[AnnotationSandbox] {
	case ModeUnconfined:
		return true
	case ModeContainer:
		var rules []LandlockRule
		if json.Unmarshal([]byte(s.Annotations[AnnotationLandlock]), &rules) != nil {
			return false
		}
		return slices.ContainsFunc(rules, func(r LandlockRule) bool {
			return (r.Access == "r" || r.Access == "w") && paths.Under(p, r.Path) || r.Access == "l" && p == r.Path
		})
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
