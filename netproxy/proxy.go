// Package netproxy is cordon's host-side network filter: an HTTP proxy
// (absolute-form requests and CONNECT tunnels) and a SOCKS5 proxy (CONNECT,
// domain names resolved here) that decide, for one run, which destinations
// a sandboxed command may reach.
//
// It enforces the allow and deny lists (exact names, "*.name" for
// subdomains, IP addresses listed literally, optional ports; deny first;
// nothing when the allow list is empty), asks an optional Asker about names
// neither list matches, and refuses an allowed name that resolves to
// loopback, link-local, cloud metadata or the host's own addresses (DNS
// rebinding): a name is resolved once and only the addresses that passed
// are dialled. A connection is attributed to a run by the Proxy whose
// listener it arrived on, never by anything the client says.
package netproxy

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"cordon.dev/cordon/netproxy/mask"
)

// Config is the policy and the plumbing of one Proxy.
type Config struct {
	// Run identifies the run the proxy serves; it is reported with every
	// decision and sent to the Asker.
	Run string
	// AllowedDomains and DeniedDomains are the patterns of ParsePattern
	// (settings key sandbox.network.allowedDomains and deniedDomains). An
	// empty AllowedDomains allows nothing.
	AllowedDomains []string
	DeniedDomains  []string
	// DeniedReasons gives, for an entry of DeniedDomains (as written), the
	// reason a refusal by it tells the command and records (settings key
	// sandbox.network.deniedDomainReasons).
	DeniedReasons map[string]string
	// DeniedAddresses are addresses and ranges an allowed name may not
	// resolve to, beyond loopback, link-local, metadata and this host's
	// own (settings key sandbox.network.deniedResolvedAddresses).
	DeniedAddresses []netip.Prefix
	// Ask, when set, decides about names neither list matches. Its answers
	// are remembered for the life of the Proxy; a failure or timeout
	// refuses.
	Ask Asker
	// AskTimeout bounds one question (default 60s).
	AskTimeout time.Duration
	// OnDecision, when set, receives every decision, allowed or refused,
	// synchronously on the connection's goroutine: it must not block long.
	OnDecision func(Decision)
	// Resolver resolves names (default net.DefaultResolver).
	Resolver Resolver
	// InterfaceAddrs lists this host's own addresses, which no name may
	// resolve to (default: the addresses of every interface, re-read at
	// most once a second).
	InterfaceAddrs func() []netip.Addr
	// DialTimeout bounds resolving and connecting to one destination
	// (default 30s).
	DialTimeout time.Duration
	// Dial, when set, makes the proxy's connections to destinations (an
	// address and port) and to a TCP upstream proxy, instead of a
	// net.Dialer: a pod's proxy connects from the pod's network
	// namespace. Each call is bounded by a per-address timeout.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Upstream, when set, is the proxy allowed destinations are reached
	// through (see upstream.go); nil: directly.
	Upstream *Upstream
	// Mask holds the run's masked secrets: a tunnel to a host one of
	// them may go to is terminated with CA's certificates, and its
	// requests get the real values (terminate.go). Both nil: every
	// tunnel is opaque.
	Mask *mask.Set
	CA   *CA
	// Terminate, when set, has every allowed tunnel that carries TLS
	// ended with CA's certificates, not only those to masked secrets'
	// hosts (sandbox-runtime's tlsTerminate).
	Terminate *Termination
	// OnCredential, when set, receives each use of a masked secret the
	// proxy sees on the wire, once per request and secret: its real value
	// put in, or its fake sent as it is (to another host, or over plain
	// HTTP). Synchronously, on the connection's goroutine.
	OnCredential func(CredentialUse)
	// RootCAs verify the servers of terminated tunnels (nil: this host's
	// roots).
	RootCAs *x509.CertPool
	// StripResponseHeaders are never passed back to the command (settings
	// key sandbox.network.stripResponseHeaders): compared without case,
	// '-', '_' and '.' alike, as sandbox-runtime does.
	StripResponseHeaders []string
	// RequireHostMatch refuses a request whose Host names another host or
	// port than its target (421), and a tunnel whose first request or TLS
	// server name names another host than the tunnel's
	// (requireHostMatch).
	RequireHostMatch bool
	// RefuseOpaqueTunnels refuses every CONNECT and SOCKS5 tunnel: the
	// proxy cannot see into them (refuseOpaqueTunnels).
	RefuseOpaqueTunnels bool
	// ExternalHTTP and ExternalSOCKS, when set, are the address of a proxy
	// of the user's on this host ("127.0.0.1:8888") that the sandbox's
	// HTTP (SOCKS) port leads to instead of this proxy, which then
	// decides what that port reaches (sandbox-runtime's httpProxyPort and
	// socksProxyPort): ServePort relays to it.
	ExternalHTTP, ExternalSOCKS string
}

