package netproxy

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// deniedClasses are the addresses an allowed name may not resolve to:
// whoever controls a permitted name's DNS records (or any label under a
// permitted wildcard) would otherwise point it at the host's own services
// or the cloud metadata endpoint (DNS rebinding). Private ranges (RFC 1918,
// ULA) are not here: allowing an intranet name is legitimate.
var deniedClasses = []struct {
	what     string
	prefixes []netip.Prefix
}{
	{"a loopback address", prefixes("127.0.0.0/8", "::1/128")},
	// 0.0.0.0 and :: connect to the local host on Linux.
	{"an unspecified address", prefixes("0.0.0.0/8", "::/128")},
	{"a link-local address", prefixes("169.254.0.0/16", "fe80::/10")},
	{"a multicast address", prefixes("224.0.0.0/4", "ff00::/8")},
	{"the broadcast address", prefixes("255.255.255.255/32")},
	// Instance metadata endpoints outside link-local space.
	{"a cloud metadata address", prefixes(
		"100.100.100.200/32",     // Alibaba Cloud
		"168.63.129.16/32",       // Azure WireServer
		"192.0.0.192/32",         // Oracle Cloud Classic
		"fd00:ec2::/32",          // AWS: IMDS fd00:ec2::254, DNS, NTP
		"fd20:ce::254/128",       // Google Cloud, IPv6-only instances
		"fd00:c1::a9fe:a9fe/128", // Oracle Cloud IPv6
		"fd00:42::42/128",        // Scaleway
		"fd00:a9fe:a9fe::1/128",  // Akamai / Linode
		"fd00:100::100:200/128",  // Alibaba Cloud IPv6
	)},
	// Services of a daemon on this host at fixed addresses routed into it,
	// not carried by an interface: Tailscale's resolver and local API
	// (Quad100), which answers tailnet names.
	{"a local service address", prefixes("100.100.100.100/32", "fd7a:115c:a1e0::53/128")},
}

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// The refusal classes that are not in deniedClasses.
const (
	classDenyListed = "a deny-listed address"
	classListed     = "a listed address" // Config.DeniedAddresses
	classOwn        = "one of this host's addresses"
	classNotLoop    = "a non-loopback address" // for localhost names
)

// classify returns the class that makes a an address no name may resolve
// to, or "". own lists the host's interface addresses.
func classify(a netip.Addr, own []netip.Addr) string {
	for _, c := range deniedClasses {
		for _, p := range c.prefixes {
			if p.Contains(a) {
				return c.what
			}
		}
	}
	for _, o := range own {
		if o == a {
			return classOwn
		}
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address an IPv6 address delivers to:
// IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), the
// NAT64 well-known prefix (64:ff9b::/96), a /96 NAT64 prefix in the
// local-use 64:ff9b:1::/48 (RFC 8215) and 6to4 (2002::/16). Every check
// applied to an address applies to the one it carries too.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12),
		b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1 && zero(8, 12),
		zero(0, 12) && !a.IsLoopback() && !a.IsUnspecified(),
		zero(0, 8) && b[8] == 0xff && b[9] == 0xff && zero(10, 12):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
}

// interfaceAddrs lists this host's addresses, cached for a second: a
// rebinding check runs on every connection to a name.
type interfaceAddrs struct {
	mu    sync.Mutex
	at    time.Time
	addrs []netip.Addr
}

func (c *interfaceAddrs) get() []netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < time.Second {
		return c.addrs
	}
	// a fresh slice: callers may still hold the previous one
	c.addrs, c.at = nil, time.Now()
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		// The fixed classes still apply.
		return c.addrs
	}
	for _, ifa := range ifas {
		if n, ok := ifa.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				c.addrs = append(c.addrs, a.Unmap())
			}
		}
	}
	return c.addrs
}
