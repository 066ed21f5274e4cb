package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// A container under a policy that allows no network, or only cordon's
// proxy, in a network namespace its bundle joins by path (a Kubernetes
// pod's, which CNI gave an address) keeps that namespace: what connects
// to the pod (kubelet's probes, Services, a controller) still reaches it.
// What leaves it is confined there by nftables rules cordon installs
// before the container's process exists:
//
//   - out: loopback (the pod's own, where the proxy listens), the proxy's
//     connections (sockets of the monitor's, made in the pod's namespace
//     with egressMark: podDial), the replies of connections made to the
//     pod (conntrack's reply direction), ICMP errors about them, and the
//     IPv6 neighbour discovery the kernel needs to keep an address;
//     everything else is refused at once ("No route to host"), the pod's
//     DNS server included — names are resolved by the proxy, which asks
//     that server;
//   - in: nothing from outside to loopback addresses (route_localnet).
//
// The rules are the namespace's: they hold for every container of the
// pod and end with the namespace, never removed by cordon (a second
// container's create replaces them with the same, in one transaction).
// The container cannot change them nor send around them: it holds neither
// CAP_NET_ADMIN (nftables, routes, interfaces) nor CAP_NET_RAW (packet
// sockets, which skip the output hook; SO_MARK), whatever its policy
// keeps (spec.Tighten drops both), and a user namespace of its own gives
// it neither over the pod's namespace, which the node's owns.

// egressTable is the nftables table (family inet) that holds the rules.
const egressTable = "cordon"

// egressMark is the mark of the proxy's sockets in a pod's namespace,
// which the rules let out. Setting a socket's mark takes CAP_NET_ADMIN or
// CAP_NET_RAW there.
const egressMark = 0x434f5244 // "CORD"

// egressRuleset replaces the table atomically: one nft transaction
// declares it (a no-op when present), deletes it, and defines it again.
var egressRuleset = fmt.Sprintf(`table inet %[1]s
delete table inet %[1]s
table inet %[1]s {
	chain output {
		type filter hook output priority filter; policy drop;
		oifname "lo" accept
		meta mark %#[2]x accept
		ct direction reply ct state established accept
		ct state related meta l4proto { icmp, ipv6-icmp } accept
		icmpv6 type { nd-router-solicit, nd-neighbor-solicit, nd-neighbor-advert, mld-listener-report, mld2-listener-report } accept
		reject with icmpx type admin-prohibited
	}
	chain input {
		type filter hook input priority filter; policy accept;
		iifname != "lo" ip daddr 127.0.0.0/8 drop
		iifname != "lo" ip6 daddr ::1 drop
	}
}
`, egressTable, egressMark)

// joinedNetwork returns the network namespace the spec joins by path, ""
// when it asks for a new one or none, or when that namespace is the
// runtime's own: the node's network is never confined, a host-network
// container gets a private namespace instead.
func joinedNetwork(s *specs.Spec) string {
	if s.Linux == nil {
		return ""
	}
	for _, ns := range s.Linux.Namespaces {
		if ns.Type != specs.NetworkNamespace || ns.Path == "" {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(ns.Path, &st) == nil && ownNetns(&st) {
			return ""
		}
		return ns.Path
	}
	return ""
}

// ownNetns reports whether st is the runtime's own network namespace.
// The calling thread's: /proc/self is the main thread's, which may be one
// that inNetns moved into a pod's namespace (Go wedges the main thread
// rather than end it when a goroutine exits locked to it).
func ownNetns(st *unix.Stat_t) bool {
	var own unix.Stat_t
	return unix.Stat("/proc/thread-self/ns/net", &own) == nil && st.Dev == own.Dev && st.Ino == own.Ino
}

// inNetns runs f on a thread that has entered the network namespace at
// path; the thread ends with f (it is never handed back to Go's scheduler
// in another namespace). What f creates there (sockets, processes it
// starts) stays there.
func inNetns(path string, f func() error) error {
	ns, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the network namespace %s: %w", path, err)
	}
	defer unix.Close(ns)
	var st unix.Stat_t
	if err := unix.Fstat(ns, &st); err != nil {
		return fmt.Errorf("network namespace %s: %w", path, err)
	}
	// the node's own network must never get a pod's rules
	if ownNetns(&st) {
		return fmt.Errorf("network namespace %s is the runtime's own", path)
	}
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine.
		goruntime.LockOSThread()
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("enter the network namespace %s: %w", path, err)
			return
		}
		done <- f()
	}()
	return <-done
}

// nftPaths are where nft is looked for when it is not on PATH (the shim's
// PATH may lack the sbin directories).
var nftPaths = []string{"/usr/sbin/nft", "/sbin/nft"}

