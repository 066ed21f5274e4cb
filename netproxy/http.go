package netproxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The X-Proxy-Error values that are not refusals.
const (
	errBadRequest    = "bad-request"
	errResolveFailed = "resolve-failed"
	errUpstream      = "upstream-error"
)

// serveHTTP handles one request on a client connection: CONNECT opens a
// tunnel; an absolute-form request is forwarded, the connection kept alive.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitTarget(r.Method, r.RequestURI)
	if err != nil {
		writeError(w, http.StatusBadRequest, errBadRequest, "cordon proxy: "+err.Error()+"\n")
		return
	}
	proto := "http"
	if r.Method == http.MethodConnect {
		proto = "connect"
	}
	d := p.decide(r.Context(), proto, host, port)
	if !d.Allowed {
		refuseHTTP(w, d)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, d)
		return
	}
	var upgraded atomic.Bool // set by ModifyResponse, which holds the connection
	ctx := context.WithValue(r.Context(), decisionKey{}, d)
	out := r.WithContext(context.WithValue(ctx, upgradeKey{}, &upgraded))
	if out.Body != nil && out.Body != http.NoBody {
		out.Body = &endedBody{ReadCloser: out.Body}
	}
	p.forward.ServeHTTP(w, out)
	if upgraded.Load() {
		p.release()
	}
}

type upgradeKey struct{}

// endedBody is a client's request body that stays at its end once it got
// there. The forwarder's transport reads a Content-Length body once more
// after its last byte, to check that nothing follows; the HTTP server
// closes a body it has drained when the answer's head is written; an
// upstream that answers on the body's last byte can make the close come
// first. The check must then see the end: a closed body fails it, the
// transport takes that for a failed write of the request and closes the
// upstream connection the answer is streaming on, and the client gets a
// truncated answer.
type endedBody struct {
	io.ReadCloser
	ended atomic.Bool
}

func (b *endedBody) Read(p []byte) (int, error) {
	if b.ended.Load() {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.ended.Store(true)
	}
	return n, err
}

// refuseHTTP answers a refusal: 403 and X-Proxy-Error with the reason, or
// 502 when the name did not resolve.
func refuseHTTP(w http.ResponseWriter, d Decision) {
	if d.Reason == "" {
		writeError(w, http.StatusBadGateway, errResolveFailed, d.Message())
		return
	}
	writeError(w, http.StatusForbidden, string(d.Reason), d.Message())
}

func writeError(w http.ResponseWriter, status int, xerr, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Proxy-Error", xerr)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// connect dials the destination, then answers 200 and relays bytes.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, d Decision) {
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.DialTimeout)
	upstream, err := p.dial(ctx, d.Addrs, d.Port)
	cancel()
	if err != nil {
		writeError(w, http.StatusBadGateway, errUpstream, fmt.Sprintf("cordon proxy: connect to %s: %v\n", d.dest(), dialError(err)))
		return
	}
	rc := http.NewResponseController(w)
	client, brw, err := rc.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	p.hold() // the HTTP server released it: the tunnel counts it
	defer p.release()
	if pc, ok := client.(*prefixConn); ok {
		client = pc.raw()
	}
	client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	// a client may send its first bytes (a TLS hello) before the answer
	var head []byte
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		head = bytes.Clone(b)
	}
	if !p.begin(nil) {
		client.Close()
		upstream.Close()
		return
	}
	defer p.wg.Done()
	p.relay(client, upstream, head, &d)
}

// dialError drops the address from a dial error: the client learns that
// the connection failed, not where the name points.
func dialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

type decisionKey struct{}

// newForwarder builds the forwarding half of the HTTP proxy. Its transport
// never resolves: it dials the addresses of the request's decision, and
// pools connections by destination name, which every request that reuses
// one was allowed to reach.
func (p *Proxy) newForwarder() *httputil.ReverseProxy {
	t := &http.Transport{
		Proxy: nil, // never the host's own HTTP_PROXY
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d, ok := ctx.Value(decisionKey{}).(Decision)
			if !ok || !d.Allowed || addr != d.dest() {
				return nil, fmt.Errorf("cordon proxy: no decision for %s", addr)
			}
			ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
			defer cancel()
			return p.dial(ctx, d.Addrs, d.Port)
		},
		ForceAttemptHTTP2:     false,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		// pass the client's Accept-Encoding and the server's encoding through
		DisableCompression: true,
	}
	return &httputil.ReverseProxy{
		// Rewrite (unlike Director) starts from a request whose hop-by-hop
		// headers (Connection and what it names, Proxy-Connection,
		// Proxy-Authorization, Keep-Alive, TE, Upgrade, ...) are removed,
		// and adds no X-Forwarded-For.
		Rewrite: func(pr *httputil.ProxyRequest) {
			d := pr.In.Context().Value(decisionKey{}).(Decision)
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = d.hostHeader()
			// RFC 9112 3.2.2: a proxy replaces Host with the target's
			// authority, so the Host sent is the name that was checked
			pr.Out.Host = ""
		},
		// an upgraded connection (101) is hijacked, and relayed until
		// ServeHTTP returns: it counts while it is
		ModifyResponse: func(resp *http.Response) error {
			if u, ok := resp.Request.Context().Value(upgradeKey{}).(*atomic.Bool); ok && resp.StatusCode == http.StatusSwitchingProtocols && !u.Load() {
				p.hold()
				u.Store(true)
			}
			return nil
		},
		Transport:  t,
		BufferPool: bodyBuffers{},
		ErrorLog:   log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			d, _ := r.Context().Value(decisionKey{}).(Decision)
			writeError(w, http.StatusBadGateway, errUpstream, fmt.Sprintf("cordon proxy: %s: %v\n", d.dest(), dialError(err)))
		},
	}
}

// dest is host:port, with brackets for IPv6.
func (d Decision) dest() string {
	return net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
}

// hostHeader is the authority of the destination, the port left out when
// it is 80.
func (d Decision) hostHeader() string {
	if d.Port == 80 {
		if strings.Contains(d.Host, ":") {
			return "[" + d.Host + "]"
		}
		return d.Host
	}
	return d.dest()
}

// bodyBufferSize is the buffer a forwarded body is copied through. The
// ReverseProxy's default, 32 KiB, costs a read and a write for every 32 KiB:
// a large body on a fast link then spends most of its time in system calls.
const bodyBufferSize = 256 << 10

var bodyPool = sync.Pool{New: func() any { return new([bodyBufferSize]byte) }}

// bodyBuffers lends the forwarder its copy buffers.
type bodyBuffers struct{}

func (bodyBuffers) Get() []byte  { return bodyPool.Get().(*[bodyBufferSize]byte)[:] }
func (bodyBuffers) Put(b []byte) { bodyPool.Put((*[bodyBufferSize]byte)(b)) }
