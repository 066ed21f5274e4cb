package spec

import (
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestSeesHost(t *testing.T) {
	s := &specs.Spec{Mounts: []specs.Mount{
		{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"rbind", "rro"}},
		{Destination: "/home", Type: "bind", Source: "/home", Options: []string{"rbind", "rro"}},
		{Destination: "/etc/hostname", Type: "bind", Source: "/etc/hostname", Options: []string{"bind", "ro"}},
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"},
		{Destination: "/home/ana/.ssh", Type: "tmpfs", Source: "tmpfs"},
		{Destination: "/home/ana/.cache/npm", Type: "overlay", Source: "overlay"},
		{Destination: "/home/ana/.npmrc", Type: "bind", Source: "/run/cordon/mask", Options: []string{"bind", "ro"}},
		{Destination: "/tmp/ws", Type: "bind", Source: "/tmp/ws", Options: []string{"rbind"}},
		{Destination: "/srv/data", Type: "bind", Source: "/srv/data", Options: []string{"bind"}},
		{Destination: "/home/ana/app/link", Type: "bind", Source: "/home/ana/elsewhere", Options: []string{"rbind"}},
	}}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/usr", true},
		{"/usr/lib/x86_64-linux-gnu", true},
		{"/home/ana/app", true},
		{"/home/ana/app/src", true},
		{"/tmp/ws", true},
		{"/tmp/ws/sub", true},
		{"/srv/data", true},
		{"/srv/data/mnt", false},       // not recursive: the host's mounts below are not there
		{"/tmp", false},                // the private /tmp
		{"/tmp/made-inside", false},    // only in the sandbox
		{"/tmp/wsx", false},            // beside the workspace, not in it
		{"/home/ana/.ssh", false},      // hidden
		{"/home/ana/.ssh/keys", false}, // hidden
		{"/home/ana/.cache/npm", false},
		{"/home/ana/.npmrc", false},
		{"/home/ana/app/link", false}, // another directory bound there
		{"/proc/self", false},
		{"/", false},    // the sandbox's own root
		{"/opt", false}, // not bound
		{"/usr/../etc", false},
		{"usr", false},
		{"/usr/", false},
	} {
		if got := SeesHost(s, tc.path); got != tc.want {
			t.Errorf("SeesHost(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
