package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Verdict is what the allow and deny lists say about a destination.
type Verdict int

// The verdicts of Rules.Match.
const (
	// Unlisted: no pattern matches; the destination is refused unless an
	// Asker allows it.
	Unlisted Verdict = iota
	// Allowed: an allow pattern matches and no deny pattern does.
	Allowed
	// Denied: a deny pattern matches (deny is checked first).
	Denied
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Allowed:
		return "allowed"
	case Denied:
		return "denied"
	}
	return "unlisted"
}

// Pattern is one entry of an allow or deny list: an exact host name
// ("example.com"), subdomains of a name ("*.example.com", never the apex), or
// an IP address ("192.0.2.1", "[2001:db8::1]"), each optionally restricted to
// one port (":443"). A deny list may also hold "*" and "*:22": every host
// (on that port).
type Pattern struct {
	raw      string
	name     string     // normalised host name; "" for an address pattern
	wildcard bool       // "*.name": strict subdomains of name
	addr     netip.Addr // valid for an address pattern
	port     int        // 0: any port
	any      bool       // "*": every host, name or address (deny lists)
}

// String returns the pattern as it was written.
func (p Pattern) String() string { return p.raw }

// ParsePattern reads one allow or deny entry. Names are compared
// case-insensitively, without a trailing dot, in their IDNA ASCII form.
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{raw: s}
	fail := func(why string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("%w %q: %s", ErrPattern, s, why)
	}
	if s == "" {
		return fail("empty")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ \t") {
		return fail(`want a host name, "*.name" or an IP address, optionally with ":port" (no scheme, path or spaces)`)
	}
	host, port, err := splitPatternPort(s)
	if err != nil {
		return fail(err.Error())
	}
	p.port = port
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(host[1:], "]"))
		if err != nil || !a.Is6() || a.Zone() != "" {
			return fail("not an IPv6 address in brackets")
		}
		p.addr = a.Unmap()
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is6() {
			return fail("write IPv6 addresses in brackets: [" + host + "] or [" + host + "]:443")
		}
		p.addr = a
		return p, nil
	}
	if host == "*" {
		return fail(`a lone wildcard would match every host: list the domains, or "*.example.com" for subdomains`)
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.wildcard = true
		host = rest
	}
	if strings.Contains(host, "*") {
		return fail(`a wildcard is allowed only as the first label ("*.example.com")`)
	}
	name, addr, err := normalizeHost(host)
	if err != nil {
		return fail(err.Error())
	}
	if addr.IsValid() {
		return fail("an IP address cannot take a wildcard")
	}
	if p.wildcard && !strings.Contains(name, ".") {
		return fail(`too broad: "*.` + name + `" would match a whole top-level domain`)
	}
	p.name = name
	return p, nil
}

// ParseDenyPattern reads one deny entry: a pattern of ParsePattern, or
// "*" (every host) and "*:PORT" (every host on one port), as
// sandbox-runtime's deniedDomains takes them.
func ParseDenyPattern(s string) (Pattern, error) {
	if host, ps, ok := strings.Cut(s, ":"); ok && host == "*" || s == "*" {
		p := Pattern{raw: s, any: true}
		if ok {
			port, err := parsePort(ps)
			if err != nil {
				return Pattern{}, fmt.Errorf("%w %q: %v", ErrPattern, s, err)
			}
			p.port = port
		}
		return p, nil
	}
	return ParsePattern(s)
}

// splitPatternPort splits an optional ":port" off a pattern. An IPv6 address
// must be in brackets: "2001:db8::1:443" could be either.
func splitPatternPort(s string) (host string, port int, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("missing ]")
		}
		host, rest := s[:end+1], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		ps, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, errors.New("junk after ]")
		}
		port, err := parsePort(ps)
		return host, port, err
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, 0, nil
	case 1:
		h, ps, _ := strings.Cut(s, ":")
		port, err := parsePort(ps)
		return h, port, err
	}
	return "", 0, fmt.Errorf("write IPv6 addresses in brackets: [%s] or [%s]:443", s, s)
}

// parsePort reads a decimal port 1-65535.
func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, fmt.Errorf("bad port %q (want 1-65535)", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("bad port %q (want 1-65535)", s)
	}
	return n, nil
}

// idnaProfile maps a Unicode name to its ASCII form for lookup, as browsers
// do: UTS 46 mapping (case, width, compatibility), no STD3 or hyphen checks,
// which real names ("r3---sn-x.googlevideo.com", "_dmarc") would fail; the
// characters of the result are checked by normalizeHost.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.BidiRule(),
)

