package darwin

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// An evaluator of the SBPL that cordon and sandbox-runtime write, for tests:
// it answers "is this operation on this object allowed?", and refuses
// (returns an error) where the answer would rest on something it does not
// understand. No Mac is needed, and none was used: every rule below comes
// from a published source, named where it is used.
//
// How Seatbelt decides. A profile is compiled by libsandbox, whose SBPL
// interpreter (TinyScheme) Apple shipped as sbpl1.scm inside libsandbox up
// to OS X 10.10; public copies of it, and of Apple's profiles from 10.9 to
// 10.15, are in github.com/knightsc/sandbox_profiles (sbpl1.scm at commit
// 4b9db4b, "macOS 10.10.5 14F27"). There:
//   - every operation has a list of rules of its own (%operations primes
//     the *rules* vector, one list per operation);
//   - a filtered rule is put at the head of the lists of the operations it
//     names ("Insert a new rule"), so of an operation's own rules the last
//     one written is tried first, and the first that matches decides: the
//     last match wins, per operation;
//   - an unfiltered rule replaces the last element of the list ("Replace
//     the unconditional rule"): it decides only when none of the
//     operation's filtered rules matched, wherever it was written;
//   - an operation without an unfiltered rule of its own ends its list
//     with a jump to its more general operation (file-write-data to
//     file-write*, to file*, to default), whose list is tried next; a rule
//     written for file-write* is a rule of file-write* only;
//   - default ends with deny.
//
// Dionysus Blazakis's "The Apple Sandbox" (Black Hat DC 2011) describes the
// same structure in the compiled profile: per operation, tests in order,
// the first that matches returns its action, a jump continues with another
// operation. The consequence that matters here — a rule written for a
// specific operation beats a rule written for a wildcard, in whichever
// order they come — is what sandbox-runtime's comments report from real
// Macs (macos-sandbox-utils.js, generateReadRules: "a specific (deny
// file-write-unlink) is not overridden by a later (allow file-write*)
// wildcard — the specific operation deny wins"). Apple moved this code out
// of Scheme in 10.11; that it still behaves so is known only from such
// reports. decideFlat gives the reading without the hierarchy (every rule
// in order, the last that matches decides) so that a test can ask for a
// profile that means the same under both.

// sbOps is the operation hierarchy: each operation's more general one, and
// the action an operation has of its own when its list ends without a
// jump. From sbpl1.scm of 10.10.5 (the %operations table), only the
// operations cordon's and sandbox-runtime's profiles name or the tests ask
// about.
var sbOps = map[string]sbOp{
	"default": {action: "deny"},

	"file*":              {parent: "default"},
	"file-ioctl":         {parent: "file*"},
	"file-read*":         {parent: "file*"},
	"file-read-data":     {parent: "file-read*"},
	"file-read-metadata": {parent: "file-read*"},
	"file-read-xattr":    {parent: "file-read*"},
	"file-write*":        {parent: "file*"},
	"file-write-create":  {parent: "file-write*"},
	"file-write-data":    {parent: "file-write*"},
	"file-write-flags":   {parent: "file-write*"},
	"file-write-mode":    {parent: "file-write*"},
	"file-write-owner":   {parent: "file-write*"},
	"file-write-times":   {parent: "file-write*"},
	"file-write-unlink":  {parent: "file-write*"},
	"file-write-xattr":   {parent: "file-write*"},

	"iokit*":               {parent: "default"},
	"iokit-open":           {parent: "iokit*"},
	"iokit-get-properties": {parent: "iokit*", action: "allow"},

	"ipc*":           {parent: "default"},
	"ipc-posix*":     {parent: "ipc*"},
	"ipc-posix-sem":  {parent: "ipc-posix*"},
	"ipc-posix-shm*": {parent: "ipc-posix*"},

	"mach*":               {parent: "default"},
	"mach-lookup":         {parent: "mach*"},
	"mach-priv*":          {parent: "mach*"},
	"mach-priv-task-port": {parent: "mach-priv*"},
	"mach-register":       {parent: "mach*"},

	"network*":         {parent: "default"},
	"network-inbound":  {parent: "network*"},
	"network-bind":     {parent: "network-inbound"},
	"network-outbound": {parent: "network*"},

	"process*":      {parent: "default"},
	"process-exec*": {parent: "process*"},
	"process-fork":  {parent: "process*"},
	"process-info*": {parent: "process*", action: "allow"},

	"appleevent-send":               {parent: "default"},
	"distributed-notification-post": {parent: "default"},
	"job-creation":                  {action: "deny"},
	"lsopen":                        {parent: "default"},
	"pseudo-tty":                    {parent: "default"},
	"signal":                        {parent: "default"},
	"sysctl*":                       {parent: "default"},
	"sysctl-read":                   {parent: "sysctl*"},
	"system*":                       {parent: "default"},
	"system-socket":                 {parent: "system*"},
	"user-preference*":              {parent: "default"},
	"user-preference-read":          {parent: "user-preference*"},
	"user-preference-write":         {parent: "user-preference*"},

	// Operations added after 10.10, whose place in the hierarchy no
	// published source gives: every place they could have is tried, and
	// an answer that differs between them is refused. (file-test-existence
	// is named beside file-read* in Codex's and sandbox-runtime's
	// profiles, which suggests it is not below it; file-link and
	// file-clone beside file-ioctl and file-mknod in Apple's
	// application.sb of 10.15.)
	"file-test-existence":          {parents: []string{"file-read-metadata", "file-read*", "file*", "default"}},
	"file-link":                    {parents: []string{"file-write*", "file*"}},
	"file-clone":                   {parents: []string{"file-write*", "file*"}},
	"mach-host*":                   {parents: []string{"mach*", "default"}},
	"mach-host-exception-port-set": {parents: []string{"mach-host*", "mach*", "default"}},
	"mach-host-special-port-set":   {parents: []string{"mach-host*", "mach*", "default"}},
}

