package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"cordon.dev/cordon/internal/paths"
)

// Report says where every value of a Policy came from, and what the
// settings said that was not applied, and why. cordon config prints it.
type Report struct {
	Files   []FileReport    `json:"files"`
	Values  []ValueReport   `json:"values"`
	Ignored []IgnoredReport `json:"ignored,omitempty"`
	Notes   []string        `json:"notes,omitempty"`
	// Notices are what cordon says on stderr when a command runs (once
	// per boot): a deprecated spelling, a proxy of the user's that
	// decides instead of cordon's.
	Notices []string `json:"notices,omitempty"`
}

// FileReport is a settings file that was read.
type FileReport struct {
	Path    string `json:"path"`
	Scope   string `json:"scope"`
	Trusted bool   `json:"trusted"`
}

// ValueReport is one effective value (or list entry) and its source.
type ValueReport struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// IgnoredReport is a setting that was not applied.
type IgnoredReport struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// merger folds layers, lowest precedence first, into a Policy.
type merger struct {
	p       *Policy
	rep     *Report
	scalars map[string]ValueReport
	lists   map[string][]entry
	envSet  map[string]setting[string]
	ignore  map[string][]entry
	mode    *setting[string]
	limits  struct {
		memoryPercent                                           *setting[float64]
		memory, pids, outputLimit, fileSize, openFiles, tmpSize *setting[int64]
		cpus                                                    *setting[float64]
		timeout                                                 *setting[time.Duration]
	}
	caches struct {
		maxSize *setting[int64]
		maxAge  *setting[time.Duration]
	}
	flags map[string]*setting[bool]
	ports map[string]*setting[int]
	strs  map[string]*setting[string]
	hooks map[string]*setting[Hook]
	// reasons are deniedDomainReasons by entry; mitm is mitmProxy
	reasons map[string]setting[string]
	mitm    *setting[MitmProxy]
	tls     *setting[TLSTerminate]
	notices []entry
	// serveDefault is cordon.serve when no file sets it (Flags.Serve).
	serveDefault bool
	// rulePaths maps a settings file and a file tool's rule in it to the
	// rule's path pattern.
	rulePaths map[string]string
	creds     credMerge
}

// denyAllDomainsKey holds the WebFetch(domain:*) deny rules.
const denyAllDomainsKey = "permissions.deny WebFetch(domain:*)"

const untrustedReason = "the workspace is not trusted (cordon trust): its settings may only tighten the sandbox"

func (m *merger) ignored(key, value string, src Source, reason string) {
	m.rep.Ignored = append(m.rep.Ignored, IgnoredReport{Key: key, Value: value, Source: src.String(), Reason: reason})
}

// dropOpeningLists drops, reporting them, the sandbox's lists whose
// entries open it: the commands run outside it, the domains, sockets and
// Mach services it may reach, and the paths it may read and write.
func (m *merger) dropOpeningLists(l *layer, reason string) {
	m.dropList("sandbox.excludedCommands", &l.excludedCommands, reason)
	m.dropList("sandbox.network.allowedDomains", &l.allowedDomains, reason)
	m.dropList("sandbox.network.allowUnixSockets", &l.unixSockets, reason)
	m.dropList("sandbox.network.allowMachLookup", &l.machLookup, reason)
	m.dropList("sandbox.filesystem.allowRead", &l.allowRead, reason)
	m.dropList("sandbox.filesystem.allowWrite", &l.allowWrite, reason)
}

