package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests use a StaticResolver.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// StaticResolver resolves the names it maps (lower case, no trailing dot)
// and nothing else.
type StaticResolver map[string][]netip.Addr

// LookupNetIP returns the addresses mapped for host, or a not-found error.
func (r StaticResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs := r[strings.ToLower(strings.TrimSuffix(host, "."))]
	var out []netip.Addr
	for _, a := range addrs {
		if network == "ip" || network == "ip4" && a.Unmap().Is4() || network == "ip6" && a.Is6() && !a.Is4In6() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// Reason says why the proxy refused a destination; it is the value of the
// X-Proxy-Error header of an HTTP refusal.
type Reason string

// The refusal reasons.
const (
	// ReasonAllowlist: no allow entry matches (and no Asker allowed it), or
	// the destination is not a valid name or address.
	ReasonAllowlist Reason = "blocked-by-allowlist"
	// ReasonDenylist: a deny entry matches the name, or an address it
	// resolves to.
	ReasonDenylist Reason = "blocked-by-denylist"
	// ReasonPrivate: an allowed name resolves only to loopback, link-local,
	// unspecified, multicast, cloud metadata or the host's own addresses.
	ReasonPrivate Reason = "blocked-private-address"
	// ReasonTunnel: an allowed destination asked for as a tunnel, which
	// the settings refuse (refuseOpaqueTunnels).
	ReasonTunnel Reason = "blocked-opaque-tunnel"
	// ReasonHostMismatch: a request's Host or a tunnel's first name is
	// not its destination (requireHostMatch).
	ReasonHostMismatch Reason = "misdirected-request"
	// ReasonTooManyTunnels: as many tunnels as the proxy ends at once
	// are open (tlsTerminate's maxTunnels).
	ReasonTooManyTunnels Reason = "too-many-tunnels"
)

// Decision is the proxy's verdict on one connection or request, reported to
// Config.OnDecision whether it allows or refuses.
type Decision struct {
	// Run is Config.Run: the run whose listener the connection came in on.
	Run string
	// Protocol is how the destination was asked for: "http" (an
	// absolute-form request), "connect" (an HTTP CONNECT tunnel) or
	// "socks5".
	Protocol string
	// Host is the destination in canonical form (lower case ASCII name, or
	// an IP address), or as the client sent it when it is not valid.
	Host string
	Port int
	// Allowed: the proxy will connect. False with an empty Reason when the
	// rules allowed the destination but Err stopped it.
	Allowed bool
	// Reason is why the destination was refused; empty when allowed.
	Reason Reason
	// Pattern is the allow or deny entry that decided, as written; empty
	// when none did.
	Pattern string
	// Rule says, for people, what decided: "allowedDomains: *.example.com",
	// "deniedDomains: evil.example", "not in allowedDomains", "asked:
	// refused", "resolves to a loopback address", ...
	Rule string
	// Addrs are, when allowed, the addresses the proxy dials (in order);
	// when refused for what the name resolves to, the refused addresses.
	// They are never shown to the sandboxed client.
	Addrs []netip.Addr
	// Err is a failure to decide: the name did not resolve, or the asker
	// failed (the destination is then refused too).
	Err error
	// Why is the reason the settings (deniedDomainReasons) or the Asker
	// gave for a refusal, for people; empty when none did.
	Why string
	// Via is, when allowed, the upstream proxy the destination is reached
	// through (its URL without password); empty: directly. The name is
	// then not resolved here (Addrs is empty): the upstream resolves it.
	Via string

	kind kind     // what decided, for Message
	via  *url.URL // Via
}

// kind is what decided a refusal.
type kind int

const (
	kindAllowed kind = iota
	kindInvalid
	kindDenied
	kindDeniedAddr
	kindPrivate
	kindListedAddr
	kindTunnel
	kindHostMismatch
	kindTooManyTunnels
	kindIPUnlisted
	kindUnlisted
	kindAskRefused
	kindAskFailed
	kindUnresolved
)

// String is the decision as one log line.
func (d Decision) String() string {
	dest := net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
	var b strings.Builder
	switch {
	case d.Allowed:
		fmt.Fprintf(&b, "allowed %s %s (%s)", d.Protocol, dest, d.Rule)
	case d.Reason != "":
		fmt.Fprintf(&b, "refused %s %s: %s (%s)", d.Protocol, dest, d.Reason, d.Rule)
	default:
		fmt.Fprintf(&b, "failed %s %s (%s)", d.Protocol, dest, d.Rule)
	}
	if d.Via != "" {
		b.WriteString(" via " + d.Via)
	}
	if len(d.Addrs) > 0 {
		b.WriteString(" [")
		for i, a := range d.Addrs {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(a.String())
		}
		b.WriteString("]")
	}
	if d.Err != nil {
		fmt.Fprintf(&b, ": %v", d.Err)
	}
	return b.String()
}

// decide applies the policy to a destination and reports the decision.
// Names are resolved here, once; an allowed decision carries the addresses
// that passed the checks, and only those are dialled.
func (p *Proxy) decide(ctx context.Context, proto, host string, port int) Decision {
	d := p.decideQuietly(ctx, proto, host, port)
	if p.cfg.OnDecision != nil {
		p.cfg.OnDecision(d)
	}
	return d
}

func (p *Proxy) decideQuietly(ctx context.Context, proto, host string, port int) Decision {
	d := Decision{Run: p.cfg.Run, Protocol: proto, Host: host, Port: port}
	name, addr, err := normalizeHost(host)
	if err == nil && (port < 1 || port > 65535) {
		err = fmt.Errorf("port %d out of range", port)
	}
	if err != nil {
		d.Host = printable(host)
		d.Reason, d.Rule, d.kind = ReasonAllowlist, "invalid destination: "+err.Error(), kindInvalid
		return d
	}
	m := p.rules.match(name, addr, port)
	d.Host, d.Pattern = m.Host, m.Pattern
	switch m.Verdict {
	case Denied:
		d.Reason, d.Rule, d.kind = ReasonDenylist, "deniedDomains: "+m.Pattern, kindDenied
		if why := p.cfg.DeniedReasons[m.Pattern]; why != "" {
			d.Why = shownReason(why)
			d.Rule += " (" + d.Why + ")"
		}
		return d
	case Allowed:
		d.Rule = "allowedDomains: " + m.Pattern
	case Unlisted:
		if m.IP {
			// an address is never asked about: it is allowed only by name
			d.Reason, d.Rule, d.kind = ReasonAllowlist, "IP address not listed in allowedDomains", kindIPUnlisted
			return d
		}
		if p.cfg.Ask == nil {
			d.Reason, d.Rule, d.kind = ReasonAllowlist, "not in allowedDomains", kindUnlisted
			return d
		}
		reply, remembered, err := p.ask(ctx, name, port)
		how := "asked"
		if remembered {
			how = "asked before"
		}
		switch {
		case err != nil:
			d.Reason, d.Rule, d.Err, d.kind = ReasonAllowlist, "not in allowedDomains; asking failed", err, kindAskFailed
			return d
		case !reply.Allow:
			d.Reason, d.Rule, d.kind = ReasonAllowlist, "not in allowedDomains; "+how+": refused", kindAskRefused
			if reply.Reason != "" {
				d.Why = shownReason(reply.Reason)
				d.Rule += " (" + d.Why + ")"
			}
			return d
		}
		d.Rule = "not in allowedDomains; " + how + ": allowed"
	}
	if m.IP {
		// an address allowed literally is an explicit choice: no class
		// check (DNS rebinding concerns names)
		d.Allowed, d.Addrs = true, []netip.Addr{addr}
		d.route(p.cfg.Upstream)
		return d
	}
	if d.route(p.cfg.Upstream) {
		// the upstream proxy resolves the name: cordon does not, so the
		// checks of what it resolves to do not apply
		d.Allowed = true
		return d
	}
	// A name with a dot is looked up as it is: through the host's search
	// domains, a name that does not exist (any, under an allowed
	// wildcard) would become another, an intranet host's. A single label
	// is meant to be found through them.
	lookup := name
	if strings.Contains(name, ".") {
		lookup += "."
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	addrs, err := p.resolver.LookupNetIP(rctx, "ip", lookup)
	cancel()
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: name, IsNotFound: true}
	}
	if de, ok := errors.AsType[*net.DNSError](err); ok && de.Name == lookup {
		de.Name = name // the name as checked and shown everywhere else
	}
	if err != nil {
		d.Rule, d.Err, d.kind = d.Rule+"; not resolved", err, kindUnresolved
		return d
	}
	kept, dropped, why := p.filter(name, port, addrs)
	if len(kept) == 0 {
		d.Reason, d.Rule, d.Addrs, d.kind = ReasonPrivate, "resolves to "+why, dropped, kindPrivate
		switch why {
		case classDenyListed:
			d.Reason, d.kind = ReasonDenylist, kindDeniedAddr
		case classListed:
			d.Rule, d.kind = "resolves to an address of deniedResolvedAddresses", kindListedAddr
		}
		return d
	}
	d.Allowed, d.Addrs = true, kept
	return d
}

// refuseTunnel is the refusal of a tunnel to the allowed destination d
// under refuseOpaqueTunnels, reported; false when tunnels are not
// refused, or d is a CONNECT tunnel whose TLS the proxy ends (it sees
// into it; a SOCKS5 tunnel is refused all the same, as sandbox-runtime
// refuses it at the handshake).
func (p *Proxy) refuseTunnel(d Decision) (Decision, bool) {
	if !p.cfg.RefuseOpaqueTunnels || d.Protocol == "connect" && p.terminates(d) {
		return d, false
	}
	r := Decision{Run: d.Run, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: ReasonTunnel,
		Rule: "refuseOpaqueTunnels: a tunnel the proxy cannot see into", kind: kindTunnel}
	p.report(r)
	return r, true
}

// route sets the upstream proxy an allowed destination is reached
// through, if any, and reports whether there is one.
func (d *Decision) route(u *Upstream) bool {
	d.via = u.route(d.Host, d.Port, d.Protocol != "http")
	if d.via == nil {
		return false
	}
	d.Via = Redact(d.via)
	return true
}

// filter keeps the addresses an allowed name may be dialled at. An address
// listed literally decides for the name too: deny-listed ones are dropped,
// allow-listed ones kept whatever their class. Names under localhost
// (RFC 6761) may resolve to loopback only, which is what listing them asks
// for. why is the class of the first dropped address.
func (p *Proxy) filter(name string, port int, addrs []netip.Addr) (kept, dropped []netip.Addr, why string) {
	var own []netip.Addr
	ownDone := false
	loopName := name == "localhost" || strings.HasSuffix(name, ".localhost")
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		v4, embeds := embeddedIPv4(a)
		class := ""
		_, denied := literal(p.rules.deny, a, port)
		if !denied && embeds {
			_, denied = literal(p.rules.deny, v4, port)
		}
		_, listed := literal(p.rules.allow, a, port)
		switch {
		case denied:
			class = classDenyListed
		case listed:
		case loopName:
			if !a.IsLoopback() {
				class = classNotLoop
			}
		default:
			if !ownDone {
				own, ownDone = p.ownAddrs(), true
			}
			class = classify(a, own)
			if class == "" && embeds {
				class = classify(v4, own)
			}
			if class == "" && (p.listed(a) || embeds && p.listed(v4)) {
				class = classListed
			}
		}
		if class != "" {
			dropped = append(dropped, a)
			if why == "" || class == classDenyListed {
				why = class
			}
			continue
		}
		if !slices.Contains(kept, a) {
			kept = append(kept, a)
		}
	}
	return kept, dropped, why
}

