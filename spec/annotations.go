package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/seccomp"
)

// Annotations on an OCI bundle that ask cordon, run as an OCI runtime
// (containerd's runc shim, nerdctl --runtime, a Kubernetes RuntimeClass),
// to tighten the container before it runs. A bundle without them (and no
// runtime-level default) runs exactly as under runc.
const (
	// AnnotationPolicy names a container policy: a built-in one (see
	// ContainerPolicies) or the absolute path of a JSON ContainerPolicy
	// file on the host.
	AnnotationPolicy = "dev.cordon.policy"
	// AnnotationNetwork is "none" (loopback only) or "container" (the
	// network the bundle asks for).
	AnnotationNetwork = "dev.cordon.network"
	// AnnotationAllowedDomains is a comma-separated list of domains the
	// container may reach through cordon's filtering proxy, which the
	// container's monitor process serves on its loopback.
	AnnotationAllowedDomains = "dev.cordon.network.allowedDomains"
	// AnnotationApplied is set by cordon, never read from a bundle: the
	// JSON Applied record of what it enforced.
	AnnotationApplied = "dev.cordon.applied"
)

// Network modes of a ContainerPolicy.
const (
	NetworkNone      = "none"      // a private network namespace with loopback only
	NetworkContainer = "container" // whatever the bundle asks for
	// NetworkProxy is what Applied says of a container whose policy allows
	// domains: a private network namespace with loopback only, where
	// cordon's filtering proxy listens.
	NetworkProxy = "proxy"
)

// ContainerPolicy is what cordon enforces on a container it runs from an
// OCI bundle. Every field only tightens the bundle's spec; zero values
// leave it as it is.
type ContainerPolicy struct {
	// Seccomp replaces the bundle's seccomp profile with cordon's agent
	// profile (see package seccomp).
	Seccomp bool `json:"seccomp,omitempty"`
	// Capabilities, when set, are the only capabilities the process may
	// keep, in every set: the bundle's capabilities outside it are dropped
	// and none is added. An empty list drops them all.
	Capabilities *[]string `json:"capabilities,omitempty"`
	// ReadonlyRootfs mounts the container's root read-only.
	ReadonlyRootfs bool `json:"readonlyRootfs,omitempty"`
	// NoNewPrivileges sets the process's no_new_privs bit.
	NoNewPrivileges bool `json:"noNewPrivileges,omitempty"`
	// Network is NetworkNone or NetworkContainer ("" means the latter).
	Network string `json:"network,omitempty"`
	// AllowedDomains asks for egress through cordon's filtering proxy to
	// these domains only: the container gets a private network namespace
	// with loopback only, the proxy listens there, and the process's
	// environment points at it (see netproxy.Env).
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// RecordViolations makes the agent profile's refusals (with Seccomp)
	// notify the container's monitor, which answers EPERM and records
	// them, as cordon run does. Connections the proxy refuses are
	// recorded whenever there is a proxy.
	RecordViolations bool `json:"recordViolations,omitempty"`
}

// ContainerPolicies are the built-in container policies.
var ContainerPolicies = map[string]ContainerPolicy{
	// agent: everything cordon's own sandbox gives a command that can be
	// given to a container: the agent seccomp profile, no capabilities, no
	// new privileges, a read-only root and no network.
	"agent": {
		Seccomp: true, Capabilities: &[]string{}, ReadonlyRootfs: true,
		NoNewPrivileges: true, Network: NetworkNone, RecordViolations: true,
	},
	// agent-network: the same, with the network the bundle asks for (for a
	// pod whose egress a network policy filters).
	"agent-network": {
		Seccomp: true, Capabilities: &[]string{}, ReadonlyRootfs: true,
		NoNewPrivileges: true, Network: NetworkContainer, RecordViolations: true,
	},
}