// sbAliases are names SBPL defines for operations (sbpl1.scm of 10.10.5
// and of 10.15, ";;; Aliases").
var sbAliases = map[string]string{
	"process-exec":  "process-exec*",
	"sysctl-write":  "sysctl*",
	"ipc-posix-shm": "ipc-posix-shm*",
	"file-unlink":   "file-write-unlink",
}

// sbOp is one operation of the hierarchy.
type sbOp struct {
	parent  string   // the more general operation
	parents []string // the ones it may have, when that is not known
	action  string   // its own action, when its list ends without a jump
}

// sbProfile is a profile read for evaluation.
type sbProfile struct {
	rules []sbRule
}

// sbRule is one allow or deny.
type sbRule struct {
	allow  bool
	ops    []string  // operation names, aliases resolved
	filter *sbFilter // nil: unfiltered
	line   int
}

// sbFilter is a filter, read once.
type sbFilter struct {
	src  string // as written
	kind string // literal, subpath, prefix, regex, any, all, not, vnode, ip, socket, name, name-prefix, opaque
	arg  string
	re   *regexp.Regexp
	kids []*sbFilter
	// ip: the address filter of (local ...) or (remote ...).
	side, proto, host, port string
	// name, name-prefix: which name (global-name, sysctl-name).
	of string
}

// access is what an operation is asked about: one of a path, a network
// address (host:port), a unix socket, a Mach service or a sysctl.
type access struct {
	op     string
	path   string // file operations, process-exec
	vnode  string // REGULAR-FILE, DIRECTORY, ...; "" unknown
	remote string // network-outbound: "tcp 127.0.0.1:3128"
	local  string // network-bind, network-inbound: "tcp 127.0.0.1:8080"
	socket string // a unix socket's path, connected to or bound
	name   string // mach-lookup: the service; sysctl-read: the sysctl
	// plain says the object carries no sandbox extension (a terminal
	// device the command did not open itself); otherwise an extension
	// filter cannot be decided.
	plain bool
}

func (a access) String() string {
	for _, s := range []string{a.path, a.remote, a.local, a.socket, a.name} {
		if s != "" {
			if a.vnode != "" && a.vnode != "REGULAR-FILE" {
				return a.op + " " + s + " (" + a.vnode + ")"
			}
			return a.op + " " + s
		}
	}
	return a.op
}

// file asks op about the regular file p; dir about the directory p.
func file(op, p string) access { return access{op: op, path: p, vnode: "REGULAR-FILE"} }
func dir(op, p string) access  { return access{op: op, path: p, vnode: "DIRECTORY"} }

