package spec

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// TestCacheViews: an overlay view becomes an overlay mount at the host's
// directory, writable for Landlock; a redirect binds cordon's directory
// (one bind for those side by side) and sets the variable over the
// caller's. A view that would open what the plan closes is left out: in
// a writable root, below a denied path, a path an overlay's options
// cannot carry; and the container mode has no overlays.
func TestCacheViews(t *testing.T) {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	fsys := host()
	for _, d := range []string{"home/u/.npm", "home/u/ws/.npm-in-ws", "home/u/.ssh/cache", "home/u/we,ird", "home/u/.c/k/npm/upper", "home/u/.c/k/npm/work",
		"home/u/.c/k/redirect/pip", "home/u/.c/k/redirect/go-build"} {
		fsys[d] = dir
	}
	views := []CacheView{
		{Name: "npm", Path: "/home/u/.npm", Upper: "/home/u/.c/k/npm/upper", Work: "/home/u/.c/k/npm/work"},
		{Name: "in-ws", Path: "/home/u/ws/.npm-in-ws", Upper: "/home/u/.c/k/x/upper", Work: "/home/u/.c/k/x/work"},
		{Name: "denied", Path: "/home/u/.ssh/cache", Upper: "/home/u/.c/k/y/upper", Work: "/home/u/.c/k/y/work"},
		{Name: "weird", Path: "/home/u/we,ird", Upper: "/home/u/.c/k/z/upper", Work: "/home/u/.c/k/z/work"},
		{Name: "pip", Dir: "/home/u/.c/k/redirect/pip", Env: "PIP_CACHE_DIR=/home/u/.c/k/redirect/pip"},
		{Name: "go-build", Dir: "/home/u/.c/k/redirect/go-build", Env: "GOCACHE=/home/u/.c/k/redirect/go-build"},
	}
	for _, mode := range []string{ModeFull, ModeContainer} {
		t.Run(mode, func(t *testing.T) {
			req := request("true")
			req.FS, req.Caches, req.Mode = fsys, views, mode
			req.Env = append(req.Env, "PIP_CACHE_DIR=/elsewhere")
			var debug []string
			req.Debug = func(m string) { debug = append(debug, m) }
			s, err := Compile(defaultPolicy(t, "/home/u/ws", "/home/u"), req, amd64)
			if err != nil {
				t.Fatal(err)
			}
			var overlays []specs.Mount
			for _, m := range s.Mounts {
				if m.Type == "overlay" {
					overlays = append(overlays, m)
				}
			}
			var want []specs.Mount
			if mode == ModeFull {
				want = []specs.Mount{{Destination: "/home/u/.npm", Type: "overlay", Source: "overlay",
					Options: []string{"lowerdir=/home/u/.npm", "upperdir=/home/u/.c/k/npm/upper", "workdir=/home/u/.c/k/npm/work", "nosuid", "nodev"}}}
				if !slices.ContainsFunc(s.Mounts, func(m specs.Mount) bool {
					return m.Destination == "/home/u/.c/k/redirect" && m.Type == "bind" && !slices.Contains(m.Options, "rro")
				}) {
					t.Errorf("no writable bind of the redirects' directory")
				}
			}
			if diff := cmp.Diff(want, overlays); diff != "" {
				t.Errorf("overlays (-want +got):\n%s", diff)
			}
			env := s.Process.Env
			if !slices.Contains(env, "PIP_CACHE_DIR=/home/u/.c/k/redirect/pip") || slices.Contains(env, "PIP_CACHE_DIR=/elsewhere") ||
				!slices.Contains(env, "GOCACHE=/home/u/.c/k/redirect/go-build") {
				t.Errorf("environment: %q", env)
			}
			for _, name := range []string{"in-ws", "denied", "weird"} {
				if !slices.ContainsFunc(debug, func(m string) bool { return strings.Contains(m, "package cache "+name+" ") }) {
					t.Errorf("view %s not left out under --debug: %q", name, debug)
				}
			}
			landlock := s.Annotations[AnnotationLandlock]
			if mode == ModeFull && !strings.Contains(landlock, `{"path":"/home/u/.npm","access":"w"}`) ||
				!strings.Contains(landlock, `{"path":"/home/u/.c/k/redirect","access":"w"}`) {
				t.Errorf("Landlock does not grant the caches' writes: %s", landlock)
			}
		})
	}
}
