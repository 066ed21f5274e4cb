package netproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"testing"
	"time"

	"cordon.dev/cordon/netproxy/mask"
)

// TestConfigKey: every field of Config changes the Key, or makes the
// proxy its run's alone (no Key), or is named here with why it does
// neither: a field added later fails this test until it is one of them.
func TestConfigKey(t *testing.T) {
	base := func() Config {
		return Config{AllowedDomains: []string{"a.example"}, DeniedDomains: []string{"b.example"}}
	}
	proxyURL, _ := url.Parse("http://u:p@proxy.example:3128")
	other, _ := url.Parse("http://u:q@proxy.example:3128")
	changes := map[string]func(*Config){
		"AllowedDomains":  func(c *Config) { c.AllowedDomains = append(c.AllowedDomains, "c.example") },
		"DeniedDomains":   func(c *Config) { c.DeniedDomains = nil },
		"DeniedReasons":   func(c *Config) { c.DeniedReasons = map[string]string{"b.example": "no"} },
		"DeniedAddresses": func(c *Config) { c.DeniedAddresses = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} },
		"DialTimeout":     func(c *Config) { c.DialTimeout = time.Second },
		"Upstream": func(c *Config) {
			c.Upstream = &Upstream{HTTP: proxyURL, NoProxy: ParseNoProxy(".corp"), Sockets: []SocketProxy{{Path: "/s", Domains: []string{"x.example"}}}}
		},
		"StripResponseHeaders": func(c *Config) { c.StripResponseHeaders = []string{"set-cookie"} },
		"RequireHostMatch":     func(c *Config) { c.RequireHostMatch = true },
		"RefuseOpaqueTunnels":  func(c *Config) { c.RefuseOpaqueTunnels = true },
		"ExternalHTTP":         func(c *Config) { c.ExternalHTTP = "127.0.0.1:8888" },
		"ExternalSOCKS":        func(c *Config) { c.ExternalSOCKS = "127.0.0.1:9050" },
		"Terminate":            func(c *Config) { c.Terminate = &Termination{Exclude: []string{"pinned.example"}} },
	}
	alone := map[string]func(*Config){
		"Ask":            func(c *Config) { c.Ask = AskFunc(func(context.Context, Question) (bool, error) { return true, nil }) },
		"Mask":           func(c *Config) { c.Mask = mask.New(mask.Options{}) },
		"CA":             func(c *Config) { c.CA = &CA{} },
		"RootCAs":        func(c *Config) { c.RootCAs = x509.NewCertPool() },
		"Resolver":       func(c *Config) { c.Resolver = StaticResolver{} },
		"InterfaceAddrs": func(c *Config) { c.InterfaceAddrs = func() []netip.Addr { return nil } },
		"Dial": func(c *Config) {
			c.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("no") }
		},
	}
	// the run's own, reported to or attributed by the run, not decided
	unkeyed := map[string]string{
		"Run":          "the run the proxy serves, set by the run",
		"OnDecision":   "where the run's decisions go",
		"OnCredential": "where the run's masked secrets' uses go",
		"AskTimeout":   "used only with Ask, which makes the proxy the run's alone",
	}
	b := base()
	want, ok := b.Key()
	if !ok {
		t.Fatal("the base config has no key")
	}
	for f := range reflect.TypeFor[Config]().Fields() {
		change, alone1 := changes[f.Name], alone[f.Name]
		switch {
		case change != nil:
			c := base()
			change(&c)
			if got, ok := c.Key(); !ok || got == want {
				t.Errorf("%s: changing it leaves the key (%v)", f.Name, ok)
			}
		case alone1 != nil:
			c := base()
			alone1(&c)
			if _, ok := c.Key(); ok {
				t.Errorf("%s: set, the proxy still has a key", f.Name)
			}
		case unkeyed[f.Name] == "":
			t.Errorf("Config.%s is neither in the key, nor makes the proxy its run's alone, nor is named in unkeyed", f.Name)
		}
	}
	// the upstream's credentials, and a TLS client configuration
	c1, c2 := base(), base()
	c1.Upstream, c2.Upstream = &Upstream{HTTP: proxyURL}, &Upstream{HTTP: other}
	if k1, _ := c1.Key(); func() bool { k2, _ := c2.Key(); return k1 == k2 }() {
		t.Error("upstreams with other passwords have one key")
	}
	c1.Upstream.TLS = &tls.Config{}
	if _, ok := c1.Key(); ok {
		t.Error("an upstream's TLS configuration has a key")
	}
	// a copy has the same key
	if got, _ := b.Key(); got != want {
		t.Error("the key changes from one call to the next")
	}
}
