package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, data []byte) {
	t.Helper()
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

// host is a small host file system: a user with a workspace and
// credential stores, root's home, the runtime's state.
func host() fstest.MapFS {
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	file := &fstest.MapFile{Mode: 0o644}
	return fstest.MapFS{
		"bin":                     {Mode: fs.ModeSymlink | 0o777, Data: []byte("usr/bin")},
		"usr/bin/sh":              {Mode: 0o755},
		"usr/local/bin/cordon":    {Mode: 0o755},
		"etc/passwd":              file,
		"home/u/ws/.git/hooks":    dir,
		"home/u/ws/.git/config":   file,
		"home/u/ws/src/main.go":   file,
		"home/u/.ssh/id_ed25519":  {Mode: 0o600},
		"home/u/.aws/credentials": {Mode: 0o600},
		"home/u/.netrc":           {Mode: 0o600},
		"root/.ssh":               dir,
		"run/cordon/mask":         {Mode: 0},
		"run/cordon/rootfs":       dir,
		"tmp/ws":                  dir,
		"proc":                    dir,
		"dev":                     dir,
		"sys":                     dir,
	}
}

var hostPaths = Host{
	Rootfs:     "/run/cordon/rootfs",
	State:      "/run/cordon",
	Executable: "/usr/local/bin/cordon",
	MaskFile:   "/run/cordon/mask",
}

var amd64 = probe.Result{EUID: 1000, Arch: "amd64", Kernel: "6.18.0", MemTotal: 8 << 30}

func request(args ...string) Request {
	return Request{
		ID:   "run-test",
		Args: args,
		Cwd:  "/home/u/ws/src",
		Env:  []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "GITHUB_TOKEN=secret", "LANG=C.UTF-8", "TMPDIR=/var/tmp"},
		UID:  1000,
		GID:  1000,
		Host: hostPaths,
		FS:   host(),
	}
}

func defaultPolicy(t *testing.T, workspace, home string) *policy.Policy {
	t.Helper()
	p, err := policy.Default(workspace, home)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name  string
		pol   func(t *testing.T) *policy.Policy
		req   func() Request
		probe probe.Result
	}{
		{
			name: "rootless",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/home/u/ws", "/home/u") },
			req:  func() Request { return request("make", "test") },
		},
		{
			name: "root",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/home/u/ws", "/root") },
			req: func() Request {
				r := request("make", "test")
				r.UID, r.GID = 0, 0
				return r
			},
			probe: probe.Result{EUID: 0, Arch: "amd64", Kernel: "6.18.0"},
		},
		{
			name: "read-only",
			pol: func(t *testing.T) *policy.Policy {
				p := defaultPolicy(t, "/home/u/ws", "/home/u")
				p.Mode = policy.ReadOnly
				return p
			},
			req: func() Request { return request("ls") },
		},
		{
			name: "terminal",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/home/u/ws", "/home/u") },
			req: func() Request {
				r := request("bash")
				r.Terminal, r.ConsoleSize = true, &specs.Box{Height: 40, Width: 120}
				return r
			},
		},
		{
			name: "workspace-in-tmp",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/tmp/ws", "/home/u") },
			req: func() Request {
				r := request("true")
				r.Cwd = "/tmp/ws"
				return r
			},
		},
		{
			name: "binary-in-workspace",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/home/u/ws", "/home/u") },
			req: func() Request {
				r := request("true")
				r.FS.(fstest.MapFS)["home/u/ws/bin/cordon"] = &fstest.MapFile{Mode: 0o755}
				r.Host.Executable = "/home/u/ws/bin/cordon"
				return r
			},
		},
		{
			// No namespaces or mounts: Landlock (with /dev and the state
			// hidden, the private tmp writable), the init on the host.
			name: "container",
			pol: func(t *testing.T) *policy.Policy {
				p := defaultPolicy(t, "/home/u/ws", "/home/u")
				p.Network.AllowedDomains = []string{"example.com"}
				return p
			},
			req: func() Request {
				r := request("make", "test")
				r.Mode = ModeContainer
				return r
			},
		},
		{
			name: "host-proc",
			pol:  func(t *testing.T) *policy.Policy { return defaultPolicy(t, "/home/u/ws", "/home/u") },
			req: func() Request {
				r := request("true")
				r.HostProc = true
				return r
			},
		},
		{
			// a masked variable gets its fake (GITHUB_TOKEN, whose real
			// value the caller has, too, though cordon.env.allow would let
			// it through); ~/.netrc (denied by default) and
			// ~/.aws/credentials (in the denied ~/.aws) get their fakes
			// bound over them; the trust bundle and its variables
			name: "masked",
			pol: func(t *testing.T) *policy.Policy {
				p := defaultPolicy(t, "/home/u/ws", "/home/u")
				p.Env.Allow = append(p.Env.Allow, "GITHUB_TOKEN")
				p.Credentials.Masked = []policy.Credential{{Env: "GITHUB_TOKEN"}, {File: "/home/u/.netrc"}, {File: "/home/u/.aws/credentials"}}
				return p
			},
			req: func() Request {
				r := request("true")
				r.Masked = Masked{
					Env:         map[string]string{"GITHUB_TOKEN": "fake-token"},
					Files:       []MaskedFile{{"/home/u/.netrc", "/run/cordon/files-run-test/0"}, {"/home/u/.aws/credentials", "/run/cordon/files-run-test/1"}},
					TrustBundle: "/run/cordon/files-run-test/trust.pem",
				}
				return r
			},
		},
	}
	validate := schema(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := tc.probe
			if pr.Arch == "" {
				pr = amd64
			}
			s, err := Compile(tc.pol(t), tc.req(), pr)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(data); err != nil {
				t.Errorf("spec does not validate against the runtime-spec schema: %v", err)
			}
			if s.Linux.Seccomp == nil || len(s.Linux.Seccomp.Syscalls) == 0 {
				t.Fatal("no seccomp profile")
			}
			// The profile has golden files of its own in seccomp/.
			s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: s.Linux.Seccomp.DefaultAction}
			data, _ = json.MarshalIndent(s, "", "  ")
			golden(t, "compile-"+tc.name, append(data, '\n'))
		})
	}
}