// verdict is an answer: allowed or not, and the line of the rule that
// decided (0: the default).
type verdict struct {
	allow bool
	line  int
}

// loadSBPL reads a profile for evaluation. params are the values of
// (param "NAME"). What the evaluator does not understand is refused here
// when it is the profile's structure (an unknown operation, a directive),
// and when evaluated when it is a filter.
func loadSBPL(src string, params map[string]string) (*sbProfile, error) {
	forms, err := parseSBPL(src)
	if err != nil {
		return nil, err
	}
	if len(forms) == 0 || forms[0].String() != "(version 1)" {
		return nil, fmt.Errorf("the profile does not start with (version 1)")
	}
	p := &sbProfile{}
	for _, f := range forms[1:] {
		action := f.head()
		if action != "allow" && action != "deny" {
			// import, debug, define, if, ...: not evaluated.
			return nil, fmt.Errorf("line %d: %s is not understood", f.line, f)
		}
		r := sbRule{allow: action == "allow", line: f.line}
		var filters []*sbFilter
		for _, a := range f.list[1:] {
			switch {
			case !a.isList && a.str == nil:
				op := a.atom
				if to, ok := sbAliases[op]; ok {
					op = to
				}
				if _, ok := sbOps[op]; !ok {
					return nil, fmt.Errorf("line %d: operation %q is not understood", f.line, a.atom)
				}
				r.ops = append(r.ops, op)
			case a.head() == "with":
				// A modifier (message, report, send-signal): the decision is
				// the same.
			case a.isList:
				flt, err := readFilter(a, params)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", a.line, err)
				}
				filters = append(filters, flt)
			default:
				return nil, fmt.Errorf("line %d: %s is not understood", f.line, a)
			}
		}
		if len(r.ops) == 0 {
			return nil, fmt.Errorf("line %d: a rule without an operation", f.line)
		}
		switch len(filters) {
		case 0:
		case 1:
			r.filter = filters[0]
		default:
			// "If there are multiple filter arguments, combine them into a
			// single any filter" (sbpl1.scm, %action).
			r.filter = &sbFilter{kind: "any", kids: filters}
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// stringArg returns the one string argument of a filter: a string, or
// (param "NAME"), a value given when the profile is compiled (sbpl's
// prelude.scm: "get the value of a compile-time parameter"; Apple's
// application.sb writes (subpath (param "application_container"))).
func stringArg(args []node, params map[string]string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("want one string")
	}
	a := args[0]
	if a.str != nil {
		return *a.str, nil
	}
	if a.head() == "param" && len(a.list) == 2 && a.list[1].str != nil {
		v, ok := params[*a.list[1].str]
		if !ok {
			return "", fmt.Errorf("%s has no value", a)
		}
		return v, nil
	}
	return "", fmt.Errorf("%s is not a string", a)
}

// readFilter reads one filter. Filters the evaluator cannot decide are read
// as opaque: a rule whose answer depends on one is refused when evaluated.
// The meanings are sbpl1.scm's (10.10.5): literal and regex are the two
// forms of its path filter (10.15 renames them path and path-regex, and
// adds prefix for path-prefix); subpath is a path and what is below it;
// require-any, require-all and require-not are its combination filters
// (several filters of one rule are require-any); vnode-type takes the
// types it lists; global-name and sysctl-name are string filters on the
// Mach service and the sysctl, with -prefix forms in later profiles
// (sandbox-runtime's and cordon's).
func readFilter(n node, params map[string]string) (*sbFilter, error) {
	name := n.head()
	if name == "" {
		return nil, fmt.Errorf("%s is not a filter", n.sbpl())
	}
	args := n.list[1:]
	f := &sbFilter{kind: name, src: n.sbpl()}
	var err error
	switch name {
	case "literal", "path", "path-literal":
		// literal is path's alias in 10.15 (sbpl1.scm, ";;; Aliases").
		f.kind = "literal"
		f.arg, err = stringArg(args, params)
	case "subpath":
		f.arg, err = stringArg(args, params)
		// "subpaths must not end with a slash" (sbpl1.scm, subpath).
		if err == nil && len(f.arg) > 1 && strings.HasSuffix(f.arg, "/") {
			err = fmt.Errorf("subpath %q ends with a slash", f.arg)
		}
	case "prefix", "path-prefix":
		f.kind = "prefix"
		f.arg, err = stringArg(args, params)
	case "regex", "path-regex":
		f.kind = "regex"
		if f.arg, err = stringArg(args, params); err == nil {
			if f.re, err = appleRegex(f.arg); err != nil {
				// Refused where it would decide.
				f.kind, f.arg, err = "opaque", err.Error(), nil
			}
		}
	case "require-any", "require-all":
		f.kind = map[string]string{"require-any": "any", "require-all": "all"}[name]
		if len(args) == 0 {
			return nil, fmt.Errorf("%s requires at least one filter", name)
		}
		for _, a := range args {
			k, err := readFilter(a, params)
			if err != nil {
				return nil, err
			}
			f.kids = append(f.kids, k)
		}
	case "require-not":
		f.kind = "not"
		if len(args) != 1 {
			return nil, fmt.Errorf("require-not takes one filter")
		}
		k, err := readFilter(args[0], params)
		if err != nil {
			return nil, err
		}
		f.kids = []*sbFilter{k}
	case "vnode-type":
		f.kind = "vnode"
		for _, a := range args {
			if !slices.Contains([]string{"REGULAR-FILE", "DIRECTORY", "BLOCK-DEVICE", "CHARACTER-DEVICE", "SYMLINK", "SOCKET", "FIFO", "TTY"}, a.atom) {
				return nil, fmt.Errorf("vnode-type %s", a)
			}
			f.kids = append(f.kids, &sbFilter{arg: a.atom})
		}
	case "local", "remote":
		return readNetworkFilter(n, params)
	case "global-name", "sysctl-name":
		f.kind, f.of = "name", name
		f.arg, err = stringArg(args, params)
	case "global-name-prefix", "sysctl-name-prefix":
		f.kind, f.of = "name-prefix", strings.TrimSuffix(name, "-prefix")
		f.arg, err = stringArg(args, params)
	case "extension":
		if len(args) != 1 || args[0].str == nil {
			return nil, fmt.Errorf("%s: want one string", n)
		}
	default:
		// target, socket-domain, iokit-registry-entry-class, ...:
		// about objects the tests do not describe.
		f.kind, f.arg = "opaque", n.String()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n, err)
	}
	return f, nil
}

