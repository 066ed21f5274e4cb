package netproxy

import (
	"fmt"
	"strings"
)

// The names a refusal tells people to use: cordon's flags and settings keys.
const (
	allowFlag  = "--allow-domain"
	denyFlag   = "--deny-domain"
	allowKey   = "sandbox.network.allowedDomains"
	denyKey    = "sandbox.network.deniedDomains"
	policyName = "cordon: the sandbox's network policy refused"
)

// AllowEntry is the allowedDomains entry that would allow the refused
// destination, IPv6 addresses in brackets, or "" when none would: the deny
// list, the addresses a name resolves to or the tunnel's contents refused
// it, or the destination is no name or address an entry can hold (the
// sandboxed command chose it: advice people paste into a shell must not
// carry "$(id).example").
func (d Decision) AllowEntry() string {
	if d.Allowed || d.Reason != ReasonAllowlist {
		return ""
	}
	switch d.kind {
	case kindInvalid, kindDenied, kindDeniedAddr, kindPrivate, kindListedAddr, kindUnresolved, kindTunnel, kindHostMismatch, kindTooManyTunnels:
		return ""
	}
	entry := d.Host
	if strings.Contains(entry, ":") {
		entry = "[" + entry + "]"
	}
	if _, err := NewRules([]string{entry}, nil); err != nil {
		return ""
	}
	return entry
}

// Message explains a refusal to the sandboxed command (it is the body of an
// HTTP 403): the destination, the rule that refused it and how to allow it.
// It never names the addresses a name resolved to.
func (d Decision) Message() string {
	if d.Allowed {
		return ""
	}
	var b strings.Builder
	dest := d.dest()
	if d.Reason == "" {
		fmt.Fprintf(&b, "cordon: cannot connect to %s: the name does not resolve", dest)
		if d.Err != nil {
			fmt.Fprintf(&b, " (%v)", d.Err)
		}
		b.WriteString(".\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s (%s).\n", policyName, dest, d.Reason)
	entry := d.Host
	if strings.Contains(entry, ":") {
		entry = "[" + entry + "]"
	}
	howAllow := fmt.Sprintf("To allow it, run cordon with %s %s, or add %q to the settings key %s.\n", allowFlag, entry, entry, allowKey)
	switch d.kind {
	case kindInvalid:
		fmt.Fprintf(&b, "%q is not a valid host name or address: %s.\n", d.Host, strings.TrimPrefix(d.Rule, "invalid destination: "))
	case kindDenied:
		if d.Why != "" {
			// the settings' own reason, which says what to do instead
			fmt.Fprintf(&b, "%s\n(the denied domains contain %q)\n", d.Why, d.Pattern)
			break
		}
		fmt.Fprintf(&b, "The denied domains contain %q, and the deny list wins over the allow list.\n", d.Pattern)
		fmt.Fprintf(&b, "To allow it, remove %q from %s or from the settings key %s.\n", d.Pattern, denyFlag, denyKey)
	case kindDeniedAddr:
		fmt.Fprintf(&b, "%s resolves to an address on the deny list.\n", d.Host)
		fmt.Fprintf(&b, "To allow it, remove that address from %s or from the settings key %s (cordon's log names it).\n", denyFlag, denyKey)
	case kindTunnel:
		b.WriteString("The settings refuse every tunnel the proxy cannot see into (sandbox.network.refuseOpaqueTunnels): SOCKS5, and a CONNECT whose TLS it does not end (sandbox.network.tlsTerminate has it end them); plain http:// requests are decided one by one.\n")
	case kindTooManyTunnels:
		fmt.Fprintf(&b, "%s: try again once some have closed.\n", d.Rule)
	case kindHostMismatch:
		fmt.Fprintf(&b, "%s.\nThe settings require a request's Host, and a tunnel's TLS server name, to name where it goes (sandbox.network.requireHostMatch).\n", d.Rule)
	case kindListedAddr:
		fmt.Fprintf(&b, "%s resolves to an address that the settings key sandbox.network.deniedResolvedAddresses refuses.\n", d.Host)
		fmt.Fprintf(&b, "To reach that address on purpose, list the address itself with %s or in the settings key %s (cordon's log names it).\n", allowFlag, allowKey)
	case kindPrivate:
		fmt.Fprintf(&b, "%s %s. An allowed name may not resolve to loopback, link-local, multicast, cloud metadata or this host's own addresses (DNS rebinding).\n",
			d.Host, d.Rule)
		fmt.Fprintf(&b, "To reach that address on purpose, list the address itself with %s or in the settings key %s (cordon's log names it).\n", allowFlag, allowKey)
	case kindIPUnlisted:
		fmt.Fprintf(&b, "IP addresses are refused unless listed literally, and %s is not in the allowed domains.\n", entry)
		b.WriteString(howAllow)
	case kindAskFailed:
		fmt.Fprintf(&b, "%s is not in the allowed domains, and asking about it failed (%v); the proxy fails closed.\n", d.Host, d.Err)
		b.WriteString(howAllow)
	case kindAskRefused:
		fmt.Fprintf(&b, "%s is not in the allowed domains, and the answer to asking about %s was no", d.Host, dest)
		if d.Why != "" {
			fmt.Fprintf(&b, ": %s", d.Why)
		}
		b.WriteString(".\n")
		b.WriteString(howAllow)
	default:
		fmt.Fprintf(&b, "%s is not in the allowed domains.\n", d.Host)
		b.WriteString(howAllow)
	}
	return b.String()
}
