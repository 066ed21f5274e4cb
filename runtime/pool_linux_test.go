package runtime

import (
	"os"
	"time"

	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// Two commands under one policy share a pool key; anything else about
// the sandbox parts them.
func TestPoolKey(t *testing.T) {
	base := func() *specs.Spec {
		return &specs.Spec{
			Process: &specs.Process{
				Args: []string{"/.cordon/cordon", "sandbox-init", "--parent-fd=3", "--", "make", "test"},
				Env:  []string{"HOME=/home/ana"}, Cwd: "/home/ana/app",
			},
			Mounts: []specs.Mount{{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"}},
			Linux:  &specs.Linux{CgroupsPath: "/cordon/run-1"},
		}
	}
	key := func(s *specs.Spec) string {
		t.Helper()
		k, err := PoolKey(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := key(base())
	other := base()
	other.Process.Args = []string{"/.cordon/cordon", "sandbox-init", "--parent-fd=3", "--", "ls"}
	other.Process.Env, other.Process.Cwd = []string{"HOME=/root"}, "/"
	other.Linux.CgroupsPath = "/cordon/run-2"
	if got := key(other); got != want {
		t.Errorf("another command under the same policy: key %s, want %s", got, want)
	}
	for name, change := range map[string]func(*specs.Spec){
		"a mount": func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/home/ana/.ssh", Type: "tmpfs"})
		},
		"the init's fds": func(s *specs.Spec) { s.Process.Args[2] = "--parent-fd=4" },
		"an rlimit": func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1, Soft: 1}}
		},
		"no_new_privs": func(s *specs.Spec) { s.Process.NoNewPrivileges = true },
		"a namespace":  func(s *specs.Spec) { s.Linux.Namespaces = []specs.LinuxNamespace{{Type: "network"}} },
	} {
		s := base()
		change(s)
		if key(s) == want {
			t.Errorf("%s changed: the key did not", name)
		}
	}
	// PoolKey leaves the spec alone.
	s := base()
	key(s)
	if s.Process.Cwd != "/home/ana/app" || s.Linux.CgroupsPath != "/cordon/run-1" || len(s.Process.Args) != 6 {
		t.Errorf("PoolKey changed its spec: %+v", s.Process)
	}
}

func TestInitSaid(t *testing.T) {
	tests := []struct {
		name  string
		wrote string
		open  bool // the init is still there: its end stays open
		want  string
	}{
		{"nothing, gone", "", false, ""},
		{"nothing, still there", "", true, ""},
		{"a failure", "cordon: /ws/.git/hooks is not what the sandbox was planned with (it changed while the sandbox was set up); nothing ran\n", false,
			"/ws/.git/hooks is not what the sandbox was planned with (it changed while the sandbox was set up); nothing ran"},
		{"two messages", "cordon: warning: x\ncordon: signalfd: Too many open files\n", false, "warning: x; signalfd: Too many open files"},
		{"said, still there", "cordon: read the landlock rules: Bad file descriptor\n", true, "read the landlock rules: Bad file descriptor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := w.WriteString(tt.wrote); err != nil {
				t.Fatal(err)
			}
			if tt.open {
				defer w.Close()
			} else {
				w.Close()
			}
			start := time.Now()
			if got := initSaid(r, 100*time.Millisecond); got != tt.want {
				t.Errorf("initSaid = %q, want %q", got, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("initSaid took %v", d)
			}
		})
	}
	if got := initSaid(nil, time.Second); got != "" {
		t.Errorf("initSaid(nil) = %q", got)
	}
}