// untrusted strips from a workspace layer everything that would widen the
// sandbox, reporting it.
func (m *merger) untrusted(l *layer) {
	m.dropOpeningLists(l, untrustedReason)
	m.dropList("permissions.allow", &l.permAllow, untrustedReason)
	m.dropList("permissions.additionalDirectories", &l.additionalDirs, untrustedReason)
	m.dropList("cordon.env.allow", &l.envAllow, untrustedReason)
	for k, v := range l.envSet {
		m.ignored("cordon.env.set."+k, v.V, v.Src, untrustedReason)
	}
	l.envSet = nil
	m.untrustedCredentials(l)
	m.dropProxies(l, untrustedReason)
	m.dropIgnoreViolations(l, untrustedReason)
	if l.askCommand != nil {
		m.ignored("cordon.askCommand", l.askCommand.V, l.askCommand.Src, untrustedReason)
		l.askCommand = nil
	}
	// A hook runs on the host, outside any sandbox: a cloned repository
	// must not name one.
	for _, h := range []struct {
		key string
		s   **setting[Hook]
	}{{"cordon.hooks.preDecision", &l.preDecision}, {"cordon.hooks.postRun", &l.postRun}} {
		if *h.s != nil {
			m.ignored(h.key, strings.Join((*h.s).V.Args, " "), (*h.s).Src, untrustedReason)
			*h.s = nil
		}
	}
	// A switch may only be set in the direction that tightens.
	m.dropLoosening([]boolSwitch{
		{"sandbox.enabled", &l.enabled, true},
		{"sandbox.failIfUnavailable", &l.failIfUnavailable, true},
		{"sandbox.autoAllowBashIfSandboxed", &l.autoAllowBash, false},
		{"sandbox.allowUnsandboxedCommands", &l.allowUnsandboxed, false},
		{"sandbox.network.allowAllUnixSockets", &l.allowAllUnixSockets, false},
		{"sandbox.network.allowLocalBinding", &l.allowLocalBinding, false},
		{"sandbox.filesystem.allowGitConfig", &l.allowGitConfig, false},
		{"sandbox.enableWeakerNestedSandbox", &l.weakerNested, false},
		{"sandbox.enableWeakerNetworkIsolation", &l.weakerNetwork, false},
		{"sandbox.allowNestedUserNamespaces", &l.nestedUserNS, false},
		{"cordon.allowSocketpair", &l.allowSocketpair, false},
		// Off, it lets the user's askCommand be asked about destinations.
		{"sandbox.network.strictAllowlist", &l.strictAllowlist, true},
		// Not a widening of the sandbox, but a daemon on the host that
		// runs the user's later commands: the user's choice, not a
		// cloned repository's.
		{"cordon.serve", &l.serve, false},
		{"cordon.requireFullSandbox", &l.requireFull, true},
		{"cordon.containerMode", &l.containerMode, false},
		{"cordon.acceptUnconfined", &l.acceptUnconfined, false},
		{"cordon.caches.enabled", &l.caches, false},
		{"cordon.syscallGuard", &l.syscallGuard, true},
	}, untrustedReason)
	// The user's disk, not a cloned repository's to size.
	if l.cachesMaxSize != nil {
		m.ignored("cordon.caches.maxSize", strconv.FormatInt(l.cachesMaxSize.V, 10), l.cachesMaxSize.Src, untrustedReason)
		l.cachesMaxSize = nil
	}
	if l.cachesMaxAge != nil {
		m.ignored("cordon.caches.maxAge", l.cachesMaxAge.V.String(), l.cachesMaxAge.Src, untrustedReason)
		l.cachesMaxAge = nil
	}
	for _, s := range []**setting[string]{&l.mode, &l.defaultMode} {
		if *s == nil {
			continue
		}
		if m.mode != nil {
			if restrictiveness((*s).V) > restrictiveness(m.mode.V) {
				m.ignored("mode", (*s).V, (*s).Src, untrustedReason)
				*s = nil
			}
		}
	}
	tighter := func(key string, s **setting[int64], cur *setting[int64]) {
		if *s != nil && cur != nil && cur.V != 0 && ((*s).V == 0 || (*s).V > cur.V) {
			m.ignored(key, strconv.FormatInt((*s).V, 10), (*s).Src, untrustedReason)
			*s = nil
		}
	}
	// Memory is a size or a share of the machine, which cannot be compared
	// here: a size under a share (or the reverse) is kept beside it, and
	// the smaller applies (spec.MemoryLimit). 0, no limit, never lifts one.
	tighter("cordon.limits.memory", &l.memory, m.limits.memory)
	if l.memory != nil && l.memory.V == 0 && m.limits.memoryPercent != nil {
		m.ignored("cordon.limits.memory", "0", l.memory.Src, untrustedReason)
		l.memory = nil
	}
	if l.memoryPercent != nil && m.limits.memoryPercent != nil && l.memoryPercent.V > m.limits.memoryPercent.V {
		m.ignored("cordon.limits.memory", fmt.Sprintf("%g%%", l.memoryPercent.V), l.memoryPercent.Src, untrustedReason)
		l.memoryPercent = nil
	}
	l.tightenOnly = true
	tighter("cordon.limits.pids", &l.pids, m.limits.pids)
	tighter("cordon.limits.outputLimit", &l.outputLimit, m.limits.outputLimit)
	tighter("cordon.limits.fileSize", &l.fileSize, m.limits.fileSize)
	tighter("cordon.limits.openFiles", &l.openFiles, m.limits.openFiles)
	tighter("cordon.limits.tmpSize", &l.tmpSize, m.limits.tmpSize)
	if l.cpus != nil && m.limits.cpus != nil && m.limits.cpus.V != 0 && (l.cpus.V == 0 || l.cpus.V > m.limits.cpus.V) {
		m.ignored("cordon.limits.cpus", fmt.Sprint(l.cpus.V), l.cpus.Src, untrustedReason)
		l.cpus = nil
	}
	if l.timeout != nil && m.limits.timeout != nil && m.limits.timeout.V != 0 && (l.timeout.V == 0 || l.timeout.V > m.limits.timeout.V) {
		m.ignored("cordon.limits.timeout", l.timeout.V.String(), l.timeout.Src, untrustedReason)
		l.timeout = nil
	}
}

// adminRequired says why the sandbox is admin-required, as Claude Code
// has it: allowUnsandboxedCommands false in the managed settings (or in a
// --settings file, unless the managed settings set it true), or the
// managed allowManagedDomainsOnly lock; "" when it is not.
func adminRequired(layers []*layer) string {
	why := ""
	for _, l := range layers {
		switch {
		case l.scope == ScopeManaged && l.allowUnsandboxed != nil:
			why = ""
			if !l.allowUnsandboxed.V {
				why = "sandbox.allowUnsandboxedCommands false (" + l.allowUnsandboxed.Src.String() + ")"
			}
		case l.scope == ScopeFlag && l.allowUnsandboxed != nil && !l.allowUnsandboxed.V:
			why = "sandbox.allowUnsandboxedCommands false (" + l.allowUnsandboxed.Src.String() + ")"
		}
	}
	for _, l := range layers {
		if l.scope == ScopeManaged && l.managedDomainsOnly != nil && l.managedDomainsOnly.V {
			why = "allowManagedDomainsOnly (" + l.managedDomainsOnly.Src.String() + ")"
		}
	}
	return why
}

// adminRequired strips from a trusted workspace's layer what loosens the
// sandbox, as Claude Code ignores it in a repository's settings while the
// sandbox is admin-required: the entries that open it (excludedCommands,
// ignoreViolations, allowedDomains, allowUnixSockets, allowWrite and what
// Edit(...) allow rules and additionalDirectories open, allowRead), the
// weaker switches' true, and a false for enabled and failIfUnavailable.
// The workspace's permission rules stay: they decide Claude Code's tools.
func (m *merger) adminRequired(l *layer, why string) {
	reason := "the sandbox is admin-required (" + why + "): a workspace's settings may not loosen it"
	m.dropOpeningLists(l, reason)
	m.dropList("permissions.additionalDirectories", &l.additionalDirs, reason)
	m.dropIgnoreViolations(l, reason)
	m.dropProxies(l, reason)
	m.dropLoosening([]boolSwitch{
		{"sandbox.enabled", &l.enabled, true},
		{"sandbox.failIfUnavailable", &l.failIfUnavailable, true},
		{"sandbox.network.allowAllUnixSockets", &l.allowAllUnixSockets, false},
		{"sandbox.network.allowLocalBinding", &l.allowLocalBinding, false},
		{"sandbox.enableWeakerNestedSandbox", &l.weakerNested, false},
		{"sandbox.enableWeakerNetworkIsolation", &l.weakerNetwork, false},
		{"sandbox.allowNestedUserNamespaces", &l.nestedUserNS, false},
		{"cordon.requireFullSandbox", &l.requireFull, true},
		{"cordon.containerMode", &l.containerMode, false},
		{"cordon.acceptUnconfined", &l.acceptUnconfined, false},
	}, reason)
}

