package mounts

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got, as indented JSON, with testdata/name.golden.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(data)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

var cordonBinary = specs.Mount{
	Destination: "/.cordon/cordon", Type: "bind", Source: "/usr/bin/sh",
	Options: []string{"bind", "ro", "nosuid", "nodev"},
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name   string
		layout Layout
	}{
		{
			name: "workspace",
			layout: Layout{Rules: []Rule{
				{Path: "/home/u/ws", Access: ReadWrite},
				{Path: "/home/u/ws/.git/hooks", Access: ReadOnly},
				{Path: "/home/u/ws/.git/config", Access: ReadOnly},
				{Path: "/home/u/.ssh", Access: Deny},
				{Path: "/home/u/.aws", Access: Deny},               // a symlink: the target is hidden
				{Path: "/home/u/.gnupg", Access: Deny},             // missing: reported
				{Path: "/home/u/.ssh/id", Access: Deny},            // below a denied directory
				{Path: "/run/cordon", Access: Deny},                // the runtime's state
				{Path: "/home/u/ws/up", Access: ReadWrite},         // resolves to ~/.ssh: deny wins
				{Path: "/home/u/ws/.git/hooks", Access: ReadWrite}, // read-only wins
			}, Extra: []specs.Mount{cordonBinary}},
		},
		{
			name: "workspace-in-tmp",
			layout: Layout{Rules: []Rule{
				{Path: "/tmp", Access: ReadWrite},
			}, TmpSize: 1 << 30},
		},
		{
			name: "deny-around-workspace",
			layout: Layout{Rules: []Rule{
				{Path: "/home/u", Access: Deny},
				{Path: "/home/u/ws", Access: ReadWrite},
				{Path: "/home/u/.ssh/id", Access: ReadOnly},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layout
			l.FS = hostFS()
			l.MaskFile = "/run/cordon/mask"
			got, err := Plan(l)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "plan-"+tc.name, got)
			checkOrder(t, got.Mounts)
		})
	}
}

// checkOrder fails when a mount comes before a mount on an ancestor of its
// destination (which would hide it).
func checkOrder(t *testing.T, ms []specs.Mount) {
	t.Helper()
	for i, m := range ms {
		for _, later := range ms[i+1:] {
			if later.Destination != m.Destination && strings.HasPrefix(m.Destination, strings.TrimSuffix(later.Destination, "/")+"/") {
				t.Errorf("%s is mounted before its ancestor %s", m.Destination, later.Destination)
			}
		}
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
	}{
		{"relative path", []Rule{{Path: "home/u", Access: Deny}}},
		{"the root", []Rule{{Path: "/", Access: ReadWrite}}},
		{"the root through a symlink", []Rule{{Path: "/home/u/ws/escape/..", Access: ReadWrite}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Plan(Layout{FS: hostFS(), Rules: tc.rules}); err == nil {
				t.Fatal("Plan accepted it")
			}
		})
	}
}

// TestPlanKeepsHostRootReadOnly checks the property every plan must have:
// every host directory is bound recursively read-only, and nothing is
// writable but what a rule made writable.
func TestPlanKeepsHostRootReadOnly(t *testing.T) {
	got, err := Plan(Layout{FS: hostFS(), Rules: []Rule{{Path: "/home/u/ws", Access: ReadWrite}}})
	if err != nil {
		t.Fatal(err)
	}
	writable := map[string]bool{"/home/u/ws": true, "/tmp": true, "/dev": true, "/dev/shm": true, "/dev/pts": true, "/proc": true}
	for _, m := range got.Mounts {
		ro := false
		for _, o := range m.Options {
			if o == "ro" || o == "rro" {
				ro = true
			}
		}
		if !ro && !writable[m.Destination] {
			t.Errorf("%s is mounted writable: %+v", m.Destination, m)
		}
		if m.Type == "bind" && m.Source != m.Destination {
			t.Errorf("%s is bound from %s", m.Destination, m.Source)
		}
	}
	for _, top := range []string{"/usr", "/etc", "/home", "/data", "/run", "/top-file"} {
		found := false
		for _, m := range got.Mounts {
			found = found || m.Destination == top
		}
		if !found {
			t.Errorf("host %s is not in the plan", top)
		}
	}
	for _, m := range got.Mounts {
		if m.Destination == "/bin" {
			t.Errorf("top-level symlink /bin got a mount: %+v", m)
		}
	}
}

func TestHostView(t *testing.T) {
	dir := hostBind("/usr", true)
	file := hostBind("/.dockerenv", false)
	tests := []struct {
		name    string
		m       specs.Mount
		ok, dir bool
	}{
		{"a directory", dir, true, true},
		{"a file", file, true, false},
		{"writable", specs.Mount{Destination: "/data", Type: "bind", Source: "/data", Options: []string{"rbind", "nosuid", "nodev", "rprivate"}}, false, false},
		{"deeper", hostBind("/usr/lib", true), false, false},
		{"another source", specs.Mount{Destination: "/etc", Type: "bind", Source: "/srv/etc", Options: dir.Options}, false, false},
		{"a replaced one", hostBind("/proc", true), false, false},
		{"the root", hostBind("/", true), false, false},
		{"dot-dot", hostBind("/..", true), false, false},
		{"a mask", specs.Mount{Destination: "/etc", Type: "tmpfs", Source: "tmpfs", Options: []string{"ro"}}, false, false},
		{"options of a file on a directory's", specs.Mount{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"rbind", "ro", "nosuid", "nodev", "rprivate"}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok, dir := HostView(tt.m); ok != tt.ok || dir != tt.dir {
				t.Errorf("HostView(%v) = %v, %v; want %v, %v", tt.m, ok, dir, tt.ok, tt.dir)
			}
		})
	}
}

// TestPlanDenyInBoundTmp: a denied path under /tmp (or /dev, ...) that a
// workspace, allowWrite or allowRead bind brings into the sandbox is
// masked; one nothing brings in needs no mask (the private /tmp hides it).
func TestPlanDenyInBoundTmp(t *testing.T) {
	fsys := hostFS()
	fsys["tmp/ws"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	fsys["tmp/ws/secrets"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	fsys["tmp/ws/.env"] = &fstest.MapFile{Mode: 0o600}
	fsys["tmp/other"] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	got, err := Plan(Layout{FS: fsys, MaskFile: "/run/cordon/mask", Rules: []Rule{
		{Path: "/tmp/ws", Access: ReadWrite},
		{Path: "/tmp/ws/secrets", Access: Deny},
		{Path: "/tmp/ws/.env", Access: Deny},
		{Path: "/tmp/other", Access: Deny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dst := map[string]bool{}
	for _, m := range got.Mounts {
		dst[m.Destination] = true
	}
	for _, p := range []string{"/tmp/ws/secrets", "/tmp/ws/.env"} {
		if !dst[p] {
			t.Errorf("denied %s, inside the bound /tmp/ws, is not masked", p)
		}
	}
	if dst["/tmp/other"] {
		t.Errorf("/tmp/other, which nothing binds in, got a mount")
	}
}