// Proxy serves one run: every connection accepted on a listener given to
// Serve is the run's.
type Proxy struct {
	cfg      Config
	rules    *Rules
	resolver Resolver
	ownAddrs func() []netip.Addr
	dialer   net.Dialer // what stays on this host: the user's proxy ports, a unix upstream
	// dialAddr connects to a destination or a TCP upstream (Config.Dial or
	// dialer), within perAddressDial
	dialAddr func(ctx context.Context, network, address string) (net.Conn, error)

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	pool *pool // idle upstream connections of the HTTP forwarding
	// dialDest connects to an allowed destination: to the addresses the
	// decision allowed, or through the upstream proxy it names (tests
	// wrap it)
	dialDest func(context.Context, Decision) (net.Conn, error)

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	asks      map[string]*askCall
	asking    int // questions without an answer yet
	active    int // client connections being served (see admit)
	// largeHeads: a slot for each head past largeHead being read or
	// served (see headReader)
	largeHeads chan struct{}
	// terminated: a slot for each tunnel whose TLS is ended here
	terminated chan struct{}
	wg         sync.WaitGroup
}

// Timeouts of the protocol exchanges before a connection is established.
const (
	handshakeTimeout  = 30 * time.Second // SOCKS greeting and request
	firstByteTimeout  = 60 * time.Second // a client that connects and says nothing
	idleTimeout       = 2 * time.Minute  // a kept-alive HTTP client connection
	defaultAskTimeout = 60 * time.Second
	defaultDial       = 30 * time.Second
	perAddressDial    = 10 * time.Second
)

// maxConns bounds the client connections one proxy serves at once. Each
// is a descriptor and a goroutine of cordon's on the host (two descriptors
// for a tunnel), outside the sandbox's own limits: a command must not be
// able to exhaust them. A connection beyond it is closed at once.
const maxConns = 1024

