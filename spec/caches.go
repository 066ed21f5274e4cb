package spec

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/mounts"
)

// CacheView makes one of a package manager's directories (package caches)
// writable in the sandbox without the host's own being written: an
// overlay whose lower layer is the host's directory (Path) and whose
// upper layer is cordon's (Upper, Work), or cordon's directory Dir,
// writable, with the variable Env pointing the tool at it.
type CacheView struct {
	Name string `json:"name"`
	// Path is the host directory seen through the overlay; Upper and
	// Work its layers (on one file system, the caller's).
	Path  string `json:"path,omitempty"`
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
	// Dir is cordon's directory the tool is redirected to, and Env the
	// NAME=value that does it.
	Dir string `json:"dir,omitempty"`
	Env string `json:"env,omitempty"`
}

// Overlay reports whether v is a view through an overlay (not a
// redirect).
func (v CacheView) Overlay() bool { return v.Path != "" }

// cachePlan is what the views add to a sandbox: the overlays and the
// redirect directories' binds, the directories the command may write
// (for Landlock), and the variables.
type cachePlan struct {
	mounts   []specs.Mount
	rules    []mounts.Rule
	writable []string
	env      []string
}

// planCaches checks the views against the plan and returns what they add.
// A view is left out, and said so under --debug, where it would open
// what the plan closes or make no difference: a directory a writable root
// covers (writable already: the host's would be written, as the settings
// ask), one out of the command's sight (below a denied path: an overlay
// there would show it), one the command cannot reach, or a path an
// overlay's options cannot carry. The container mode has no mounts: only
// redirects.
func planCaches(fsys fs.FS, req Request, writable []string, hidden func(string) bool) cachePlan {
	var cp cachePlan
	skip := func(v CacheView, why string) {
		req.debugf("package cache %s is not writable: %s", v.Name, why)
	}
	covered := func(p string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return paths.Under(p, w) })
	}
	for _, v := range req.Caches {
		switch {
		case v.Overlay():
			if req.Mode != ModeFull {
				skip(v, "the container mode has no overlays")
				continue
			}
			real, fi, err := mounts.Resolve(fsys, v.Path)
			switch {
			case err != nil:
				skip(v, err.Error())
				continue
			case !fi.IsDir():
				skip(v, v.Path+" is not a directory")
				continue
			case covered(real):
				skip(v, real+" is in a writable root already")
				continue
			case hidden(real):
				skip(v, real+" is hidden")
				continue
			}
			if bad := slices.IndexFunc([]string{real, v.Upper, v.Work}, func(p string) bool {
				return !path.IsAbs(p) || strings.ContainsAny(p, ",:\\\n")
			}); bad >= 0 {
				skip(v, "an overlay cannot name "+[]string{real, v.Upper, v.Work}[bad])
				continue
			}
			cp.mounts = append(cp.mounts, specs.Mount{
				Destination: real, Type: "overlay", Source: "overlay",
				Options: []string{"lowerdir=" + real, "upperdir=" + v.Upper, "workdir=" + v.Work, "nosuid", "nodev"},
			})
			cp.writable = append(cp.writable, real)
		case v.Dir != "" && v.Env != "":
			if !path.IsAbs(v.Dir) || !strings.Contains(v.Env, "=") {
				skip(v, fmt.Sprintf("a redirect to %q by %q", v.Dir, v.Env))
				continue
			}
			if hidden(v.Dir) {
				skip(v, v.Dir+" is hidden")
				continue
			}
			// One bind for the redirects that share a directory (cordon
			// keeps a workspace's side by side).
			dir := path.Dir(v.Dir)
			if !slices.ContainsFunc(req.Caches, func(o CacheView) bool { return o.Dir != "" && path.Dir(o.Dir) == dir }) ||
				slices.ContainsFunc(req.Caches, func(o CacheView) bool { return o.Overlay() && paths.Under(o.Upper, dir) }) {
				dir = v.Dir
			}
			if !covered(dir) && !slices.Contains(cp.writable, dir) {
				cp.rules = append(cp.rules, mounts.Rule{Path: dir, Access: mounts.ReadWrite})
				cp.writable = append(cp.writable, dir)
			}
			cp.env = append(cp.env, v.Env)
		}
	}
	return cp
}

// WithCacheEnv sets the variables that point package managers at their
// redirected caches (CacheView), over the caller's.
func WithCacheEnv(env []string) Opt {
	return func(s *specs.Spec) error {
		if len(env) == 0 {
			return nil
		}
		if s.Process == nil {
			return fmt.Errorf("%w: cache variables before process", ErrInvalid)
		}
		s.Process.Env = append(withoutNames(s.Process.Env, env), env...)
		return nil
	}
}
