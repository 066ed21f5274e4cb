package runtime

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/netproxy"
	"cordon.dev/cordon/spec"
)

// bridge receives the proxy's listening sockets from the sandbox's init
// (spec.InitProxyFD) and serves cordon's filtering proxy on them.
type bridge struct {
	sock, child *os.File
	proxy       *netproxy.Proxy
	// socksPort is the SOCKS port inside the sandbox: its listener is
	// served as that port (see netproxy.Proxy.ServePort)
	socksPort int
}

// newBridge prepares the unix socket the init hands the listeners over,
// when the spec asks for the proxy. The connections the proxy refuses,
// and the masked credentials it sees, go to rec.
func newBridge(s *specs.Spec, cfg *netproxy.Config, rec *recorder) (*bridge, error) {
	if s.Annotations[spec.AnnotationProxy] == "" {
		return nil, nil
	}
	if cfg == nil {
		return nil, errors.New("the spec asks for the network proxy and no proxy configuration was given")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("proxy bridge: %w", err)
	}
	b := &bridge{sock: os.NewFile(uintptr(fds[0]), "proxy-bridge"), child: os.NewFile(uintptr(fds[1]), "proxy-bridge-init")}
	if _, so, ok := strings.Cut(s.Annotations[spec.AnnotationProxy], ","); ok {
		b.socksPort, _ = strconv.Atoi(so)
	}
	c := *cfg
	user := c.OnDecision
	c.OnDecision = func(d netproxy.Decision) {
		if !d.Allowed && d.Reason != "" {
			rec.add(NetworkViolation(d))
		}
		if user != nil {
			user(d)
		}
	}
	if c.Mask != nil {
		c.OnCredential = func(u netproxy.CredentialUse) { rec.add(CredentialViolation(u)) }
	}
	if b.proxy, err = netproxy.New(c); err != nil {
		b.close()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return b, nil
}

// serve receives the listeners (the init sends them before it starts the
// command) and serves the proxy on them.
func (b *bridge) serve() error {
	b.child.Close()
	_ = b.sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	fds, err := receiveFDs(b.sock, 4)
	if err != nil {
		return fmt.Errorf("proxy bridge: the sandbox's init sent no listeners: %w", err)
	}
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "proxy-listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("proxy bridge: %w", err)
		}
		socks := false
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			socks = a.Port == b.socksPort
		}
		go func() { _ = b.proxy.ServePort(ln, socks) }()
	}
	return nil
}

func (b *bridge) close() {
	if b.proxy != nil {
		b.proxy.Close()
	}
	b.sock.Close()
	b.child.Close()
}