// normalizeHost returns the canonical form of a destination host: a lower
// case ASCII name without trailing dot, or an IP address (IPv4-mapped IPv6
// unmapped). IPv6 addresses may come in brackets.
func normalizeHost(h string) (name string, addr netip.Addr, err error) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() {
			return "", netip.Addr{}, errors.New("bad IPv6 address")
		}
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", netip.Addr{}, errors.New("IPv6 zones are not allowed")
		}
		return "", a.Unmap(), nil
	}
	if !isASCII(h) {
		a, err := idnaProfile.ToASCII(h)
		if err != nil {
			return "", netip.Addr{}, fmt.Errorf("bad international name: %w", err)
		}
		h = a
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" {
		return "", netip.Addr{}, errors.New("empty name")
	}
	if len(h) > 253 {
		return "", netip.Addr{}, errors.New("name longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", netip.Addr{}, errors.New("empty label or label longer than 63 characters")
		}
		for i := range len(l) {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", netip.Addr{}, fmt.Errorf("character %q not allowed in a host name", c)
			}
		}
	}
	// "127.1", "0x7f000001" or "1.2.3.04" are addresses to inet_aton: a
	// resolver would dial them, so they must never pass as names.
	if last := labels[len(labels)-1]; strings.TrimLeft(last, "0123456789") == "" ||
		strings.HasPrefix(last, "0x") && strings.TrimLeft(last[2:], "0123456789abcdef") == "" {
		return "", netip.Addr{}, errors.New("numeric top-level label (an address in disguise)")
	}
	return h, netip.Addr{}, nil
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// matches reports whether the pattern covers the destination (normalised
// name or address) and port.
func (p Pattern) matches(name string, addr netip.Addr, port int) bool {
	if p.port != 0 && p.port != port {
		return false
	}
	switch {
	case p.any:
		return true
	case p.addr.IsValid():
		return addr.IsValid() && p.addr == addr
	case addr.IsValid():
		return false
	case p.wildcard:
		return len(name) > len(p.name)+1 && strings.HasSuffix(name, p.name) && name[len(name)-len(p.name)-1] == '.'
	}
	return name == p.name
}

// Rules are an allow list and a deny list of patterns.
type Rules struct {
	allow, deny []Pattern
}

// NewRules parses the allow and deny lists; the error names every bad
// entry. An empty allow list allows nothing.
func NewRules(allow, deny []string) (*Rules, error) {
	r := &Rules{}
	var errs []error
	for _, s := range allow {
		p, err := ParsePattern(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed domains: %w", err))
			continue
		}
		r.allow = append(r.allow, p)
	}
	for _, s := range deny {
		p, err := ParseDenyPattern(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("denied domains: %w", err))
			continue
		}
		r.deny = append(r.deny, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Match is the verdict of the lists on one destination.
type Match struct {
	Verdict Verdict
	// Pattern is the entry that decided, as written; empty when Unlisted.
	Pattern string
	// Host is the destination in canonical form (lower case ASCII name
	// without trailing dot, or an IP address).
	Host string
	// IP reports that Host is an IP address.
	IP bool
}

// Match applies the lists to host and port: the deny list first, then the
// allow list. An IP address matches only a pattern naming that address.
func (r *Rules) Match(host string, port int) (Match, error) {
	name, addr, err := normalizeHost(host)
	if err != nil {
		return Match{}, fmt.Errorf("%w %q: %w", ErrHost, host, err)
	}
	return r.match(name, addr, port), nil
}

func (r *Rules) match(name string, addr netip.Addr, port int) Match {
	m := Match{Host: name, IP: addr.IsValid()}
	if m.IP {
		m.Host = addr.String()
	}
	for _, p := range r.deny {
		if p.matches(name, addr, port) {
			m.Verdict, m.Pattern = Denied, p.raw
			return m
		}
	}
	for _, p := range r.allow {
		if p.matches(name, addr, port) {
			m.Verdict, m.Pattern = Allowed, p.raw
			return m
		}
	}
	return m
}

// literal reports whether list names addr itself (for that port): an
// address listed literally decides about a name that resolves to it too.
func literal(list []Pattern, addr netip.Addr, port int) (string, bool) {
	for _, p := range list {
		if p.addr.IsValid() && p.addr == addr && (p.port == 0 || p.port == port) {
			return p.raw, true
		}
	}
	return "", false
}