// RuntimeConfig is cordon's runtime-level configuration as an OCI runtime
// (/etc/cordon/runtime.json).
type RuntimeConfig struct {
	// DefaultPolicy is applied to every container: a built-in name, a path,
	// or "" for none. A container's annotations can only tighten it.
	DefaultPolicy string `json:"defaultPolicy,omitempty"`
	// Policies are named policies of the administrator's, usable in
	// AnnotationPolicy and DefaultPolicy next to the built-in ones.
	Policies map[string]ContainerPolicy `json:"policies,omitempty"`
	// IgnoreAnnotations makes cordon ignore containers' dev.cordon.*
	// annotations: only DefaultPolicy applies.
	IgnoreAnnotations bool `json:"ignoreAnnotations,omitempty"`
}

// Applied records what cordon enforced on a container, for `cordon state`.
type Applied struct {
	// Policy names where the policy came from: "agent",
	// "runtime:agent+annotation:/etc/cordon/p.json", ...
	Policy string `json:"policy"`
	// Seccomp is "agent" when cordon's profile replaced the bundle's.
	Seccomp string `json:"seccomp,omitempty"`
	// Capabilities are the capabilities the process kept (nil: unchanged).
	Capabilities *[]string `json:"capabilities,omitempty"`
	// Dropped are the capabilities cordon removed from the bundle's.
	Dropped         []string `json:"droppedCapabilities,omitempty"`
	ReadonlyRootfs  bool     `json:"readonlyRootfs,omitempty"`
	NoNewPrivileges bool     `json:"noNewPrivileges,omitempty"`
	// Network is NetworkNone, NetworkContainer or NetworkProxy.
	Network string `json:"network"`
	// EgressRules says that the container kept the network namespace it
	// joins (a pod's: its address, what connects to it), where the
	// runtime's firewall rules let out only loopback traffic, the replies
	// to connections made to the container and the proxy's own
	// connections (see ContainerOpts.KeepJoinedNetwork); the container
	// holds neither CAP_NET_ADMIN nor CAP_NET_RAW. Network says what else
	// it reaches: nothing, or cordon's proxy on loopback.
	EgressRules bool `json:"egressRules,omitempty"`
	// Proxy is the filtering proxy the container reaches the network
	// through (Network is NetworkProxy).
	Proxy *AppliedProxy `json:"proxy,omitempty"`
	// Violations are the kinds of refusal the container's monitor records
	// ("syscall", "socket", "network"), with the container's id as the
	// run's; empty when nothing is recorded.
	Violations []string `json:"violations,omitempty"`
	// Notes say what cordon changed beyond the fields above.
	Notes []string `json:"notes,omitempty"`
}

// AppliedProxy is the proxy a container's monitor serves inside its
// network namespace.
type AppliedProxy struct {
	// AllowedDomains are the destinations the proxy lets through.
	AllowedDomains []string `json:"allowedDomains"`
	// HTTP and SOCKS are the proxy's addresses inside the container.
	HTTP  string `json:"http"`
	SOCKS string `json:"socks"`
}

// Monitor reports whether a container this record describes needs cordon's
// monitor process: a proxy to serve, or refusals to record.
func (a *Applied) Monitor() bool {
	return a != nil && (a.Proxy != nil || len(a.Violations) > 0)
}

// Records reports whether the container's seccomp refusals go to the
// monitor (the profile has notify rules and a listener path).
func (a *Applied) Records() bool {
	return a != nil && slices.Contains(a.Violations, "syscall")
}

// ErrProxyUnavailable is returned for a container whose policy allows
// domains through cordon's proxy when the runtime cannot serve it (see
// ContainerOpts.NoProxy).
var ErrProxyUnavailable = errors.New("egress through cordon's filtering proxy is not available")

// userAnnotations are the dev.cordon.* annotations a bundle may carry to
// ask for a policy; internal are the ones cordon's own compiled specs carry
// (cordon run), which the OCI runtime ignores.
var (
	userAnnotations = []string{AnnotationPolicy, AnnotationNetwork, AnnotationAllowedDomains}
	internal        = []string{
		AnnotationWorkspace, AnnotationMode, AnnotationScrub, AnnotationLandlock,
		AnnotationLimits, AnnotationProxy,
	}
)

