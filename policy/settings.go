package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scope says where a setting came from. Higher scopes take precedence.
type Scope int

// The scopes, lowest precedence first.
const (
	ScopeDefault Scope = iota // the embedded default policy
	ScopeUser                 // ~/.config/cordon, ~/.claude, ~/.srt-settings.json
	ScopeProject              // <workspace>/.cordon/settings.json, .claude/settings.json
	ScopeLocal                // <workspace>/.cordon/settings.local.json, .claude/settings.local.json
	ScopeFlag                 // --settings FILE and the other flags of the command line
	ScopeManaged              // /etc/cordon/managed-settings.json, Claude Code's managed file
)

func (s Scope) String() string {
	return [...]string{"default", "user", "project", "local", "flag", "managed"}[s]
}

// format is the dialect of a settings file.
type format int

const (
	formatCordon format = iota // cordon's own files: every key known
	formatClaude               // Claude Code's: other tools' top-level keys ignored
	formatSRT                  // sandbox-runtime's ~/.srt-settings.json
	formatAny                  // a --settings file: any of the three shapes
)

// Source is where a value was set: a file and position, or a flag.
type Source struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Col   int    `json:"col,omitempty"`
	Scope Scope  `json:"-"`
}

func (s Source) String() string {
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
}

// setting is a scalar value and where it was set.
type setting[T any] struct {
	V   T
	Src Source
}

// entry is one element of a list setting and where it was set.
type entry struct {
	V   string
	Src Source
	// Rule is the permission rule the entry derives from (allow
	// Edit(~/x) → allowWrite ~/x), if any: a lock on permission rules cuts
	// it with the rule.
	Rule string
}

// layer is everything one settings file (or the flags) says, decoded and
// validated, paths already absolute.
type layer struct {
	file  string
	scope Scope
	// base is what "/x" in a Claude Code path is relative to: the project
	// that holds the file.
	base string

	enabled, failIfUnavailable, autoAllowBash, allowUnsandboxed *setting[bool]
	allowAllUnixSockets, allowLocalBinding, allowGitConfig      *setting[bool]
	weakerNested, nestedUserNS, allowSocketpair, weakerNetwork  *setting[bool]
	serve, syscallGuard                                         *setting[bool]
	requireFull, containerMode, acceptUnconfined                *setting[bool]
	caches                                                      *setting[bool]
	cachesMaxSize                                               *setting[int64]
	cachesMaxAge                                                *setting[time.Duration]
	// httpProxyPort and socksProxyPort are cordon's proxy's ports inside
	// the sandbox; externalHTTPPort and externalSOCKSPort a proxy of the
	// user's on the host instead (sandbox-runtime's httpProxyPort and
	// socksProxyPort)
	httpProxyPort, socksProxyPort                                *setting[int]
	externalHTTPPort, externalSOCKSPort                          *setting[int]
	excludedCommands, allowedDomains, deniedDomains, unixSockets []entry
	allowRead, denyRead, allowWrite, denyWrite                   []entry
	ignoreViolations                                             map[string][]entry
	permAllow, permDeny, permAsk, additionalDirs                 []entry
	defaultMode, disableBypass, disableAuto, mode                *setting[string]
	envDeny, envAllow                                            []entry
	envSet                                                       map[string]setting[string]
	memory, pids, outputLimit, fileSize, openFiles, tmpSize      *setting[int64]
	memoryPercent                                                *setting[float64]
	cpus                                                         *setting[float64]
	timeout                                                      *setting[time.Duration]
	trusted                                                      []entry
	managedDomainsOnly, managedReadOnly, managedWriteOnly        *setting[bool]
	managedPermissionsOnly                                       *setting[bool]
	askCommand                                                   *setting[string]
	strictAllowlist                                              *setting[bool]
	preDecision, postRun                                         *setting[Hook]
	// rulePaths maps a file tool's permission rule to its path as an
	// absolute pattern, resolved against this file.
	rulePaths map[string]string
	// tightenOnly marks an untrusted workspace's layer once stripped of
	// what widens: its memory limit is kept beside the one below it.
	tightenOnly bool
	// ignored are keys known to another tool that cordon does not act
	// on, with the reason (shown by cordon config).
	ignored []entry
	// denyAllDomains are the WebFetch(domain:*) deny rules: no host for
	// sandboxed commands.
	denyAllDomains []entry
	// creds is the credentials block.
	creds credLayer
	// the rest of sandbox-runtime's network block (settings_network.go)
	deniedReasons                          map[string]setting[string]
	deniedAddresses, stripResponseHeaders  []entry
	machLookup                             []entry
	parentHTTP, parentHTTPS, parentNoProxy *setting[string]
	mitmProxy                              *setting[MitmProxy]
	tlsTerminate                           *setting[TLSTerminate]
	requireHostMatch, refuseOpaqueTunnels  *setting[bool]
	// notices are said on cordon's stderr (once per boot) and by cordon
	// config: a deprecated spelling.
	notices []entry
}

