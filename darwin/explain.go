package darwin

import (
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy"
)

// Kinds of refusal. They are the kinds of cordon's violation records
// (runtime.Violation; this package does not import runtime, and
// cmd/cordon checks that the names agree).
const (
	// KindWrite is a change to the file system the profile refused.
	KindWrite = "write"
	// KindRead is a read of a path the profile hides.
	KindRead = "read"
	// KindNetwork is a connection to an address: only cordon's proxy is
	// reachable.
	KindNetwork = "network"
	// KindSocket is a unix socket the profile does not open.
	KindSocket = "socket"
	// KindOperation is any other operation Seatbelt refused: a Mach
	// service, a sysctl, IOKit, a signal to a process outside the
	// sandbox, listening on a port.
	KindOperation = "operation"
)

// Refusal is a violation explained: what kind of thing was refused, what,
// why, and how to allow it when it can be allowed.
type Refusal struct {
	Kind string
	// Operation is the SBPL operation; for a unix socket, "connect" or
	// "bind".
	Operation string
	// Path is the file or unix socket; Host and Port the address.
	Path string
	Host string
	Port int
	// Args is what else was refused: a service, sysctl or address that
	// is not a path or a parsed address.
	Args   []string
	Reason string
	Hint   string
}

// Reasons shared with cordon's records on Linux.
const (
	reasonHidden    = "hidden from the sandbox by denyRead"
	reasonProtected = "protected: read-only inside the writable roots"
	reasonSockets   = "unix sockets reach outside the sandbox: the Docker socket, ssh-agent, D-Bus"
)

// mdnsResponder is the socket name lookups go through.
const mdnsResponder = "/private/var/run/mDNSResponder"

// Explainer explains the violations of one run in terms of its policy:
// the writable roots, the protected and denied paths of its profile. It
// is not safe for concurrent use.
type Explainer struct {
	c       *compiler
	netOn   bool
	regexps map[string]*regexp.Regexp
}

// NewExplainer prepares the explanations of the violations of a run
// compiled with Profile(p, r).
func NewExplainer(p *policy.Policy, r Request) (*Explainer, error) {
	c, err := newCompiler(p, r)
	if err != nil {
		return nil, err
	}
	c.collect()
	if c.b.err != nil {
		return nil, c.b.err
	}
	return &Explainer{c: c, netOn: networkOn(p), regexps: map[string]*regexp.Regexp{}}, nil
}

// Explain says what kind of refusal v is, and why the profile refused it.
func (e *Explainer) Explain(v Violation) Refusal {
	op, target := v.Operation, v.Target
	switch {
	case isWrite(op) && path.IsAbs(target):
		return e.write(op, path.Clean(target))
	case isRead(op) && path.IsAbs(target):
		return e.read(op, path.Clean(target))
	case strings.HasPrefix(op, "process-exec") && path.IsAbs(target):
		if r := e.read(op, path.Clean(target)); r.Hint != "" || e.credential(r.Path) {
			return r
		}
	case strings.HasPrefix(op, "network-"):
		return e.network(op, target)
	}
	r := Refusal{Kind: KindOperation, Operation: op, Reason: operationReason(op, target)}
	if target != "" {
		r.Args = []string{target}
	}
	if op == "mach-lookup" && slices.Contains(trustdServices, target) && e.netOn {
		r.Hint = "allow with sandbox.enableWeakerNetworkIsolation (Go, Rust's native-tls and Swift verify certificates through it)"
	}
	return r
}

func isWrite(op string) bool {
	return strings.HasPrefix(op, "file-write") || op == "file-link" || op == "file-clone"
}

func isRead(op string) bool {
	return strings.HasPrefix(op, "file-read") || op == "file-test-existence"
}

