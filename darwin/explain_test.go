package darwin

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

func TestExplain(t *testing.T) {
	p, err := policy.Default(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	p.Filesystem.AllowWrite = []string{home + "/.cache"}
	p.Filesystem.DenyWrite = []string{ws + "/generated"}
	p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home+"/private", home+"/**/*.pem")
	p.Filesystem.AllowRead = []string{home + "/private/ok"}
	e, err := NewExplainer(p, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	net := *p
	net.Network.AllowedDomains = []string{"github.com"}
	eNet, err := NewExplainer(&net, Request{Cwd: ws, Tag: "t", HTTPProxyPort: 50001})
	if err != nil {
		t.Fatal(err)
	}
	v := func(op, target string) Violation {
		return Violation{Process: "sh", PID: 1, Operation: op, Target: target, Tag: "run1"}
	}
	for _, tc := range []struct {
		name string
		e    *Explainer
		v    Violation
		want Refusal
	}{
		{
			name: "write outside the workspace",
			v:    v("file-write-create", "/private/etc/hosts"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: "/private/etc/hosts",
				Reason: "read-only outside the workspace", Hint: "allow with --allow-write /private/etc"},
		},
		{
			name: "a protected path in the workspace",
			v:    v("file-write-data", ws+"/.git/hooks/pre-commit"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-data", Path: ws + "/.git/hooks/pre-commit", Reason: reasonProtected},
		},
		{
			name: "a protected path in another case",
			v:    v("file-write-create", ws+"/.GIT/Hooks/pre-commit"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: ws + "/.GIT/Hooks/pre-commit", Reason: reasonProtected},
		},
		{
			name: "a nested settings file",
			v:    v("file-write-create", ws+"/packages/web/.claude/settings.json"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: ws + "/packages/web/.claude/settings.json", Reason: reasonProtected},
		},
		{
			name: "a bare repository planted in the workspace",
			v:    v("file-write-create", ws+"/evil/HEAD"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: ws + "/evil/HEAD",
				Reason: "a bare repository's HEAD: git would take the directory for a repository and run its config and hooks"},
		},
		{
			name: "git's config, which a setting opens",
			v:    v("file-write-data", ws+"/.git/config"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-data", Path: ws + "/.git/config", Reason: reasonProtected,
				Hint: "allow git's config with sandbox.filesystem.allowGitConfig"},
		},
		{
			name: "a protected path in another writable root",
			v:    v("file-write-create", home+"/.cache/.bashrc"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: home + "/.cache/.bashrc", Reason: reasonProtected},
		},
		{
			name: "denyWrite",
			v:    v("file-write-unlink", ws+"/generated/x.go"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-unlink", Path: ws + "/generated/x.go", Reason: "denied by denyWrite"},
		},
		{
			name: "renaming what leads to a protected path",
			v:    v("file-write-unlink", ws+"/.git"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-unlink", Path: ws + "/.git",
				Reason: "leads to a protected or denied path: it cannot be moved or removed"},
		},
		{
			name: "a hard link",
			v:    v("file-link", ws+"/alias"),
			want: Refusal{Kind: KindWrite, Operation: "file-link", Path: ws + "/alias", Reason: "hard links and clones are refused in the sandbox"},
		},
		{
			name: "a credential store",
			v:    v("file-write-create", home+"/.ssh/authorized_keys"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: home + "/.ssh/authorized_keys", Reason: "a credential store: not writable in the sandbox"},
		},
		{
			name: "LaunchAgents",
			v:    v("file-write-create", home+"/Library/LaunchAgents/x.plist"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: home + "/Library/LaunchAgents/x.plist",
				Reason: "macOS runs or reads what is there outside the sandbox (launchd's agents, applications' preferences): not writable in the sandbox"},
		},
		{
			name: "read of a credential store",
			v:    v("file-read-data", home+"/.ssh/id_ed25519"),
			want: Refusal{Kind: KindRead, Operation: "file-read-data", Path: home + "/.ssh/id_ed25519", Reason: "a credential store: hidden from the sandbox",
				Hint: "allow with --allow-read " + home + "/.ssh/id_ed25519"},
		},
		{
			name: "read of a denyRead path",
			v:    v("file-read-data", home+"/private/notes.txt"),
			want: Refusal{Kind: KindRead, Operation: "file-read-data", Path: home + "/private/notes.txt", Reason: reasonHidden,
				Hint: "allow with --allow-read " + home + "/private"},
		},
		{
			name: "read of a denyRead glob",
			v:    v("file-read-data", home+"/a/b/key.pem"),
			want: Refusal{Kind: KindRead, Operation: "file-read-data", Path: home + "/a/b/key.pem", Reason: reasonHidden,
				Hint: "allow with --allow-read " + home + "/a/b/key.pem"},
		},
		{
			name: "exec of a hidden program",
			v:    v("process-exec*", home+"/private/tool"),
			want: Refusal{Kind: KindRead, Operation: "process-exec*", Path: home + "/private/tool", Reason: reasonHidden,
				Hint: "allow with --allow-read " + home + "/private"},
		},
		{
			name: "exec otherwise",
			v:    v("process-exec*", "/usr/bin/true"),
			want: Refusal{Kind: KindOperation, Operation: "process-exec*", Args: []string{"/usr/bin/true"}, Reason: "executing it is refused in the sandbox"},
		},
		{
			name: "a device",
			v:    v("file-read-data", "/dev/disk0"),
			want: Refusal{Kind: KindRead, Operation: "file-read-data", Path: "/dev/disk0", Reason: "a device the sandbox does not open"},
		},
		{
			name: "a connection without network",
			v:    v("network-outbound", "93.184.216.34:443"),
			want: Refusal{Kind: KindNetwork, Operation: "network-outbound", Host: "93.184.216.34", Port: 443,
				Reason: "no network: the policy allows no domain", Hint: "allow with --allow-domain NAME; connections then go through cordon's proxy"},
		},
		{
			name: "a direct connection with the proxy",
			e:    eNet,
			v:    v("network-outbound", "[2606:4700::1]:443"),
			want: Refusal{Kind: KindNetwork, Operation: "network-outbound", Host: "2606:4700::1", Port: 443,
				Reason: "direct connections are refused: only cordon's proxy is reachable (HTTPS_PROXY, ALL_PROXY)"},
		},
		{
			name: "another loopback port",
			e:    eNet,
			v:    v("network-outbound", "127.0.0.1:5432"),
			want: Refusal{Kind: KindNetwork, Operation: "network-outbound", Host: "127.0.0.1", Port: 5432,
				Reason: "only cordon's proxy is reachable on the loopback interface", Hint: "allow with sandbox.network.allowLocalBinding"},
		},
		{
			name: "a unix socket",
			v:    v("network-outbound", "/private/var/run/docker.sock"),
			want: Refusal{Kind: KindSocket, Operation: "connect", Path: "/private/var/run/docker.sock", Args: []string{"/private/var/run/docker.sock"},
				Reason: reasonSockets, Hint: "allow with sandbox.network.allowUnixSockets"},
		},
		{
			name: "a name lookup without network",
			v:    v("network-outbound", mdnsResponder),
			want: Refusal{Kind: KindSocket, Operation: "connect", Path: mdnsResponder, Args: []string{mdnsResponder},
				Reason: "no network: the policy allows no domain", Hint: "allow with --allow-domain"},
		},
		{
			name: "a name lookup with the proxy",
			e:    eNet,
			v:    v("network-outbound", mdnsResponder),
			want: Refusal{Kind: KindSocket, Operation: "connect", Path: mdnsResponder, Args: []string{mdnsResponder},
				Reason: "name lookups: the sandbox reaches names only through cordon's proxy"},
		},
		{
			name: "listening",
			v:    v("network-bind", "*:8080"),
			want: Refusal{Kind: KindOperation, Operation: "network-bind", Args: []string{"*:8080"},
				Reason: "listening is refused in the sandbox", Hint: "allow on the loopback interface with sandbox.network.allowLocalBinding"},
		},
		{
			name: "an address that does not parse",
			v:    v("network-outbound", "remote:tcp"),
			want: Refusal{Kind: KindOperation, Operation: "network-outbound", Args: []string{"remote:tcp"}, Reason: "not allowed in the sandbox"},
		},
		{
			name: "trustd, without network",
			v:    v("mach-lookup", "com.apple.trustd.agent"),
			want: Refusal{Kind: KindOperation, Operation: "mach-lookup", Args: []string{"com.apple.trustd.agent"},
				Reason: "TLS verification through trustd could reach hosts past the domain filter"},
		},
		{
			name: "trustd, with network",
			e:    eNet,
			v:    v("mach-lookup", "com.apple.trustd.agent"),
			want: Refusal{Kind: KindOperation, Operation: "mach-lookup", Args: []string{"com.apple.trustd.agent"},
				Reason: "TLS verification through trustd could reach hosts past the domain filter",
				Hint:   "allow with sandbox.enableWeakerNetworkIsolation (Go, Rust's native-tls and Swift verify certificates through it)"},
		},
		{
			name: "the hooks of a repository made during the run",
			v:    v("file-write-create", ws+"/lib/x/.git/hooks/post-checkout"),
			want: Refusal{Kind: KindWrite, Operation: "file-write-create", Path: ws + "/lib/x/.git/hooks/post-checkout", Reason: reasonProtected},
		},
		{
			name: "another Mach service",
			v:    v("mach-lookup", "com.apple.FontServer"),
			want: Refusal{Kind: KindOperation, Operation: "mach-lookup", Args: []string{"com.apple.FontServer"}, Reason: "a Mach service not on the sandbox's list; sandbox.network.allowMachLookup adds one"},
		},
		{
			name: "a signal, without a target",
			v:    v("signal", ""),
			want: Refusal{Kind: KindOperation, Operation: "signal", Reason: "only processes of the same sandbox can be signalled"},
		},
		{
			name: "something new",
			v:    v("darwin-notification-post", "x"),
			want: Refusal{Kind: KindOperation, Operation: "darwin-notification-post", Args: []string{"x"}, Reason: "not allowed in the sandbox"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.e
			if ex == nil {
				ex = e
			}
			if diff := cmp.Diff(tc.want, ex.Explain(tc.v)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainReadOnly(t *testing.T) {
	p, err := policy.Default(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	p.Mode = policy.ReadOnly
	e, err := NewExplainer(p, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	got := e.Explain(Violation{Operation: "file-write-create", Target: ws + "/out.txt"})
	want := Refusal{Kind: KindWrite, Operation: "file-write-create", Path: ws + "/out.txt",
		Reason: "read-only: the permission mode is read-only"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSplitHostPort(t *testing.T) {
	for target, want := range map[string]struct {
		host string
		port int
		ok   bool
	}{
		"1.2.3.4:443":     {"1.2.3.4", 443, true},
		"[::1]:80":        {"::1", 80, true},
		"2001:db8::1:443": {"2001:db8::1", 443, true},
		"*:443":           {"*", 443, true},
		"localhost:3128":  {"localhost", 3128, true},
		"1.2.3.4":         {},
		":443":            {},
		"a:0":             {},
		"a:65536":         {},
		"a:+1":            {},
		"/var/run/x:1":    {},
		"a b:1":           {},
		"":                {},
	} {
		h, p, ok := splitHostPort(target)
		if h != want.host || p != want.port || ok != want.ok {
			t.Errorf("splitHostPort(%q) = %q, %d, %v; want %+v", target, h, p, ok, want)
		}
	}
}

// TestExplainNestedUnderNodeModules: a workspace that lies in a
// node_modules directory keeps its nested settings protected, as the
// profile keeps them, and the explainer says so: only a node_modules
// inside the workspace is left out.
func TestExplainNestedUnderNodeModules(t *testing.T) {
	w := home + "/node_modules/proj"
	p, r, rules := profileCase{policy: func(p *policy.Policy) { p.Workspace = w }, req: func(r *Request) { r.Cwd = w }}.compiledRules(t)
	target := w + "/pkg/.claude/settings.json"
	if v, err := decideBoth(rules, file("file-write-create", target)); err != nil || v.allow {
		t.Fatalf("the profile allows writing %s", target)
	}
	e, err := NewExplainer(p, r)
	if err != nil {
		t.Fatal(err)
	}
	got := e.Explain(Violation{Operation: "file-write-create", Target: target})
	want := Refusal{Kind: KindWrite, Operation: "file-write-create", Path: target, Reason: reasonProtected}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
