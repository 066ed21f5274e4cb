//go:build linux

package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// The agent pods' network, through the CRI: what connects to an agent pod
// reaches it, what it connects to goes only through cordon's proxy, which
// connects from the pod and resolves with the pod's DNS server. The
// cluster around the pods is the test's: a service in a network namespace
// on the pod network's bridge, a DNS server and a server on the node.

// criService is a server of the cluster's outside the pods: a network
// namespace on the pod network's bridge (another pod, a Service's
// endpoint) with an HTTP server on port 8080 that records what it gets.
type criService struct {
	ip string
	mu sync.Mutex
	// seen are the requests, "REMOTE-IP METHOD HOST PATH"
	seen []string
}

// newCRIService starts the service at the pod network's address ip.
func (c *cri) newCRIService(t *testing.T, ip string) *criService {
	t.Helper()
	ns := "citsvc" + suiteToken
	veth := "cits" + suiteToken
	netIP(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	netIP(t, "link", "add", veth, "type", "veth", "peer", "name", veth+"p")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", veth).Run() })
	netIP(t, "link", "set", veth+"p", "netns", ns)
	netIP(t, "link", "set", veth, "master", c.bridge, "up")
	netIP(t, "-n", ns, "addr", "add", ip+"/24", "dev", veth+"p")
	netIP(t, "-n", ns, "link", "set", veth+"p", "up")
	s := &criService{ip: ip}
	l := listenInNetns(t, "/var/run/netns/"+ns, net.JoinHostPort(ip, "8080"))
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		s.mu.Lock()
		s.seen = append(s.seen, host+" "+r.Method+" "+r.Host+" "+r.URL.Path)
		s.mu.Unlock()
		fmt.Fprintf(w, "service-ok %s\n", r.URL.Path)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return s
}

// requests returns what the service got with token in it.
func (s *criService) requests(token string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.seen {
		if strings.Contains(r, token) {
			out = append(out, r)
		}
	}
	return out
}

// listenInNetns listens on addr (TCP) inside the network namespace at
// path, from a thread that enters it and ends with its goroutine.
func listenInNetns(t *testing.T, path, addr string) net.Listener {
	t.Helper()
	type result struct {
		l   net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread ends here
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err != nil {
			done <- result{nil, err}
			return
		}
		l, err := net.Listen("tcp4", addr)
		done <- result{l, err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatalf("listen on %s in %s: %v", addr, path, r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	return r.l
}

// testAgentNetwork: an agent pod keeps its pod network for what connects
// to it (kubelet's probes, Services: here an HTTP GET from the node to the
// pod's address), while its own connections go nowhere but through
// cordon's proxy: not to the node's servers, not to the cluster's service,
// not to the pod's DNS server. Under dev.cordon.policy=agent-network with
// allowed domains the proxy resolves the allowed name with the pod's DNS
// server and reaches the cluster's service from the pod's address; an
// unlisted name gets 403 and a record; under dev.cordon.policy=agent
// nothing at all. The same pod under runc reaches everything directly (the
// control).
func (c *cri) testAgentNetwork(t *testing.T) {
	svc := c.newCRIService(t, strings.TrimSuffix(c.gateway, "1")+"250")
	tcp := newSeenServer(t, "tcp4", c.gateway+":0", "")
	// The pod's DNS server (its resolv.conf names it): the cluster's
	// names resolve to the service.
	dns := newSeenServer(t, "udp4", c.gateway+":53", svc.ip)
	_, tcpPort, _ := net.SplitHostPort(tcp.addr)
	www := t.TempDir()
	must(t, os.Chmod(www, 0o755))
	proxied := map[string]string{"dev.cordon.policy": "agent-network", "dev.cordon.network.allowedDomains": "allowed" + criClusterDomain}
	for _, tc := range []struct {
		name, handler string
		annotations   map[string]string
		confined      bool
		proxy         bool
	}{
		{"runc", "runc", proxied, false, false},
		{"cordon-proxy", "cordon", proxied, true, true},
		{"cordon-agent", "cordon", map[string]string{"dev.cordon.policy": "agent"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := "t" + randomHex(6)
			must(t, os.WriteFile(filepath.Join(www, "index.html"), []byte("ready-"+token+"\n"), 0o644))
			pod := c.runPod(t, "net-"+tc.name, tc.handler, tc.annotations)
			ct := pod.start(t, "server", criContainerConfig{
				args:   []string{"httpd", "-f", "-p", "8080", "-h", "/www"},
				mounts: []map[string]any{{"container_path": "/www", "host_path": www, "readonly": true}},
			})
			ip := pod.ip(t)
			// What kubelet's httpGet probe does: from the node to the
			// pod's address.
			if body := probeHTTP(t, "http://"+net.JoinHostPort(ip, "8080")+"/"); body != "ready-"+token+"\n" {
				t.Errorf("GET of the pod's address from the node: %q", body)
			}

			// Directly: the node's server, the cluster's service, the DNS
			// server.
			direct := func(ct *criContainer, token string) {
				t.Helper()
				script := "echo " + token + "-direct | nc -w 3 " + c.gateway + " " + tcpPort + "; echo tcp=$?; " +
					"printf 'GET /" + token + "/direct HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + svc.ip + " 8080 >/dev/null; echo svc=$?; " +
					"nslookup " + token + ".cordon-test >/dev/null 2>&1; echo dns=$?"
				out, _ := ct.exec(t, "", "sh", "-c", script)
				want := "tcp=0\nsvc=0\ndns=1\n" // nslookup fails: NXDOMAIN
				if tc.confined {
					want = "tcp=1\nsvc=1\ndns=1\n"
				}
				if out != want {
					t.Errorf("direct connections from the pod: %q, want %q", out, want)
				}
				gotTCP, gotDNS := tcp.saw(token, !tc.confined), dns.saw(token, !tc.confined)
				gotSvc := slices.ContainsFunc(svc.requests(token), func(r string) bool { return strings.HasSuffix(r, "/direct") })
				if gotTCP == tc.confined || gotDNS == tc.confined || gotSvc == tc.confined {
					t.Errorf("the node's server got a connection: %v, the service a request: %v, the pod's DNS server a query: %v (confined: %v)",
						gotTCP, gotSvc, gotDNS, tc.confined)
				}
			}
			direct(ct, token)
			if !tc.confined {
				return
			}
			st := ociStateOf(t, nil, filepath.Join("/run/containerd/runc", c.ns), ct.id)
			if st.Cordon == nil || !st.Cordon.EgressRules || (st.Cordon.Proxy != nil) != tc.proxy {
				t.Fatalf("cordon state of the agent container: %+v, want the pod's network namespace kept (proxy: %v)", st.Cordon, tc.proxy)
			}
			if !tc.proxy {
				return
			}
			// The proxy listens on the pod's loopback only.
			_, port, _ := net.SplitHostPort(st.Cordon.Proxy.HTTP)
			if conn, err := net.DialTimeout("tcp4", net.JoinHostPort(ip, port), 3*time.Second); err == nil {
				conn.Close()
				t.Errorf("the container's proxy answers on the pod's address %s:%s", ip, port)
			}
			c.checkProxied(t, ct, svc, dns, ip, token)
			if vs, ok := c.waitViolation(t, ct.id, "network", "unlisted"+criClusterDomain+":8080"); !ok {
				t.Errorf("cordon violations --run %s: %+v, want unlisted%s:8080 refused", ct.id, vs, criClusterDomain)
			}

			// A second container of the pod: the same network namespace and
			// rules, a proxy of its own.
			second := pod.start(t, "second", criContainerConfig{args: []string{"sleep", "300"}})
			token2 := "t" + randomHex(6)
			c.checkProxied(t, second, svc, dns, ip, token2)
			direct(second, token2)
		})
	}
}

// criClusterDomain is the domain of the names the pods' DNS server
// answers, with the service's address.
const criClusterDomain = ".cluster.cordon-it"

// checkProxied: through the container's proxy (busybox's wget, from the
// environment cordon set) the allowed name is resolved with the pod's DNS
// server and reached from the pod's address; an unlisted name gets 403 and
// the service nothing.
func (c *cri) checkProxied(t *testing.T, ct *criContainer, svc *criService, dns *seenServer, podIP, token string) {
	t.Helper()
	script := "exec 2>&1; wget -q -O - http://allowed" + criClusterDomain + ":8080/" + token + "/allowed; echo allowed=$?; " +
		"wget -q -O - http://unlisted" + criClusterDomain + ":8080/" + token + "/unlisted; echo unlisted=$?"
	out, _ := ct.exec(t, "", "sh", "-c", script)
	for _, want := range []string{"service-ok /" + token + "/allowed\nallowed=0", "403", "unlisted=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the container said:\n%s\nwant %q", out, want)
		}
	}
	want := []string{podIP + " GET allowed" + criClusterDomain + ":8080 /" + token + "/allowed"}
	if got := svc.requests(token); !slices.Equal(got, want) {
		t.Errorf("the service got %q, want %q: the allowed request, from the pod's address", got, want)
	}
	if from := dns.from("allowed" + criClusterDomain); !slices.Contains(from, podIP) {
		t.Errorf("the pod's DNS server was asked for allowed%s from %q, want the pod's address %s", criClusterDomain, from, podIP)
	}
}

// probeHTTP GETs url from the node until it answers (the server may still
// be starting), as kubelet's probes retry, and returns the body.
func probeHTTP(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{Proxy: nil}}
	deadline := time.Now().Add(runTimeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			must(t, err)
			return string(body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seenServer is a server of the node's that records what it receives: the
// first bytes of each TCP connection, or each UDP datagram (a DNS query).
type seenServer struct {
	addr string
	mu   sync.Mutex
	seen []seenPacket
}

type seenPacket struct {
	from string // the sender's address
	data string
}

// newSeenServer listens on addr. Over UDP it answers DNS queries: names
// under criClusterDomain with the address answer (when set), others with
// NXDOMAIN.
func newSeenServer(t *testing.T, network, addr, answer string) *seenServer {
	t.Helper()
	s := &seenServer{}
	record := func(from string, data []byte) {
		host, _, _ := net.SplitHostPort(from)
		s.mu.Lock()
		s.seen = append(s.seen, seenPacket{host, string(data)})
		s.mu.Unlock()
	}
	if network == "udp4" {
		pc, err := net.ListenPacket(network, addr)
		must(t, err)
		t.Cleanup(func() { pc.Close() })
		s.addr = pc.LocalAddr().String()
		go func() {
			buf := make([]byte, 65536)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				record(from.String(), buf[:n])
				if reply := dnsReply(buf[:n], answer); reply != nil {
					_, _ = pc.WriteTo(reply, from)
				}
			}
		}()
		return s
	}
	l, err := net.Listen(network, addr)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	s.addr = l.Addr().String()
	go recordFirstBytes(l, "tcp", func(seen netSeen) { record(seen.Remote, []byte(seen.Data)) })
	return s
}

// dnsReply answers a DNS query: an A record with answer for a name under
// criClusterDomain, NXDOMAIN otherwise (at once: a resolver in the pod
// does not wait for its timeouts); nil for what is not a query.
func dnsReply(query []byte, answer string) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	h.Response, h.Authoritative, h.RCode = true, true, dnsmessage.RCodeNameError
	a, err := netip.ParseAddr(answer)
	inCluster := err == nil && strings.HasSuffix(q.Name.String(), criClusterDomain+".")
	if inCluster {
		h.RCode = dnsmessage.RCodeSuccess
	}
	b := dnsmessage.NewBuilder(nil, h)
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil
	}
	if inCluster && q.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5}
		if b.AResource(rh, dnsmessage.AResource{A: a.As4()}) != nil {
			return nil
		}
	}
	reply, err := b.Finish()
	if err != nil {
		return nil
	}
	return reply
}

// saw reports whether the server received something with token in it;
// when want, it waits a little for what is on its way (what was refused
// is never on its way: the client's command has returned).
func (s *seenServer) saw(token string, want bool) bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.mu.Lock()
		found := slices.ContainsFunc(s.seen, func(p seenPacket) bool { return strings.Contains(p.data, token) })
		s.mu.Unlock()
		if found || !want || time.Now().After(deadline) {
			return found
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// from returns the senders of the DNS queries the server received for
// name.
func (s *seenServer) from(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.seen {
		var m dnsmessage.Parser
		if _, err := m.Start([]byte(p.data)); err != nil {
			continue
		}
		if q, err := m.Question(); err == nil && strings.EqualFold(q.Name.String(), name+".") {
			out = append(out, p.from)
		}
	}
	return out
}