// dropProxies strips a layer's proxies of the user's, reporting them as
// ignored: a proxy on the host the sandbox's ports lead to decides
// instead of cordon's allowedDomains (httpProxyPort, socksProxyPort), and
// an upstream proxy or a unix socket one (parentProxy, mitmProxy) sees
// the traffic to allowed hosts: a workspace's settings must not send it
// to one of their choosing.
func (m *merger) dropProxies(l *layer, reason string) {
	for _, x := range []struct {
		key string
		s   **setting[int]
	}{{"sandbox.network.httpProxyPort", &l.externalHTTPPort}, {"sandbox.network.socksProxyPort", &l.externalSOCKSPort}} {
		if *x.s != nil {
			m.ignored(x.key, strconv.Itoa((*x.s).V), (*x.s).Src, reason)
			*x.s = nil
		}
	}
	for _, x := range []struct {
		key string
		s   **setting[string]
	}{{"sandbox.network.parentProxy.http", &l.parentHTTP}, {"sandbox.network.parentProxy.https", &l.parentHTTPS}, {"sandbox.network.parentProxy.noProxy", &l.parentNoProxy}} {
		if *x.s != nil {
			m.ignored(x.key, redactProxyURL((*x.s).V), (*x.s).Src, reason)
			*x.s = nil
		}
	}
	if l.mitmProxy != nil {
		m.ignored("sandbox.network.mitmProxy", l.mitmProxy.V.SocketPath, l.mitmProxy.Src, reason)
		l.mitmProxy = nil
	}
	// a CA of its choosing would see the traffic, and the files it
	// names are read on the host
	if l.tlsTerminate != nil {
		m.ignored("sandbox.network.tlsTerminate", l.tlsTerminate.V.CACertPath, l.tlsTerminate.Src, reason)
		l.tlsTerminate = nil
	}
}

// redactProxyURL is a proxy's URL without its password, for the report.
func redactProxyURL(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return s
	}
	start := strings.Index(s, "://") + 3
	if start < 3 || start > at {
		start = 0
	}
	if colon := strings.IndexByte(s[start:at], ':'); colon >= 0 {
		return s[:start+colon+1] + "xxxxx" + s[at:]
	}
	return s
}

// dropList strips a layer's list, reporting every entry as ignored.
func (m *merger) dropList(key string, es *[]entry, reason string) {
	for _, e := range *es {
		m.ignored(key, e.V, e.Src, reason)
	}
	*es = nil
}

// dropIgnoreViolations strips a layer's sandbox.ignoreViolations,
// reporting every entry as ignored.
func (m *merger) dropIgnoreViolations(l *layer, reason string) {
	for cmd, es := range l.ignoreViolations {
		m.dropList("sandbox.ignoreViolations."+cmd, &es, reason)
	}
	l.ignoreViolations = nil
}

// boolSwitch is a layer's switch and the value that tightens the sandbox.
type boolSwitch struct {
	key       string
	s         **setting[bool]
	tightened bool
}

// dropLoosening strips from a layer the switches set the way that loosens
// the sandbox, reporting them as ignored.
func (m *merger) dropLoosening(switches []boolSwitch, reason string) {
	for _, b := range switches {
		if s := *b.s; s != nil && s.V != b.tightened {
			m.ignored(b.key, strconv.FormatBool(s.V), s.Src, reason)
			*b.s = nil
		}
	}
}

// managedDenyRead drops the allowRead entries that would re-open a path
// the managed settings deny: allowRead re-opens inside denyRead, but
// nothing below the managed settings may loosen them.
func (m *merger) managedDenyRead() {
	var keep []entry
	for _, a := range m.lists["sandbox.filesystem.allowRead"] {
		denied := slices.ContainsFunc(m.lists["sandbox.filesystem.denyRead"], func(d entry) bool {
			// a inside d, or a glob that could reach into d; or d inside a
			// (an allowRead re-opens every denied path below it).
			return d.Src.Scope == ScopeManaged && a.Src.Scope != ScopeManaged &&
				(reaches(a.V, d.V) || reaches(d.V, a.V))
		})
		if denied {
			reason := "it would re-open a path the managed settings deny"
			if IsGlob(a.V) {
				reason = "it could match in a path the managed settings deny (a glob's matches are known only when the run starts)"
			}
			m.ignored("sandbox.filesystem.allowRead", a.V, a.Src, reason)
			continue
		}
		keep = append(keep, a)
	}
	m.lists["sandbox.filesystem.allowRead"] = keep
}