// listed reports whether a is in Config.DeniedAddresses.
func (p *Proxy) listed(a netip.Addr) bool {
	for _, pf := range p.cfg.DeniedAddresses {
		if pf.Contains(a) {
			return true
		}
	}
	return false
}

// maxReason bounds a reason shown in a refusal, in characters: a few
// sentences fit, a document does not (sandbox-runtime cuts at 500 too).
const maxReason = 500

// shownReason is a reason as a refusal shows it: printable, on one line,
// at most maxReason characters.
func shownReason(s string) string {
	s = printableChars(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > maxReason {
		s = string(r[:maxReason]) + "..."
	}
	return s
}

// maxAsking bounds the questions of one proxy waiting for an answer at
// once; a new one beyond it is refused (and not remembered).
const maxAsking = 16

// maxAsked bounds the destinations one proxy asks about (and remembers
// the answers of); a new one beyond it is refused without asking. Each is
// a process on the host or a prompt to a person, and memory of cordon's.
const maxAsked = 1024

// ask consults the Asker about a name neither list matches, once per name
// and port for the life of the proxy: concurrent questions share one
// answer, and answers (not failures) are remembered.
func (p *Proxy) ask(ctx context.Context, name string, port int) (reply Reply, remembered bool, err error) {
	key := net.JoinHostPort(name, strconv.Itoa(port))
	p.mu.Lock()
	if p.asks == nil {
		p.asks = map[string]*askCall{}
	}
	c, ok := p.asks[key]
	if !ok {
		if p.closed {
			p.mu.Unlock()
			return Reply{}, false, ErrClosed
		}
		// each question may be a process on the host and a prompt to a
		// person: a command must not start thousands at once
		if p.asking >= maxAsking {
			p.mu.Unlock()
			return Reply{}, false, fmt.Errorf("%d questions already waiting for an answer", maxAsking)
		}
		if len(p.asks) >= maxAsked {
			p.mu.Unlock()
			return Reply{}, false, fmt.Errorf("%d destinations already asked about in this run", maxAsked)
		}
		p.asking++
		c = &askCall{done: make(chan struct{})}
		p.asks[key] = c
		p.wg.Add(1) // under p.mu with closed false: see begin
		go p.runAsk(key, c, Question{Run: p.cfg.Run, Host: name, Port: port})
	}
	p.mu.Unlock()
	if ok {
		select {
		case <-c.done:
			remembered = true
		default:
		}
	}
	select {
	case <-c.done:
		return c.reply, remembered, c.err
	case <-ctx.Done():
		return Reply{}, false, ctx.Err()
	}
}

type askCall struct {
	done  chan struct{}
	reply Reply
	err   error
}

func (p *Proxy) runAsk(key string, c *askCall, q Question) {
	defer p.wg.Done()
	// the proxy's lifetime bounds the question, not the first asker's
	// connection: others may be waiting for the same answer
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.AskTimeout)
	defer cancel()
	reply, err := p.cfg.Ask.Ask(ctx, q)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", p.cfg.AskTimeout, err)
	}
	if err != nil {
		reply = Reply{}
	}
	c.reply, c.err = reply, err
	p.mu.Lock()
	p.asking--
	if err != nil {
		// a failure is not an answer: ask again next time
		delete(p.asks, key)
	}
	p.mu.Unlock()
	close(c.done)
}

// printable makes a host the client sent safe to log and show: the
// sandbox chooses it, and neither escape sequences nor format characters
// (bidi overrides that reorder the rest of a line, zero-width ones) nor
// line separators must reach a terminal.
func printable(s string) string {
	const max = 255
	if len(s) > max {
		s = s[:max] + "..."
	}
	return printableChars(s)
}

// printableChars is s with what a terminal or a log would not show as
// itself replaced by '?'.
func printableChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError ||
			unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
