package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func hostDir(p string) specs.Mount {
	return specs.Mount{Destination: p, Type: "bind", Source: p, Options: []string{"rbind", "rro", "nosuid", "nodev", "rprivate"}}
}

func hostFile(p string) specs.Mount {
	return specs.Mount{Destination: p, Type: "bind", Source: p, Options: []string{"bind", "ro", "nosuid", "nodev", "rprivate"}}
}

func TestTakeHostView(t *testing.T) {
	proc := specs.Mount{Destination: "/proc", Type: "proc", Source: "proc"}
	ws := specs.Mount{Destination: "/work/app", Type: "bind", Source: "/work/app", Options: []string{"rbind", "nosuid", "nodev", "rprivate"}}
	rwTop := specs.Mount{Destination: "/data", Type: "bind", Source: "/data", Options: []string{"rbind", "nosuid", "nodev", "rprivate"}}
	tests := []struct {
		name string
		in   []specs.Mount
		view []hostEntry
		rest []specs.Mount
	}{
		{"none", []specs.Mount{proc, ws}, nil, []specs.Mount{proc, ws}},
		{"the plan's", []specs.Mount{hostDir("/run"), hostFile("/.dockerenv"), hostDir("/usr"), proc, ws},
			[]hostEntry{{"run", true}, {".dockerenv", false}, {"usr", true}}, []specs.Mount{proc, ws}},
		// Only a leading run: a bind after another mount keeps its place.
		{"after another mount", []specs.Mount{hostDir("/usr"), proc, hostDir("/etc")},
			[]hostEntry{{"usr", true}}, []specs.Mount{proc, hostDir("/etc")}},
		{"a writable top-level bind", []specs.Mount{rwTop, hostDir("/usr")}, nil, []specs.Mount{rwTop, hostDir("/usr")}},
		{"a deeper bind", []specs.Mount{hostDir("/usr/lib")}, nil, []specs.Mount{hostDir("/usr/lib")}},
		{"another source", []specs.Mount{{Destination: "/etc", Type: "bind", Source: "/home/ana/etc", Options: hostDir("").Options}}, nil,
			[]specs.Mount{{Destination: "/etc", Type: "bind", Source: "/home/ana/etc", Options: hostDir("").Options}}},
		{"a replaced directory", []specs.Mount{hostDir("/tmp")}, nil, []specs.Mount{hostDir("/tmp")}},
		{"a name with a newline", []specs.Mount{hostDir("/usr"), hostDir("/a\nd etc"), hostDir("/var")},
			[]hostEntry{{"usr", true}}, []specs.Mount{hostDir("/a\nd etc"), hostDir("/var")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &specs.Spec{Mounts: tt.in, Root: &specs.Root{Path: "/run/cordon/rootfs"}, Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.UserNamespace}, {Type: specs.MountNamespace}}}}
			rest, view := takeHostView(s)
			if !slices.Equal(view, tt.view) {
				t.Errorf("view = %v, want %v", view, tt.view)
			}
			if !slices.EqualFunc(rest.Mounts, tt.rest, func(a, b specs.Mount) bool {
				return a.Destination == b.Destination && a.Source == b.Source && slices.Equal(a.Options, b.Options)
			}) {
				t.Errorf("rest = %v, want %v", rest.Mounts, tt.rest)
			}
			if len(s.Mounts) != len(tt.in) {
				t.Errorf("the spec itself was changed: %d mounts, had %d", len(s.Mounts), len(tt.in))
			}
		})
	}
}

// Without namespaces of its own, or an absolute root, the spec's binds stay
// with libcontainer.
func TestTakeHostViewNamespaces(t *testing.T) {
	own := []specs.LinuxNamespace{{Type: specs.UserNamespace}, {Type: specs.MountNamespace}}
	for _, s := range []*specs.Spec{
		{Root: &specs.Root{Path: "/r"}},
		{Root: &specs.Root{Path: "/r"}, Linux: &specs.Linux{}},
		{Root: &specs.Root{Path: "/r"}, Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.MountNamespace}}}},
		{Root: &specs.Root{Path: "/r"}, Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.UserNamespace}}}},
		{Root: &specs.Root{Path: "/r"}, Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.UserNamespace}, {Type: specs.MountNamespace, Path: "/proc/1/ns/mnt"}}}},
		{Linux: &specs.Linux{Namespaces: own}},
		{Root: &specs.Root{Path: "rootfs"}, Linux: &specs.Linux{Namespaces: own}},
	} {
		s.Mounts = []specs.Mount{hostDir("/usr")}
		if rest, view := takeHostView(s); view != nil || len(rest.Mounts) != 1 {
			t.Errorf("root %+v, linux %+v: took %v", s.Root, s.Linux, view)
		}
	}
}

func sameView(a, b hostView) bool { return a.root == b.root && slices.Equal(a.entries, b.entries) }