// workspaceLocks applies Claude Code's locks on a workspace's settings
// that hold whether or not the sandbox is admin-required: with a denyRead
// in the managed settings or a --settings file, a workspace's allowRead
// and allowWrite (what Edit allow rules and additionalDirectories open
// included) at or under a path the user's, --settings or managed settings
// deny reading, or a glob that could match in one, are ignored; with a
// strictAllowlist in those settings, so are a workspace's allowedDomains
// (WebFetch allow rules' hosts included).
func (m *merger) workspaceLocks(layers []*layer) {
	above := func(sc Scope) bool { return sc == ScopeManaged || sc == ScopeFlag || sc == ScopeUser }
	repo := func(e entry) bool { return e.Src.Scope == ScopeProject || e.Src.Scope == ScopeLocal }
	denyLock, strict := "", ""
	for _, l := range layers {
		if (l.scope == ScopeManaged || l.scope == ScopeFlag) && len(l.denyRead) > 0 && denyLock == "" {
			denyLock = l.denyRead[0].Src.String()
		}
		if above(l.scope) && l.strictAllowlist != nil && l.strictAllowlist.V {
			strict = l.strictAllowlist.Src.String()
		}
	}
	if denyLock != "" {
		for _, key := range []string{"sandbox.filesystem.allowRead", "sandbox.filesystem.allowWrite"} {
			m.lists[key] = slices.DeleteFunc(m.lists[key], func(a entry) bool {
				if !repo(a) {
					return false
				}
				hit := slices.ContainsFunc(m.lists["sandbox.filesystem.denyRead"], func(d entry) bool {
					return above(d.Src.Scope) && (reaches(a.V, d.V) || key == "sandbox.filesystem.allowRead" && reaches(d.V, a.V))
				})
				if hit {
					m.ignored(key, a.V, a.Src, "a workspace may not re-open a path the user's, --settings or managed settings deny reading (as in Claude Code, with a denyRead at "+denyLock+")")
				}
				return hit
			})
		}
	}
	if strict != "" {
		key := "sandbox.network.allowedDomains"
		m.lists[key] = slices.DeleteFunc(m.lists[key], func(e entry) bool {
			if repo(e) {
				m.ignored(key, e.V, e.Src, "strictAllowlist ("+strict+") takes the allowlist from the user's, --settings and managed settings only, as in Claude Code")
				return true
			}
			return false
		})
	}
}

// restrictiveness orders modes, as named, from the most restrictive. Of
// the workspace-write modes, Claude Code's dontAsk denies what it would
// ask and its default asks before a file edit, which acceptEdits (and
// cordon's workspace-write) allow.
func restrictiveness(name string) int {
	m, _ := ParseMode(name)
	r := 10 * map[Mode]int{ReadOnly: 0, Prompt: 1, WorkspaceWrite: 2, DangerFullAccess: 3, Allow: 4}[m]
	if m == WorkspaceWrite {
		switch strings.ToLower(name) {
		case "dontask":
			r -= 2
		case "default", "manual":
			r--
		}
	}
	return r
}

