package policy

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// MatchDomain reports whether a network destination matches a domain
// pattern as CheckDomainPattern normalises them: an exact name, or
// "*.example.com" for its subdomains (never example.com itself), or an IP
// address; a pattern with a port matches that port only. The patterns of
// WebFetch(domain:...) rules may also be "*" (every host) or have a "*"
// within one label ("example.*" matches example.org, not
// example.evil.com). host is a name or an IP address, in any case, with
// or without a trailing dot.
//
// (netproxy has the same rules for the proxy, but for the rules' two "*"
// forms, which never reach the sandbox's domain lists; policy may not
// import it.)
func MatchDomain(pattern, host string, port int) bool {
	pHost, pPort := splitPatternPort(pattern)
	if pPort != 0 && pPort != port {
		return false
	}
	h, ok := normaliseHost(host)
	if !ok {
		return false
	}
	if pHost == "*" {
		// WebFetch(domain:*): every host
		return true
	}
	if strings.Contains(strings.TrimPrefix(pHost, "*."), "*") {
		// WebFetch(domain:example.*): a * within one label matches text
		// of that label only, never a dot
		pl, hl := strings.Split(pHost, "."), strings.Split(h, ".")
		if _, err := netip.ParseAddr(h); err == nil || len(pl) != len(hl) {
			return false
		}
		for i := range pl {
			if !wildcardMatch(pl[i], hl[i]) {
				return false
			}
		}
		return true
	}
	if rest, wild := strings.CutPrefix(pHost, "*."); wild {
		if _, err := netip.ParseAddr(h); err == nil {
			return false
		}
		return strings.HasSuffix(h, "."+rest)
	}
	return h == pHost
}

// splitPatternPort splits a normalised pattern into its host and port.
func splitPatternPort(pattern string) (string, int) {
	if strings.HasPrefix(pattern, "[") {
		end := strings.Index(pattern, "]")
		if end < 0 {
			return pattern, 0
		}
		port, _ := strconv.Atoi(strings.TrimPrefix(pattern[end+1:], ":"))
		return pattern[1:end], port
	}
	if i := strings.LastIndex(pattern, ":"); i >= 0 && strings.Count(pattern, ":") == 1 {
		port, _ := strconv.Atoi(pattern[i+1:])
		return pattern[:i], port
	}
	return pattern, 0
}

// normaliseHost lowercases a host name, drops a trailing dot, turns an
// international name into its ASCII form and an IP address into its
// canonical text.
func normaliseHost(host string) (string, bool) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().String(), true
	}
	host = strings.TrimSuffix(host, ".")
	if isASCII(host) {
		// Already ASCII (punycode included): compared as written.
		return strings.ToLower(host), host != ""
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil || ascii == "" {
		return "", false
	}
	return strings.ToLower(ascii), true
}

// analyseWeb judges a WebFetch: its domain rules, and the network policy
// the sandbox uses (deniedDomains, allowedDomains).
func (p *Policy) analyseWeb(req Request, a *analysis) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Scheme == "" {
		a.refuse = "not a URL: " + abbrev(req.URL)
		return
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		a.refuse = "WebFetch fetches http and https URLs, not " + scheme
		return
	}
	if u.Host == "" {
		a.refuse = "not a URL: " + abbrev(req.URL)
		return
	}
	host, ok := normaliseHost(u.Hostname())
	if !ok {
		a.refuse = "not a valid host name: " + u.Hostname()
		return
	}
	port := 443
	if scheme == "http" {
		port = 80
	}
	if u.Port() != "" {
		n, err := strconv.Atoi(u.Port())
		if err != nil || n < 1 || n > 65535 {
			a.refuse = "not a valid port: " + u.Port()
			return
		}
		port = n
	}
	dest := host + ":" + strconv.Itoa(port)
	a.step("classify", "WebFetch reaches %s", dest)
	match := func(rules []Rule) *hit {
		for _, r := range toolRules(rules, "WebFetch") {
			d, ok := strings.CutPrefix(r.Specifier, "domain:")
			if !r.HasSpecifier || ok && MatchDomain(d, host, port) {
				return &hit{rule: r.String(), detail: dest}
			}
		}
		return nil
	}
	matchList := func(key string, list []string) *hit {
		for _, d := range list {
			if MatchDomain(d, host, port) {
				return &hit{rule: key + " " + d, detail: dest}
			}
		}
		return nil
	}
	if a.deny = match(p.Permissions.Deny); a.deny == nil {
		a.deny = matchList("deniedDomains", p.Network.DeniedDomains)
	}
	if a.deny == nil {
		a.deny = paramHit(p.Permissions.Deny, req)
	}
	if a.ask = match(p.Permissions.Ask); a.ask == nil {
		a.ask = paramHit(p.Permissions.Ask, req)
	}
	if a.allow = match(p.Permissions.Allow); a.allow == nil {
		a.allow = matchList("allowedDomains", p.Network.AllowedDomains)
	}
	if a.allow == nil {
		// What leaves the machine may carry what the agent has read.
		a.need(dest, DangerFullAccess, "reaches a destination no allow rule or allowedDomains names")
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