// readNetworkFilter reads (local|remote ip|tcp|udp "HOST:PORT") and
// (local|remote unix-socket FILTER). sbpl1.scm's %network-filter takes a
// protocol (ip, ip4, ip6, tcp, tcp4, tcp6, udp, udp4, udp6) and an address;
// sandbox-runtime's comments say the host is "localhost" or "*", and that
// "localhost" matches 127.0.0.1 and ::1 but not ::ffff:127.0.0.1.
func readNetworkFilter(n node, params map[string]string) (*sbFilter, error) {
	args := n.list[1:]
	if len(args) != 2 || args[0].isList || args[0].str != nil {
		return nil, fmt.Errorf("%s: want a kind and an address", n)
	}
	f := &sbFilter{kind: "ip", src: n.sbpl(), side: n.head(), proto: args[0].atom}
	switch f.proto {
	case "unix-socket", "unix":
		if !args[1].isList {
			// 10.10 read a bare string here as a regex; 10.15 wants a
			// path filter.
			return nil, fmt.Errorf("%s: want a path filter", n)
		}
		k, err := readFilter(args[1], params)
		if err != nil {
			return nil, err
		}
		f.kind, f.kids = "socket", []*sbFilter{k}
		return f, nil
	case "ip", "tcp", "udp":
	default:
		return &sbFilter{kind: "opaque", src: n.sbpl(), arg: n.String()}, nil
	}
	addr, err := stringArg(args[1:], params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n, err)
	}
	host, port, ok := strings.Cut(addr, ":")
	if !ok || (host != "localhost" && host != "*") || (port != "*" && !decimalPort(port)) {
		return &sbFilter{kind: "opaque", src: n.sbpl(), arg: n.String()}, nil
	}
	f.host, f.port = host, port
	return f, nil
}

func decimalPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536 && strconv.Itoa(n) == s
}

