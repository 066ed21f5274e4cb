package policy

import (
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// network reads the sandbox's network block (sandbox-runtime's network
// object, Claude Code's sandbox.network): every key of sandbox-runtime
// 0.0.83 with its meaning, or, where cordon differs on purpose, refused
// or noted with the reason.
func (d *decoder) network(n *node, path string) error {
	keys := []string{"allowedDomains", "deniedDomains", "deniedDomainReasons", "deniedResolvedAddresses",
		"allowUnixSockets", "allowAllUnixSockets", "allowLocalBinding", "httpProxyPort", "socksProxyPort",
		"allowManagedDomainsOnly", "strictAllowlist", "parentProxy", "mitmProxy", "stripResponseHeaders",
		"requireHostMatch", "refuseOpaqueTunnels", "allowPlaintextHeaderSet", "ambiguousRequestTarget",
		"filterRequest", "allowMachLookup", "tlsTerminate", "allowAllDomains"}
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	l := d.l
	note := func(key string, pos Pos, reason string) {
		l.ignored = append(l.ignored, entry{V: path + "." + key + ": " + reason, Src: d.src(pos)})
	}
	return o.each(keys, func(key string, v *node) error {
		var err error
		name := path + "." + key
		switch key {
		case "allowedDomains":
			var es []entry
			es, err = d.strings(v, name, CheckDomainPattern)
			l.allowedDomains = append(l.allowedDomains, es...)
		case "deniedDomains":
			var es []entry
			es, err = d.strings(v, name, CheckDenyPattern)
			for _, e := range es {
				if e.V == "*" {
					// sandbox-runtime's deny-all
					l.denyAllDomains = append(l.denyAllDomains, e)
				} else {
					l.deniedDomains = append(l.deniedDomains, e)
				}
			}
		case "deniedDomainReasons":
			err = d.deniedReasons(v, name)
		case "deniedResolvedAddresses":
			var es []entry
			es, err = d.strings(v, name, CheckAddressRange)
			l.deniedAddresses = append(l.deniedAddresses, es...)
		case "allowUnixSockets":
			var es []entry
			es, err = d.strings(v, name, func(s string) (string, error) { return d.pathDir(s) })
			l.unixSockets = append(l.unixSockets, es...)
		case "allowAllUnixSockets":
			l.allowAllUnixSockets, err = d.boolean(v, name)
		case "allowLocalBinding":
			l.allowLocalBinding, err = d.boolean(v, name)
		case "httpProxyPort", "socksProxyPort":
			var port *setting[int]
			if port, err = d.port(v, name); err != nil {
				return err
			}
			own, external := &l.httpProxyPort, &l.externalHTTPPort
			if key == "socksProxyPort" {
				own, external = &l.socksProxyPort, &l.externalSOCKSPort
			}
			if d.format == formatCordon {
				// the old spelling in cordon's own files: the port of
				// cordon's proxy inside the sandbox
				*own = port
				l.notices = append(l.notices, entry{V: fmt.Sprintf("%s in cordon's own settings (%s) is deprecated: it is the port of cordon's proxy inside the sandbox, now cordon.%s; in sandbox-runtime's and Claude Code's settings it names a proxy of your own", name, port.Src, key), Src: port.Src})
			} else {
				*external = port
			}
		case "allowManagedDomainsOnly":
			err = d.claudeLock(v, name, &l.managedDomainsOnly)
		case "strictAllowlist":
			l.strictAllowlist, err = d.boolean(v, name)
		case "parentProxy":
			err = d.parentProxy(v, name)
		case "mitmProxy":
			err = d.mitmProxy(v, name)
		case "stripResponseHeaders":
			var es []entry
			es, err = d.strings(v, name, checkFieldName)
			l.stripResponseHeaders = append(l.stripResponseHeaders, es...)
		case "requireHostMatch":
			l.requireHostMatch, err = d.boolean(v, name)
		case "refuseOpaqueTunnels":
			l.refuseOpaqueTunnels, err = d.boolean(v, name)
		case "allowPlaintextHeaderSet":
			if _, err = d.boolean(v, name); err == nil {
				note(key, v.pos, "it applies to what sandbox-runtime's filterRequest callback sets, and no settings file can set one")
			}
		case "ambiguousRequestTarget":
			var s *setting[string]
			if s, err = d.str(v, name); err != nil {
				return err
			}
			if s.V != "refuse" && s.V != "asSpelled" && s.V != "normalize" {
				return d.errAt(v.pos, `%s must be "refuse", "asSpelled" or "normalize", not %q`, name, s.V)
			}
			note(key, v.pos, "it applies while sandbox-runtime's filterRequest callback is set, and no settings file can set one; cordon forwards a target as the client spelled it")
		case "filterRequest":
			return d.errAt(v.pos, "%s is a function of sandbox-runtime's library (a callback), not a settings value: remove it", name)
		case "allowMachLookup":
			var es []entry
			es, err = d.strings(v, name, checkMachService)
			l.machLookup = append(l.machLookup, es...)
		case "tlsTerminate":
			err = d.tlsTerminate(v, name)
		case "allowAllDomains":
			var b *setting[bool]
			if b, err = d.boolean(v, name); err == nil && b.V {
				note(key, v.pos, "cordon's proxy allows named domains only (list them in allowedDomains)")
			}
		}
		return err
	})
}

// CheckDenyPattern validates a deniedDomains entry: a pattern of
// CheckDomainPattern, or "*" (every host) and "*:PORT" (every host on
// that port), as sandbox-runtime takes them.
func CheckDenyPattern(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	if ps, ok := strings.CutPrefix(s, "*:"); ok {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 || ps != strconv.Itoa(n) {
			return "", fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		return s, nil
	}
	return CheckDomainPattern(s)
}

// CheckAddressRange validates a deniedResolvedAddresses entry: an IP
// address or a CIDR range, IPv6 without brackets; it returns its
// canonical form.
func CheckAddressRange(s string) (string, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return "", fmt.Errorf("%q is not an IP address or CIDR range (as 10.0.0.0/8 or fc00::/7)", s)
		}
		return p.Masked().String(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("%q is not an IP address or CIDR range (as 10.0.0.0/8 or 192.168.1.10; IPv6 without brackets)", s)
	}
	return a.String(), nil
}

// checkMachService validates an allowMachLookup entry: a Mach service's
// name, or a prefix of names ending in "*" ("*" alone: every service), as
// sandbox-runtime takes them.
func checkMachService(s string) (string, error) {
	prefix, _ := strings.CutSuffix(s, "*")
	if strings.Contains(prefix, "*") {
		return "", fmt.Errorf("%q: a wildcard is only a single trailing \"*\" (\"com.example.*\", or \"*\" for every service)", s)
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return "", fmt.Errorf("%q is not a Mach service name", s)
	}
	return s, nil
}

// checkFieldName validates an HTTP field name.
func checkFieldName(s string) (string, error) {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return "", fmt.Errorf("%q is not a header name", s)
		}
	}
	return s, nil
}

