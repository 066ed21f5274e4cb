package spec

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/seccomp"
)

func containerSpec() *specs.Spec {
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs"},
		Process: &specs.Process{
			Args: []string{"sh"}, Cwd: "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  []string{"CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"},
				Effective: []string{"CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"},
				Permitted: []string{"CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"},
			},
		},
		Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{
			{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace, Path: "/var/run/netns/cni-1"}, {Type: specs.MountNamespace},
		}},
	}
}

func TestContainerPolicyFor(t *testing.T) {
	files := map[string]string{
		"/etc/cordon/caps.json":  `{"capabilities": ["CAP_CHOWN", "CAP_KILL"]}`,
		"/etc/cordon/typo.json":  `{"readonlyRootf": true}`,
		"/etc/cordon/proxy.json": `{"allowedDomains": ["example.com"]}`,
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		cfg         *RuntimeConfig
		want        *ContainerPolicy
		wantSource  string
		wantErr     string
	}{
		{name: "none", want: nil},
		{name: "other annotations", annotations: map[string]string{"io.kubernetes.pod.name": "x"}, want: nil},
		{
			name: "built-in", annotations: map[string]string{AnnotationPolicy: "agent"},
			want: ptr(ContainerPolicies["agent"]), wantSource: "annotation:agent",
		},
		{
			name: "file", annotations: map[string]string{AnnotationPolicy: "/etc/cordon/caps.json"},
			want: &ContainerPolicy{Capabilities: &[]string{"CAP_CHOWN", "CAP_KILL"}}, wantSource: "annotation:/etc/cordon/caps.json",
		},
		{name: "unknown name", annotations: map[string]string{AnnotationPolicy: "strict"}, wantErr: `no such policy (known: agent, agent-network`},
		{name: "empty name", annotations: map[string]string{AnnotationPolicy: ""}, wantErr: `annotation dev.cordon.policy is empty`},
		{name: "typo in a file", annotations: map[string]string{AnnotationPolicy: "/etc/cordon/typo.json"}, wantErr: `unknown field "readonlyRootf"`},
		{name: "typo in a key", annotations: map[string]string{"dev.cordon.polcy": "agent"}, wantErr: "unknown annotation dev.cordon.polcy"},
		{
			name: "runtime default, annotation tightens",
			cfg:  &RuntimeConfig{DefaultPolicy: "agent-network"}, annotations: map[string]string{AnnotationNetwork: "none"},
			want: ptr(ContainerPolicies["agent"]), wantSource: "runtime:agent-network+dev.cordon.network=none",
		},
		{
			name: "an annotation cannot loosen the default",
			cfg:  &RuntimeConfig{DefaultPolicy: "agent"}, annotations: map[string]string{AnnotationNetwork: "container", AnnotationPolicy: "/etc/cordon/caps.json"},
			want: ptr(ContainerPolicies["agent"]), wantSource: "runtime:agent+annotation:/etc/cordon/caps.json+dev.cordon.network=container",
		},
		{
			name: "ignored annotations",
			cfg:  &RuntimeConfig{IgnoreAnnotations: true}, annotations: map[string]string{AnnotationPolicy: "agent", "dev.cordon.polcy": "x"},
			want: nil,
		},
		{
			name: "administrator's policy",
			cfg:  &RuntimeConfig{Policies: map[string]ContainerPolicy{"ro": {ReadonlyRootfs: true}}}, annotations: map[string]string{AnnotationPolicy: "ro"},
			want: &ContainerPolicy{ReadonlyRootfs: true}, wantSource: "annotation:ro",
		},
		{
			name: "allowed domains", annotations: map[string]string{AnnotationAllowedDomains: "example.com, *.github.com"},
			want: &ContainerPolicy{AllowedDomains: []string{"example.com", "*.github.com"}}, wantSource: AnnotationAllowedDomains,
		},
		{
			name: "empty allowed domains is no network", annotations: map[string]string{AnnotationAllowedDomains: ""},
			want: &ContainerPolicy{Network: NetworkNone}, wantSource: AnnotationAllowedDomains,
		},
		{
			name: "no network beats allowed domains",
			cfg:  &RuntimeConfig{DefaultPolicy: "agent"}, annotations: map[string]string{AnnotationAllowedDomains: "example.com"},
			want: ptr(ContainerPolicies["agent"]), wantSource: "runtime:agent+" + AnnotationAllowedDomains,
		},
		{
			name:        "agent with egress through the proxy",
			annotations: map[string]string{AnnotationPolicy: "agent-network", AnnotationAllowedDomains: "example.com"},
			want: &ContainerPolicy{
				Seccomp: true, Capabilities: &[]string{}, ReadonlyRootfs: true, NoNewPrivileges: true,
				Network: NetworkContainer, RecordViolations: true, AllowedDomains: []string{"example.com"},
			},
			wantSource: "annotation:agent-network+" + AnnotationAllowedDomains,
		},
		{name: "bad domain", annotations: map[string]string{AnnotationAllowedDomains: "http://x"}, wantErr: "is not a host name"},
		{name: "bad network", annotations: map[string]string{AnnotationNetwork: "host"}, wantErr: `unknown mode "host"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, source, err := ContainerPolicyFor(tc.annotations, tc.cfg, read)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
			if source != tc.wantSource {
				t.Errorf("source %q, want %q", source, tc.wantSource)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestTightenAgent(t *testing.T) {
	s := containerSpec()
	s.Annotations = map[string]string{AnnotationApplied: `{"policy":"forged"}`}
	a, err := Tighten(s, ptr(ContainerPolicies["agent"]), "annotation:agent", ContainerOpts{
		NetworkHook: []string{"/usr/local/bin/cordon", "oci-hook", "isolate-network"}, ListenerPath: "/run/cordon-oci/c/monitor.sock",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Linux.Seccomp == nil || a.Seccomp != "agent" {
		t.Error("no agent seccomp profile")
	}
	c := s.Process.Capabilities
	if len(c.Bounding)+len(c.Effective)+len(c.Permitted) != 0 {
		t.Errorf("capabilities left: %+v", c)
	}
	if diff := cmp.Diff([]string{"CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"}, a.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if !s.Root.Readonly || !s.Process.NoNewPrivileges {
		t.Error("root writable or new privileges allowed")
	}
	if ns := s.Linux.Namespaces[1]; ns.Type != specs.NetworkNamespace || ns.Path != "" {
		t.Errorf("network namespace %+v, want a private one", ns)
	}
	if h := s.Hooks.CreateRuntime; len(h) != 1 || h[0].Path != "/usr/local/bin/cordon" {
		t.Errorf("createRuntime hooks %+v, want cordon's network hook", h)
	}
	var recorded Applied
	if err := json.Unmarshal([]byte(s.Annotations[AnnotationApplied]), &recorded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*a, recorded); diff != "" {
		t.Errorf("recorded (-returned +annotation):\n%s", diff)
	}
}

// TestTightenBundleSeccomp: the bundle's own seccomp profile is kept under
// the agent profile (libcontainer installs one filter, so the two are
// merged), and a bundle profile the merge cannot hold fails create.
func TestTightenBundleSeccomp(t *testing.T) {
	eperm := uint(1)
	for _, tc := range []struct {
		name    string
		bundle  *specs.LinuxSeccomp
		refused []string // allowed by the agent profile, refused by the bundle's
		wantErr bool
	}{
		{"allow by default, kill mkdir", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"mkdir", "mkdirat"}, Action: specs.ActKillProcess},
		}}, []string{"mkdir", "mkdirat"}, false},
		{"refuse by default, allow a few", &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, DefaultErrnoRet: &eperm, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read", "write", "exit_group", "execve"}, Action: specs.ActAllow},
		}}, []string{"getpid", "mkdirat", "openat"}, false},
		{"IPv6 sockets refused", &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"socket"}, Action: specs.ActErrno, Args: []specs.LinuxSeccompArg{{Index: 0, Value: 10, Op: specs.OpEqualTo}}},
		}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := containerSpec()
			s.Linux.Seccomp = tc.bundle
			a, err := Tighten(s, ptr(ContainerPolicies["agent"]), "annotation:agent", ContainerOpts{
				NetworkHook: []string{"/usr/local/bin/cordon", "oci-hook", "isolate-network"}, ListenerPath: "/run/cordon-oci/c/monitor.sock",
			})
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) || !errors.Is(err, seccomp.ErrUnmergeable) {
					t.Fatalf("Tighten: %v; want %v and %v", err, ErrInvalid, seccomp.ErrUnmergeable)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range s.Linux.Seccomp.Syscalls {
				if r.Action == specs.ActAllow {
					for _, n := range tc.refused {
						if slices.Contains(r.Names, n) {
							t.Errorf("%s is allowed (%+v)", n, r)
						}
					}
				}
			}
			if !slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, "merged") }) {
				t.Errorf("notes %q do not say the profiles were merged", a.Notes)
			}
		})
	}
}

func TestTightenHostNetworkAndHooks(t *testing.T) {
	s := containerSpec()
	s.Linux.Namespaces = s.Linux.Namespaces[:1]
	s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/usr/bin/nerdctl"}}}
	a, err := Tighten(s, &ContainerPolicy{Network: NetworkNone}, "x", ContainerOpts{NetworkHook: []string{"/cordon", "oci-hook", "isolate-network"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Linux.Namespaces); n != 2 || s.Linux.Namespaces[1].Type != specs.NetworkNamespace {
		t.Errorf("namespaces %+v, want a new network namespace", s.Linux.Namespaces)
	}
	// Cordon's hook runs after the bundle's (nerdctl's CNI setup).
	if h := s.Hooks.CreateRuntime; len(h) != 2 || h[1].Path != "/cordon" {
		t.Errorf("createRuntime hooks %+v, want cordon's last", h)
	}
	if len(a.Notes) != 2 {
		t.Errorf("notes %q, want the host network and the hooks", a.Notes)
	}
	// The rest of the spec is as the bundle has it.
	if s.Linux.Seccomp != nil || s.Root.Readonly || len(s.Process.Capabilities.Bounding) != 3 {
		t.Error("network only: something else changed")
	}
}

func TestTightenProxy(t *testing.T) {
	pol := &ContainerPolicy{AllowedDomains: []string{"example.com"}}
	_, err := Tighten(containerSpec(), pol, AnnotationAllowedDomains, ContainerOpts{NoProxy: "a rootless runtime cannot"})
	if !errors.Is(err, ErrProxyUnavailable) || !strings.Contains(err.Error(), "a rootless runtime cannot") {
		t.Fatalf("error %v, want ErrProxyUnavailable with the reason", err)
	}

	s := containerSpec()
	s.Process.Env = []string{"PATH=/bin", "http_proxy=http://elsewhere:8080"}
	a, err := Tighten(s, pol, AnnotationAllowedDomains, ContainerOpts{NetworkHook: []string{"/cordon", "oci-hook", "isolate-network"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &Applied{
		Policy: AnnotationAllowedDomains, Network: NetworkProxy,
		Proxy:      &AppliedProxy{AllowedDomains: []string{"example.com"}, HTTP: "127.0.0.1:3128", SOCKS: "127.0.0.1:1080"},
		Violations: []string{"network"},
		Notes:      []string{"the network namespace /var/run/netns/cni-1 was replaced by a private one"},
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	if !a.Monitor() || a.Records() {
		t.Errorf("Monitor() %v, Records() %v: want a monitor for the proxy, no seccomp records", a.Monitor(), a.Records())
	}
	if ns := s.Linux.Namespaces[1]; ns.Path != "" {
		t.Errorf("network namespace %+v, want a private one", ns)
	}
	if h := s.Hooks.CreateRuntime; len(h) != 1 || h[0].Path != "/cordon" {
		t.Errorf("createRuntime hooks %+v, want cordon's network hook", h)
	}
	env := strings.Join(s.Process.Env, "\n")
	for _, kv := range []string{"PATH=/bin", "http_proxy=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128", "SOCKS_PROXY=socks5h://127.0.0.1:1080", "NO_PROXY=localhost,127.0.0.1,::1"} {
		if !strings.Contains(env+"\n", kv+"\n") {
			t.Errorf("environment lacks %s:\n%s", kv, env)
		}
	}
	if strings.Contains(env, "elsewhere") || strings.Contains(env, "GIT_SSH_COMMAND") {
		t.Errorf("environment:\n%s\nwant the bundle's proxy replaced, and no GIT_SSH_COMMAND (no cordon inside)", env)
	}
	if s.Linux.Seccomp != nil || s.Root.Readonly {
		t.Error("proxy only: something else changed")
	}

	// A rootless runtime: no network hook, the proxy's sockets from a
	// createContainer hook.
	s = containerSpec()
	if _, err := Tighten(s, pol, AnnotationAllowedDomains, ContainerOpts{ProxyHook: []string{"/cordon", "oci-hook", "proxy-listen", "/run/x.sock"}}); err != nil {
		t.Fatal(err)
	}
	want2 := []specs.Hook{{Path: "/cordon", Args: []string{"/cordon", "oci-hook", "proxy-listen", "/run/x.sock"}}}
	if diff := cmp.Diff(want2, s.Hooks.CreateContainer); diff != "" || len(s.Hooks.CreateRuntime) != 0 {
		t.Errorf("createContainer hooks (-want +got):\n%s\ncreateRuntime %+v", diff, s.Hooks.CreateRuntime)
	}
}

func TestTightenRecords(t *testing.T) {
	s := containerSpec()
	s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, ListenerPath: "/run/agent.sock"}
	_, err := Tighten(containerSpec(), ptr(ContainerPolicies["agent"]), "annotation:agent", ContainerOpts{})
	if err == nil {
		t.Error("records without a listener path: no error")
	}
	a, err := Tighten(s, ptr(ContainerPolicies["agent-network"]), "annotation:agent-network", ContainerOpts{ListenerPath: "/run/cordon-oci/x/monitor.sock"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"syscall", "socket"}, a.Violations); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if !a.Monitor() || !a.Records() {
		t.Errorf("Monitor() %v, Records() %v, want both", a.Monitor(), a.Records())
	}
	if got := s.Linux.Seccomp.ListenerPath; got != "/run/cordon-oci/x/monitor.sock" {
		t.Errorf("listener path %q, want the monitor's", got)
	}
	notified := map[string]bool{}
	for _, r := range s.Linux.Seccomp.Syscalls {
		if r.Action == specs.ActNotify {
			for _, n := range r.Names {
				notified[n] = true
			}
		}
	}
	for _, n := range []string{"unshare", "mount", "ptrace", "socket"} {
		if !notified[n] {
			t.Errorf("%s does not notify the monitor", n)
		}
	}
	if !slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, "/run/agent.sock") }) {
		t.Errorf("notes %q, want the bundle's dropped seccomp agent named", a.Notes)
	}

	// A policy of the administrator's without recordViolations: no
	// monitor, plain EPERM.
	s = containerSpec()
	a, err = Tighten(s, &ContainerPolicy{Seccomp: true}, "x", ContainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Monitor() || s.Linux.Seccomp.ListenerPath != "" {
		t.Errorf("no records asked: monitor %v, listener path %q", a.Monitor(), s.Linux.Seccomp.ListenerPath)
	}
}

func TestTightenNothing(t *testing.T) {
	s := containerSpec()
	want := containerSpec()
	a, err := Tighten(s, nil, "", ContainerOpts{})
	if err != nil || a != nil {
		t.Fatalf("Tighten(nil) = %v, %v", a, err)
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("a bundle without a policy changed (-want +got):\n%s", diff)
	}
}

func TestParseRuntimeConfig(t *testing.T) {
	if _, err := ParseRuntimeConfig([]byte(`{"defaultPolicy": "agent", "policies": {"ro": {"readonlyRootfs": true}}}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{"defaultPolicyy": "agent"}`, `{"policies": {"agent": {}}}`, `{"policies": {"x": {"network": "host"}}}`, `{} {}`} {
		if _, err := ParseRuntimeConfig([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestTightenProcess(t *testing.T) {
	s := containerSpec()
	a, err := Tighten(s, &ContainerPolicy{Capabilities: &[]string{"CAP_KILL"}, NoNewPrivileges: true, AllowedDomains: []string{"example.com"}}, "x", ContainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	// An exec'd process as ctr sends it: the bundle's, untightened.
	p := containerSpec().Process
	p.Env = []string{"PATH=/bin"}
	TightenProcess(p, a)
	if diff := cmp.Diff(s.Process.Capabilities, p.Capabilities); diff != "" {
		t.Errorf("capabilities (-container +exec):\n%s", diff)
	}
	if !p.NoNewPrivileges {
		t.Error("exec'd process may gain privileges")
	}
	if diff := cmp.Diff(append([]string{"PATH=/bin"}, s.Process.Env...), p.Env); diff != "" {
		t.Errorf("environment (-want +exec):\n%s", diff)
	}
	TightenProcess(p, nil) // no policy: nothing to do
}

// TestTightenKeepJoinedNetwork: where the runtime confines egress inside
// a namespace the bundle joins (a pod's), a container without network or
// with the proxy keeps that namespace, gets no interface-removing hook, and
// loses CAP_NET_ADMIN and CAP_NET_RAW (also for the processes exec'd into
// it), whatever else its policy keeps; a host-network bundle still gets a
// private namespace.
func TestTightenKeepJoinedNetwork(t *testing.T) {
	hook := []string{"/cordon", "oci-hook", "isolate-network"}
	netCaps := []string{"CAP_CHOWN", "CAP_NET_ADMIN", "CAP_NET_RAW"}
	for _, tc := range []struct {
		name        string
		hostNet     bool
		pol         ContainerPolicy
		keep        bool
		wantPath    string // the network namespace's path after Tighten
		wantHook    bool
		wantRules   bool
		wantProxy   string
		wantNetwork string
		wantCaps    []string // the bounding set after Tighten
	}{
		{"agent, kept", false, ContainerPolicies["agent"], true, "/var/run/netns/cni-1", false, true, "", NetworkNone, []string{}},
		{"proxy, kept", false, ContainerPolicy{AllowedDomains: []string{"example.com"}}, true, "/var/run/netns/cni-1", false, true, "127.0.0.1:41000", NetworkProxy, []string{"CAP_CHOWN"}},
		{"none, kept", false, ContainerPolicy{Network: NetworkNone}, true, "/var/run/netns/cni-1", false, true, "", NetworkNone, []string{"CAP_CHOWN"}},
		{"none, replaced", false, ContainerPolicy{Network: NetworkNone}, false, "", true, false, "", NetworkNone, netCaps},
		{"agent, replaced", false, ContainerPolicies["agent"], false, "", true, false, "", NetworkNone, []string{}},
		{"agent, host network", true, ContainerPolicies["agent"], true, "", true, false, "", NetworkNone, []string{}},
		{"agent-network, untouched", false, ContainerPolicies["agent-network"], true, "/var/run/netns/cni-1", false, false, "", NetworkContainer, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := containerSpec()
			s.Process.Capabilities = &specs.LinuxCapabilities{
				Bounding: slices.Clone(netCaps), Effective: slices.Clone(netCaps), Permitted: slices.Clone(netCaps),
			}
			if tc.hostNet {
				s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(ns specs.LinuxNamespace) bool { return ns.Type == specs.NetworkNamespace })
			}
			a, err := Tighten(s, &tc.pol, "x", ContainerOpts{
				NetworkHook: hook, ListenerPath: "/run/cordon-oci/c/monitor.sock",
				KeepJoinedNetwork: tc.keep, ProxyPorts: [2]int{41000, 41001},
			})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(s.Linux.Namespaces, func(ns specs.LinuxNamespace) bool { return ns.Type == specs.NetworkNamespace })
			if i < 0 || s.Linux.Namespaces[i].Path != tc.wantPath {
				t.Errorf("namespaces %+v, want the network one at %q", s.Linux.Namespaces, tc.wantPath)
			}
			if got := s.Hooks != nil && len(s.Hooks.CreateRuntime) > 0; got != tc.wantHook {
				t.Errorf("interface-removing hook: %v, want %v", got, tc.wantHook)
			}
			if a.EgressRules != tc.wantRules || a.Network != tc.wantNetwork {
				t.Errorf("applied egress rules %v, network %q; want %v, %q", a.EgressRules, a.Network, tc.wantRules, tc.wantNetwork)
			}
			if tc.wantProxy != "" && (a.Proxy == nil || a.Proxy.HTTP != tc.wantProxy ||
				!slices.Contains(s.Process.Env, "http_proxy=http://"+tc.wantProxy)) {
				t.Errorf("proxy %+v, env %q; want it at %s", a.Proxy, s.Process.Env, tc.wantProxy)
			}
			if diff := cmp.Diff(tc.wantCaps, s.Process.Capabilities.Bounding); diff != "" {
				t.Errorf("bounding set (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCaps, s.Process.Capabilities.Effective); diff != "" {
				t.Errorf("effective set (-want +got):\n%s", diff)
			}
			// A process exec'd later comes with the bundle's capabilities.
			p := &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: slices.Clone(netCaps), Effective: slices.Clone(netCaps)}}
			TightenProcess(p, a)
			if diff := cmp.Diff(tc.wantCaps, p.Capabilities.Effective); diff != "" {
				t.Errorf("an exec'd process's effective set (-want +got):\n%s", diff)
			}
		})
	}
}