// covers reports whether r is written for op or for an operation op falls
// back to.
func (r sbRule) covers(op string) bool {
	for _, chain := range opChains(op) {
		if slices.ContainsFunc(r.ops, func(o string) bool { return slices.Contains(chain, o) }) {
			return true
		}
	}
	return false
}

// matches reports whether r's filter surely matches a.
func (r sbRule) matches(a access) bool {
	t, _ := r.filter.match(a)
	return t == yes
}

// filters returns r's filters as written.
func (r sbRule) filters() []*sbFilter {
	switch {
	case r.filter == nil:
		return nil
	case r.filter.src == "":
		return r.filter.kids // several, combined by loadSBPL
	}
	return []*sbFilter{r.filter}
}

// tri is a truth value that may be unknown.
type tri int8

const (
	no tri = iota
	yes
	unknown
)

// match tells whether f matches a, and when it cannot tell, why.
func (f *sbFilter) match(a access) (tri, string) {
	if f == nil {
		return yes, "" // an unfiltered rule
	}
	switch f.kind {
	case "literal", "subpath", "prefix", "regex":
		p := a.path
		if a.socket != "" {
			p = a.socket
		}
		if p == "" {
			return no, "" // an address or a name has no path
		}
		switch f.kind {
		case "literal":
			return truth(p == f.arg), ""
		case "subpath":
			return truth(f.arg == "/" || p == f.arg || strings.HasPrefix(p, f.arg+"/")), ""
		case "prefix":
			return truth(strings.HasPrefix(p, f.arg)), ""
		}
		return truth(f.re.MatchString(latin1(p))), ""
	case "any", "all":
		// Kleene's logic: an unknown operand decides only when the others
		// leave the answer open.
		res, why := truth(f.kind == "all"), ""
		for _, k := range f.kids {
			t, w := k.match(a)
			switch {
			case t == yes && f.kind == "any", t == no && f.kind == "all":
				return t, ""
			case t == unknown:
				res, why = unknown, w
			}
		}
		return res, why
	case "not":
		t, why := f.kids[0].match(a)
		switch t {
		case yes:
			return no, ""
		case no:
			return yes, ""
		}
		return unknown, why
	case "vnode":
		if a.path == "" {
			return no, ""
		}
		if a.vnode == "" {
			return unknown, "the vnode type of " + a.path + " is not given"
		}
		return truth(slices.ContainsFunc(f.kids, func(k *sbFilter) bool { return k.arg == a.vnode })), ""
	case "ip":
		addr := a.remote
		if f.side == "local" {
			addr = a.local
			if a.op == "network-outbound" {
				// The local address of a connecting socket: sandbox-runtime
				// reports "localhost" matching the unbound any-address.
				return unknown, "a local address filter on an outgoing connection"
			}
		}
		if addr == "" {
			return no, ""
		}
		return f.matchAddr(addr)
	case "socket":
		if a.socket == "" || (f.side == "local") != (a.op != "network-outbound") {
			return no, ""
		}
		return f.kids[0].match(access{path: a.socket})
	case "extension":
		if a.plain {
			return no, ""
		}
		return unknown, "whether " + a.String() + " carries " + f.src
	case "name", "name-prefix":
		if a.name == "" || (f.of == "global-name") != (a.op == "mach-lookup") {
			return no, ""
		}
		if f.kind == "name" {
			return truth(a.name == f.arg), ""
		}
		return truth(strings.HasPrefix(a.name, f.arg)), ""
	}
	if strings.HasPrefix(f.arg, "regex ") {
		return unknown, f.arg
	}
	return unknown, f.arg + " is not understood"
}

// notUnderstood returns the filters of p the evaluator cannot decide.
func (p *sbProfile) notUnderstood() []string {
	var out []string
	var walk func(f *sbFilter)
	walk = func(f *sbFilter) {
		if f == nil {
			return
		}
		if f.kind == "opaque" {
			out = append(out, f.arg)
		}
		for _, k := range f.kids {
			walk(k)
		}
	}
	for _, r := range p.rules {
		walk(r.filter)
	}
	return out
}