// confineEgress installs the egress rules in the network namespace at
// path (see egressRuleset), with nft(8).
func confineEgress(path string) error {
	nft, err := exec.LookPath("nft")
	if err != nil {
		for _, p := range nftPaths {
			if fi, e := os.Stat(p); e == nil && fi.Mode().IsRegular() {
				nft, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return errors.New("egress rules for the pod's network namespace: nft not found (install nftables on the node)")
	}
	err = inNetns(path, func() error {
		// Started from this thread, nft runs in the namespace.
		cmd := exec.Command(nft, "-f", "-")
		cmd.Stdin = strings.NewReader(egressRuleset)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Dir = "/"
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w: %s", nft, err, bytes.TrimSpace(out.Bytes()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("egress rules for the network namespace %s: %w", path, err)
	}
	return nil
}

// listenInNetns makes n listening TCP sockets on 127.0.0.1, on ports the
// kernel picks, inside the network namespace at path: the proxy's, in a
// namespace other containers share (a pod's), where fixed ports would be
// taken by the first container.
func listenInNetns(path string, n int) ([]*os.File, error) {
	var files []*os.File
	err := inNetns(path, func() error {
		for range n {
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				return err
			}
			f, err := l.(*net.TCPListener).File()
			l.Close()
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		closeFiles(files)
		return nil, fmt.Errorf("the proxy's sockets in the network namespace %s: %w", path, err)
	}
	return files, nil
}

// proxyListeners makes the proxy's two listening sockets (HTTP, SOCKS5) in
// the network namespace at path and returns their ports.
func proxyListeners(path string) (ports [2]int, files []*os.File, err error) {
	if files, err = listenInNetns(path, 2); err != nil {
		return ports, nil, err
	}
	for i, f := range files {
		if ports[i], err = listenerPort(f); err != nil {
			closeFiles(files)
			return ports, nil, fmt.Errorf("the proxy's sockets: %w", err)
		}
	}
	return ports, files, nil
}

// listenerPort is the port a listening socket is bound to.
func listenerPort(f *os.File) (int, error) {
	sa, err := unix.Getsockname(int(f.Fd()))
	if err != nil {
		return 0, err
	}
	if in, ok := sa.(*unix.SockaddrInet4); ok {
		return in.Port, nil
	}
	return 0, fmt.Errorf("%s is not an IPv4 socket", f.Name())
}

// podDial returns the dialer of the proxy of a container in the pod's
// network namespace at path: each connection is made from there, with
// egressMark, so that it is the pod's (its address, the NetworkPolicies
// that select it, the routes and DNS of its network). Only addresses are
// dialled: a name would be resolved outside.
func podDial(path string) func(ctx context.Context, network, address string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if e := c.Control(func(fd uintptr) {
			err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, egressMark)
		}); e != nil {
			return e
		}
		return err
	}}
	return func(ctx context.Context, network, address string) (c net.Conn, err error) {
		if _, err := netip.ParseAddrPort(address); err != nil {
			return nil, fmt.Errorf("the pod's proxy dials addresses only: %w", err)
		}
		err = inNetns(path, func() error {
			var e error
			c, e = d.DialContext(ctx, network, address)
			return e
		})
		return c, err
	}
}

// podResolver resolves names for the proxy of a container in a pod with
// the pod's DNS servers (host:port), asked through dial (podDial), in
// turn. With none it asks the servers of the node's resolv.conf, from the
// pod. Names in the node's /etc/hosts resolve as there (Go's resolver reads
// it first).
func podResolver(servers []string, dial func(ctx context.Context, network, address string) (net.Conn, error)) *net.Resolver {
	var next atomic.Uint32
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		if len(servers) > 0 {
			address = servers[int(next.Add(1)-1)%len(servers)]
		}
		return dial(ctx, network, address)
	}}
}

// maxResolvConf bounds the resolv.conf read for a pod's DNS servers.
const maxResolvConf = 64 << 10

// podNameservers are the DNS servers of the container's /etc/resolv.conf,
// from the file the spec binds there (a pod's, which containerd writes
// from its dnsConfig), as host:port; nil when there is none or it cannot
// be read.
func podNameservers(s *specs.Spec) []string {
	src := ""
	for _, m := range s.Mounts {
		if path.Clean(m.Destination) == "/etc/resolv.conf" {
			src = m.Source // the last one is what the container sees
		}
	}
	if src == "" {
		return nil
	}
	// The pod's author may bind any file of the node there (hostPath):
	// only a regular file is opened (see readPolicyFile).
	pf, err := os.OpenFile(src, unix.O_PATH, 0)
	if err != nil {
		return nil
	}
	defer pf.Close()
	data, err := readRegular(pf, src, maxResolvConf)
	if err != nil {
		return nil
	}
	return parseNameservers(data)
}

// parseNameservers returns the addresses of resolv.conf's nameserver
// lines, as host:port (port 53); lines it cannot read are skipped, as the
// C library does.
func parseNameservers(data []byte) []string {
	var out []string
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		if a, err := netip.ParseAddr(f[1]); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53).String())
		}
	}
	return out
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