// apply merges a layer over what is there: lists are unioned, scalars
// replaced.
func (m *merger) apply(l *layer) {
	if m.lists == nil {
		m.lists = map[string][]entry{}
		m.flags = map[string]*setting[bool]{}
		m.ports = map[string]*setting[int]{}
		m.strs = map[string]*setting[string]{}
		m.envSet = map[string]setting[string]{}
		m.ignore = map[string][]entry{}
		m.hooks = map[string]*setting[Hook]{}
		m.rulePaths = map[string]string{}
	}
	for r, p := range l.rulePaths {
		m.rulePaths[l.file+"\x00"+r] = p
	}
	// A rule is the same rule only if it names the same path: "Read(/x)"
	// is relative to the project of the file that holds it.
	rulePath := func(e entry) string { return m.rulePaths[e.Src.File+"\x00"+e.V] }
	list := func(key string, es []entry) {
		for _, e := range es {
			i := slices.IndexFunc(m.lists[key], func(x entry) bool { return x.V == e.V && rulePath(x) == rulePath(e) })
			switch {
			case i < 0:
				m.lists[key] = append(m.lists[key], e)
			case e.Src.Scope == ScopeManaged && m.lists[key][i].Src.Scope != ScopeManaged:
				// The managed settings' entry must stay theirs when a
				// source below names it too (the default policy, or the
				// user to defeat it): their locks and denials go by it.
				m.lists[key][i].Src = e.Src
			}
		}
	}
	list("sandbox.excludedCommands", l.excludedCommands)
	list("sandbox.network.allowedDomains", l.allowedDomains)
	list("sandbox.network.deniedDomains", l.deniedDomains)
	list("sandbox.network.deniedResolvedAddresses", l.deniedAddresses)
	list("sandbox.network.stripResponseHeaders", l.stripResponseHeaders)
	list("sandbox.network.allowMachLookup", l.machLookup)
	list(denyAllDomainsKey, l.denyAllDomains)
	list("sandbox.network.allowUnixSockets", l.unixSockets)
	list("sandbox.filesystem.allowRead", l.allowRead)
	list("sandbox.filesystem.denyRead", l.denyRead)
	list("sandbox.filesystem.allowWrite", l.allowWrite)
	list("sandbox.filesystem.allowWrite", l.additionalDirs)
	list("sandbox.filesystem.denyWrite", l.denyWrite)
	list("permissions.allow", l.permAllow)
	list("permissions.deny", l.permDeny)
	list("permissions.ask", l.permAsk)
	list("cordon.env.deny", l.envDeny)
	list("cordon.env.allow", l.envAllow)
	for cmd, es := range l.ignoreViolations {
		for _, e := range es {
			if !slices.ContainsFunc(m.ignore[cmd], func(x entry) bool { return x.V == e.V }) {
				m.ignore[cmd] = append(m.ignore[cmd], e)
			}
		}
	}
	maps.Copy(m.envSet, l.envSet)
	for key, s := range map[string]*setting[bool]{
		"sandbox.enabled": l.enabled, "sandbox.failIfUnavailable": l.failIfUnavailable,
		"sandbox.autoAllowBashIfSandboxed": l.autoAllowBash, "sandbox.allowUnsandboxedCommands": l.allowUnsandboxed,
		"sandbox.network.allowAllUnixSockets": l.allowAllUnixSockets, "sandbox.network.allowLocalBinding": l.allowLocalBinding,
		"sandbox.filesystem.allowGitConfig": l.allowGitConfig, "sandbox.enableWeakerNestedSandbox": l.weakerNested,
		"sandbox.allowNestedUserNamespaces": l.nestedUserNS, "cordon.allowSocketpair": l.allowSocketpair,
		"cordon.allowManagedDomainsOnly": l.managedDomainsOnly, "cordon.allowManagedReadPathsOnly": l.managedReadOnly,
		"cordon.allowManagedWritePathsOnly": l.managedWriteOnly, "cordon.allowManagedPermissionRulesOnly": l.managedPermissionsOnly,
		"sandbox.network.strictAllowlist": l.strictAllowlist, "cordon.serve": l.serve,
		"cordon.requireFullSandbox": l.requireFull, "cordon.containerMode": l.containerMode,
		"cordon.acceptUnconfined": l.acceptUnconfined, "sandbox.enableWeakerNetworkIsolation": l.weakerNetwork, "cordon.caches.enabled": l.caches,
		"sandbox.network.requireHostMatch": l.requireHostMatch, "sandbox.network.refuseOpaqueTunnels": l.refuseOpaqueTunnels,
		"cordon.syscallGuard": l.syscallGuard,
	} {
		if s == nil {
			continue
		}
		if prev := m.flags[key]; key == "sandbox.allowUnsandboxedCommands" && s.V && prev != nil && !prev.V &&
			prev.Src.Scope == ScopeUser && (l.scope == ScopeProject || l.scope == ScopeLocal) {
			// Claude Code keeps the user's false over a workspace's true.
			m.ignored(key, "true", s.Src, "false in the user's settings ("+prev.Src.String()+") holds over a workspace's true, as in Claude Code")
			continue
		}
		m.flags[key] = s
	}
	for key, s := range map[string]*setting[int]{
		"cordon.httpProxyPort": l.httpProxyPort, "cordon.socksProxyPort": l.socksProxyPort,
		"sandbox.network.httpProxyPort": l.externalHTTPPort, "sandbox.network.socksProxyPort": l.externalSOCKSPort,
	} {
		if s != nil {
			m.ports[key] = s
		}
	}
	for k, v := range l.deniedReasons {
		if m.reasons == nil {
			m.reasons = map[string]setting[string]{}
		}
		m.reasons[k] = v
	}
	if l.mitmProxy != nil {
		m.mitm = l.mitmProxy
	}
	if l.tlsTerminate != nil {
		m.tls = l.tlsTerminate
	}
	m.notices = append(m.notices, l.notices...)
	for key, s := range map[string]*setting[string]{
		"permissions.disableBypassPermissionsMode": l.disableBypass, "cordon.askCommand": l.askCommand,
		"permissions.disableAutoMode": l.disableAuto, "sandbox.network.parentProxy.http": l.parentHTTP,
		"sandbox.network.parentProxy.https": l.parentHTTPS, "sandbox.network.parentProxy.noProxy": l.parentNoProxy,
	} {
		if s != nil {
			m.strs[key] = s
		}
	}
	for key, h := range map[string]*setting[Hook]{"cordon.hooks.preDecision": l.preDecision, "cordon.hooks.postRun": l.postRun} {
		if h != nil {
			m.hooks[key] = h
		}
	}
	// permissions.defaultMode and cordon.mode name the same thing; in one
	// file cordon's wins.
	if l.defaultMode != nil {
		m.mode = l.defaultMode
	}
	if l.mode != nil {
		m.mode = l.mode
	}
	set64 := func(dst **setting[int64], v *setting[int64]) {
		if v != nil {
			*dst = v
		}
	}
	// A memory limit in bytes and one as a share replace each other, except
	// in an untrusted layer, which may only add the one beside the other.
	if l.memory != nil && !l.tightenOnly {
		m.limits.memoryPercent = nil
	}
	if l.memoryPercent != nil {
		m.limits.memoryPercent = l.memoryPercent
		if !l.tightenOnly {
			m.limits.memory = nil
		}
	}
	set64(&m.limits.memory, l.memory)
	set64(&m.limits.pids, l.pids)
	set64(&m.limits.outputLimit, l.outputLimit)
	set64(&m.limits.fileSize, l.fileSize)
	set64(&m.limits.openFiles, l.openFiles)
	set64(&m.limits.tmpSize, l.tmpSize)
	set64(&m.caches.maxSize, l.cachesMaxSize)
	if l.cachesMaxAge != nil {
		m.caches.maxAge = l.cachesMaxAge
	}
	if l.cpus != nil {
		m.limits.cpus = l.cpus
	}
	if l.timeout != nil {
		m.limits.timeout = l.timeout
	}
	for _, ig := range l.ignored {
		key, reason, _ := strings.Cut(ig.V, ": ")
		m.ignored(key, ig.Rule, ig.Src, reason)
	}
	m.creds.apply(l)
}