func (e *Explainer) write(op, p string) Refusal {
	r := Refusal{Kind: KindWrite, Operation: op, Path: p}
	c := e.c
	switch {
	case e.credential(p):
		r.Reason = "a credential store: not writable in the sandbox"
		return r
	case e.deniedBy(c.homeProt, p):
		r.Reason = "macOS runs or reads what is there outside the sandbox (launchd's agents, applications' preferences): not writable in the sandbox"
		return r
	case e.deniedBy(c.own, p):
		r.Reason = "your own configuration or a settings file cordon reads: not writable in the sandbox"
		return r
	case strings.HasPrefix(p, "/dev/"):
		r.Reason = "a device the sandbox does not open"
		return r
	case e.deniedBy(c.denyWrite, p):
		r.Reason = "denied by denyWrite"
		return r
	}
	inRoot := e.matchAny(c.temp, p)
	for _, root := range c.roots {
		if !e.match(root.pat, p) {
			continue
		}
		inRoot = true
		if e.deniedBy(root.protected, p) {
			r.Reason = reasonProtected
			if !c.p.Filesystem.AllowGitConfig && (path.Base(p) == "config" || path.Base(p) == "config.worktree") && strings.Contains(p, "/.git") {
				r.Hint = "allow git's config with sandbox.filesystem.allowGitConfig"
			}
			return r
		}
	}
	for _, root := range c.roots {
		if !root.git {
			continue
		}
		re := e.compiled("hooks "+root.pat.key(), func() (string, error) { return hooksRegex(root.pat) })
		if re != nil && re.MatchString(p) {
			r.Reason = reasonProtected
			return r
		}
	}
	for _, n := range c.nested {
		if e.nestedMatch(n, p) {
			if n.pin {
				r.Reason = "leads to a protected or denied path: it cannot be moved or removed"
			} else {
				r.Reason = reasonProtected
			}
			return r
		}
	}
	switch {
	case op == "file-write-create" && strings.EqualFold(path.Base(p), "HEAD") && inRoot && !strings.Contains(p, "/.git/"):
		r.Reason = "a bare repository's HEAD: git would take the directory for a repository and run its config and hooks"
	case e.deniedBy(c.gitFiles, p):
		r.Reason = "a .git file (the pointer of a worktree or a submodule): protected"
	case e.leadsToProtected(p):
		r.Reason = "leads to a protected or denied path: it cannot be moved or removed"
	case op == "file-link" || op == "file-clone":
		r.Reason = "hard links and clones are refused in the sandbox"
	case inRoot:
		r.Reason = "refused inside the writable roots"
	case c.p.Mode == policy.ReadOnly:
		r.Reason = "read-only: the permission mode is read-only" // allowWrite does not apply
	case slices.Contains(c.p.WritableRoots(), c.p.Workspace):
		r.Reason = "read-only outside the workspace"
		r.Hint = "allow with --allow-write " + path.Dir(p)
	default:
		r.Reason = "read-only outside the writable roots"
		r.Hint = "allow with --allow-write " + path.Dir(p)
	}
	return r
}

func (e *Explainer) read(op, p string) Refusal {
	r := Refusal{Kind: KindRead, Operation: op, Path: p}
	c := e.c
	switch {
	case e.credential(p):
		r.Reason = "a credential store: hidden from the sandbox"
		r.Hint = "allow with --allow-read " + p
	case e.deniedBy(c.denyRead, p) && !e.matchAny(c.allowRead, p):
		r.Reason = reasonHidden
		r.Hint = "allow with --allow-read " + p
		for _, d := range c.denyRead {
			if lit, ok := d.literal(); ok && e.deniedBy([]pattern{d}, p) {
				r.Hint = "allow with --allow-read " + lit
				break
			}
		}
	case strings.HasPrefix(p, "/dev/") || p == "/dev":
		r.Reason = "a device the sandbox does not open"
	default:
		r.Reason = "refused by the sandbox"
	}
	return r
}

// credential reports whether p is in a credential store.
func (e *Explainer) credential(p string) bool { return p != "" && e.deniedBy(e.c.creds, p) }

