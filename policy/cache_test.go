package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// cacheFixture is a home, a workspace reached through a symlink, a user
// settings file, a managed one and a --settings one, all in a temporary
// directory.
type cacheFixture struct {
	dir, home, ws, link, user, managed, flagFile string
}

func newCacheFixture(t *testing.T) cacheFixture {
	t.Helper()
	dir := t.TempDir()
	f := cacheFixture{
		dir:      dir,
		home:     filepath.Join(dir, "home"),
		ws:       filepath.Join(dir, "ws"),
		link:     filepath.Join(dir, "link"),
		managed:  filepath.Join(dir, "managed.json"),
		flagFile: filepath.Join(dir, "flag.json"),
	}
	f.user = filepath.Join(f.home, ".config", "cordon", "settings.json")
	for _, d := range []string{filepath.Dir(f.user), f.ws, filepath.Join(dir, "ws2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, f.user, `{"filesystem": {"denyRead": ["~/aaaa"]}}`)
	writeFile(t, f.managed, `{"permissions": {"deny": ["Bash(rm:*)"]}}`)
	writeFile(t, f.flagFile, `{"filesystem": {"allowWrite": ["/tmp/x"]}}`)
	if err := os.Symlink(f.ws, f.link); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f cacheFixture) options() LoadOptions {
	return LoadOptions{Workspace: f.link, Cwd: f.link, Home: f.home, ManagedFiles: []string{f.managed}}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameStat rewrites path with content of the same length and puts its
// modification time back: only the content tells the change.
func sameStat(t *testing.T, path, content string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(content)) != fi.Size() {
		t.Fatalf("%q is not %d bytes long", content, fi.Size())
	}
	writeFile(t, path, content)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func keyOf(t *testing.T, o LoadOptions) [32]byte {
	t.Helper()
	in, err := discover(o)
	if err != nil {
		t.Fatal(err)
	}
	return in.key()
}

// TestCacheKey: every input of Load changes the cache key, and nothing
// else does.
func TestCacheKey(t *testing.T) {
	type tc struct {
		name   string
		change func(t *testing.T, f cacheFixture, o *LoadOptions)
	}
	cases := []tc{
		{"workspace", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.Workspace = filepath.Join(f.dir, "ws2") }},
		{"cwd", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.Cwd = f.ws }},
		{"home", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.Home = f.dir }},
		{"XDG_CONFIG_HOME", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.ConfigHome = f.dir }},
		{"a --settings file", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.Settings = []string{f.flagFile} }},
		{"the managed files", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.ManagedFiles = nil }},
		{"no discovery", func(t *testing.T, f cacheFixture, o *LoadOptions) { o.NoDiscovery = true }},
		{"a settings file's content, same size and time", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			sameStat(t, f.user, `{"filesystem": {"denyRead": ["~/bbbb"]}}`)
		}},
		{"a managed file's content, same size and time", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			sameStat(t, f.managed, `{"permissions": {"deny": ["Bash(mv:*)"]}}`)
		}},
		{"a --settings file's content, same size and time", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			o.Settings = []string{f.flagFile}
			// The key with the file as it was is the test's baseline.
			sameStat(t, f.flagFile, `{"filesystem": {"allowWrite": ["/tmp/y"]}}`)
		}},
		{"a project settings file appears", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			if err := os.MkdirAll(filepath.Join(f.ws, ".cordon"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(f.ws, ".cordon", "settings.json"), `{}`)
		}},
		{"a settings file goes", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			if err := os.Remove(f.user); err != nil {
				t.Fatal(err)
			}
		}},
		{"a settings file becomes unreadable", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			if err := os.Remove(f.user); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(f.user, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"the workspace's real path", func(t *testing.T, f cacheFixture, o *LoadOptions) {
			if err := os.Remove(f.link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(f.dir, "ws2"), f.link); err != nil {
				t.Fatal(err)
			}
		}},
	}
	// Every flag, whatever flags Flags gains.
	ft := reflect.TypeFor[Flags]()
	for i := range ft.NumField() {
		field := ft.Field(i)
		cases = append(cases, tc{"flag " + field.Name, func(t *testing.T, f cacheFixture, o *LoadOptions) {
			v := reflect.ValueOf(&o.Flags).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString("1")
			case reflect.Slice:
				v.Set(reflect.ValueOf([]string{"/x"}))
			default:
				t.Fatalf("flag %s: kind %s", field.Name, v.Kind())
			}
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newCacheFixture(t)
			o := f.options()
			if c.name == "a --settings file's content, same size and time" {
				o.Settings = []string{f.flagFile}
			}
			before := keyOf(t, o)
			if again := keyOf(t, o); again != before {
				t.Fatal("the key changed with nothing changed")
			}
			c.change(t, f, &o)
			if after := keyOf(t, o); after == before {
				t.Errorf("the key did not change")
			}
		})
	}
}

// TestCacheLoad: the cache gives the policy loaded before while nothing
// changed, a new one as soon as a settings file's content changes (size
// and time kept), and keeps no error.
func TestCacheLoad(t *testing.T) {
	f := newCacheFixture(t)
	o := f.options()
	c := NewCache(2)
	p1, err := c.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := c.Load(o); err != nil || p2 != p1 {
		t.Fatalf("nothing changed: want the same policy, got %p (%v), first %p", p2, err, p1)
	}
	sameStat(t, f.user, `{"filesystem": {"denyRead": ["~/bbbb"]}}`)
	p3, err := c.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 || !reflect.DeepEqual(p3.Filesystem, want.Filesystem) {
		t.Fatalf("after the edit: got %v, want %v", p3.Filesystem.DenyRead, want.Filesystem.DenyRead)
	}
	// A broken file is an error every time, then a policy once mended.
	sameStat(t, f.user, `{"filesystem": {"denyRead": ["~/bbbb"]]}`)
	for range 2 {
		if _, err := c.Load(o); err == nil {
			t.Fatal("a broken settings file: want an error")
		}
	}
	sameStat(t, f.user, `{"filesystem": {"denyRead": ["~/cccc"]}}`)
	if p, err := c.Load(o); err != nil || !slices.Contains(p.Filesystem.DenyRead, filepath.Join(f.home, "cccc")) {
		t.Fatalf("mended: want ~/cccc denied: %v", err)
	}
	// Bounded: the oldest goes.
	for i := range 3 {
		sameStat(t, f.user, `{"filesystem": {"denyRead": ["~/ddd`+string(rune('0'+i))+`"]}}`)
		if _, err := c.Load(o); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) != 2 || len(c.order) != 2 {
		t.Errorf("a cache of 2 holds %d policies (%d in order)", len(c.m), len(c.order))
	}
}