// deniedReasons reads deniedDomainReasons: a reason, for people, for a
// deniedDomains entry. A key is matched against the entries as cordon
// writes them (lower case, IDNA); one that matches none never applies.
func (d *decoder) deniedReasons(n *node, path string) error {
	o, err := d.object(n, path, false)
	if err != nil {
		return err
	}
	for _, m := range o.n.members {
		if m.value.kind != kindString || strings.TrimSpace(m.value.text) == "" {
			return d.errAt(m.value.pos, "%s.%s must be a reason (a non-empty string)", path, m.key)
		}
		key := m.key
		if k, err := CheckDenyPattern(key); err == nil {
			key = k
		}
		if d.l.deniedReasons == nil {
			d.l.deniedReasons = map[string]setting[string]{}
		}
		d.l.deniedReasons[key] = setting[string]{m.value.text, d.src(m.value.pos)}
	}
	return nil
}

// parentProxy reads sandbox-runtime's parentProxy: the upstream proxy
// cordon's proxy goes through, for plain HTTP (http) and for tunnels
// (https), and what goes directly (noProxy, a NO_PROXY list).
func (d *decoder) parentProxy(n *node, path string) error {
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	return o.each([]string{"http", "https", "noProxy"}, func(key string, v *node) error {
		s, err := d.str(v, path+"."+key)
		if err != nil {
			return err
		}
		switch key {
		case "http", "https":
			if err := checkProxyURL(s.V); err != nil {
				return d.errAt(v.pos, "%s.%s: %v", path, key, err)
			}
			if key == "http" {
				d.l.parentHTTP = s
			} else {
				d.l.parentHTTPS = s
			}
		case "noProxy":
			d.l.parentNoProxy = s
		}
		return nil
	})
}