// matchAddr matches "PROTO HOST:PORT" against the filter's address.
func (f *sbFilter) matchAddr(s string) (tri, string) {
	proto, hostport, _ := strings.Cut(s, " ")
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return unknown, "address " + s
	}
	if f.proto != "ip" && f.proto != proto {
		return no, ""
	}
	if f.port != "*" && f.port != strconv.Itoa(int(ap.Port())) {
		return no, ""
	}
	if f.host == "*" {
		return yes, ""
	}
	addr := ap.Addr()
	if addr.Is4In6() {
		return no, "" // sandbox-runtime: localhost does not match ::ffff:127.0.0.1
	}
	if addr.IsUnspecified() {
		return unknown, "whether localhost matches " + addr.String()
	}
	return truth(addr == netip.MustParseAddr("127.0.0.1") || addr == netip.IPv6Loopback()), ""
}

func truth(b bool) tri {
	if b {
		return yes
	}
	return no
}

// implicitRules are the paths and sockets sbpl1.scm of 10.10 denied by
// itself after every profile (%emit-implicit-rules): libsandbox's cache
// directories and launchd's sockets. Whether later systems still do is not
// known, so the evaluator answers nothing there.
var implicitRules = regexp.MustCompile(`/com\.apple\.sandbox($|/)|^/private/var/tmp/launchd/sock$|^/private/tmp/launchd-[0-9]+\.[^/]+/sock$`)

// decide answers a under the hierarchy of operations (see the top of this
// file): the first of the operation's own rules that matches, the last
// written first; else its unfiltered rule; else the same with its more
// general operation. An answer that depends on a filter it cannot decide,
// or on a place in the hierarchy no source gives, is refused.
func (p *sbProfile) decide(a access) (verdict, error) {
	if err := p.askable(a); err != nil {
		return verdict{}, err
	}
	var answers []verdict
	for _, chain := range opChains(a.op) {
		v, err := p.decideChain(a, chain)
		if err != nil {
			return verdict{}, err
		}
		if len(answers) > 0 && answers[0].allow != v.allow {
			return verdict{}, fmt.Errorf("%s: the answer depends on where %s sits among the operations (%v: line %d, %v: line %d)",
				a, a.op, answers[0].allow, answers[0].line, v.allow, v.line)
		}
		answers = append(answers, v)
	}
	return answers[0], nil
}

// decideFlat answers a reading the profile as one list: of every rule
// whose operations include a's or a more general one, the last that
// matches decides; the default denies.
func (p *sbProfile) decideFlat(a access) (verdict, error) {
	if err := p.askable(a); err != nil {
		return verdict{}, err
	}
	var answers []verdict
	for _, chain := range opChains(a.op) {
		var s scan
		var v verdict
		var err error
		done := false
		for i := len(p.rules) - 1; i >= 0 && !done; i-- {
			r := p.rules[i]
			if slices.ContainsFunc(r.ops, func(o string) bool { return slices.Contains(chain, o) }) {
				v, done, err = s.try(a, r)
			}
		}
		if !done {
			v, err = s.settle(a, verdict{})
		}
		if err != nil {
			return verdict{}, err
		}
		if len(answers) > 0 && answers[0].allow != v.allow {
			return verdict{}, fmt.Errorf("%s: the answer depends on where %s sits among the operations", a, a.op)
		}
		answers = append(answers, v)
	}
	return answers[0], nil
}

func (p *sbProfile) askable(a access) error {
	if _, ok := sbOps[a.op]; !ok {
		return fmt.Errorf("%s: operation not understood", a)
	}
	for _, s := range []string{a.path, a.socket} {
		if strings.ContainsAny(s, "\x00\n") {
			return fmt.Errorf("%s: a path with a NUL or a newline", a)
		}
		if s != "" && implicitRules.MatchString(s) {
			return fmt.Errorf("%s: a path libsandbox has implicit rules for", a)
		}
	}
	return nil
}

// decideChain walks one chain of operations, most specific first: each
// operation's filtered rules, the last written first; then its unfiltered
// rule or its own action, if it has one; else the next operation.
func (p *sbProfile) decideChain(a access, chain []string) (verdict, error) {
	var s scan
	for _, op := range chain {
		var terminal *sbRule
		for i := len(p.rules) - 1; i >= 0; i-- {
			r := p.rules[i]
			if !slices.Contains(r.ops, op) {
				continue
			}
			if r.filter == nil {
				if terminal == nil {
					terminal = &p.rules[i] // the last unfiltered one replaced the others
				}
				continue
			}
			if v, done, err := s.try(a, r); done {
				return v, err
			}
		}
		if terminal != nil {
			return s.settle(a, verdict{allow: terminal.allow, line: terminal.line})
		}
		if act := sbOps[op].action; act != "" {
			return s.settle(a, verdict{allow: act == "allow"})
		}
	}
	return verdict{}, fmt.Errorf("%s: no operation ends the chain %v", a, chain)
}