// TestContainerRefusesHiddenInWritable: a denied path that exists inside a
// writable root cannot be hidden by Landlock, which grants the root whole:
// the container mode refuses the run rather than showing it.
func TestContainerRefusesHiddenInWritable(t *testing.T) {
	p := defaultPolicy(t, "/home/u/ws", "/home/u")
	p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, "/home/u/ws/src/main.go")
	r := request("true")
	r.Mode = ModeContainer
	_, err := Compile(p, r, amd64)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "cannot hide /home/u/ws/src/main.go from the command") ||
		!strings.Contains(err.Error(), "move it out of /home/u/ws") || !strings.Contains(err.Error(), "full sandbox") {
		t.Errorf("Compile = %v, want ErrUnsupported naming the path and the fixes", err)
	}
	// The full sandbox hides it with a mount.
	r.Mode = ModeFull
	if _, err := Compile(p, r, amd64); err != nil {
		t.Errorf("full: %v", err)
	}
}

// TestAgentSocket: with allowAllUnixSockets and SSH_AUTH_SOCK let in, the
// full sandbox binds the agent's socket into its private /tmp; nothing
// otherwise.
func TestAgentSocket(t *testing.T) {
	const sock = "/tmp/ssh-XYZ/agent.42"
	tests := []struct {
		name       string
		allowAll   bool
		allowEnv   bool
		value      string
		mode       string
		wantBind   bool
		wantInEnv  bool
		socketFile bool
	}{
		{name: "hatch and env", allowAll: true, allowEnv: true, value: sock, socketFile: true, wantBind: true, wantInEnv: true},
		{name: "no hatch", allowEnv: true, value: sock, socketFile: true, wantInEnv: true},
		{name: "env filtered", allowAll: true, value: sock, socketFile: true},
		{name: "not a socket", allowAll: true, allowEnv: true, value: sock, wantInEnv: true},
		{name: "missing", allowAll: true, allowEnv: true, value: "/tmp/ssh-XYZ/agent.43", socketFile: true, wantInEnv: true},
		{name: "outside /tmp", allowAll: true, allowEnv: true, value: "/home/u/agent.sock", socketFile: true, wantInEnv: true},
		{name: "container mode", allowAll: true, allowEnv: true, value: sock, socketFile: true, mode: ModeContainer, wantInEnv: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := defaultPolicy(t, "/home/u/ws", "/home/u")
			p.Network.AllowAllUnixSockets = tc.allowAll
			if tc.allowEnv {
				p.Env.Allow = append(p.Env.Allow, "SSH_AUTH_SOCK")
			}
			r := request("ssh-add", "-l")
			r.Env = append(r.Env, "SSH_AUTH_SOCK="+tc.value)
			fsys := host()
			mode := fs.FileMode(0o600)
			if tc.socketFile {
				mode |= fs.ModeSocket
			}
			fsys["tmp/ssh-XYZ/agent.42"] = &fstest.MapFile{Mode: mode}
			fsys["home/u/agent.sock"] = &fstest.MapFile{Mode: mode}
			r.FS = fsys
			if tc.mode != "" {
				r.Mode = tc.mode
			}
			s, err := Compile(p, r, amd64)
			if err != nil {
				t.Fatal(err)
			}
			bound := slices.ContainsFunc(s.Mounts, func(m specs.Mount) bool { return m.Destination == tc.value && m.Source == tc.value })
			inEnv := slices.Contains(s.Process.Env, "SSH_AUTH_SOCK="+tc.value)
			if bound != tc.wantBind || inEnv != tc.wantInEnv {
				t.Errorf("bound %t, in the environment %t; want %t, %t", bound, inEnv, tc.wantBind, tc.wantInEnv)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name      string
		workspace string
		req       func() Request
	}{
		{"no command", "/home/u/ws", func() Request { return request() }},
		{"relative cwd", "/home/u/ws", func() Request { r := request("true"); r.Cwd = "ws"; return r }},
		{"missing workspace", "/home/u/nope", func() Request { return request("true") }},
		{"workspace is a file", "/etc/passwd", func() Request { return request("true") }},
		{"workspace is the root", "/", func() Request { return request("true") }},
		{"no root directory", "/home/u/ws", func() Request { r := request("true"); r.Host.Rootfs = ""; return r }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(defaultPolicy(t, tc.workspace, "/home/u"), tc.req(), amd64)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Compile error = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestSeccompNotify checks when the profile notifies the runtime, and
// that the init gets the descriptor for the listener exactly then.
func TestSeccompNotify(t *testing.T) {
	probed := func(notify bool) probe.Result {
		pr := amd64
		pr.ProbedAt = time.Unix(1, 0)
		pr.Seccomp = probe.Seccomp{Feature: probe.Feature{Available: true}, UserNotify: notify}
		return pr
	}
	old := probed(true)
	old.Kernel = "5.15.0"
	tests := []struct {
		name   string
		probe  probe.Result
		record Record
		// notified are system calls with a notify rule, quiet ones
		// without; err is set when the request cannot be compiled.
		notified, quiet []string
		err             bool
	}{
		// the guard: what makes a name stops, and umask
		{"unprobed", amd64, Record{}, []string{"mount", "socket", "ptrace", "openat", "mkdirat", "renameat2", "umask"}, []string{"unlink", "read", "openat2"}, false},
		{"user notification", probed(true), Record{}, []string{"mount", "socket", "unshare", "openat", "mkdir", "symlinkat", "linkat"}, []string{"unlinkat", "read", "utimensat"}, false},
		{"kernel before 5.19", old, Record{}, []string{"mount", "socket"}, []string{"openat", "mkdir", "renameat2", "umask"}, false},
		{"no user notification", probed(false), Record{}, nil, []string{"mount", "socket", "openat"}, false},
		{"record writes", probed(true), Record{Writes: true}, []string{"mount", "openat", "mkdir", "unlinkat", "renameat2", "utimensat"}, []string{"read", "stat", "execve"}, false},
		{"record reads", probed(true), Record{Reads: true}, []string{"openat", "open", "mkdirat"}, []string{"read", "execve"}, false},
		{"record writes without notification", probed(false), Record{Writes: true}, nil, nil, true},
		{"record reads without notification", probed(false), Record{Reads: true}, nil, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request("true")
			req.Record = tc.record
			s, err := Compile(defaultPolicy(t, "/home/u/ws", "/home/u"), req, tc.probe)
			if tc.err {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Compile error = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			notifying := map[string]bool{}
			for _, rule := range s.Linux.Seccomp.Syscalls {
				if rule.Action == specs.ActNotify {
					for _, n := range rule.Names {
						notifying[n] = true
					}
				}
			}
			for _, n := range tc.notified {
				if !notifying[n] {
					t.Errorf("%s does not notify", n)
				}
			}
			for _, n := range tc.quiet {
				if notifying[n] {
					t.Errorf("%s notifies", n)
				}
			}
			_, guard := s.Annotations[AnnotationGuard]
			if guard != notifying["mkdirat"] {
				t.Errorf("guard annotation: %v, mkdirat notifies: %v", guard, notifying["mkdirat"])
			}
			hasFD := slices.Contains(s.Process.Args, "--notify-fd=7")
			if hasFD != (len(notifying) > 0) {
				t.Errorf("--notify-fd given: %v, notify rules: %d", hasFD, len(notifying))
			}
		})
	}
}

// TestCompileInvariants checks what every sandbox must have, whatever the
// request: the properties a reviewer would check first.
func TestCompileInvariants(t *testing.T) {
	for _, uid := range []uint32{0, 1000} {
		req := request("sh", "-c", "true")
		req.UID, req.GID = uid, uid
		s, err := Compile(defaultPolicy(t, "/home/u/ws", "/home/u"), req, probe.Result{EUID: int(uid), Arch: "amd64"})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Root.Readonly {
			t.Error("root is writable")
		}
		if !s.Process.NoNewPrivileges {
			t.Error("no_new_privs is off")
		}
		for _, set := range [][]string{s.Process.Capabilities.Effective, s.Process.Capabilities.Permitted, s.Process.Capabilities.Bounding} {
			for _, c := range set {
				if uid == 0 || c != "CAP_SETFCAP" {
					t.Errorf("uid %d: the init keeps %s", uid, c)
				}
			}
		}
		if len(s.Process.Capabilities.Ambient)+len(s.Process.Capabilities.Inheritable) != 0 {
			t.Error("ambient or inheritable capabilities")
		}
		var types []string
		for _, ns := range s.Linux.Namespaces {
			types = append(types, string(ns.Type))
		}
		if diff := cmp.Diff([]string{"user", "mount", "pid", "ipc", "uts", "network", "cgroup"}, types); diff != "" {
			t.Errorf("namespaces (-want +got):\n%s", diff)
		}
		if m := s.Linux.UIDMappings; len(m) != 1 || m[0].Size != 1 || m[0].HostID != uid {
			t.Errorf("uid mappings %+v", m)
		}
		if got := strings.Join(s.Process.Env, "\n"); strings.Contains(got, "GITHUB_TOKEN") || !strings.Contains(got, "TMPDIR=/tmp\n") && !strings.HasSuffix(got, "TMPDIR=/tmp") {
			t.Errorf("environment:\n%s", got)
		}
		wantArgs := []string{InitPath, InitCommand, "--parent-fd=3", "--seccomp-fd=4"}
		if uid != 0 {
			wantArgs = append(wantArgs, "--uid=1000", "--gid=1000")
		}
		wantArgs = append(wantArgs, "--landlock-fd=5", "--notify-fd=7", "--", "sh", "-c", "true")
		if diff := cmp.Diff(wantArgs, s.Process.Args); diff != "" {
			t.Errorf("args (-want +got):\n%s", diff)
		}
	}
}

// TestOpts checks each transformation alone on the base spec.
func TestOpts(t *testing.T) {
	p := defaultPolicy(t, "/home/u/ws", "/home/u")
	tests := []struct {
		name string
		opts []Opt
	}{
		{"root", []Opt{WithRoot("/r")}},
		{"process", []Opt{WithProcess(p, request("make"), true)}},
		{"process-without-seccomp", []Opt{WithProcess(p, request("make"), false)}},
		{"namespaces", []Opt{WithNamespaces(probe.Result{})}},
		{"namespaces-degraded", []Opt{WithNamespaces(probe.Result{ProbedAt: time.Unix(1, 0), UTSNamespace: probe.Feature{Available: true}})}},
		{"id-mappings", []Opt{WithIDMappings(1000, 100)}},
		{"capabilities", []Opt{WithProcess(p, request("make"), true), WithCapabilities(false)}},
		{"capabilities-nested", []Opt{WithProcess(p, request("make"), true), WithCapabilities(true)}},
		{"proc-masks", []Opt{WithProcMasks()}},
		{"cgroups-root", []Opt{WithCgroupsPath(probe.Result{EUID: 0}, "run-1")}},
		{"cgroups-rootless", []Opt{WithCgroupsPath(probe.Result{EUID: 1000}, "run-1")}},
		// A container's read-only cgroup file system: no cgroup for root.
		{"cgroups-root-none", []Opt{WithCgroupsPath(probe.Result{EUID: 0, ProbedAt: time.Unix(1, 0)}, "run-1")}},
		{"annotations", []Opt{WithAnnotations(map[string]string{"a": "1"}), WithAnnotations(map[string]string{"b": "2"})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Base()
			for _, o := range tc.opts {
				if err := o(s); err != nil {
					t.Fatal(err)
				}
			}
			data, _ := json.MarshalIndent(s, "", "  ")
			golden(t, "opt-"+tc.name, append(data, '\n'))
		})
	}
	if err := WithCapabilities(false)(Base()); !errors.Is(err, ErrInvalid) {
		t.Errorf("capabilities without a process: %v", err)
	}
}

// schema returns a validator for runtime-spec config.json documents.
func schema(t *testing.T) func([]byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	files, err := filepath.Glob("schema/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("schema files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource("file:///schema/"+filepath.Base(f), doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	sch, err := c.Compile("file:///schema/config-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return func(data []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
}

// TestSchemaRejects proves the validator can fail.
func TestSchemaRejects(t *testing.T) {
	validate := schema(t)
	for name, doc := range map[string]string{
		"no version":        `{"root": {"path": "/r"}}`,
		"negative uid":      `{"ociVersion": "1.3.0", "process": {"cwd": "/", "user": {"uid": -1, "gid": 0}}}`,
		"namespace unknown": `{"ociVersion": "1.3.0", "linux": {"namespaces": [{"type": "nope"}]}}`,
	} {
		if err := validate([]byte(doc)); err == nil {
			t.Errorf("%s: the schema accepted %s", name, doc)
		}
	}
}