// ParseRuntimeConfig reads a RuntimeConfig, strictly: an unknown key is an
// error, as a typo must not turn a policy off.
func ParseRuntimeConfig(data []byte) (*RuntimeConfig, error) {
	var c RuntimeConfig
	if err := strictJSON(data, &c); err != nil {
		return nil, err
	}
	for name, p := range c.Policies {
		if _, ok := ContainerPolicies[name]; ok {
			return nil, fmt.Errorf("policies: %q is a built-in policy", name)
		}
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("policies: %s: %w", name, err)
		}
	}
	return &c, nil
}

func strictJSON(data []byte, v any) error {
	r := bytes.NewReader(data)
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// Decoder.More says nothing of a stray "}" or "]".
	rest, _ := io.ReadAll(io.MultiReader(dec.Buffered(), r))
	if len(bytes.Trim(rest, " \t\r\n")) > 0 { // JSON's white space
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Proxied reports whether the policy asks for egress through cordon's
// filtering proxy.
func (p ContainerPolicy) Proxied() bool {
	return len(p.AllowedDomains) > 0 && p.Network != NetworkNone
}

func (p ContainerPolicy) check() error {
	switch p.Network {
	case "", NetworkNone, NetworkContainer:
	default:
		return fmt.Errorf("network: unknown mode %q (want %q or %q)", p.Network, NetworkNone, NetworkContainer)
	}
	for _, d := range p.AllowedDomains {
		if _, err := policy.CheckDomainPattern(d); err != nil {
			return fmt.Errorf("allowedDomains: %w", err)
		}
	}
	if p.Capabilities != nil {
		for _, c := range *p.Capabilities {
			if !strings.HasPrefix(c, "CAP_") {
				return fmt.Errorf("capabilities: %q is not a capability name (CAP_...)", c)
			}
		}
	}
	return nil
}

// ContainerPolicyFor returns the policy for a container with the given
// annotations under the runtime configuration cfg (nil for none), and a
// name saying where it came from; nil when nothing applies. readFile reads
// a policy file named by path.
func ContainerPolicyFor(annotations map[string]string, cfg *RuntimeConfig, readFile func(string) ([]byte, error)) (*ContainerPolicy, string, error) {
	if cfg == nil {
		cfg = &RuntimeConfig{}
	}
	var (
		pols  []ContainerPolicy
		names []string
	)
	add := func(source, name string) error {
		p, err := lookupPolicy(name, cfg, readFile)
		if err != nil {
			return fmt.Errorf("%s %q: %w", source, name, err)
		}
		pols = append(pols, p)
		names = append(names, source+":"+name)
		return nil
	}
	if cfg.DefaultPolicy != "" {
		if err := add("runtime", cfg.DefaultPolicy); err != nil {
			return nil, "", err
		}
	}
	if !cfg.IgnoreAnnotations {
		if err := checkAnnotations(annotations); err != nil {
			return nil, "", err
		}
		if name, ok := annotations[AnnotationPolicy]; ok {
			// A template that left it unset asked for a policy: the
			// container must not run unconfined.
			if name == "" {
				return nil, "", fmt.Errorf("annotation %s is empty: name a policy, or leave the annotation out", AnnotationPolicy)
			}
			if err := add("annotation", name); err != nil {
				return nil, "", err
			}
		}
		if v, ok := annotations[AnnotationNetwork]; ok {
			p := ContainerPolicy{Network: v}
			if err := p.check(); err != nil {
				return nil, "", fmt.Errorf("annotation %s: %w", AnnotationNetwork, err)
			}
			pols = append(pols, p)
			names = append(names, AnnotationNetwork+"="+v)
		}
		if v, ok := annotations[AnnotationAllowedDomains]; ok {
			var p ContainerPolicy
			for d := range strings.SplitSeq(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					p.AllowedDomains = append(p.AllowedDomains, d)
				}
			}
			if err := p.check(); err != nil {
				return nil, "", fmt.Errorf("annotation %s: %w", AnnotationAllowedDomains, err)
			}
			if len(p.AllowedDomains) == 0 {
				// An empty list means no network, as in sandbox-runtime.
				p.Network = NetworkNone
			}
			pols = append(pols, p)
			names = append(names, AnnotationAllowedDomains)
		}
	}
	if len(pols) == 0 {
		return nil, "", nil
	}
	merged := pols[0]
	for _, p := range pols[1:] {
		merged = merged.merge(p)
	}
	return &merged, strings.Join(names, "+"), nil
}

// checkAnnotations refuses dev.cordon.* annotations cordon does not know:
// a misspelt policy annotation must not run the container unconfined.
func checkAnnotations(a map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !strings.HasPrefix(k, "dev.cordon.") || slices.Contains(userAnnotations, k) ||
			slices.Contains(internal, k) || k == AnnotationApplied {
			continue
		}
		return fmt.Errorf("unknown annotation %s (cordon knows %s)", k, strings.Join(userAnnotations, ", "))
	}
	return nil
}