// scan is a walk through rules in the order Seatbelt tries them: the
// first that matches decides. A rule that may match (its filter cannot be
// decided) is remembered: the answer stands only if its action agrees.
type scan struct {
	open []sbRule
	whys []string
}

// try tries rule r; done when it decides.
func (s *scan) try(a access, r sbRule) (v verdict, done bool, err error) {
	switch t, why := r.filter.match(a); t {
	case yes:
		v, err = s.settle(a, verdict{allow: r.allow, line: r.line})
		return v, true, err
	case unknown:
		s.open, s.whys = append(s.open, r), append(s.whys, why)
	}
	return verdict{}, false, nil
}

// settle returns v, unless a rule tried before it may have matched and
// decided otherwise.
func (s *scan) settle(a access, v verdict) (verdict, error) {
	for i, r := range s.open {
		if r.allow != v.allow {
			return verdict{}, fmt.Errorf("%s: line %d may match (%s)", a, r.line, s.whys[i])
		}
	}
	return v, nil
}

// opChains returns the chains of operations a's falls back through, one
// per place the hierarchy may give it.
func opChains(op string) [][]string {
	o := sbOps[op]
	if op == "default" || (o.parent == "" && len(o.parents) == 0) {
		return [][]string{{op}}
	}
	parents := o.parents
	if o.parent != "" {
		parents = []string{o.parent}
	}
	var out [][]string
	for _, par := range parents {
		for _, rest := range opChains(par) {
			out = append(out, append([]string{op}, rest...))
		}
	}
	return out
}

// latin1 spells each byte of s as the rune of that value, so that a Go
// regexp built by appleRegex matches s byte by byte, as Seatbelt's does.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < 0x80
	}
	if ascii {
		return s
	}
	b := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = rune(s[i])
	}
	return string(b)
}

var appleRegexCache sync.Map // string → *regexp.Regexp

// appleRegex compiles a Seatbelt regex to a Go regexp over latin1 text.
//
// The dialect. Seatbelt's regexes are compiled by libsandbox and matched
// in the kernel by AppleMatch (Blazakis, "The Apple Sandbox"). The compiled
// form, as SandBlaster decodes it (github.com/malus-security/sandblaster,
// reverse-sandbox/regex_parser_v3.py), has these nodes: a byte, the
// beginning and the end of the line, any byte, a class of byte ranges
// (negated by complement), jumps (for *, +, ? and |), and the end: a POSIX
// extended regex over bytes. Apple's own profiles write nothing else
// (knightsc/sandbox_profiles: "^/private/tmp/\.webdavUDS\.[^/]+$",
// "/com\.apple\.sandbox($|/)"). Where it differs from Go's RE2, which this
// translation removes: RE2 reads UTF-8 (a "." or a "[^/]" is a whole
// character there, one byte here); RE2 knows \d, \w, \b, (?i), non-greedy
// and named groups, which are literal or errors in ERE; and inside
// brackets RE2 reads a backslash as an escape, ERE as itself. Refused,
// because what they mean here is not known: bounded repetition {m,n},
// backslash escapes of letters or digits, POSIX classes [[:alpha:]], a
// backslash or a non-ASCII byte inside brackets, empty alternatives, and a
// quantifier without an operand or after another.
func appleRegex(src string) (*regexp.Regexp, error) {
	if re, ok := appleRegexCache.Load(src); ok {
		return re.(*regexp.Regexp), nil
	}
	t := &reTranslator{src: src}
	goSrc, err := t.alt()
	if err == nil && t.i < len(src) {
		err = fmt.Errorf("unbalanced %q", src[t.i])
	}
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", src, err)
	}
	re, err := regexp.Compile(goSrc)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", src, err)
	}
	appleRegexCache.Store(src, re)
	return re, nil
}