func TestHostViewMessage(t *testing.T) {
	view := hostView{root: "/run/cordon/rootfs", entries: []hostEntry{{"run", true}, {".dockerenv", false}, {"usr", true}, {"lost+found", true}}}
	got, ok, err := parseHostView(encodeHostView(view))
	if !ok || err != nil || !sameView(got, view) {
		t.Errorf("round trip: %v %v %v, want %v", got, ok, err, view)
	}
	// As the init finds it: by the memfd's name, read from its start.
	f, err := hostViewFile(view)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fdPath := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if name, err := os.Readlink(fdPath); err != nil || !strings.HasPrefix(name, "/memfd:"+hostViewName+" ") {
		t.Errorf("the host view's descriptor is %q (%v), not the memfd the init looks for", name, err)
	}
	data, err := os.ReadFile(fdPath)
	if got, ok, perr := parseHostView(data); err != nil || !ok || perr != nil || !sameView(got, view) {
		t.Errorf("read back: %v %v %v %v, want %v", got, ok, err, perr, view)
	}

	tests := []struct {
		name string
		data string
		ok   bool // a message at all
		err  bool
	}{
		{"empty", "", false, false},
		{"not cordon's", "hello\n", false, false},
		{"no entries", hostViewMagic + "root /r\n", true, false},
		{"no root", hostViewMagic, true, true},
		{"entries, no root", hostViewMagic + "d usr\n", true, true},
		{"a relative root", hostViewMagic + "root r\nd usr\n", true, true},
		{"an unclean root", hostViewMagic + "root /r/../etc\nd usr\n", true, true},
		{"truncated", hostViewMagic + "root /r\nd usr", true, true},
		{"a path", hostViewMagic + "root /r\nd usr/lib\n", true, true},
		{"dot-dot", hostViewMagic + "root /r\nd ..\n", true, true},
		{"dot", hostViewMagic + "root /r\nf .\n", true, true},
		{"no name", hostViewMagic + "root /r\nd \n", true, true},
		{"unknown kind", hostViewMagic + "root /r\nx usr\n", true, true},
		{"NUL", hostViewMagic + "root /r\nd us\x00r\n", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := parseHostView([]byte(tt.data))
			if ok != tt.ok || (err != nil) != tt.err {
				t.Errorf("parseHostView(%q) = ok %v, err %v; want ok %v, an error %v", tt.data, ok, err, tt.ok, tt.err)
			}
		})
	}
}

func FuzzParseHostView(f *testing.F) {
	f.Add([]byte(encodeHostView(hostView{root: "/run/cordon/rootfs", entries: []hostEntry{{"usr", true}, {".dockerenv", false}}})))
	f.Add([]byte(hostViewMagic + "root /r\nd ..\n"))
	f.Add([]byte("d usr\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		view, ok, err := parseHostView(data)
		if !ok || err != nil {
			return
		}
		if !filepath.IsAbs(view.root) || filepath.Clean(view.root) != view.root {
			t.Fatalf("parsed a root that is not a clean absolute path: %q", view.root)
		}
		for _, e := range view.entries {
			if e.name == "" || e.name == "." || e.name == ".." || strings.ContainsAny(e.name, "/\x00\n") {
				t.Fatalf("parsed a name that is not one entry of /: %q", e.name)
			}
		}
		// What parses says the same once encoded again.
		if again, _, err := parseHostView(encodeHostView(view)); err != nil || !sameView(again, view) {
			t.Fatalf("%q: parsed %v, again %v (%v)", data, view, again, err)
		}
	})
}

// TestRefuseHostView: a memfd named as cordon's host view, at the number
// the init reads it from, is refused for an OCI container's process (a
// caller's preserved descriptor would have had the init bind the host
// entries it names into the container); anything else there is passed.
func TestRefuseHostView(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	view, err := hostViewFile(hostView{root: "/run/bundle/rootfs", entries: []hostEntry{{"root", true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	nulls := func(n int) []*os.File { return slices.Repeat([]*os.File{null}, n) }
	tests := []struct {
		name   string
		files  []*os.File
		refuse bool
	}{
		{"none", nil, false},
		{"shorter", nulls(initHostViewFD - 3), false},
		{"not a host view there", nulls(initHostViewFD - 2), false},
		{"a host view there", append(nulls(initHostViewFD-3), view), true},
		{"a host view elsewhere", append([]*os.File{view}, nulls(initHostViewFD-2)...), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := refuseHostView(tc.files)
			if (err != nil) != tc.refuse {
				t.Errorf("refuseHostView: %v, want refused %v", err, tc.refuse)
			}
		})
	}
}

// TestBindHostViewOnlyNewSandbox: the init reads a host view only when it
// starts a new sandbox; the init of an OCI exec, in the container's mount
// namespace (and /proc), leaves descriptor 9 alone. The message here is
// bad, so that reading it fails before anything is mounted.
func TestBindHostViewOnlyNewSandbox(t *testing.T) {
	if _, err := unix.FcntlInt(initHostViewFD, unix.F_GETFD, 0); err == nil {
		t.Skipf("descriptor %d is in use in the test binary", initHostViewFD)
	}
	f, err := hostViewFile(hostView{root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("relative"), int64(len(hostViewMagic+"root "))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		initType string
		reads    bool
	}{{"setns", false}, {"", false}, {initStandard, true}} {
		if err := unix.Dup3(int(f.Fd()), initHostViewFD, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		t.Setenv(initTypeEnv, tc.initType)
		err := bindHostView()
		if got := err != nil; got != tc.reads {
			t.Errorf("%s=%q: bindHostView: %v, want it to read the view %v", initTypeEnv, tc.initType, err, tc.reads)
		}
		unix.Close(initHostViewFD)
	}
}