// finish applies the managed locks and fills the Policy and the Report.
func (m *merger) finish(layers []*layer) {
	p, rep := m.p, m.rep
	locked := func(key string) bool { s := m.flags[key]; return s != nil && s.V && s.Src.Scope == ScopeManaged }
	managedOnly := func(listKey, lockKey string) {
		if !locked(lockKey) {
			return
		}
		var keep []entry
		for _, e := range m.lists[listKey] {
			if e.Src.Scope == ScopeManaged || e.Src.Scope == ScopeDefault {
				keep = append(keep, e)
			} else {
				m.ignored(listKey, e.V, e.Src, lockKey+" is set by the managed settings")
			}
		}
		m.lists[listKey] = keep
	}
	managedOnly("sandbox.network.allowedDomains", "cordon.allowManagedDomainsOnly")
	if locked("cordon.allowManagedDomainsOnly") {
		// a proxy of the user's would decide instead of the managed
		// allowedDomains
		for _, key := range []string{"sandbox.network.httpProxyPort", "sandbox.network.socksProxyPort"} {
			if s := m.ports[key]; s != nil && s.Src.Scope != ScopeManaged {
				m.ignored(key, strconv.Itoa(s.V), s.Src, "cordon.allowManagedDomainsOnly is set by the managed settings: a proxy of the user's would decide instead of the managed allowedDomains")
				delete(m.ports, key)
			}
		}
	}
	managedOnly("sandbox.filesystem.allowRead", "cordon.allowManagedReadPathsOnly")
	managedOnly("sandbox.filesystem.allowWrite", "cordon.allowManagedWritePathsOnly")
	managedOnly("permissions.allow", "cordon.allowManagedPermissionRulesOnly")
	if locked("cordon.allowManagedPermissionRulesOnly") {
		// What the cut rules would have opened in the sandbox goes with
		// them.
		for _, key := range []string{"sandbox.filesystem.allowRead", "sandbox.filesystem.allowWrite", "sandbox.network.allowedDomains"} {
			m.lists[key] = slices.DeleteFunc(m.lists[key], func(e entry) bool {
				if e.Rule == "" || e.Src.Scope == ScopeManaged || e.Src.Scope == ScopeDefault {
					return false
				}
				m.ignored(key, e.V, e.Src, "cordon.allowManagedPermissionRulesOnly is set by the managed settings (from the rule "+e.Rule+")")
				return true
			})
		}
	}

	m.denyEveryHost()

	m.managedDenyRead()
	m.workspaceLocks(layers)
	m.maskedFiles()

	values := func(key string) []string {
		var out []string
		for _, e := range m.lists[key] {
			out = append(out, e.V)
			rep.Values = append(rep.Values, ValueReport{Key: key, Value: e.V, Source: e.Src.String()})
		}
		return out
	}
	flag := func(key string, def bool) bool {
		s := m.flags[key]
		if s == nil {
			return def
		}
		rep.Values = append(rep.Values, ValueReport{Key: key, Value: strconv.FormatBool(s.V), Source: s.Src.String()})
		return s.V
	}
	p.Filesystem.AllowRead = values("sandbox.filesystem.allowRead")
	p.Filesystem.DenyRead = values("sandbox.filesystem.denyRead")
	p.Filesystem.AllowWrite = values("sandbox.filesystem.allowWrite")
	p.Filesystem.DenyWrite = values("sandbox.filesystem.denyWrite")
	p.Filesystem.AllowGitConfig = flag("sandbox.filesystem.allowGitConfig", false)
	p.Network.AllowedDomains = values("sandbox.network.allowedDomains")
	p.Network.DeniedDomains = values("sandbox.network.deniedDomains")
	p.Network.AllowUnixSockets = values("sandbox.network.allowUnixSockets")
	p.Network.AllowMachLookup = values("sandbox.network.allowMachLookup")
	p.Network.AllowAllUnixSockets = flag("sandbox.network.allowAllUnixSockets", false)
	p.Network.AllowLocalBinding = flag("sandbox.network.allowLocalBinding", false)
	for _, x := range []struct {
		key string
		dst *int
	}{
		{"cordon.httpProxyPort", &p.Network.HTTPProxyPort}, {"cordon.socksProxyPort", &p.Network.SOCKSProxyPort},
		{"sandbox.network.httpProxyPort", &p.Network.ExternalHTTPProxyPort}, {"sandbox.network.socksProxyPort", &p.Network.ExternalSOCKSProxyPort},
	} {
		if s := m.ports[x.key]; s != nil {
			*x.dst = s.V
			rep.Values = append(rep.Values, ValueReport{Key: x.key, Value: strconv.Itoa(s.V), Source: s.Src.String()})
		}
	}
	m.network()
	p.Network.StrictAllowlist = flag("sandbox.network.strictAllowlist", false)
	if s := m.strs["cordon.askCommand"]; s != nil && !p.Network.StrictAllowlist {
		p.Network.AskCommand = s.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.askCommand", Value: s.V, Source: s.Src.String()})
	}
	p.Sandbox.Disabled = !flag("sandbox.enabled", true)
	p.FailIfUnavailable = flag("sandbox.failIfUnavailable", false)
	p.Sandbox.AutoAllowBashIfSandboxed = flag("sandbox.autoAllowBashIfSandboxed", false)
	p.Sandbox.AllowUnsandboxedCommands = flag("sandbox.allowUnsandboxedCommands", false)
	p.Sandbox.EnableWeakerNestedSandbox = flag("sandbox.enableWeakerNestedSandbox", false)
	p.Sandbox.AllowNestedUserNamespaces = flag("sandbox.allowNestedUserNamespaces", false)
	p.Sandbox.EnableWeakerNetworkIsolation = flag("sandbox.enableWeakerNetworkIsolation", false)
	p.Sandbox.AllowSocketpair = flag("cordon.allowSocketpair", true)
	p.Serve = flag("cordon.serve", m.serveDefault)
	p.Sandbox.RequireFull = flag("cordon.requireFullSandbox", false)
	p.Sandbox.ContainerMode = flag("cordon.containerMode", false)
	p.Sandbox.AcceptUnconfined = flag("cordon.acceptUnconfined", false)
	p.Caches = Caches{Enabled: flag("cordon.caches.enabled", true), MaxSize: DefaultCachesMaxSize, MaxAge: DefaultCachesMaxAge}
	if s := m.caches.maxSize; s != nil {
		p.Caches.MaxSize = s.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.caches.maxSize", Value: strconv.FormatInt(s.V, 10), Source: s.Src.String()})
	}
	if s := m.caches.maxAge; s != nil {
		p.Caches.MaxAge = s.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.caches.maxAge", Value: s.V.String(), Source: s.Src.String()})
	}
	p.SyscallGuard = flag("cordon.syscallGuard", true)
	p.Sandbox.ExcludedCommands = values("sandbox.excludedCommands")
	if len(m.ignore) > 0 {
		p.Sandbox.IgnoreViolations = map[string][]string{}
		for cmd, es := range m.ignore {
			for _, e := range es {
				p.Sandbox.IgnoreViolations[cmd] = append(p.Sandbox.IgnoreViolations[cmd], e.V)
			}
		}
	}
	rules := func(key string) []Rule {
		var out []Rule
		values(key)
		for _, e := range m.lists[key] {
			r, _ := ParseRule(e.V)
			r.Path = m.rulePaths[e.Src.File+"\x00"+e.V]
			out = append(out, r)
		}
		return out
	}
	p.Permissions.Allow = rules("permissions.allow")
	p.Permissions.Deny = rules("permissions.deny")
	p.Permissions.Ask = rules("permissions.ask")
	if s := m.strs["permissions.disableBypassPermissionsMode"]; s != nil {
		p.Permissions.DisableBypass = true
		rep.Values = append(rep.Values, ValueReport{Key: "permissions.disableBypassPermissionsMode", Value: s.V, Source: s.Src.String()})
	}
	if s := m.strs["permissions.disableAutoMode"]; s != nil {
		p.Permissions.DisableAuto = true
		rep.Values = append(rep.Values, ValueReport{Key: "permissions.disableAutoMode", Value: s.V, Source: s.Src.String()})
	}
	if m.mode != nil {
		p.Mode, _ = ParseMode(m.mode.V)
		p.ModeName = m.mode.V
		if p.Mode == Allow && p.Permissions.DisableBypass {
			m.ignored("mode", m.mode.V, m.mode.Src, "permissions.disableBypassPermissionsMode forbids it")
			p.Mode, p.ModeName = WorkspaceWrite, "default"
		} else if strings.EqualFold(m.mode.V, "auto") && p.Permissions.DisableAuto {
			m.ignored("mode", m.mode.V, m.mode.Src, "permissions.disableAutoMode forbids it")
			p.Mode, p.ModeName = WorkspaceWrite, "default"
		} else {
			rep.Values = append(rep.Values, ValueReport{Key: "mode", Value: m.mode.V, Source: m.mode.Src.String()})
		}
	}
	for _, x := range []struct {
		key string
		dst **Hook
	}{{"cordon.hooks.preDecision", &p.Hooks.PreDecision}, {"cordon.hooks.postRun", &p.Hooks.PostRun}} {
		if h := m.hooks[x.key]; h != nil {
			hook := h.V
			*x.dst = &hook
			rep.Values = append(rep.Values, ValueReport{Key: x.key, Value: fmt.Sprintf("%s (timeout %v)", strings.Join(h.V.Args, " "), h.V.Timeout), Source: h.Src.String()})
		}
	}
	p.Env.Deny = values("cordon.env.deny")
	p.Env.Allow = values("cordon.env.allow")
	for _, k := range slices.Sorted(maps.Keys(m.envSet)) {
		if p.Env.Set == nil {
			p.Env.Set = map[string]string{}
		}
		v := m.envSet[k]
		p.Env.Set[k] = v.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.env.set." + k, Value: v.V, Source: v.Src.String()})
	}
	lim := &m.limits
	for _, x := range []struct {
		key string
		s   *setting[int64]
		dst *int64
	}{
		{"cordon.limits.memory", lim.memory, &p.Limits.Memory}, {"cordon.limits.pids", lim.pids, &p.Limits.Pids},
		{"cordon.limits.outputLimit", lim.outputLimit, &p.Limits.OutputLimit}, {"cordon.limits.fileSize", lim.fileSize, &p.Limits.FileSize},
		{"cordon.limits.openFiles", lim.openFiles, &p.Limits.OpenFiles}, {"cordon.limits.tmpSize", lim.tmpSize, &p.Limits.TmpSize},
	} {
		if x.s != nil {
			*x.dst = x.s.V
			rep.Values = append(rep.Values, ValueReport{Key: x.key, Value: strconv.FormatInt(x.s.V, 10), Source: x.s.Src.String()})
		}
	}
	if lim.memoryPercent != nil {
		p.Limits.MemoryPercent = lim.memoryPercent.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.limits.memory", Value: fmt.Sprintf("%g%%", lim.memoryPercent.V), Source: lim.memoryPercent.Src.String()})
	}
	if lim.cpus != nil {
		p.Limits.CPUs = lim.cpus.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.limits.cpus", Value: fmt.Sprint(lim.cpus.V), Source: lim.cpus.Src.String()})
	}
	if lim.timeout != nil {
		p.Limits.Timeout = lim.timeout.V
		rep.Values = append(rep.Values, ValueReport{Key: "cordon.limits.timeout", Value: lim.timeout.V.String(), Source: lim.timeout.Src.String()})
	}
	rep.Notes = append(rep.Notes,
		"reads are allowed everywhere but denyRead; an allowRead inside a denyRead re-opens that path (allowRead wins)",
		"writes are allowed only in the workspace and allowWrite; a denyWrite inside an allowWrite closes that path (denyWrite wins)",
		"always read-only in every writable root, whatever the settings: "+strings.Join(ProtectedInWritable, ", "),
	)
	if !p.Trusted {
		rep.Notes = append(rep.Notes, "the workspace is not trusted: its own settings files may only tighten the sandbox (cordon trust "+p.Workspace+")")
	}
}