func lookupPolicy(name string, cfg *RuntimeConfig, readFile func(string) ([]byte, error)) (ContainerPolicy, error) {
	if p, ok := ContainerPolicies[name]; ok {
		return p, nil
	}
	if p, ok := cfg.Policies[name]; ok {
		return p, nil
	}
	if !filepath.IsAbs(name) {
		known := slices.Sorted(maps.Keys(ContainerPolicies))
		known = append(known, slices.Sorted(maps.Keys(cfg.Policies))...)
		return ContainerPolicy{}, fmt.Errorf("no such policy (known: %s; or the absolute path of a policy file)", strings.Join(known, ", "))
	}
	if readFile == nil {
		return ContainerPolicy{}, errors.New("policy files cannot be read here")
	}
	data, err := readFile(name)
	if err != nil {
		return ContainerPolicy{}, err
	}
	var p ContainerPolicy
	if err := strictJSON(data, &p); err != nil {
		return ContainerPolicy{}, fmt.Errorf("policy file: %w", err)
	}
	return p, p.check()
}

// merge returns the stricter of p and q in every field.
func (p ContainerPolicy) merge(q ContainerPolicy) ContainerPolicy {
	out := ContainerPolicy{
		Seccomp:          p.Seccomp || q.Seccomp,
		ReadonlyRootfs:   p.ReadonlyRootfs || q.ReadonlyRootfs,
		NoNewPrivileges:  p.NoNewPrivileges || q.NoNewPrivileges,
		RecordViolations: p.RecordViolations || q.RecordViolations,
		Capabilities:     p.Capabilities,
		Network:          p.Network,
	}
	switch {
	case q.Capabilities == nil:
	case p.Capabilities == nil:
		out.Capabilities = q.Capabilities
	default:
		kept := intersect(*p.Capabilities, *q.Capabilities)
		out.Capabilities = &kept
	}
	if q.Network == NetworkNone || out.Network == "" {
		out.Network = q.Network
	}
	switch {
	case out.Network == NetworkNone:
		// No network at all is stricter than any proxy.
	case len(p.AllowedDomains) > 0 && len(q.AllowedDomains) > 0:
		out.AllowedDomains = intersect(p.AllowedDomains, q.AllowedDomains)
		if len(out.AllowedDomains) == 0 {
			out.Network = NetworkNone
		}
	case len(p.AllowedDomains) > 0:
		out.AllowedDomains = p.AllowedDomains
	default:
		out.AllowedDomains = q.AllowedDomains
	}
	return out
}

