package netproxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Key identifies what a Proxy made from c decides, and where it sends
// what it allows: two Configs with the same Key make proxies that serve
// alike, whatever run they serve (cordon serve keeps a sandbox with its
// proxy for the next run whose Config has the same Key). ok is false for
// a Config whose proxy holds what is its run's alone — an Asker's
// answers, masked secrets — or what cannot be compared (a TLS client
// configuration, a pool of roots, a dialler): such a proxy serves its run
// only.
func (c *Config) Key() (key string, ok bool) {
	if c.Ask != nil || c.Mask != nil || c.CA != nil || c.RootCAs != nil || c.Resolver != nil || c.InterfaceAddrs != nil || c.Dial != nil {
		return "", false
	}
	type socket struct {
		Path    string
		Domains []string
	}
	type upstream struct {
		HTTP, HTTPS string
		NoProxy     string
		Sockets     []socket
	}
	var up *upstream
	if u := c.Upstream; u != nil {
		if u.TLS != nil {
			return "", false
		}
		up = &upstream{NoProxy: fmt.Sprintf("%v %q %v", u.NoProxy.all, u.NoProxy.suffixes, u.NoProxy.prefixes)}
		// with the password: a proxy with other credentials is another
		// (the key is hashed below)
		if u.HTTP != nil {
			up.HTTP = u.HTTP.String()
		}
		if u.HTTPS != nil {
			up.HTTPS = u.HTTPS.String()
		}
		for _, s := range u.Sockets {
			up.Sockets = append(up.Sockets, socket{s.Path, s.Domains})
		}
	}
	data, err := json.Marshal(struct {
		Allowed, Denied             []string
		Reasons                     map[string]string
		Addresses                   []string
		Dial                        int64
		Upstream                    *upstream
		Strip                       []string
		HostMatch, RefuseTunnels    bool
		ExternalHTTP, ExternalSOCKS string
		Terminate                   *Termination
	}{
		c.AllowedDomains, c.DeniedDomains, c.DeniedReasons, prefixStrings(c),
		int64(c.DialTimeout), up, c.StripResponseHeaders,
		c.RequireHostMatch, c.RefuseOpaqueTunnels, c.ExternalHTTP, c.ExternalSOCKS,
		c.Terminate,
	})
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), true
}

func prefixStrings(c *Config) []string {
	var out []string
	for _, p := range c.DeniedAddresses {
		out = append(out, p.String())
	}
	return out
}