// New checks the configuration and returns a Proxy that serves nothing
// until Serve is called.
func New(cfg Config) (*Proxy, error) {
	rules, err := NewRules(cfg.AllowedDomains, cfg.DeniedDomains)
	if err != nil {
		return nil, err
	}
	if t := cfg.Terminate; t != nil {
		c := *t
		if c.exclude, err = NewRules(t.Exclude, nil); err != nil {
			return nil, fmt.Errorf("the hosts whose TLS is not ended: %w", err)
		}
		cfg.Terminate = &c
	}
	if u := cfg.Upstream; u != nil && len(u.Sockets) > 0 {
		c := *u
		c.Sockets = slices.Clone(u.Sockets)
		for i := range c.Sockets {
			sp := &c.Sockets[i]
			if sp.rules, err = NewRules(sp.Domains, nil); err != nil {
				return nil, fmt.Errorf("the proxy on %s: %w", sp.Path, err)
			}
		}
		cfg.Upstream = &c
	}
	if cfg.AskTimeout <= 0 {
		cfg.AskTimeout = defaultAskTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = defaultDial
	}
	p := &Proxy{
		cfg:        cfg,
		rules:      rules,
		resolver:   cfg.Resolver,
		ownAddrs:   cfg.InterfaceAddrs,
		dialer:     net.Dialer{Timeout: perAddressDial},
		listeners:  map[net.Listener]struct{}{},
		conns:      map[net.Conn]struct{}{},
		largeHeads: make(chan struct{}, maxLargeHeads),
		terminated: make(chan struct{}, cmp.Or(cfg.Terminate.maxTunnels(), defaultMaxTerminated)),
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	p.dialAddr = p.dialer.DialContext
	if dial := cfg.Dial; dial != nil {
		p.dialAddr = func(ctx context.Context, network, address string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, perAddressDial)
			defer cancel()
			return dial(ctx, network, address)
		}
	}
	if p.ownAddrs == nil {
		p.ownAddrs = (&interfaceAddrs{}).get
	}
	p.pool = &pool{p: p, timeout: idleUpstream}
	p.dialDest = func(ctx context.Context, d Decision) (net.Conn, error) {
		if d.via != nil {
			return p.dialVia(ctx, d.via, d)
		}
		return p.dial(ctx, d.Addrs, d.Port)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Serve accepts connections on l until l fails or the Proxy is closed, and
// serves each as an HTTP proxy or, when its first byte is 5, as SOCKS5: the
// HTTP and SOCKS ports both speak both. It returns ErrClosed after Close.
func (p *Proxy) Serve(l net.Listener) error {
	return p.accept(l, p.serveConn)
}

// ServePort serves l as the sandbox's HTTP port, or its SOCKS port
// (socks): with Serve, or, when Config.ExternalHTTP (ExternalSOCKS) names
// a proxy of the user's, by relaying every connection to it as it is.
func (p *Proxy) ServePort(l net.Listener, socks bool) error {
	to := p.cfg.ExternalHTTP
	if socks {
		to = p.cfg.ExternalSOCKS
	}
	if to == "" {
		return p.Serve(l)
	}
	return p.accept(l, func(c net.Conn) { p.relayTo(c, to, !socks) })
}

// relayTo relays the client connection c to the proxy of the user's at
// addr; one that does not answer gets, on the HTTP port (httpPort), a 502
// that names it.
func (p *Proxy) relayTo(c net.Conn, addr string, httpPort bool) {
	defer p.wg.Done()
	defer p.release()
	defer p.untrack(c)
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	up, err := p.dialer.DialContext(ctx, "tcp", addr)
	cancel()
	if err != nil {
		if httpPort {
			msg := fmt.Sprintf("cordon: your proxy at %s (sandbox.network.httpProxyPort), which the sandbox's HTTP port leads to, does not answer: %v\n", addr, dialError(err))
			c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
			c.Write(errorResponse(502, errUpstreamProxy, msg, true))
			(&clientConn{c: c, linger: true}).close()
		}
		c.Close()
		return
	}
	p.relay(c, up, nil, nil)
}

// accept accepts connections on l until l fails or the Proxy is closed,
// and serves each, counted and tracked, with serve, which must end with
// p.wg.Done, p.release and p.untrack.
func (p *Proxy) accept(l net.Listener, serve func(net.Conn)) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			if temporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if !p.admit() {
			c.Close()
			continue
		}
		if !p.begin(c) {
			p.release()
			c.Close()
			return ErrClosed
		}
		go serve(c)
	}
}

// temporary reports the accept errors that pass (EMFILE, ECONNABORTED): a
// full file table must not end the run's network.
func temporary(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// Close stops every listener given to Serve, ends every connection and
// pending question, and waits for the proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.pool.close()
	p.wg.Wait()
	return nil
}

// admit counts a new client connection; false when maxConns are served.
func (p *Proxy) admit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active >= maxConns {
		return false
	}
	p.active++
	return true
}