type reTranslator struct {
	src string
	i   int
}

func (t *reTranslator) alt() (string, error) {
	var branches []string
	for {
		s, err := t.seq()
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("an empty alternative at %d", t.i)
		}
		branches = append(branches, s)
		if t.i < len(t.src) && t.src[t.i] == '|' {
			t.i++
			continue
		}
		return strings.Join(branches, "|"), nil
	}
}

func (t *reTranslator) seq() (string, error) {
	var b strings.Builder
	for t.i < len(t.src) {
		c := t.src[t.i]
		if c == '|' || c == ')' {
			break
		}
		atom, quantifiable, err := t.atom()
		if err != nil {
			return "", err
		}
		b.WriteString(atom)
		if t.i < len(t.src) && strings.IndexByte("*+?", t.src[t.i]) >= 0 {
			if !quantifiable {
				return "", fmt.Errorf("a quantifier without an operand at %d", t.i)
			}
			b.WriteByte(t.src[t.i])
			t.i++
			if t.i < len(t.src) && strings.IndexByte("*+?{", t.src[t.i]) >= 0 {
				return "", fmt.Errorf("a quantifier after a quantifier at %d", t.i)
			}
		}
	}
	return b.String(), nil
}

// atom reads one operand and returns it in Go's syntax.
func (t *reTranslator) atom() (string, bool, error) {
	c := t.src[t.i]
	t.i++
	switch c {
	case '^', '$':
		return string(c), false, nil
	case '.':
		return `(?s:.)`, true, nil
	case '(':
		inner, err := t.alt()
		if err != nil {
			return "", false, err
		}
		if t.i >= len(t.src) || t.src[t.i] != ')' {
			return "", false, fmt.Errorf("unclosed group")
		}
		t.i++
		return "(?:" + inner + ")", true, nil
	case '[':
		s, err := t.class()
		return s, true, err
	case '\\':
		if t.i >= len(t.src) {
			return "", false, fmt.Errorf("a trailing backslash")
		}
		e := t.src[t.i]
		t.i++
		if e >= 0x80 || e < 0x20 || ('0' <= e && e <= '9') || ('a' <= e && e <= 'z') || ('A' <= e && e <= 'Z') {
			return "", false, fmt.Errorf("escape \\%c is not understood", e)
		}
		return byteRE(e), true, nil
	case '*', '+', '?':
		return "", false, fmt.Errorf("a quantifier without an operand at %d", t.i-1)
	case '{', '}', ']', ')':
		return "", false, fmt.Errorf("%q is not understood", c)
	}
	if c < 0x20 || c == 0x7f {
		return "", false, fmt.Errorf("a control byte")
	}
	return byteRE(c), true, nil
}

// class reads a bracket expression after its "[".
func (t *reTranslator) class() (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	if t.i < len(t.src) && t.src[t.i] == '^' {
		b.WriteByte('^')
		t.i++
	}
	first := true
	var members []byte
	for {
		if t.i >= len(t.src) {
			return "", fmt.Errorf("unclosed bracket")
		}
		c := t.src[t.i]
		if c == ']' && !first {
			t.i++
			break
		}
		first = false
		switch {
		case c == '\\', c >= 0x80, c < 0x20:
			return "", fmt.Errorf("%q in brackets is not understood", c)
		case c == '[' && t.i+1 < len(t.src) && strings.IndexByte(":.=", t.src[t.i+1]) >= 0:
			return "", fmt.Errorf("POSIX classes are not understood")
		}
		t.i++
		if t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != ']' {
			hi := t.src[t.i+1]
			if hi == '\\' || hi >= 0x80 || hi < c {
				return "", fmt.Errorf("range %c-%c is not understood", c, hi)
			}
			b.WriteString(byteRE(c) + "-" + byteRE(hi))
			t.i += 2
			continue
		}
		members = append(members, c)
		b.WriteString(byteRE(c))
	}
	if len(members) == 0 && b.Len() <= 2 {
		return "", fmt.Errorf("an empty class")
	}
	b.WriteByte(']')
	return b.String(), nil
}

// byteRE is byte c as a Go regexp literal over latin1 text.
func byteRE(c byte) string { return fmt.Sprintf(`\x{%02x}`, c) }