// denyEveryHost applies WebFetch(domain:*) (or deniedDomains "*") in a
// deny list: Claude Code's sandbox then reaches no host, so the
// allowedDomains and the askCommand go.
func (m *merger) denyEveryHost() {
	all := m.lists[denyAllDomainsKey]
	if len(all) == 0 {
		return
	}
	reason := "deniedDomains \"*\" (" + all[0].Src.String() + ") denies every host"
	if all[0].Rule != "" {
		reason = "the deny rule " + all[0].Rule + " (" + all[0].Src.String() + ") denies every host"
		if all[0].V != "*" {
			reason += " cordon's proxy can tell from " + all[0].V
		}
	}
	for _, e := range m.lists["sandbox.network.allowedDomains"] {
		m.ignored("sandbox.network.allowedDomains", e.V, e.Src, reason)
	}
	m.lists["sandbox.network.allowedDomains"] = nil
	for _, key := range []string{"sandbox.network.httpProxyPort", "sandbox.network.socksProxyPort"} {
		if s := m.ports[key]; s != nil {
			m.ignored(key, strconv.Itoa(s.V), s.Src, reason)
			delete(m.ports, key)
		}
	}
	if s := m.strs["cordon.askCommand"]; s != nil {
		m.ignored("cordon.askCommand", s.V, s.Src, reason)
		delete(m.strs, "cordon.askCommand")
	}
}