func intersect(a, b []string) []string {
	out := []string{}
	for _, s := range a {
		if slices.Contains(b, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ContainerOpts are the facts about the host that tightening a container
// needs.
type ContainerOpts struct {
	// NetworkHook is the program, with its arguments, that runs as the
	// container's last createRuntime hook when it gets no network or the
	// proxy: it removes every interface but loopback from the container's
	// network namespace, whatever earlier hooks (a CNI hook of nerdctl's)
	// put there.
	NetworkHook []string
	// Seccomp are the options of the agent profile (Notify is set here
	// when the policy records violations).
	Seccomp seccomp.Options
	// ListenerPath is the unix socket of the container's monitor, where
	// the runtime hands the seccomp listener of each of the container's
	// processes (the spec's linux.seccomp.listenerPath). Recording
	// violations needs it.
	ListenerPath string
	// NoProxy, when set, says why the runtime cannot serve the proxy: a
	// policy that allows domains is refused with it.
	NoProxy string
	// ProxyHook, when set, is the program, with its arguments, that makes
	// the proxy's listening sockets from inside the container (a
	// createContainer hook, which runs in the container's namespaces) and
	// hands them to the monitor: for a runtime that cannot enter the
	// container's network namespace from outside (a rootless one).
	ProxyHook []string
	// ProxyPorts are the proxy's HTTP and SOCKS5 ports inside the
	// container (netproxy's defaults when zero).
	ProxyPorts [2]int
	// KeepJoinedNetwork says that the runtime confines egress inside a
	// network namespace the bundle joins by path (a pod's, CNI's) with
	// firewall rules of its own, installed before the container runs: a
	// container that gets no network or only the proxy keeps that
	// namespace, its interfaces and its address (kubelet's probes and
	// Services reach it), instead of a private one.
	KeepJoinedNetwork bool
}

// Tighten applies the container policy p to the bundle's spec s and
// returns what it did; the record is also in s's AnnotationApplied. A nil
// p leaves s alone apart from removing an AnnotationApplied the bundle
// carried (only cordon may write it).
func Tighten(s *specs.Spec, p *ContainerPolicy, source string, o ContainerOpts) (*Applied, error) {
	delete(s.Annotations, AnnotationApplied)
	if p == nil {
		return nil, nil
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	if s.Process == nil {
		return nil, fmt.Errorf("%w: the bundle has no process", ErrInvalid)
	}
	proxied := p.Proxied()
	if proxied && o.NoProxy != "" {
		return nil, fmt.Errorf("%w (%s asks for %s): %s; use %s=none for no network, or filter egress with a network policy and %q",
			ErrProxyUnavailable, source, strings.Join(p.AllowedDomains, ","), o.NoProxy, AnnotationNetwork, "agent-network")
	}
	a := &Applied{Policy: source, Network: NetworkContainer}
	if s.Linux == nil {
		s.Linux = &specs.Linux{}
	}
	if p.Seccomp {
		opts := o.Seccomp
		if p.RecordViolations {
			if o.ListenerPath == "" {
				return nil, fmt.Errorf("%w: recording violations needs the monitor's listener path", ErrInvalid)
			}
			opts.Notify = true
		}
		profile, err := seccomp.Profile(opts)
		if err != nil {
			return nil, fmt.Errorf("agent seccomp profile: %w", err)
		}
		if old := s.Linux.Seccomp; old != nil {
			// libcontainer installs one filter: the bundle's profile is
			// merged into the agent's, so that a call runs only when
			// both allow it.
			if profile, err = seccomp.Intersect(profile, old); err != nil {
				return nil, fmt.Errorf("%w: %s asks for the agent seccomp profile: %w", ErrInvalid, source, err)
			}
			a.Notes = append(a.Notes, "the bundle's seccomp profile was merged with the agent profile: a system call runs only when both allow it")
			if old.ListenerPath != "" {
				a.Notes = append(a.Notes, "the bundle's seccomp agent ("+old.ListenerPath+") was dropped: what it was handed is refused")
			}
		}
		if opts.Notify {
			// The refusals cordon records go to the monitor, which
			// answers EPERM; with no monitor the kernel answers ENOSYS.
			profile.ListenerPath = o.ListenerPath
			a.Violations = append(a.Violations, "syscall", "socket")
		}
		s.Linux.Seccomp = profile
		a.Seccomp = "agent"
	}
	if p.Capabilities != nil {
		a.Capabilities, a.Dropped = keepCapabilities(s.Process, *p.Capabilities)
	}
	if p.ReadonlyRootfs {
		if s.Root == nil {
			return nil, fmt.Errorf("%w: the bundle has no root", ErrInvalid)
		}
		s.Root.Readonly = true
		a.ReadonlyRootfs = true
	}
	if p.NoNewPrivileges {
		s.Process.NoNewPrivileges = true
		a.NoNewPrivileges = true
	}
	switch {
	case p.Network == NetworkNone:
		a.Network = NetworkNone
		a.EgressRules, a.Notes = isolateNetwork(s, o, a.Notes)
	case proxied:
		h, so := o.ProxyPorts[0], o.ProxyPorts[1]
		if h == 0 || so == 0 {
			h, so = netproxy.DefaultHTTPPort, netproxy.DefaultSOCKSPort
		}
		a.Network = NetworkProxy
		a.Proxy = &AppliedProxy{
			AllowedDomains: slices.Clone(p.AllowedDomains),
			HTTP:           fmt.Sprintf("127.0.0.1:%d", h),
			SOCKS:          fmt.Sprintf("127.0.0.1:%d", so),
		}
		a.Violations = append(a.Violations, "network")
		a.EgressRules, a.Notes = isolateNetwork(s, o, a.Notes)
		if len(o.ProxyHook) > 0 {
			if s.Hooks == nil {
				s.Hooks = &specs.Hooks{}
			}
			s.Hooks.CreateContainer = append(s.Hooks.CreateContainer, specs.Hook{Path: o.ProxyHook[0], Args: o.ProxyHook})
		}
		env := proxyEnv(a.Proxy)
		s.Process.Env = append(withoutNames(s.Process.Env, env), env...)
	}
	if a.EgressRules {
		// The pod's egress rules hold only while nothing in the container
		// can change them (CAP_NET_ADMIN) or send around them (CAP_NET_RAW:
		// packet sockets skip the output hook, and SO_MARK forges the
		// proxy's mark).
		dropNetworkCapabilities(s.Process, a)
	}
	if err := withJSONAnnotation(s, AnnotationApplied, a); err != nil {
		return nil, err
	}
	return a, nil
}

// egressCapabilities are what a container that keeps a pod's network
// namespace never holds (see Applied.EgressRules).
var egressCapabilities = []string{"CAP_NET_ADMIN", "CAP_NET_RAW"}

// dropNetworkCapabilities removes egressCapabilities from proc and records
// what it kept and dropped in a, for the processes exec'd later.
func dropNetworkCapabilities(proc *specs.Process, a *Applied) {
	var keep []string
	if c := proc.Capabilities; c != nil {
		keep = slices.DeleteFunc(slices.Clone(c.Bounding), func(n string) bool { return slices.Contains(egressCapabilities, n) })
	}
	kept, dropped := keepCapabilities(proc, keep)
	a.Capabilities = kept
	for _, n := range dropped {
		if !slices.Contains(a.Dropped, n) {
			a.Dropped = append(a.Dropped, n)
		}
	}
	sort.Strings(a.Dropped)
}

// TightenProcess applies to p, a process exec'd into a container, what a
// says was applied to the container's own: the capabilities it kept, no
// new privileges, the proxy's environment. The client's process (ctr task
// exec, kubectl exec) comes from the bundle as it was before cordon
// tightened it. The rest (seccomp, namespaces, the read-only root) is the
// container's and applies to every process in it.
func TightenProcess(p *specs.Process, a *Applied) {
	if a == nil || p == nil {
		return
	}
	if a.Capabilities != nil {
		keepCapabilities(p, *a.Capabilities)
	}
	if a.NoNewPrivileges {
		p.NoNewPrivileges = true
	}
	if a.Proxy != nil {
		if env := proxyEnv(a.Proxy); env != nil {
			p.Env = append(withoutNames(p.Env, env), env...)
		}
	}
}

// proxyEnv is the environment that points a container's processes at the
// proxy a names.
func proxyEnv(a *AppliedProxy) []string {
	h, err1 := portOf(a.HTTP)
	so, err2 := portOf(a.SOCKS)
	if err1 != nil || err2 != nil {
		return nil
	}
	// No cordon binary inside a container: no GIT_SSH_COMMAND.
	return netproxy.Env(h, so, "")
}

func portOf(addr string) (int, error) {
	_, port, ok := strings.Cut(addr, ":")
	if !ok {
		return 0, fmt.Errorf("%q has no port", addr)
	}
	return strconv.Atoi(port)
}

// keepCapabilities removes from every capability set of the process what
// is not in keep; it returns what the process kept and what was dropped.
func keepCapabilities(proc *specs.Process, keep []string) (kept *[]string, dropped []string) {
	c := proc.Capabilities
	if c == nil {
		c = &specs.LinuxCapabilities{}
		proc.Capabilities = c
	}
	all := map[string]bool{}
	filter := func(set []string) []string {
		out := []string{}
		for _, name := range set {
			if slices.Contains(keep, name) {
				out = append(out, name)
			} else {
				all[name] = true
			}
		}
		return out
	}
	c.Bounding, c.Effective, c.Inheritable = filter(c.Bounding), filter(c.Effective), filter(c.Inheritable)
	c.Permitted, c.Ambient = filter(c.Permitted), filter(c.Ambient)
	k := intersect(c.Bounding, c.Bounding)
	for name := range all {
		dropped = append(dropped, name)
	}
	sort.Strings(dropped)
	return &k, dropped
}

// isolateNetwork gives the container a private network namespace (loopback
// only) instead of the host's or a shared one, and appends the hook that
// takes out interfaces earlier hooks configured in it. A namespace the
// bundle joins by path is kept instead when o.KeepJoinedNetwork says that
// the runtime confines egress there (kept is then true). It appends what
// it changed to notes.
func isolateNetwork(s *specs.Spec, o ContainerOpts, notes []string) (kept bool, _ []string) {
	found := false
	for i, ns := range s.Linux.Namespaces {
		if ns.Type != specs.NetworkNamespace {
			continue
		}
		found = true
		switch {
		case ns.Path != "" && o.KeepJoinedNetwork:
			return true, append(notes, "the network namespace "+ns.Path+" was kept: only loopback traffic, replies to connections made to the container and the proxy's connections leave it")
		case ns.Path != "":
			notes = append(notes, "the network namespace "+ns.Path+" was replaced by a private one")
			s.Linux.Namespaces[i].Path = ""
		}
	}
	if !found {
		notes = append(notes, "the host network was replaced by a private network namespace")
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.NetworkNamespace})
	}
	if hook := o.NetworkHook; len(hook) > 0 {
		if s.Hooks == nil {
			s.Hooks = &specs.Hooks{}
		}
		// Last, so that it runs after every hook of the bundle's (prestart
		// hooks run before createRuntime ones).
		s.Hooks.CreateRuntime = append(s.Hooks.CreateRuntime, specs.Hook{Path: hook[0], Args: hook})
		if len(s.Hooks.CreateRuntime) > 1 || len(s.Hooks.Prestart) > 0 { //nolint:staticcheck // prestart is deprecated, still run
			notes = append(notes, "interfaces the bundle's hooks add to the container's network namespace are removed")
		}
	}
	return false, notes
}