// decoder reads one settings file's JSON tree into a layer.
type decoder struct {
	l       *layer
	format  format
	home    string
	cwd     string
	pathDir func(raw string) (string, error)
	// srtPathDir expands paths in sandbox-runtime's top-level blocks.
	srtPathDir func(raw string) (string, error)
	// sandboxPathDir expands the paths of Claude Code's sandbox block and
	// permissions.additionalDirectories: "/x" is absolute, "x" relative
	// to the file's project (nil: pathDir).
	sandboxPathDir func(raw string) (string, error)
	// ruleDir is the directory a permission rule's relative path is
	// relative to (the current directory).
	ruleDir string
}

func (d *decoder) errAt(pos Pos, format string, args ...any) error {
	return &SettingsError{File: d.l.file, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) src(pos Pos) Source {
	return Source{File: d.l.file, Line: pos.Line, Col: pos.Col, Scope: d.l.scope}
}

// object walks the members of an object node, dispatching known keys and
// rejecting (strict) or ignoring (lenient) the rest.
type object struct {
	d      *decoder
	n      *node
	path   string // "sandbox.network", for messages
	strict bool
	known  []string
}

func (d *decoder) object(n *node, path string, strict bool) (*object, error) {
	if n.kind != kindObject {
		return nil, d.errAt(n.pos, "%s must be an object, not %s", path, n.kind)
	}
	return &object{d: d, n: n, path: path, strict: strict}, nil
}

// each calls fn for every member whose key is in keys (the known keys), and
// errors on the others when strict.
func (o *object) each(keys []string, fn func(key string, v *node) error) error {
	for _, m := range o.n.members {
		if !slices.Contains(keys, m.key) {
			if o.strict {
				return o.d.errAt(m.keyPos, "unknown key %q in %s%s", m.key, o.path, suggest(m.key, keys))
			}
			continue
		}
		if m.value.kind == kindNull {
			// null is no value, as in Claude Code ("httpProxyPort": null
			// in its own example settings)
			continue
		}
		if err := fn(m.key, m.value); err != nil {
			return err
		}
	}
	return nil
}

// member returns the value of the object's member key (the last one,
// when it is named twice), or nil.
func (o *object) member(key string) *node {
	var v *node
	for _, m := range o.n.members {
		if m.key == key {
			v = m.value
		}
	}
	return v
}

// suggest returns `(did you mean "x"?)` for the known key closest to key.
func suggest(key string, known []string) string {
	best, bestD := "", math.MaxInt
	for _, k := range known {
		d := distance(strings.ToLower(key), strings.ToLower(k))
		if d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(key)/3) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known keys: %s)", strings.Join(known, ", "))
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (d *decoder) boolean(n *node, key string) (*setting[bool], error) {
	if n.kind != kindBool {
		return nil, d.errAt(n.pos, "%s must be true or false, not %s", key, n.kind)
	}
	return &setting[bool]{n.boolean, d.src(n.pos)}, nil
}

func (d *decoder) str(n *node, key string) (*setting[string], error) {
	if n.kind != kindString {
		return nil, d.errAt(n.pos, "%s must be a string, not %s", key, n.kind)
	}
	return &setting[string]{n.text, d.src(n.pos)}, nil
}

func (d *decoder) port(n *node, key string) (*setting[int], error) {
	v, err := strconv.Atoi(n.text)
	if n.kind != kindNumber || err != nil || v < 1 || v > 65535 {
		return nil, d.errAt(n.pos, "%s must be a port number from 1 to 65535", key)
	}
	return &setting[int]{v, d.src(n.pos)}, nil
}

// strings reads an array of non-empty strings, each checked by check (which
// may rewrite it).
func (d *decoder) strings(n *node, key string, check func(string) (string, error)) ([]entry, error) {
	if n.kind != kindArray {
		return nil, d.errAt(n.pos, "%s must be an array of strings, not %s", key, n.kind)
	}
	var out []entry
	for _, it := range n.items {
		if it.kind != kindString {
			return nil, d.errAt(it.pos, "%s must contain strings, not %s", key, it.kind)
		}
		v := it.text
		if strings.TrimSpace(v) == "" {
			return nil, d.errAt(it.pos, "%s has an empty entry", key)
		}
		if check != nil {
			var err error
			if v, err = check(v); err != nil {
				return nil, d.errAt(it.pos, "%s: %v", key, err)
			}
		}
		out = append(out, entry{V: v, Src: d.src(it.pos)})
	}
	return out, nil
}

// paths reads an array of path patterns: strings, or (sandbox-runtime's
// form) objects {"path": P, "literal": true} naming a path that is not a
// glob. Every entry comes out absolute, as a pattern (see Pattern).
func (d *decoder) paths(n *node, key string) ([]entry, error) {
	if n.kind != kindArray {
		return nil, d.errAt(n.pos, "%s must be an array of paths, not %s", key, n.kind)
	}
	var out []entry
	for _, it := range n.items {
		raw, literal := "", false
		switch it.kind {
		case kindString:
			raw = it.text
		case kindObject:
			o, _ := d.object(it, key+"[]", true)
			err := o.each([]string{"path", "literal"}, func(k string, v *node) error {
				switch k {
				case "path":
					s, err := d.str(v, key+"[].path")
					if err != nil {
						return err
					}
					raw = s.V
				case "literal":
					b, err := d.boolean(v, key+"[].literal")
					if err != nil {
						return err
					}
					literal = b.V
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, d.errAt(it.pos, "%s must contain paths (strings), not %s", key, it.kind)
		}
		if literal {
			// Escaped before it is made absolute: the home or the current
			// directory it is joined to is escaped already.
			raw = EscapePattern(raw)
		}
		abs, err := d.pathDir(raw)
		if err != nil {
			return nil, d.errAt(it.pos, "%s: %v", key, err)
		}
		if err := ValidatePattern(abs); err != nil {
			return nil, d.errAt(it.pos, "%s: %v", key, err)
		}
		out = append(out, entry{V: abs, Src: d.src(it.pos)})
	}
	return out, nil
}

// size reads a byte size: a number of bytes or a string like "512M", "2G".
func (d *decoder) size(n *node, key string) (*setting[int64], error) {
	var v int64
	var err error
	switch n.kind {
	case kindNumber:
		v, err = strconv.ParseInt(n.text, 10, 64)
	case kindString:
		v, err = ParseSize(n.text)
	default:
		err = fmt.Errorf("wrong type")
	}
	if err != nil || v < 0 {
		return nil, d.errAt(n.pos, "%s must be a size: a number of bytes or a string such as \"512M\" or \"2G\"", key)
	}
	return &setting[int64]{v, d.src(n.pos)}, nil
}

func (d *decoder) count(n *node, key string) (*setting[int64], error) {
	v, err := strconv.ParseInt(n.text, 10, 64)
	if n.kind != kindNumber || err != nil || v < 0 {
		return nil, d.errAt(n.pos, "%s must be a whole number, 0 or more", key)
	}
	return &setting[int64]{v, d.src(n.pos)}, nil
}

// ParseSize reads a size such as "512M", "2G", "1.5GiB" or "4096": decimal
// digits, an optional fraction, an optional K, M, G or T (powers of 1024)
// and an optional B or iB. Nothing else: no exponents, hex, underscores,
// NaN or infinity, and nothing of 2^63 bytes or more.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if n := len(t); n > 0 {
		if m, ok := map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}[t[n-1]]; ok {
			mult, t = m, t[:n-1]
		}
	}
	t = strings.TrimSpace(t)
	whole, frac, dot := strings.Cut(t, ".")
	if !decimalDigits(whole) || dot && !decimalDigits(frac) {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	f, err := strconv.ParseFloat(t, 64)
	// 2^63 is the first float64 above every int64.
	if err != nil || f*float64(mult) >= 1<<63 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(f * float64(mult)), nil
}

// decimalDigits reports whether s is one or more of 0-9.
func decimalDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// decode reads a whole settings file.
func (d *decoder) decode(root *node) error {
	// allowManagedPermissionRulesOnly is Claude Code's spelling of
	// cordon.allowManagedPermissionRulesOnly.
	top := []string{"permissions", "sandbox", "cordon", "allowManagedPermissionRulesOnly"}
	if d.format == formatSRT {
		top = []string{"network", "filesystem", "credentials", "ignoreViolations", "enableWeakerNestedSandbox", "allowNestedUserNamespaces", "enableWeakerNetworkIsolation"}
	}
	srtTop := []string{"network", "filesystem", "credentials", "ignoreViolations", "enableWeakerNestedSandbox", "allowNestedUserNamespaces", "enableWeakerNetworkIsolation"}
	if d.format == formatCordon || d.format == formatAny {
		// cordon's own files may also be written in sandbox-runtime's
		// shape, so that one file serves both.
		top = append(top, srtTop...)
	}
	o, err := d.object(root, "the settings", d.format == formatCordon)
	if err != nil {
		return err
	}
	if d.format == formatClaude {
		// Claude Code ignores these at the top level; a policy written
		// there by mistake must not be ignored silently.
		for _, m := range root.members {
			if m.key == "network" || m.key == "filesystem" {
				return d.errAt(m.keyPos, "%s is sandbox-runtime's top-level key: in Claude Code's settings it belongs under sandbox (sandbox.%s)", m.key, m.key)
			}
		}
	}
	if d.format == formatSRT || d.format == formatAny {
		// sandbox-runtime's own keys that cordon has no use for: leaving
		// them out widens nothing.
		for _, m := range root.members {
			if reason, ok := srtIgnored[m.key]; ok {
				d.l.ignored = append(d.l.ignored, entry{V: m.key + ": " + reason, Src: d.src(m.keyPos)})
			} else if !slices.Contains(top, m.key) && d.format == formatSRT {
				return d.errAt(m.keyPos, "unknown key %q in the settings%s", m.key, suggest(m.key, top))
			}
		}
	}
	return o.each(top, func(key string, v *node) error {
		switch key {
		case "permissions":
			return d.permissions(v)
		case "sandbox":
			if d.sandboxPathDir != nil {
				saved := d.pathDir
				d.pathDir = d.sandboxPathDir
				defer func() { d.pathDir = saved }()
			}
			return d.sandbox(v)
		case "cordon":
			return d.cordon(v)
		case "allowManagedPermissionRulesOnly":
			return d.claudeLock(v, key, &d.l.managedPermissionsOnly)
		case "network", "filesystem", "credentials":
			// sandbox-runtime's blocks, with its path rules ("/x" is
			// absolute), whatever the file.
			saved := d.pathDir
			if d.srtPathDir != nil {
				d.pathDir = d.srtPathDir
			}
			defer func() { d.pathDir = saved }()
			switch key {
			case "network":
				return d.network(v, "network")
			case "credentials":
				return d.credentials(v, "credentials")
			}
			return d.filesystem(v, "filesystem")
		case "ignoreViolations":
			return d.ignoreViolations(v, key)
		case "enableWeakerNestedSandbox":
			b, err := d.boolean(v, key)
			d.l.weakerNested = b
			return err
		case "allowNestedUserNamespaces":
			b, err := d.boolean(v, key)
			d.l.nestedUserNS = b
			return err
		case "enableWeakerNetworkIsolation":
			b, err := d.boolean(v, key)
			d.l.weakerNetwork = b
			return err
		}
		return nil
	})
}

// srtIgnored are sandbox-runtime keys cordon ignores: they configure
// sandbox-runtime's own machinery (its helper binaries, its search for
// files to protect) and loosen nothing when left out.
var srtIgnored = map[string]string{
	"ripgrep":                  "cordon does not search for files with ripgrep",
	"mandatoryDenySearchDepth": "cordon protects the always-protected paths in every writable root",
	"seccomp":                  "cordon has its own seccomp profile",
	"bwrapPath":                "cordon does not use bubblewrap",
	"socatPath":                "cordon does not use socat",
	"javaAgentJarPath":         "not supported",
	"windows":                  "cordon does not run on Windows",
	"allowPty":                 "a sandboxed command gets a terminal of its own when cordon is run on one",
	"git":                      "not supported; git inside the sandbox uses the host's configuration, read-only",
	// A macOS loosening: without it the sandbox is stricter
	"allowAppleEvents": "cordon does not let a sandboxed command send Apple events",
}

func (d *decoder) sandbox(n *node) error {
	keys := []string{"enabled", "failIfUnavailable", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands",
		"excludedCommands", "network", "filesystem", "ignoreViolations", "enableWeakerNestedSandbox",
		"allowNestedUserNamespaces", "ripgrep", "bwrapPath", "socatPath", "enabledPlatforms",
		"credentials", "enableWeakerNetworkIsolation", "allowAppleEvents"}
	o, err := d.object(n, "sandbox", true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each(keys, func(key string, v *node) error {
		var err error
		// Claude Code's keys for its own helpers, and its macOS
		// loosenings, widen nothing when left out.
		if reason, ok := srtIgnored[key]; ok {
			l.ignored = append(l.ignored, entry{V: "sandbox." + key + ": " + reason, Src: d.src(v.pos)})
			return nil
		}
		switch key {
		case "credentials":
			err = d.credentials(v, "sandbox.credentials")
		case "enabledPlatforms":
			l.ignored = append(l.ignored, entry{V: "sandbox.enabledPlatforms: cordon sandboxes on every platform it runs on", Src: d.src(v.pos)})
		case "enabled":
			l.enabled, err = d.boolean(v, "sandbox.enabled")
		case "failIfUnavailable":
			l.failIfUnavailable, err = d.boolean(v, "sandbox.failIfUnavailable")
		case "autoAllowBashIfSandboxed":
			l.autoAllowBash, err = d.boolean(v, "sandbox.autoAllowBashIfSandboxed")
		case "allowUnsandboxedCommands":
			l.allowUnsandboxed, err = d.boolean(v, "sandbox.allowUnsandboxedCommands")
		case "excludedCommands":
			l.excludedCommands, err = d.strings(v, "sandbox.excludedCommands", nil)
		case "network":
			err = d.network(v, "sandbox.network")
		case "filesystem":
			err = d.filesystem(v, "sandbox.filesystem")
		case "ignoreViolations":
			err = d.ignoreViolations(v, "sandbox.ignoreViolations")
		case "enableWeakerNestedSandbox":
			l.weakerNested, err = d.boolean(v, "sandbox.enableWeakerNestedSandbox")
		case "allowNestedUserNamespaces":
			l.nestedUserNS, err = d.boolean(v, "sandbox.allowNestedUserNamespaces")
		case "enableWeakerNetworkIsolation":
			l.weakerNetwork, err = d.boolean(v, "sandbox.enableWeakerNetworkIsolation")
		}
		return err
	})
}

func (d *decoder) filesystem(n *node, path string) error {
	keys := []string{"allowRead", "denyRead", "allowWrite", "denyWrite", "allowGitConfig", "allowManagedReadPathsOnly", "disabled"}
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	l := d.l
	return o.each(keys, func(key string, v *node) error {
		var err error
		var es []entry
		name := path + "." + key
		switch key {
		case "allowRead":
			es, err = d.paths(v, name)
			l.allowRead = append(l.allowRead, es...)
		case "denyRead":
			es, err = d.paths(v, name)
			l.denyRead = append(l.denyRead, es...)
		case "allowWrite":
			es, err = d.paths(v, name)
			l.allowWrite = append(l.allowWrite, es...)
		case "denyWrite":
			es, err = d.paths(v, name)
			l.denyWrite = append(l.denyWrite, es...)
		case "allowGitConfig":
			l.allowGitConfig, err = d.boolean(v, name)
		case "allowManagedReadPathsOnly":
			err = d.claudeLock(v, name, &l.managedReadOnly)
		case "disabled":
			var b *setting[bool]
			b, err = d.boolean(v, name)
			switch {
			case err != nil || !b.V:
			case d.format == formatClaude && (l.scope == ScopeProject || l.scope == ScopeLocal):
				// Claude Code honours it only from the user's, managed and
				// --settings files.
				l.ignored = append(l.ignored, entry{V: name + ": Claude Code ignores it in a workspace's settings", Src: b.Src})
			default:
				return d.errAt(v.pos, "%s is not supported by cordon: a sandbox without file system rules is not a sandbox", name)
			}
		}
		return err
	})
}

// claudeLock reads one of Claude Code's managed locks
// (allowManagedPermissionRulesOnly, sandbox.network.allowManagedDomainsOnly,
// sandbox.filesystem.allowManagedReadPathsOnly): honoured in managed
// settings, ignored elsewhere as Claude Code ignores it.
func (d *decoder) claudeLock(v *node, key string, dst **setting[bool]) error {
	b, err := d.boolean(v, key)
	if err != nil {
		return err
	}
	if d.l.scope != ScopeManaged {
		d.l.ignored = append(d.l.ignored, entry{V: key + ": honoured only in managed settings", Src: b.Src})
		return nil
	}
	*dst = b
	return nil
}

func (d *decoder) ignoreViolations(n *node, path string) error {
	o, err := d.object(n, path, false)
	if err != nil {
		return err
	}
	if d.l.ignoreViolations == nil {
		d.l.ignoreViolations = map[string][]entry{}
	}
	for _, m := range o.n.members {
		es, err := d.strings(m.value, path+"."+m.key, nil)
		if err != nil {
			return err
		}
		d.l.ignoreViolations[m.key] = append(d.l.ignoreViolations[m.key], es...)
	}
	return nil
}