// release uncounts a client connection that ended.
func (p *Proxy) release() {
	p.mu.Lock()
	p.active = max(p.active-1, 0)
	p.mu.Unlock()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// begin registers a goroutine that Close must wait for, and a connection
// (if not nil) that Close must end; false when the proxy is closed. Close
// sets closed under the same lock before it waits: no Add races the Wait.
func (p *Proxy) begin(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if c != nil {
		p.conns[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

// track registers a connection that Close must end; false when closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// serveConn reads the first byte to tell SOCKS5 from HTTP.
func (p *Proxy) serveConn(c net.Conn) {
	defer p.wg.Done()
	var b [1]byte
	c.SetReadDeadline(time.Now().Add(firstByteTimeout))
	if _, err := io.ReadFull(c, b[:]); err != nil {
		p.untrack(c)
		c.Close()
		p.release()
		return
	}
	c.SetReadDeadline(time.Time{})
	if b[0] == socksVersion {
		defer p.release()
		defer p.untrack(c)
		defer c.Close()
		p.serveSOCKS(c)
		return
	}
	defer p.release()
	defer p.untrack(c)
	defer c.Close()
	var rt route
	if p.cfg.Mask != nil {
		// plain HTTP: fakes reported, real values put in only with
		// allowPlaintextInject
		rt.prepare = p.unmask
	}
	p.serveHTTP(c, &prefixConn{Conn: c, first: b[:]}, rt)
}

// prefixConn gives back the byte read to sniff the protocol.
type prefixConn struct {
	net.Conn
	first []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(b, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// dial connects to the first of addrs that answers. The addresses are the
// ones decide checked: nothing is resolved again.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	var first error
	for _, a := range addrs {
		c, err := p.dialAddr(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = errors.New("no address to dial")
	}
	return nil, first
}

// relay copies both ways between the client and the upstream connection
// until both directions end, then closes both. Between two *net.TCPConn
// io.Copy splices in the kernel.
//
// In a tunnel (d set), what the client sends first is read before it is
// passed on, from head (bytes the client sent ahead) and then the
// connection, and the tunnel is closed when it names a destination the
// policy refuses (see checkTunnel).
func (p *Proxy) relay(client, upstream net.Conn, head []byte, d *Decision) {
	if !p.track(client) {
		client.Close()
		upstream.Close()
		return
	}
	if !p.track(upstream) {
		p.untrack(client)
		client.Close()
		upstream.Close()
		return
	}
	defer func() {
		p.untrack(client)
		p.untrack(upstream)
		client.Close()
		upstream.Close()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if d != nil {
			rest := bytes.NewReader(head)
			br := bufio.NewReaderSize(io.MultiReader(rest, client), maxHello+tlsRecordMax)
			if p.checkTunnel(br, *d) != nil {
				client.Close()
				upstream.Close()
				return
			}
			// What was read, then what is left of head, in order.
			if _, err := writeBuffered(upstream, br, -1); err != nil {
				client.Close()
				upstream.Close()
				return
			}
			if _, err := io.Copy(upstream, rest); err != nil {
				client.Close()
				upstream.Close()
				return
			}
		}
		copyHalf(upstream, client)
	}()
	copyHalf(client, upstream)
	<-done
}

// copyHalf copies src to dst, then passes the end of the stream on; an
// error ends both directions.
func copyHalf(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if err != nil {
		dst.Close()
		src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
}

// writeBuffered writes to dst the bytes br holds already, at most n of
// them when n >= 0, and drops them from br.
func writeBuffered(dst io.Writer, br *bufio.Reader, n int64) (int, error) {
	k := br.Buffered()
	if n >= 0 {
		k = int(min(int64(k), n))
	}
	if k == 0 {
		return 0, nil
	}
	b, _ := br.Peek(k)
	if _, err := dst.Write(b); err != nil {
		return 0, err
	}
	return br.Discard(k)
}