// checkProxyURL validates an upstream proxy's URL: http:// or https://
// (or no scheme, which is http://), a host, an optional port, user and
// password, nothing else.
func checkProxyURL(s string) error {
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("an upstream proxy is http:// or https://, not %s://", u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("no host")
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("an upstream proxy's URL has no path or query")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the port must be a number from 1 to 65535")
		}
	}
	return nil
}

// mitmProxy reads sandbox-runtime's mitmProxy: a proxy on a unix socket
// that the requests to some domains go through (after cordon's own
// decisions).
func (d *decoder) mitmProxy(n *node, path string) error {
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	var m MitmProxy
	if err := o.each([]string{"socketPath", "domains"}, func(key string, v *node) error {
		switch key {
		case "socketPath":
			s, err := d.str(v, path+".socketPath")
			if err != nil {
				return err
			}
			if !filepath.IsAbs(s.V) {
				return d.errAt(v.pos, "%s.socketPath must be an absolute path, not %q", path, s.V)
			}
			m.SocketPath = filepath.Clean(s.V)
		case "domains":
			es, err := d.strings(v, path+".domains", CheckDomainPattern)
			if err != nil {
				return err
			}
			for _, e := range es {
				m.Domains = append(m.Domains, e.V)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if m.SocketPath == "" || len(m.Domains) == 0 {
		return d.errAt(n.pos, "%s needs a socketPath and at least one entry in domains", path)
	}
	d.l.mitmProxy = &setting[MitmProxy]{m, d.src(n.pos)}
	return nil
}

// tlsTerminate reads sandbox-runtime's tlsTerminate: cordon's proxy ends
// the TLS of every tunnel to an allowed host (but excludeDomains'), with
// the CA of caCertPath and caKeyPath or an ephemeral one.
func (d *decoder) tlsTerminate(n *node, path string) error {
	o, err := d.object(n, path, true)
	if err != nil {
		return err
	}
	var tt TLSTerminate
	file := func(v *node, key string) (string, error) {
		s, err := d.str(v, key)
		if err != nil {
			return "", err
		}
		if s.V == "" {
			return "", d.errAt(v.pos, "%s is empty", key)
		}
		abs, err := d.srtPathDir(EscapePattern(s.V))
		if err != nil {
			return "", d.errAt(v.pos, "%s: %v", key, err)
		}
		return UnescapePattern(abs), nil
	}
	keys := []string{"caCertPath", "caKeyPath", "excludeDomains", "extraCaCertPaths", "maxTunnels", "handshakeTimeoutMs"}
	if err := o.each(keys, func(key string, v *node) error {
		name := path + "." + key
		var err error
		switch key {
		case "caCertPath":
			tt.CACertPath, err = file(v, name)
		case "caKeyPath":
			tt.CAKeyPath, err = file(v, name)
		case "excludeDomains":
			var es []entry
			es, err = d.strings(v, name, CheckDomainPattern)
			for _, e := range es {
				tt.ExcludeDomains = append(tt.ExcludeDomains, e.V)
			}
		case "extraCaCertPaths":
			if v.kind != kindArray {
				return d.errAt(v.pos, "%s must be an array of paths, not %s", name, v.kind)
			}
			for _, it := range v.items {
				f, err := file(it, name+"[]")
				if err != nil {
					return err
				}
				tt.ExtraCACertPaths = append(tt.ExtraCACertPaths, f)
			}
		case "maxTunnels", "handshakeTimeoutMs":
			lo, hi := 1, 65536
			if key == "handshakeTimeoutMs" {
				lo, hi = 100, 600000
			}
			n, perr := strconv.Atoi(v.text)
			if v.kind != kindNumber || perr != nil || n < lo || n > hi {
				return d.errAt(v.pos, "%s must be a whole number from %d to %d", name, lo, hi)
			}
			if key == "maxTunnels" {
				tt.MaxTunnels = n
			} else {
				tt.HandshakeTimeout = time.Duration(n) * time.Millisecond
			}
		}
		return err
	}); err != nil {
		return err
	}
	if (tt.CACertPath == "") != (tt.CAKeyPath == "") {
		return d.errAt(n.pos, "%s: caCertPath and caKeyPath go together (a CA's certificate and its key), or neither (an ephemeral CA)", path)
	}
	d.l.tlsTerminate = &setting[TLSTerminate]{tt, d.src(n.pos)}
	return nil
}
