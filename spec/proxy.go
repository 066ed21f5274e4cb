package spec

import (
	"fmt"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/policy"
)

// InitProxyFD is the unix socket on which the init hands the runtime the
// proxy's listening sockets: it makes them on 127.0.0.1 inside the
// sandbox's network namespace (InitProxyPorts), where nothing outside can
// reach, and the runtime serves them from the host. No bridge process runs
// in the sandbox, and each connection belongs to this run.
const InitProxyFD = 6

// AnnotationProxy is "HTTPPORT,SOCKSPORT" when the sandbox reaches the
// network through cordon's proxy.
const AnnotationProxy = "dev.cordon.proxy"

// Proxied reports whether the policy lets the command reach any network
// destination (through the proxy): some domains are allowed, an ask
// command may allow them, or a proxy of the user's decides for one of
// the sandbox's ports (sandbox.network.httpProxyPort, socksProxyPort).
func Proxied(p *policy.Policy) bool {
	n := p.Network
	return len(n.AllowedDomains) > 0 || n.AskCommand != "" || n.ExternalHTTPProxyPort != 0 || n.ExternalSOCKSProxyPort != 0
}

// ProxyPorts returns the proxy's ports inside the sandbox.
func ProxyPorts(p *policy.Policy) (httpPort, socksPort int) {
	httpPort, socksPort = p.Network.HTTPProxyPort, p.Network.SOCKSProxyPort
	if httpPort == 0 {
		httpPort = netproxy.DefaultHTTPPort
	}
	if socksPort == 0 {
		socksPort = netproxy.DefaultSOCKSPort
	}
	return httpPort, socksPort
}

// WithProxy points the command at the proxy (environment) and tells the
// init to make its listening sockets, when the policy allows any network.
// In the container mode the runtime listens on the host's loopback itself,
// at ports of its choosing that replace these in the environment and
// become the Landlock rules' only TCP ports (see ContainedProxyEnv).
func WithProxy(p *policy.Policy, req Request) Opt {
	return func(s *specs.Spec) error {
		if !Proxied(p) {
			return nil
		}
		if s.Process == nil {
			return fmt.Errorf("%w: proxy before process", ErrInvalid)
		}
		h, so := ProxyPorts(p)
		if h == so {
			return fmt.Errorf("%w: the proxy's HTTP and SOCKS ports are both %d", ErrInvalid, h)
		}
		// Only root may bind below 1024, and nobody is root in the
		// sandbox's network namespace.
		if h < 1024 || so < 1024 {
			return fmt.Errorf("%w: the proxy's ports inside the sandbox must be 1024 or higher (httpProxyPort %d, socksProxyPort %d)", ErrInvalid, h, so)
		}
		if req.Mode == ModeContainer {
			env := netproxy.Env(h, so, req.Host.Executable)
			s.Process.Env = append(withoutNames(s.Process.Env, env), env...)
			return WithAnnotations(map[string]string{AnnotationProxy: fmt.Sprintf("%d,%d", h, so)})(s)
		}
		env := netproxy.Env(h, so, InitPath)
		s.Process.Env = append(withoutNames(s.Process.Env, env), env...)
		i := slices.Index(s.Process.Args, "--")
		if i < 0 {
			return fmt.Errorf("%w: the process does not run cordon's init", ErrInvalid)
		}
		s.Process.Args = slices.Insert(s.Process.Args, i,
			fmt.Sprintf("--proxy-fd=%d", InitProxyFD), fmt.Sprintf("--proxy-ports=%d,%d", h, so))
		return WithAnnotations(map[string]string{AnnotationProxy: fmt.Sprintf("%d,%d", h, so)})(s)
	}
}

// ContainedProxyEnv is env with the proxy's variables pointing at the
// ports the runtime listens on (the container mode), instead of those
// WithProxy wrote.
func ContainedProxyEnv(env []string, httpPort, socksPort int, cordonPath string) []string {
	proxy := netproxy.Env(httpPort, socksPort, cordonPath)
	return append(withoutNames(env, proxy), proxy...)
}