// leadsToProtected reports whether p is a directory on the way to a
// protected, write-denied, read-denied or credential path: the profile
// keeps those from being moved or removed.
func (e *Explainer) leadsToProtected(p string) bool {
	c := e.c
	all := append(append(append([]pattern(nil), c.denyWrite...), c.denyRead...), c.creds...)
	all = append(all, c.homeProt...)
	all = append(all, c.own...)
	for _, r := range c.roots {
		all = append(all, r.protected...)
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for _, pt := range all {
		static := pt.staticPath()
		if strings.HasPrefix(static, prefix) {
			return true
		}
	}
	return false
}

func (e *Explainer) network(op, target string) Refusal {
	if strings.HasPrefix(target, "/") {
		r := Refusal{Kind: KindSocket, Operation: "connect", Path: target, Args: []string{target}, Reason: reasonSockets,
			Hint: "allow with sandbox.network.allowUnixSockets"}
		if op == "network-bind" {
			r.Operation = "bind"
		}
		if target == mdnsResponder {
			r.Reason, r.Hint = "name lookups: the sandbox reaches names only through cordon's proxy", ""
			if !e.netOn {
				r.Reason, r.Hint = "no network: the policy allows no domain", "allow with --allow-domain"
			}
		}
		return r
	}
	host, port, ok := splitHostPort(target)
	if !ok || op != "network-outbound" {
		r := Refusal{Kind: KindOperation, Operation: op, Reason: "not allowed in the sandbox"}
		if target != "" {
			r.Args = []string{target}
		}
		if op == "network-bind" || op == "network-inbound" {
			r.Reason, r.Hint = "listening is refused in the sandbox", "allow on the loopback interface with sandbox.network.allowLocalBinding"
		}
		return r
	}
	r := Refusal{Kind: KindNetwork, Operation: op, Host: host, Port: port}
	switch {
	case loopback(host):
		r.Reason = "only cordon's proxy is reachable on the loopback interface"
		r.Hint = "allow with sandbox.network.allowLocalBinding"
	case e.netOn:
		r.Reason = "direct connections are refused: only cordon's proxy is reachable (HTTPS_PROXY, ALL_PROXY)"
	default:
		r.Reason = "no network: the policy allows no domain"
		r.Hint = "allow with --allow-domain NAME; connections then go through cordon's proxy"
	}
	return r
}

// splitHostPort reads a network target, "93.184.216.34:443",
// "[2001:db8::1]:443", "2001:db8::1:443" or "*:443": an address or name
// (the brackets removed) and a port.
func splitHostPort(target string) (string, int, bool) {
	i := strings.LastIndexByte(target, ':')
	if i <= 0 || strings.ContainsAny(target, " \t\n/") {
		return "", 0, false
	}
	port, err := strconv.Atoi(target[i+1:])
	if err != nil || port <= 0 || port > 65535 || target[i+1] == '+' || target[i+1] == '-' {
		return "", 0, false
	}
	host := target[:i]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if host == "" {
		return "", 0, false
	}
	return host, port, true
}

// loopback reports whether host is the loopback interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// operationReasons say why the profile refuses operations that are
// neither files nor connections, by operation or its prefix.
var operationReasons = []struct{ op, reason string }{
	{"mach-lookup", "a Mach service not on the sandbox's list; sandbox.network.allowMachLookup adds one"},
	{"mach-register", "registering Mach services is refused in the sandbox"},
	{"sysctl-read", "a sysctl not on the sandbox's list"},
	{"sysctl-write", "sysctls are not writable in the sandbox"},
	{"iokit-", "IOKit is closed in the sandbox"},
	{"signal", "only processes of the same sandbox can be signalled"},
	{"process-info", "only processes of the same sandbox can be inspected"},
	{"mach-priv-task-port", "only processes of the same sandbox can be debugged"},
	{"process-exec", "executing it is refused in the sandbox"},
	{"job-creation", "launchd jobs would outlive the sandbox"},
	{"lsopen", "starting applications outside the sandbox is refused"},
	{"appleevent-send", "driving applications outside the sandbox is refused"},
	{"user-preference-write", "preferences are not writable in the sandbox"},
	{"file-ioctl", "a device the sandbox does not open"},
	{"pseudo-tty", "the command has no terminal of its own"},
}

// machReasons are the services refused on purpose (see base.go).
var machReasons = map[string]string{
	"com.apple.trustd.agent":                 "TLS verification through trustd could reach hosts past the domain filter",
	"com.apple.SecurityServer":               "the keychain stays closed in the sandbox",
	"com.apple.securityd.xpc":                "the keychain stays closed in the sandbox",
	"com.apple.coreservices.launchservicesd": "starting applications outside the sandbox is refused",
}

func operationReason(op, target string) string {
	if op == "mach-lookup" {
		if r, ok := machReasons[target]; ok {
			return r
		}
	}
	for _, o := range operationReasons {
		if strings.HasPrefix(op, o.op) {
			return o.reason
		}
	}
	return "not allowed in the sandbox"
}

// match reports whether p is what pt matches or below it.
func (e *Explainer) match(pt pattern, p string) bool {
	if lit, ok := pt.literal(); ok {
		return paths.Under(p, lit)
	}
	re := e.compiled(pt.key(), func() (string, error) { return pt.regex(true) })
	return re != nil && re.MatchString(p)
}

// compiled returns the regular expression src gives, compiled once under
// key; nil when src fails or does not compile.
func (e *Explainer) compiled(key string, src func() (string, error)) *regexp.Regexp {
	re, ok := e.regexps[key]
	if !ok {
		if s, err := src(); err == nil {
			re, _ = regexp.Compile(s)
		}
		e.regexps[key] = re
	}
	return re
}

func (e *Explainer) matchAny(pts []pattern, p string) bool {
	for _, pt := range pts {
		if e.match(pt, p) {
			return true
		}
	}
	return false
}

// deniedBy reports whether p is what one of pts denies: in either case, as
// the profile's denies match (see pattern.foldedRegex).
func (e *Explainer) deniedBy(pts []pattern, p string) bool {
	for _, pt := range pts {
		re := e.compiled("fold "+pt.key(), func() (string, error) { return pt.foldedRegex(true) })
		if re != nil && re.MatchString(p) {
			return true
		}
	}
	return false
}

// nestedMatch reports whether p is what the nested rule n denies.
func (e *Explainer) nestedMatch(n nested, p string) bool {
	k := fmt.Sprintf("nested %v %s %v", n.base.key(), n.rel, n.pin)
	re := e.compiled(k, func() (string, error) { return nestedRegex(n, !n.pin) })
	except := e.compiled("node_modules "+n.base.key(), func() (string, error) { return nodeModulesRegex(n) })
	return re != nil && re.MatchString(p) && (except == nil || !except.MatchString(p))
}
