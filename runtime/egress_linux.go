package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"

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
//   - out: loopback (the pod's own, where the proxy listens), the replies
//     of connections made to the pod (conntrack's reply direction), ICMP
//     errors about them, and the IPv6 neighbour discovery the kernel needs
//     to keep an address; everything else is refused at once ("No route
//     to host"), the pod's DNS server included — names are resolved by
//     the proxy;
//   - in: nothing from outside to loopback addresses (route_localnet).
//
// The rules are the namespace's: they hold for every container of the
// pod and end with the namespace, never removed by cordon (a second
// container's create replaces them with the same, in one transaction).
// The container cannot change them: its policy drops CAP_NET_ADMIN, and
// the agent profile refuses new user namespaces.

// egressTable is the nftables table (family inet) that holds the rules.
const egressTable = "cordon"

// egressRuleset replaces the table atomically: one nft transaction
// declares it (a no-op when present), deletes it, and defines it again.
var egressRuleset = `table inet ` + egressTable + `
delete table inet ` + egressTable + `
table inet ` + egressTable + ` {
	chain output {
		type filter hook output priority filter; policy drop;
		oifname "lo" accept
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
`

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

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
