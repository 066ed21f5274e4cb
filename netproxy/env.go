package netproxy

import (
	"fmt"
	"strings"
)

// Default ports of the proxy inside the sandbox (settings httpProxyPort and
// socksProxyPort).
const (
	DefaultHTTPPort  = 3128
	DefaultSOCKSPort = 1080
)

// NoProxy is the NO_PROXY list inside the sandbox: loopback only. Anything
// else is unreachable directly (the sandbox has no other interface), so it
// must go through the proxy, which may allow it.
const NoProxy = "localhost,127.0.0.1,::1"

// Env returns the environment that points a sandboxed command's tools at
// the proxy on 127.0.0.1:httpPort (HTTP, CONNECT) and 127.0.0.1:socksPort
// (SOCKS5, names resolved by the proxy). ALL_PROXY names the HTTP port too,
// as sandbox-runtime's does since 0.0.83: Python's httpx (under the
// Anthropic and OpenAI SDKs) refuses a socks5h:// ALL_PROXY outright, and
// both ports speak both protocols; SOCKS_PROXY names the SOCKS port for the
// tools that want one. cordonPath is where cordon's
// binary is inside the sandbox: git's ssh then tunnels through
// "cordon proxy-connect"; empty (or a path that would need shell quoting)
// leaves GIT_SSH_COMMAND out.
func Env(httpPort, socksPort int, cordonPath string) []string {
	httpURL := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	socksURL := fmt.Sprintf("socks5h://127.0.0.1:%d", socksPort)
	env := []string{
		// curl, wget, git, pip, npm, go, python, ruby: the lower case names
		// are the ones curl and wget read; HTTP_PROXY and HTTPS_PROXY the ones
		// Go and many others read
		"HTTP_PROXY=" + httpURL,
		"HTTPS_PROXY=" + httpURL,
		"http_proxy=" + httpURL,
		"https_proxy=" + httpURL,
		"ALL_PROXY=" + httpURL,
		"all_proxy=" + httpURL,
		"SOCKS_PROXY=" + socksURL,
		"socks_proxy=" + socksURL,
		"NO_PROXY=" + NoProxy,
		"no_proxy=" + NoProxy,
		// gRPC C-core ignores socks5h:// and has no resolver inside
		"GRPC_PROXY=" + httpURL,
		"grpc_proxy=" + httpURL,
		// rsync daemon connections go through an HTTP CONNECT proxy
		fmt.Sprintf("RSYNC_PROXY=127.0.0.1:%d", httpPort),
		// Node's own http and fetch honour the variables only when asked
		"NODE_USE_ENV_PROXY=1",
	}
	if cmd := SSHProxyCommand(cordonPath, httpPort); cmd != "" {
		// Command-line options beat ssh_config: a ControlMaster socket
		// from the user's config cannot be made inside the sandbox.
		env = append(env, "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='"+cmd+"'")
	}
	return env
}

// SSHProxyCommand returns an ssh ProxyCommand that reaches %h:%p through
// the proxy's CONNECT on 127.0.0.1:httpPort, run by cordon's binary at
// cordonPath inside the sandbox (no socat or nc needed). It is empty when
// cordonPath is empty or would need shell quoting.
func SSHProxyCommand(cordonPath string, httpPort int) string {
	if cordonPath == "" || strings.Trim(cordonPath, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") != "" {
		return ""
	}
	return fmt.Sprintf("%s proxy-connect --proxy 127.0.0.1:%d %%h %%p", cordonPath, httpPort)
}