// network fills the rest of the Policy's network (sandbox-runtime's keys
// beyond the lists and the ports) and says what the proxies of the
// user's change.
func (m *merger) network() {
	p, rep := m.p, m.rep
	n := &p.Network
	for _, e := range m.lists["sandbox.network.deniedResolvedAddresses"] {
		n.DeniedResolvedAddresses = append(n.DeniedResolvedAddresses, e.V)
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.network.deniedResolvedAddresses", Value: e.V, Source: e.Src.String()})
	}
	for _, e := range m.lists["sandbox.network.stripResponseHeaders"] {
		n.StripResponseHeaders = append(n.StripResponseHeaders, e.V)
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.network.stripResponseHeaders", Value: e.V, Source: e.Src.String()})
	}
	for _, k := range slices.Sorted(maps.Keys(m.reasons)) {
		if n.DeniedDomainReasons == nil {
			n.DeniedDomainReasons = map[string]string{}
		}
		v := m.reasons[k]
		n.DeniedDomainReasons[k] = v.V
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.network.deniedDomainReasons." + k, Value: v.V, Source: v.Src.String()})
	}
	for _, x := range []struct {
		key string
		dst *string
	}{
		{"sandbox.network.parentProxy.http", &n.ParentProxy.HTTP}, {"sandbox.network.parentProxy.https", &n.ParentProxy.HTTPS},
		{"sandbox.network.parentProxy.noProxy", &n.ParentProxy.NoProxy},
	} {
		if s := m.strs[x.key]; s != nil {
			*x.dst = s.V
			rep.Values = append(rep.Values, ValueReport{Key: x.key, Value: redactProxyURL(s.V), Source: s.Src.String()})
		}
	}
	if m.tls != nil {
		tt := m.tls.V
		n.TLSTerminate = &tt
		what := "every allowed host's tunnels, with an ephemeral CA"
		if tt.CACertPath != "" {
			what = "every allowed host's tunnels, with the CA " + tt.CACertPath
		}
		if len(tt.ExcludeDomains) > 0 {
			what += ", but " + strings.Join(tt.ExcludeDomains, ", ")
		}
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.network.tlsTerminate", Value: what, Source: m.tls.Src.String()})
	}
	if m.mitm != nil {
		mp := m.mitm.V
		n.MitmProxy = &mp
		rep.Values = append(rep.Values, ValueReport{Key: "sandbox.network.mitmProxy", Value: mp.SocketPath + " for " + strings.Join(mp.Domains, ", "), Source: m.mitm.Src.String()})
	}
	for _, key := range []string{"sandbox.network.requireHostMatch", "sandbox.network.refuseOpaqueTunnels"} {
		if s := m.flags[key]; s != nil {
			rep.Values = append(rep.Values, ValueReport{Key: key, Value: strconv.FormatBool(s.V), Source: s.Src.String()})
		}
	}
	n.RequireHostMatch = m.flags["sandbox.network.requireHostMatch"] != nil && m.flags["sandbox.network.requireHostMatch"].V
	n.RefuseOpaqueTunnels = m.flags["sandbox.network.refuseOpaqueTunnels"] != nil && m.flags["sandbox.network.refuseOpaqueTunnels"].V
	for _, e := range m.notices {
		rep.Notices = append(rep.Notices, e.V)
	}
	for _, x := range []struct {
		key, what string
		port      int
	}{{"sandbox.network.httpProxyPort", "HTTP", n.ExternalHTTPProxyPort}, {"sandbox.network.socksProxyPort", "SOCKS", n.ExternalSOCKSProxyPort}} {
		if x.port != 0 {
			rep.Notices = append(rep.Notices, fmt.Sprintf("%s %d (%s): cordon starts no %s proxy of its own; the sandbox's %s port leads to your proxy at 127.0.0.1:%d, which decides what it reaches (cordon's allowedDomains and deniedDomains do not apply there)",
				x.key, x.port, m.ports[x.key].Src, x.what, x.what, x.port))
		}
	}
}

// reaches reports whether pattern a names something within what pattern
// d names, or is a glob that could match there.
func reaches(a, d string) bool {
	return patternWithin(a, d) || IsGlob(a) && couldReopen(a, d)
}

// patternWithin reports whether everything pattern a names lies within
// what pattern d names (d's matches or below them).
func patternWithin(a, d string) bool {
	if MatchPattern(d, UnescapePattern(a)) {
		return true
	}
	for dir := UnescapePattern(a); dir != "/" && dir != "."; {
		if MatchPattern(d, dir) {
			return true
		}
		next := dir[:max(strings.LastIndex(dir, "/"), 1)]
		if next == dir {
			break
		}
		dir = next
	}
	return false
}

// couldReopen reports whether the glob a could match a path that pattern d
// names or one below it: a glob's matches are known only when the run
// starts, so one that could reach into what the managed settings deny is
// refused whole. Element by element, where neither is "**": two literal
// elements must be equal, a literal must match the other's pattern, and
// two patterns are taken to overlap.
func couldReopen(a, d string) bool {
	if strings.Contains(a, "{") || strings.Contains(d, "{") {
		// {x,y/z} may hold a slash: compare where the walks start.
		ab, db := PatternBase(a), PatternBase(d)
		if !IsGlob(d) {
			db = UnescapePattern(d)
		}
		return paths.Under(db, ab) || paths.Under(ab, db)
	}
	ae := strings.Split(strings.TrimPrefix(a, "/"), "/")
	de := strings.Split(strings.TrimPrefix(d, "/"), "/")
	for i, de := range de {
		if i >= len(ae) {
			// a's matches lie above d's.
			return false
		}
		x := ae[i]
		switch xg, yg := IsGlob(x), IsGlob(de); {
		case x == "**" || de == "**":
			return true
		case !xg && !yg:
			if UnescapePattern(x) != UnescapePattern(de) {
				return false
			}
		case !xg:
			if !MatchPattern(de, UnescapePattern(x)) {
				return false
			}
		case !yg:
			if !MatchPattern(x, UnescapePattern(de)) {
				return false
			}
		}
	}
	return true
}
