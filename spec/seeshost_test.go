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

func TestSeesHostContained(t *testing.T) {
	rules := `[{"path": "/", "access": "l"}, {"path": "/usr", "access": "r"}, {"path": "/home", "access": "l"},
		{"path": "/home/ana", "access": "l"}, {"path": "/home/ana/app", "access": "w"}, {"path": "/home/ana/.config", "access": "r"},
		{"path": "/run/cordon/run-1/tmp", "access": "w"}]`
	container := &specs.Spec{Annotations: map[string]string{AnnotationSandbox: ModeContainer, AnnotationLandlock: rules}}
	unconfined := &specs.Spec{Annotations: map[string]string{AnnotationSandbox: ModeUnconfined}}
	for _, tc := range []struct {
		path              string
		container, unconf bool
	}{
		{"/usr/lib", true, true},
		{"/home/ana/app/src", true, true},
		{"/home/ana", true, true},       // listed on the way to a hidden path
		{"/home/ana/.ssh", false, true}, // hidden: no rule grants it
		{"/home/bob", false, true},      // below a listed-only directory
		{"/run/cordon/run-1/tmp", true, true},
		{"/opt", false, true},
		{"usr", false, false},
	} {
		if got := SeesHost(container, tc.path); got != tc.container {
			t.Errorf("container: SeesHost(%q) = %v, want %v", tc.path, got, tc.container)
		}
		if got := SeesHost(unconfined, tc.path); got != tc.unconf {
			t.Errorf("unconfined: SeesHost(%q) = %v, want %v", tc.path, got, tc.unconf)
		}
	}
}
