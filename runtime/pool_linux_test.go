package runtime

import (
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
