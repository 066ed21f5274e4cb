//go:build unix

package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"cordon.dev/cordon/caches"
	"cordon.dev/cordon/spec"
)

// TestOpenCaches: a cache the host has is seen through an overlay; one it
// lacks is redirected, or, without a variable, made inside the tool's own
// existing directory (never the tool's directory itself); a second run of
// the workspace at the same time gets layers of its own, removed when it
// ends; pip's user base stands for its site and scripts when one of them
// has no view.
func TestOpenCaches(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	for _, d := range []string{".npm", ".cargo"} {
		must(t, os.Mkdir(filepath.Join(home, d), 0o755))
	}
	list := caches.For(home, nil, "linux")
	req := CacheRequest{Root: root, Workspace: "/ws", RunID: "run-a", List: list, Home: home, Overlay: true}
	a, err := OpenCaches(req)
	must(t, err)
	defer a.Close()
	views := map[string]spec.CacheView{}
	for _, v := range a.Views {
		views[v.Name] = v
	}
	if v := views["npm"]; !v.Overlay() || v.Path != filepath.Join(home, ".npm") || !isDir(v.Upper) || !isDir(v.Work) {
		t.Errorf("npm: %+v, want an overlay of the host's with its layers made", v)
	}
	if v := views["pip"]; v.Overlay() || v.Env != "PIP_CACHE_DIR="+v.Dir || !isDir(v.Dir) {
		t.Errorf("pip: %+v, want a redirect", v)
	}
	if v := views["cargo-registry"]; !v.Overlay() || !isDir(filepath.Join(home, ".cargo/registry")) {
		t.Errorf("cargo-registry: %+v, want its directory made in ~/.cargo and seen through an overlay", v)
	}
	if _, ok := views["gradle-caches"]; ok || isDir(filepath.Join(home, ".gradle")) {
		t.Errorf("gradle: a view, or ~/.gradle made, though the home has none")
	}
	if _, ok := views["pip-user"]; !ok || slices.ContainsFunc(a.Views, func(v spec.CacheView) bool { return v.Name == "pip-user-lib" }) {
		t.Errorf("pip's user base is not redirected whole without ~/.local: %+v", a.Views)
	}

	// The same workspace at the same time: layers of its own.
	req.RunID = "run-b"
	b, err := OpenCaches(req)
	must(t, err)
	var bNPM spec.CacheView
	for _, v := range b.Views {
		if v.Name == "npm" {
			bNPM = v
		}
	}
	if bNPM.Upper == views["npm"].Upper || !isDir(bNPM.Upper) {
		t.Fatalf("a concurrent run shares the upper layer %s", bNPM.Upper)
	}
	b.Close()
	if isDir(filepath.Dir(filepath.Dir(bNPM.Upper))) {
		t.Errorf("the concurrent run's layers stay after it: %s", bNPM.Upper)
	}

	// Nothing is made for cordon spec.
	req.Workspace, req.DryRun = "/other", true
	dry, err := OpenCaches(req)
	must(t, err)
	if len(dry.Views) == 0 || isDir(filepath.Join(root, cacheKey("/other"))) {
		t.Errorf("a dry run: %d views, made %v", len(dry.Views), isDir(filepath.Join(root, cacheKey("/other"))))
	}
}

// TestGCCaches: the caches unused past the age go, then the least
// recently used past the size; those in use stay; all removes the rest.
func TestGCCaches(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	now := time.Now()
	open := func(ws string, used time.Time, size int) *Caches {
		c, err := OpenCaches(CacheRequest{Root: root, Workspace: ws, RunID: "r", List: caches.For(home, nil, "linux"), Home: home})
		must(t, err)
		for _, v := range c.Views {
			if v.Name == "npm" {
				must(t, os.WriteFile(filepath.Join(v.Dir, "blob"), make([]byte, size), 0o600))
			}
		}
		must(t, os.Chtimes(filepath.Join(root, cacheKey(ws), "lock"), used, used))
		return c
	}
	for ws, age := range map[string]time.Duration{"/old": 40 * 24 * time.Hour, "/mid": 2 * time.Hour, "/new": time.Minute} {
		open(ws, now.Add(-age), 1<<20).Close()
	}
	busy := open("/busy", now.Add(-50*24*time.Hour), 1<<20) // in use: stays
	defer busy.Close()
	gone, err := GCCaches(root, 30*24*time.Hour, 3<<20, false, now)
	must(t, err)
	var names []string
	for _, u := range gone {
		names = append(names, u.Workspace)
	}
	slices.Sort(names)
	if want := []string{"/mid", "/old"}; !slices.Equal(names, want) {
		t.Errorf("removed %q, want %q (the old one, then the least recently used past the size)", names, want)
	}
	gone, err = GCCaches(root, 0, 0, true, now)
	must(t, err)
	left, _ := ListCaches(root)
	if len(gone) != 1 || len(left) != 1 || left[0].Workspace != "/busy" || !left[0].InUse {
		t.Errorf("all: removed %+v, left %+v; want all but the one in use", gone, left)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
