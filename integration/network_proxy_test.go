//go:build linux

package integration

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The network proxy end to end (issue 5): real clients inside the sandbox
// (curl over HTTP, CONNECT and SOCKS5, python's urllib, git, ssh) against
// servers the host reaches only through a veth pair into a network
// namespace of the test's own, at addresses that are neither loopback nor
// the host's. The test names resolve through /etc/hosts entries the test
// adds for its duration (the proxy resolves with Go's resolver). Every
// case is judged by what the servers recorded, not only by what the client
// printed.

// The test network: the host's end of the veth pair and the servers' end.
const (
	netHostAddr   = "10.231.0.1"
	netServerAddr = "10.231.0.2"
	netPrefixLen  = "/24"
	// netMetadataAddr is a cloud metadata address outside link-local
	// space (Alibaba Cloud's) that the servers listen on too, so that a
	// refusal to reach it is judged by the server. 169.254.169.254 is not
	// routed to the test network: this machine may have a real one.
	netMetadataAddr = "100.100.100.200"
)

// netHosts are the names the test adds to /etc/hosts.
var netHosts = []struct{ addr, name string }{
	{netServerAddr, "allowed.cordon-test"},
	{netServerAddr, "sub.wild.cordon-test"},
	{netServerAddr, "deep.sub.wild.cordon-test"},
	{netServerAddr, "wild.cordon-test"},
	{netServerAddr, "deny.wild.cordon-test"},
	{netServerAddr, "denied.cordon-test"},
	{netServerAddr, "unlisted.cordon-test"},
	{"127.0.0.1", "rebind.cordon-test"},
	{netHostAddr, "own.cordon-test"},
	{"169.254.169.254", "metadata.cordon-test"},
	{netMetadataAddr, "alibaba-metadata.cordon-test"},
}

// netHostsMarker ends every line the test adds to /etc/hosts: a suite that
// died half way is cleaned up after by the next one.
const netHostsMarker = "# cordon-it-net"

// netPolicy is the network policy of most cases: a name, a wildcard, deny
// entries that also match an allow entry, and names that resolve where no
// allowed name may.
var netPolicy = []string{
	"--allow-domain", "allowed.cordon-test",
	"--allow-domain", "*.wild.cordon-test",
	"--allow-domain", "denied.cordon-test",
	"--deny-domain", "denied.cordon-test",
	"--deny-domain", "deny.wild.cordon-test",
	"--allow-domain", "rebind.cordon-test",
	"--allow-domain", "own.cordon-test",
	"--allow-domain", "metadata.cordon-test",
	"--allow-domain", "alibaba-metadata.cordon-test",
}

// netServerEnv turns this test binary into the servers of the test network
// (or a client tool inside a sandbox), checked before TestMain runs:
//
//	CORDON_IT_NET=serve helper DIR GIT_HTTP_BACKEND   the servers, in the test's namespace
//	CORDON_IT_NET=dns helper ADDR NAME                a DNS query over UDP and TCP
const netServerEnv = "CORDON_IT_NET"

func init() {
	if mode := os.Getenv(netServerEnv); mode != "" {
		os.Exit(netHelperMain(mode, os.Args[1:]))
	}
}

func netHelperMain(mode string, args []string) int {
	switch {
	case mode == "serve" && len(args) == 2:
		return netServe(args[0], args[1])
	case mode == "dns" && len(args) == 2:
		return netDNS(args[0], args[1])
	}
	fmt.Fprintf(os.Stderr, "%s: bad mode %q %q\n", netServerEnv, mode, args)
	return 2
}

// netSeen is one thing a server of the test network received: an HTTP
// request, the first bytes of a TCP connection or a UDP datagram.
type netSeen struct {
	Via    string `json:"via"` // "http", "https", "tcp", "udp"
	Local  string `json:"local"`
	Remote string `json:"remote"`
	Method string `json:"method,omitempty"`
	Host   string `json:"host,omitempty"`
	SNI    string `json:"sni,omitempty"`
	Path   string `json:"path,omitempty"`
	Data   string `json:"data,omitempty"`
}

func (s netSeen) has(token string) bool {
	return strings.Contains(s.Path, token) || strings.Contains(s.Data, token)
}

// netServe runs the servers in the test's network namespace and records
// everything they receive in DIR/seen.log, one JSON object a line:
//
//	http   10.231.0.2:80, 100.100.100.200:80   (/git/TOKEN/... is git http-backend)
//	https  10.231.0.2:443
//	tcp    10.231.0.2:81, 10.231.0.2:53
//	udp    10.231.0.2:53, 10.231.0.2:9999
func netServe(dir, backend string) int {
	logFile, err := os.OpenFile(filepath.Join(dir, "seen.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	var mu sync.Mutex
	record := func(s netSeen) {
		line, _ := json.Marshal(s)
		mu.Lock()
		defer mu.Unlock()
		_, _ = logFile.Write(append(line, '\n'))
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	handler := func(via string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := netSeen{Via: via, Remote: r.RemoteAddr, Method: r.Method, Host: r.Host, Path: r.URL.RequestURI()}
			if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
				s.Local = a.String()
			}
			if r.TLS != nil {
				s.SNI = r.TLS.ServerName
			}
			record(s)
			if rest, ok := strings.CutPrefix(r.URL.Path, "/git/"); ok {
				token, _, _ := strings.Cut(rest, "/")
				h := &cgi.Handler{Path: backend, Root: "/git/" + token,
					Env: []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "git"), "GIT_HTTP_EXPORT_ALL=1"}}
				h.ServeHTTP(w, r)
				return
			}
			fmt.Fprintf(w, "cordon-it-server: %s %s host %s\n", r.Method, r.URL.Path, r.Host)
		})
	}
	fail := func(err error) int {
		fmt.Println(err)
		return 1
	}
	for _, addr := range []string{netServerAddr + ":80", netMetadataAddr + ":80"} {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			return fail(err)
		}
		go func() { _ = http.Serve(l, handler("http")) }()
	}
	l, err := net.Listen("tcp4", netServerAddr+":443")
	if err != nil {
		return fail(err)
	}
	go func() {
		_ = http.Serve(tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}}), handler("https"))
	}()
	for _, addr := range []string{netServerAddr + ":81", netServerAddr + ":53"} {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			return fail(err)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
					buf := make([]byte, 4096)
					n, _ := io.ReadAtLeast(c, buf, 1)
					record(netSeen{Via: "tcp", Local: c.LocalAddr().String(), Remote: c.RemoteAddr().String(), Data: string(buf[:n])})
				}()
			}
		}()
	}
	for _, addr := range []string{netServerAddr + ":53", netServerAddr + ":9999"} {
		pc, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return fail(err)
		}
		go func() {
			buf := make([]byte, 65536)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				record(netSeen{Via: "udp", Local: pc.LocalAddr().String(), Remote: from.String(), Data: string(buf[:n])})
			}
		}()
	}
	fmt.Println("ready")
	// The test kills the servers; this is for a test binary that could not.
	time.Sleep(time.Hour)
	return 0
}

// netDNS sends a DNS query for name to addr over UDP, then over TCP, and
// prints "udp: RESULT" and "tcp: RESULT" (ok, or the errno's name).
func netDNS(addr, name string) int {
	q := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		q = append(q, byte(len(label)))
		q = append(q, label...)
	}
	q = append(q, 0, 0, 1, 0, 1) // end of name, type A, class IN
	say := func(proto string, err error) {
		var errno syscall.Errno
		switch {
		case err == nil:
			fmt.Printf("%s: ok\n", proto)
		case errors.As(err, &errno):
			fmt.Printf("%s: %s\n", proto, unix.ErrnoName(errno))
		default:
			fmt.Printf("%s: %v\n", proto, err)
		}
	}
	c, err := net.DialTimeout("udp4", addr, 3*time.Second)
	if err == nil {
		_, err = c.Write(q)
		c.Close()
	}
	say("udp", err)
	c, err = net.DialTimeout("tcp4", addr, 3*time.Second)
	if err == nil {
		_, err = c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(q))), q...))
		c.Close()
	}
	say("tcp", err)
	return 0
}

// netFixture is the test network and its servers, shared by every case.
type netFixture struct {
	ns       string // the servers' network namespace
	veth     string // the host's end of the veth pair
	dir      string // the servers' files; readable by everyone
	ca       string // the CA that signed the HTTPS server's certificate
	sshd     bool   // an ssh server listens on 10.231.0.2:22
	sshdLog  *syncBuffer
	keysMu   sync.Mutex
	trapPort map[string]int // "rebind", "own": ports of the host's traps

	trapMu sync.Mutex
	traps  []netSeen // what the host's traps received
}

// netNeedRoot: the test network needs root on the host.
func netNeedRoot() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("root to make the test network (a network namespace, a veth pair, /etc/hosts entries); the suite runs as uid %d", os.Geteuid())
	}
	return ""
}

// newNetFixture sets up the test network for the test and tears it down
// when the test and its subtests are done, whatever happened.
func newNetFixture(t *testing.T) *netFixture {
	t.Helper()
	unlock := netLock(t)
	t.Cleanup(unlock)
	netSweep(t)

	f := &netFixture{
		ns:       "cordon-it-net-" + suiteToken,
		veth:     "cit" + suiteToken + "h",
		trapPort: map[string]int{},
	}
	peer := "cit" + suiteToken + "s"
	dir, err := os.MkdirTemp(wsRootOutside, "net-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	f.dir = dir

	// The network: deleting the namespace and the host's end of the pair
	// removes the addresses and routes with them.
	netIP(t, "netns", "add", f.ns)
	t.Cleanup(func() {
		// Everything still running in the namespace was started by this
		// test: the servers and what they spawned.
		if out, err := exec.Command("ip", "netns", "pids", f.ns).Output(); err == nil {
			for _, s := range strings.Fields(string(out)) {
				if pid, err := strconv.Atoi(s); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if out, err := exec.Command("ip", "link", "del", f.veth).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
			t.Errorf("ip link del %s: %v: %s", f.veth, err, out)
		}
		if out, err := exec.Command("ip", "netns", "del", f.ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", f.ns, err, out)
		}
	})
	netIP(t, "link", "add", f.veth, "type", "veth", "peer", "name", peer)
	netIP(t, "link", "set", peer, "netns", f.ns)
	netIP(t, "addr", "add", netHostAddr+netPrefixLen, "dev", f.veth)
	netIP(t, "link", "set", f.veth, "up")
	netIP(t, "route", "add", netMetadataAddr+"/32", "dev", f.veth)
	netIP(t, "-n", f.ns, "addr", "add", netServerAddr+netPrefixLen, "dev", peer)
	netIP(t, "-n", f.ns, "addr", "add", netMetadataAddr+"/32", "dev", peer)
	netIP(t, "-n", f.ns, "link", "set", peer, "up")
	netIP(t, "-n", f.ns, "link", "set", "lo", "up")
	netIP(t, "-n", f.ns, "route", "add", "default", "via", netHostAddr)

	netEditHosts(t)
	f.makeFiles(t)
	f.startServers(t)
	f.startTraps(t)
	if toolPath("sshd") != "" && toolPath("ssh-keygen") != "" {
		f.startSSHD(t)
	}
	f.check(t)
	return f
}

// netIP runs ip(8) and fails the test when it fails.
func netIP(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// netInProcess serialises the tests of this suite that use the test
// network; they wait for each other as long as the suite's own timeout
// allows.
var netInProcess sync.Mutex

// netLock serialises the test network between the tests of this suite,
// and between suites running at once on this host: they would share the
// addresses and the names.
func netLock(t *testing.T) (unlock func()) {
	t.Helper()
	netInProcess.Lock()
	locked := false
	defer func() {
		if !locked {
			netInProcess.Unlock()
		}
	}()
	dir := "/run/lock"
	if _, err := os.Stat(dir); err != nil {
		dir = "/run"
	}
	fd, err := os.OpenFile(filepath.Join(dir, "cordon-it-network.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	// Another suite on this host (a developer's machine; CI runs one).
	deadline := time.Now().Add(15 * time.Minute)
	said := false
	for {
		err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			fd.Close()
			t.Fatalf("lock the test network (%s): %v", fd.Name(), err)
		}
		if !said {
			t.Logf("waiting for another suite's test network (%s)", fd.Name())
			said = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	locked = true
	return func() {
		fd.Close()
		netInProcess.Unlock()
	}
}

// netSweep removes what a suite that died half way left: its namespace,
// its veth pair, its /etc/hosts lines. Under the lock, whatever is there is
// nobody's.
func netSweep(t *testing.T) {
	t.Helper()
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range lines(string(out)) {
		if name, _, _ := strings.Cut(line, " "); strings.HasPrefix(name, "cordon-it-net-") {
			t.Logf("removing the network namespace %s of an earlier suite", name)
			_ = exec.Command("ip", "netns", "del", name).Run()
		}
	}
	out, _ = exec.Command("ip", "-o", "link", "show", "type", "veth").Output()
	for _, line := range lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if strings.HasPrefix(name, "cit") && strings.HasSuffix(name, "h") {
			t.Logf("removing the veth pair %s of an earlier suite", name)
			_ = exec.Command("ip", "link", "del", name).Run()
		}
	}
	data, err := os.ReadFile("/etc/hosts")
	must(t, err)
	if kept := netWithoutMarked(string(data)); kept != string(data) {
		t.Logf("removing an earlier suite's lines from /etc/hosts")
		must(t, os.WriteFile("/etc/hosts", []byte(kept), 0o644))
	}
}

func netWithoutMarked(hosts string) string {
	var kept []string
	for _, l := range strings.SplitAfter(hosts, "\n") {
		if !strings.HasSuffix(strings.TrimRight(l, "\n"), netHostsMarker) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// netEditHosts adds the test names to /etc/hosts and puts the file back as
// it was when the test ends.
func netEditHosts(t *testing.T) {
	t.Helper()
	before, err := os.ReadFile("/etc/hosts")
	must(t, err)
	var add strings.Builder
	if len(before) > 0 && !bytes.HasSuffix(before, []byte("\n")) {
		add.WriteString("\n")
	}
	for _, h := range netHosts {
		fmt.Fprintf(&add, "%s %s %s\n", h.addr, h.name, netHostsMarker)
	}
	// Written in place: /etc/hosts may be a bind mount.
	must(t, os.WriteFile("/etc/hosts", append(slices.Clone(before), add.String()...), 0o644))
	t.Cleanup(func() {
		now, err := os.ReadFile("/etc/hosts")
		if err != nil {
			t.Errorf("restore /etc/hosts: %v", err)
			return
		}
		restored, ok := bytes.CutSuffix(now, []byte(add.String()))
		if !ok {
			// Someone else wrote to it meanwhile: take out our lines only.
			restored = []byte(netWithoutMarked(string(now)))
		}
		if err := os.WriteFile("/etc/hosts", restored, 0o644); err != nil {
			t.Errorf("restore /etc/hosts: %v", err)
		}
		if !bytes.Equal(restored, before) {
			t.Logf("/etc/hosts changed during the test other than by the test; only the test's lines were taken out")
		}
	})
}

// makeFiles writes the servers' files: a CA and a certificate it signed
// for the test names, and a bare git repository.
func (f *netFixture) makeFiles(t *testing.T) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cordon-it test CA " + suiteToken},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	var names []string
	for _, h := range netHosts {
		names = append(names, h.name)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "allowed.cordon-test"},
		DNSNames: names, IPAddresses: []net.IP{net.ParseIP(netServerAddr)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	f.ca = filepath.Join(f.dir, "ca.pem")
	must(t, os.WriteFile(f.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644))
	must(t, os.WriteFile(filepath.Join(f.dir, "server.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	must(t, os.WriteFile(filepath.Join(f.dir, "server.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))

	if toolPath("git") == "" {
		return // the git cases say what is missing
	}
	work := filepath.Join(f.dir, "work")
	env := append(os.Environ(), "HOME="+f.dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	for _, argv := range [][]string{
		{"git", "init", "-q", "-b", "main", work},
		{"sh", "-c", "echo 'served by the test network' > " + filepath.Join(work, "README")},
		{"git", "-C", work, "add", "README"},
		{"git", "-C", work, "commit", "-q", "-m", "first"},
		{"git", "clone", "-q", "--bare", work, filepath.Join(f.dir, "git", "repo.git")},
	} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
}

// startServers starts netServe in the namespace and waits until it listens.
func (f *netFixture) startServers(t *testing.T) {
	t.Helper()
	backend := ""
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	cmd := exec.Command("ip", "netns", "exec", f.ns, helperBin, f.dir, backend)
	cmd.Env = []string{netServerEnv + "=serve", "PATH=" + sandboxPath}
	f.startIn(t, cmd, "ready")
}

// startIn starts a server and waits until its output has ready in it.
func (f *netFixture) startIn(t *testing.T, cmd *exec.Cmd, ready string) *syncBuffer {
	t.Helper()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// The servers must not outlive a test binary that panicked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// What a server spawned (git http-backend, sshd's sessions) may hold
	// its output open after it was killed: Wait must not wait for them
	// (the namespace's cleanup kills them).
	cmd.WaitDelay = 5 * time.Second
	waited, err := startLocked(cmd)
	must(t, err)
	done := make(chan struct{})
	go func() { <-waited; close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), ready) {
		select {
		case <-done:
			t.Fatalf("%s ended: %s", strings.Join(cmd.Args, " "), out.String())
		case <-deadline:
			t.Fatalf("%s: no %q after 15s: %s", strings.Join(cmd.Args, " "), ready, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out
}

// startTraps listens on the host where a refused name points (its
// loopback, its own address on the test network): the proxy must never
// connect there.
func (f *netFixture) startTraps(t *testing.T) {
	t.Helper()
	for name, addr := range map[string]string{"rebind": "127.0.0.1:0", "own": netHostAddr + ":0"} {
		l, err := net.Listen("tcp4", addr)
		must(t, err)
		t.Cleanup(func() { l.Close() })
		f.trapPort[name] = l.Addr().(*net.TCPAddr).Port
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
					buf := make([]byte, 4096)
					n, _ := io.ReadAtLeast(c, buf, 1)
					f.trapMu.Lock()
					f.traps = append(f.traps, netSeen{Via: "host trap", Local: c.LocalAddr().String(), Remote: c.RemoteAddr().String(), Data: string(buf[:n])})
					f.trapMu.Unlock()
				}()
			}
		}()
	}
}

// startSSHD runs an ssh server on 10.231.0.2:22 in the namespace, which
// lets in (as root) the keys the cases add to authorized_keys.
func (f *netFixture) startSSHD(t *testing.T) {
	t.Helper()
	hostKey := filepath.Join(f.dir, "ssh_host_ed25519_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(f.dir, "authorized_keys"), nil, 0o644))
	must(t, os.Mkdir(filepath.Join(f.dir, "ssh-seen"), 0o755))
	config := filepath.Join(f.dir, "sshd_config")
	must(t, os.WriteFile(config, []byte(fmt.Sprintf(`ListenAddress %s:22
HostKey %s
AuthorizedKeysFile %s
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile none
LogLevel VERBOSE
`, netServerAddr, hostKey, filepath.Join(f.dir, "authorized_keys"))), 0o644))
	// sshd insists on its privilege separation directory.
	if _, err := os.Stat("/run/sshd"); errors.Is(err, os.ErrNotExist) {
		must(t, os.Mkdir("/run/sshd", 0o755))
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	cmd := exec.Command("ip", "netns", "exec", f.ns, toolPath("sshd"), "-D", "-e", "-f", config)
	cmd.Env = []string{"PATH=" + sandboxPath}
	f.sshdLog = f.startIn(t, cmd, "Server listening on")
	f.sshd = true
}

// check makes sure every server and trap records what reaches it from
// the host, so that "nothing received" means something.
func (f *netFixture) check(t *testing.T) {
	t.Helper()
	token := "control-" + randomHex(4)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(readFile(f.ca)))
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, url := range []string{
		"http://" + netServerAddr + "/" + token,
		"https://" + netServerAddr + "/" + token,
		"http://" + netMetadataAddr + "/" + token,
	} {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("the test network's server does not answer the host: %v", err)
		}
		resp.Body.Close()
	}
	send := func(network, addr string) {
		conn, err := net.DialTimeout(network, addr, 5*time.Second)
		must(t, err)
		_, err = conn.Write([]byte(token))
		conn.Close()
		must(t, err)
	}
	for _, addr := range []string{netServerAddr + ":53", netServerAddr + ":9999"} {
		send("udp4", addr)
	}
	for _, addr := range []string{
		netServerAddr + ":81", netServerAddr + ":53",
		net.JoinHostPort("127.0.0.1", strconv.Itoa(f.trapPort["rebind"])),
		net.JoinHostPort(netHostAddr, strconv.Itoa(f.trapPort["own"])),
	} {
		send("tcp4", addr)
	}
	want := []string{
		"http " + netServerAddr + ":80", "https " + netServerAddr + ":443", "http " + netMetadataAddr + ":80",
		"udp " + netServerAddr + ":53", "udp " + netServerAddr + ":9999",
		"tcp " + netServerAddr + ":81", "tcp " + netServerAddr + ":53",
		"host trap 127.0.0.1:" + strconv.Itoa(f.trapPort["rebind"]),
		"host trap " + netHostAddr + ":" + strconv.Itoa(f.trapPort["own"]),
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := map[string]bool{}
		for _, s := range f.seen(t, token) {
			got[s.Via+" "+s.Local] = true
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return got[w] })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test network did not record what the host sent: missing %v", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// seen returns what the servers and the host's traps received that
// carries token.
func (f *netFixture) seen(t *testing.T, token string) []netSeen {
	t.Helper()
	var out []netSeen
	data, err := os.ReadFile(filepath.Join(f.dir, "seen.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	// A line being written is not complete yet.
	complete := data[:bytes.LastIndexByte(data, '\n')+1]
	for _, line := range lines(string(complete)) {
		var s netSeen
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("seen.log: %v: %q", err, line)
		}
		if s.has(token) {
			out = append(out, s)
		}
	}
	f.trapMu.Lock()
	defer f.trapMu.Unlock()
	for _, s := range f.traps {
		if s.has(token) {
			out = append(out, s)
		}
	}
	return out
}

// netWant is a request a server must have received.
type netWant struct {
	via  string // "http" or "https"
	host string // the Host header (and for https the TLS server name)
}

// netCase is one client run in the sandbox and what must come of it.
type netCase struct {
	name  string
	needs []string // tools inside
	flags []string // of cordon run; nil: netPolicy
	// script is run by sh inside, with {T} (the case's token, which every
	// request carries), {CA}, {DIR}, {HELPER}, {REBIND} and {OWN} (the
	// ports of the host's traps) replaced.
	script string
	code   int      // the command's exit status
	stdout []string // substrings
	stderr []string // substrings of cordon's and the command's stderr
	// seen is what the servers must have received with the token; when
	// empty, nothing with the token may have reached anything.
	seen []netWant
	// unseen are tokens ({T}-...) nothing may have received, when seen
	// is not empty.
	unseen []string
	// blocked are the "host:port" cordon must say it blocked; when empty,
	// it may say it blocked nothing.
	blocked []string
}

// netCurl is the client line of most cases.
const netCurl = "curl -sS --max-time 20 "

func netCases() []netCase {
	const refusedBody = "cordon: the sandbox's network policy refused "
	return []netCase{
		// The three ways in, from the environment variables and flags.
		{name: "curl http via http_proxy", script: netCurl + "-D - http://allowed.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 200 OK", "cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "curl https via CONNECT", script: netCurl + "--cacert {CA} https://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"https", "allowed.cordon-test"}}},
		{name: "curl socks5-hostname", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "curl https via SOCKS_PROXY", script: netCurl + `-x "$SOCKS_PROXY" --cacert {CA} https://allowed.cordon-test/{T}`,
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"https", "allowed.cordon-test"}}},
		{name: "SOCKS5 on the HTTP port", script: netCurl + "--socks5-hostname 127.0.0.1:3128 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "HTTP on the SOCKS port", script: netCurl + "-x http://127.0.0.1:1080 http://allowed.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host allowed.cordon-test"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},

		// The matching rules.
		{name: "wildcard subdomain", script: netCurl + "--cacert {CA} https://sub.wild.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host sub.wild.cordon-test"},
			seen:   []netWant{{"https", "sub.wild.cordon-test"}}},
		{name: "wildcard deeper subdomain", script: netCurl + "http://deep.sub.wild.cordon-test/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host deep.sub.wild.cordon-test"},
			seen:   []netWant{{"http", "deep.sub.wild.cordon-test"}}},
		{name: "names are case-insensitive", script: netCurl + "http://ALLOWED.Cordon-Test./{T}",
			stdout: []string{"cordon-it-server: GET /{T}"},
			// the proxy forwards the canonical name
			seen: []netWant{{"http", "allowed.cordon-test"}}},
		{name: "a port in the allow list", flags: []string{"--allow-domain", "allowed.cordon-test:443"}, script: `
` + netCurl + `--cacert {CA} https://allowed.cordon-test/{T}-443
` + netCurl + `-i http://allowed.cordon-test/{T}-80`,
			stdout:  []string{"cordon-it-server: GET /{T}-443 host allowed.cordon-test", "HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist"},
			seen:    []netWant{{"https", "allowed.cordon-test"}},
			unseen:  []string{"{T}-80"},
			blocked: []string{"allowed.cordon-test:80"}},
		// curl sends the three requests on one connection to the proxy.
		{name: "each request on a kept-alive connection is decided", script: netCurl + "-i -w 'connects=%{num_connects}\\n' http://allowed.cordon-test/{T}-1 http://unlisted.cordon-test/{T}-2 http://allowed.cordon-test/{T}-3",
			stdout: []string{"cordon-it-server: GET /{T}-1 host allowed.cordon-test\nconnects=1\n",
				"X-Proxy-Error: blocked-by-allowlist", "sandbox.network.allowedDomains.\nconnects=0\n",
				"cordon-it-server: GET /{T}-3 host allowed.cordon-test\n"},
			seen:    []netWant{{"http", "allowed.cordon-test"}},
			unseen:  []string{"{T}-2"},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "wildcard apex refused", script: netCurl + "-i http://wild.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist", refusedBody + "wild.cordon-test:80", "wild.cordon-test is not in the allowed domains", "--allow-domain wild.cordon-test"},
			blocked: []string{"wild.cordon-test:80"}},
		{name: "deny wins", script: netCurl + "-i http://denied.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-denylist", `The denied domains contain "denied.cordon-test", and the deny list wins`},
			blocked: []string{"denied.cordon-test:80"}},
		{name: "deny wins over a wildcard", script: netCurl + "--cacert {CA} https://deny.wild.cordon-test/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"deny.wild.cordon-test:443"}},
		{name: "unlisted refused", script: netCurl + "-i http://unlisted.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist",
				refusedBody + "unlisted.cordon-test:80 (blocked-by-allowlist).",
				"unlisted.cordon-test is not in the allowed domains.",
				`To allow it, run cordon with --allow-domain unlisted.cordon-test, or add "unlisted.cordon-test" to the settings key sandbox.network.allowedDomains.`},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "unlisted refused CONNECT", script: netCurl + "--cacert {CA} https://unlisted.cordon-test/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"unlisted.cordon-test:443"}},
		{name: "unlisted refused SOCKS5", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://unlisted.cordon-test/{T}",
			code: 97, blocked: []string{"unlisted.cordon-test:80"}},
		{name: "IP literal refused", script: netCurl + "-i http://" + netServerAddr + "/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-by-allowlist", "IP addresses are refused unless listed literally"},
			blocked: []string{netServerAddr + ":80"}},
		{name: "IP literal refused SOCKS5", script: netCurl + "--socks5 127.0.0.1:1080 http://" + netServerAddr + "/{T}",
			code: 97, blocked: []string{netServerAddr + ":80"}},
		{name: "IP literal listed", flags: append(slices.Clone(netPolicy), "--allow-domain", netServerAddr),
			script: netCurl + "http://" + netServerAddr + "/{T}",
			stdout: []string{"cordon-it-server: GET /{T} host " + netServerAddr},
			seen:   []netWant{{"http", netServerAddr}}},
		{name: "name resolving to loopback refused", script: netCurl + "-i http://rebind.cordon-test:{REBIND}/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "rebind.cordon-test resolves to a loopback address"},
			blocked: []string{"rebind.cordon-test:{REBIND}"}},
		{name: "name resolving to loopback refused CONNECT", script: netCurl + "--cacert {CA} https://rebind.cordon-test:{REBIND}/{T}",
			code: 56, stderr: []string{"CONNECT tunnel failed, response 403"},
			blocked: []string{"rebind.cordon-test:{REBIND}"}},
		{name: "name resolving to the host refused", script: netCurl + "-i http://own.cordon-test:{OWN}/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "own.cordon-test resolves to one of this host's addresses"},
			blocked: []string{"own.cordon-test:{OWN}"}},
		{name: "metadata address refused", script: netCurl + "-i http://metadata.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "metadata.cordon-test resolves to a link-local address"},
			blocked: []string{"metadata.cordon-test:80"}},
		{name: "cloud metadata address refused SOCKS5", script: netCurl + "--socks5-hostname 127.0.0.1:1080 http://alibaba-metadata.cordon-test/{T}",
			code: 97, blocked: []string{"alibaba-metadata.cordon-test:80"}},
		// Resolved by the host's DNS: nothing under cordon-test exists.
		// The policy allows the name: cordon must not say it blocked it.
		{name: "allowed name that does not resolve", script: netCurl + "-i http://nx.wild.cordon-test/{T}",
			stdout: []string{"HTTP/1.1 502", "X-Proxy-Error: resolve-failed", "cordon: cannot connect to nx.wild.cordon-test:80: the name does not resolve"}},
		// Nothing listens on port 82 of the test network.
		{name: "allowed destination that refuses the connection", script: netCurl + "-i http://allowed.cordon-test:82/{T}",
			stdout: []string{"HTTP/1.1 502", "X-Proxy-Error: upstream-error"}},
		{name: "cloud metadata address refused", script: netCurl + "-i http://alibaba-metadata.cordon-test/{T}",
			stdout:  []string{"HTTP/1.1 403", "X-Proxy-Error: blocked-private-address", "alibaba-metadata.cordon-test resolves to a cloud metadata address"},
			blocked: []string{"alibaba-metadata.cordon-test:80"}},

		// What does not go through the proxy does not go anywhere.
		{name: "noproxy direct connection", needs: []string{"bash"}, script: `
` + netCurl + `--noproxy '*' http://allowed.cordon-test/{T}-curl; echo "curl=$?"
` + netCurl + `--noproxy '*' http://` + netServerAddr + `/{T}-ip; echo "ip=$?"
bash -c 'echo {T}-tcp > /dev/tcp/` + netServerAddr + `/81'; echo "tcp=$?"`,
			stdout: []string{"curl=7", "ip=7", "tcp=1"},
			stderr: []string{"Failed to connect to allowed.cordon-test port 80", "/dev/tcp/" + netServerAddr + "/81: Network is unreachable"}},
		{name: "UDP and DNS", needs: []string{"bash", "getent"}, script: `
getent hosts allowed.cordon-test; echo "hosts=$?"
getent hosts {T}.cordon-test; echo "lookup=$?"
bash -c 'echo {T}-udp > /dev/udp/` + netServerAddr + `/53'; echo "udp53=$?"
bash -c 'echo {T}-udp > /dev/udp/` + netServerAddr + `/9999'; echo "udp9999=$?"
` + netServerEnv + `=dns {HELPER} ` + netServerAddr + `:53 {T}.allowed.cordon-test`,
			stdout: []string{netServerAddr + "      allowed.cordon-test\nhosts=0", "lookup=2", "udp53=1", "udp9999=1", "udp: ENETUNREACH\ntcp: ENETUNREACH"},
			stderr: []string{"/dev/udp/" + netServerAddr + "/53: Network is unreachable"}},

		// Other clients, from the environment variables alone.
		{name: "python urllib", needs: []string{"python3"}, script: `python3 - <<'EOF'
import ssl, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile="{CA}")
for url in ["http://allowed.cordon-test/{T}-http", "https://sub.wild.cordon-test/{T}-https", "http://unlisted.cordon-test/{T}-refused"]:
    try:
        print(urllib.request.urlopen(url, context=ctx, timeout=20).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.headers.get("X-Proxy-Error"))
EOF`,
			stdout: []string{
				"cordon-it-server: GET /{T}-http host allowed.cordon-test\n",
				"cordon-it-server: GET /{T}-https host sub.wild.cordon-test\n",
				"403 blocked-by-allowlist\n"},
			seen:    []netWant{{"http", "allowed.cordon-test"}, {"https", "sub.wild.cordon-test"}},
			blocked: []string{"unlisted.cordon-test:80"}},
		{name: "git clone http", needs: []string{"git"},
			script: "git clone -q http://allowed.cordon-test/git/{T}/repo.git clone && cat clone/README",
			stdout: []string{"served by the test network"},
			seen:   []netWant{{"http", "allowed.cordon-test"}}},
		{name: "git clone https", needs: []string{"git"},
			script: "GIT_SSL_CAINFO={CA} git clone -q https://sub.wild.cordon-test/git/{T}/repo.git clone && cat clone/README",
			stdout: []string{"served by the test network"},
			seen:   []netWant{{"https", "sub.wild.cordon-test"}}},
		{name: "git clone refused", needs: []string{"git"},
			script: "git clone -q http://unlisted.cordon-test/git/{T}/repo.git clone",
			code:   128, stderr: []string{"The requested URL returned error: 403"},
			blocked: []string{"unlisted.cordon-test:80"}},
	}
}

// TestNetworkProxy: with allowed domains, real clients in the sandbox
// reach exactly the allowed destinations through cordon's proxy, from
// the environment variables cordon sets, and nothing else: not refused
// names, not the host, not a metadata address, not a direct connection,
// not UDP. Judged by what the servers received.
func TestNetworkProxy(t *testing.T) {
	t.Parallel()
	requires(t, netNeedRoot, needTool("ip"), needTool("curl"))
	start := time.Now()
	f := newNetFixture(t)
	t.Cleanup(func() { t.Logf("the network proxy tests took %v", time.Since(start).Round(time.Millisecond)) })
	eachCaller(t, func(t *testing.T, c *caller) {
		for _, tc := range netCases() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var needs []need
				for _, tool := range tc.needs {
					needs = append(needs, needTool(tool))
				}
				requires(t, needs...)
				f.runCase(t, newBox(t, c), tc)
			})
		}
		t.Run("ssh through the ProxyCommand", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("ssh"), needTool("sshd"), needTool("ssh-keygen"))
			f.testSSH(t, newBox(t, c))
		})
		t.Run("proxy environment and listeners", func(t *testing.T) {
			t.Parallel()
			f.testProxyInside(t, newBox(t, c))
		})
		t.Run("no allowed domain: no proxy, no network", func(t *testing.T) {
			t.Parallel()
			requires(t, needTool("bash"))
			f.testNoProxy(t, newBox(t, c))
		})
		t.Run("runs keep their own policies", func(t *testing.T) {
			t.Parallel()
			f.testTwoRuns(t, c)
		})
	})
}

// expand fills in a case's placeholders.
func (f *netFixture) expand(s, token string) string {
	return strings.NewReplacer(
		"{T}", token, "{CA}", f.ca, "{DIR}", f.dir, "{HELPER}", helperBin,
		"{REBIND}", strconv.Itoa(f.trapPort["rebind"]), "{OWN}", strconv.Itoa(f.trapPort["own"]),
	).Replace(s)
}

func (f *netFixture) runCase(t *testing.T, b *box, tc netCase) {
	token := "t" + randomHex(6)
	flags := tc.flags
	if flags == nil {
		flags = netPolicy
	}
	r := b.runSpec(runSpec{flags: flags, args: []string{"sh", "-c", f.expand(tc.script, token)}})
	if r.code != tc.code {
		t.Errorf("exit %d, want %d\n%s", r.code, tc.code, r)
	}
	for _, s := range tc.stdout {
		if s := f.expand(s, token); !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q\n%s", s, r)
		}
	}
	for _, s := range tc.stderr {
		if s := f.expand(s, token); !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q\n%s", s, r)
		}
	}
	f.checkBlocked(t, r, tc.blocked, token)
	f.checkSeen(t, token, tc.seen)
	for _, u := range tc.unseen {
		for _, s := range f.seen(t, f.expand(u, token)) {
			t.Errorf("the test network received %+v", s)
		}
	}
}

// checkBlocked: cordon's note on stderr names exactly the refused
// destinations.
func (f *netFixture) checkBlocked(t *testing.T, r result, blocked []string, token string) {
	t.Helper()
	const note = "cordon: blocked connection to "
	var want, got []string
	for _, b := range blocked {
		want = append(want, f.expand(b, token))
	}
	for _, l := range lines(r.stderr) {
		if rest, ok := strings.CutPrefix(l, note); ok {
			dest, _, _ := strings.Cut(rest, " ")
			got = append(got, dest)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("cordon's %q notes name %q, want %q\n%s", note, got, want, r)
	}
	// The note's advice must be one that would work: a destination
	// refused by the deny list, for where its name resolves or because it
	// does not resolve is refused whatever the allow list says (the
	// proxy's answer says what to do).
	for _, l := range lines(r.stderr) {
		rest, ok := strings.CutPrefix(l, note)
		if !ok {
			continue
		}
		dest, why, _ := strings.Cut(rest, " ")
		host := dest[:strings.LastIndexByte(dest, ':')]
		if (strings.HasPrefix(why, "(deniedDomains:") || strings.HasPrefix(why, "(resolves to") || strings.HasPrefix(why, "(allowedDomains:")) &&
			strings.Contains(why, "allow with --allow-domain "+host+" ") {
			t.Errorf("cordon's note advises --allow-domain %s, which cannot allow a destination refused for this reason: %q", host, l)
		}
	}
}

// checkSeen: the servers received exactly the wanted requests with the
// token, or nothing at all.
func (f *netFixture) checkSeen(t *testing.T, token string, want []netWant) {
	t.Helper()
	if len(want) == 0 {
		// Refusals are synchronous; this is for a packet or a connection
		// that would still be on its way.
		time.Sleep(100 * time.Millisecond)
	}
	seen := f.seen(t, token)
	if len(want) == 0 {
		for _, s := range seen {
			t.Errorf("the test network received %+v", s)
		}
		return
	}
	for _, w := range want {
		found := false
		for _, s := range seen {
			if s.Via == w.via && s.Host == w.host && (w.via != "https" || strings.EqualFold(s.SNI, strings.TrimSuffix(w.host, "."))) {
				found = true
			}
		}
		if !found {
			t.Errorf("the server did not receive a %s request for %s with %s; it received %+v", w.via, w.host, token, seen)
		}
	}
	for _, s := range seen {
		if (s.Via != "http" && s.Via != "https") || !strings.HasPrefix(s.Remote, netHostAddr+":") {
			t.Errorf("unexpected arrival (the proxy connects from %s): %+v", netHostAddr, s)
		}
	}
}

// testSSH: ssh with the ProxyCommand of GIT_SSH_COMMAND, and plain ssh
// with `cordon proxy-connect`, log in to the test network's ssh server; a
// refused name is explained on stderr.
func (f *netFixture) testSSH(t *testing.T, b *box) {
	if !f.sshd {
		t.Fatal("the test network has no ssh server (sshd or ssh-keygen missing when it was set up)")
	}
	token := "t" + randomHex(6)
	key := filepath.Join(b.ws, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", token, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	b.chown()
	pub, err := os.ReadFile(key + ".pub")
	must(t, err)
	f.keysMu.Lock()
	ak, err := os.OpenFile(filepath.Join(f.dir, "authorized_keys"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = ak.Write(pub)
		ak.Close()
	}
	f.keysMu.Unlock()
	must(t, err)

	const opts = "-i ./id_ed25519 -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
	script := f.expand(`
eval "set -- $GIT_SSH_COMMAND"
"$@" `+opts+` root@allowed.cordon-test 'echo {T}-git-ssh-command > {DIR}/ssh-seen/{T}-git-ssh-command; echo logged-in-1'; echo "git-ssh-command=$?"
ssh -o ProxyCommand='/.cordon/cordon proxy-connect %h %p' `+opts+` root@sub.wild.cordon-test 'echo {T}-proxy-connect > {DIR}/ssh-seen/{T}-proxy-connect; echo logged-in-2'; echo "proxy-connect=$?"
ssh -o ProxyCommand='/.cordon/cordon proxy-connect %h %p' `+opts+` root@unlisted.cordon-test 'echo {T}-refused > {DIR}/ssh-seen/{T}-refused'; echo "refused=$?"
`, token)
	r := b.runSpec(runSpec{flags: netPolicy, args: []string{"sh", "-c", script}})
	for _, want := range []string{"logged-in-1\ngit-ssh-command=0", "logged-in-2\nproxy-connect=0", "refused=255"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r)
		}
	}
	if want := "--allow-domain unlisted.cordon-test"; !strings.Contains(r.stderr, want) {
		t.Errorf("the refusal does not say %q on ssh's stderr\n%s", want, r)
	}
	for name, want := range map[string]bool{"git-ssh-command": true, "proxy-connect": true, "refused": false} {
		got := readFile(filepath.Join(f.dir, "ssh-seen", token+"-"+name))
		if want && got != token+"-"+name+"\n" {
			t.Errorf("the ssh server did not run the command of %s: %s\nsshd: %s", name, got, f.sshdLog.String())
		}
		if !want && exists(filepath.Join(f.dir, "ssh-seen", token+"-"+name)) {
			t.Errorf("the ssh server ran the command of %s", name)
		}
	}
	f.checkBlocked(t, r, []string{"unlisted.cordon-test:22"}, token)
}

// netListeners is an awk program printing the listening TCP sockets of
// the sandbox's network namespace.
const netListeners = `awk 'FNR > 1 && $4 == "0A" { print "listen " $2 }' /proc/net/tcp /proc/net/tcp6 | sort`

// testProxyInside: with allowed domains the command gets the proxy's
// variables and two listening sockets on 127.0.0.1, and nothing else
// listens.
func (f *netFixture) testProxyInside(t *testing.T, b *box) {
	r := b.runSpec(runSpec{flags: netPolicy, args: []string{"sh", "-c",
		`env | grep -E '^(HTTPS?_PROXY|https?_proxy|ALL_PROXY|all_proxy|SOCKS_PROXY|socks_proxy|NO_PROXY|no_proxy|GIT_SSH_COMMAND)=' | sort; ` + netListeners}})
	want := `ALL_PROXY=http://127.0.0.1:3128
GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='/.cordon/cordon proxy-connect --proxy 127.0.0.1:3128 %h %p'
HTTPS_PROXY=http://127.0.0.1:3128
HTTP_PROXY=http://127.0.0.1:3128
NO_PROXY=localhost,127.0.0.1,::1
SOCKS_PROXY=socks5h://127.0.0.1:1080
all_proxy=http://127.0.0.1:3128
http_proxy=http://127.0.0.1:3128
https_proxy=http://127.0.0.1:3128
no_proxy=localhost,127.0.0.1,::1
socks_proxy=socks5h://127.0.0.1:1080
listen 0100007F:0438
listen 0100007F:0C38
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("want exactly:\n%s\n%s", want, r)
	}
}

// testNoProxy: without allowed domains there is no proxy at all: no
// variables, nothing listening inside, and no way out.
func (f *netFixture) testNoProxy(t *testing.T, b *box) {
	token := "t" + randomHex(6)
	r := b.runSpec(runSpec{args: []string{"sh", "-c", f.expand(`
env | grep -i -E '_proxy=|^GIT_SSH_COMMAND=' ; echo "env=$?"
`+netListeners+`
`+netCurl+`http://allowed.cordon-test/{T}-direct; echo "direct=$?"
`+netCurl+`-x http://127.0.0.1:3128 http://allowed.cordon-test/{T}-proxy; echo "proxy=$?"
`+netCurl+`--socks5-hostname 127.0.0.1:1080 http://allowed.cordon-test/{T}-socks; echo "socks=$?"
bash -c 'echo {T}-udp > /dev/udp/`+netServerAddr+`/53'; echo "udp=$?"
`, token)}})
	if want := "env=1\ndirect=7\nproxy=7\nsocks=7\nudp=1\n"; r.code != 0 || r.stdout != want {
		t.Errorf("want exactly:\n%s\n%s", want, r)
	}
	for _, want := range []string{"Failed to connect to 127.0.0.1 port 3128", "Network is unreachable"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	f.checkBlocked(t, r, nil, token)
	f.checkSeen(t, token, nil)
	// The spec of such a run starts no proxy either.
	r = b.cordon(runSpec{}, "spec", "--", "true")
	if r.code != 0 || strings.Contains(r.stdout, "--proxy-fd") || strings.Contains(r.stdout, "dev.cordon.proxy") {
		t.Errorf("cordon spec without allowed domains mentions a proxy:\n%s", r)
	}
}

// testTwoRuns: two runs at once, each with its own allowed domain, on the
// same ports inside: each run's connections are decided by its own policy.
func (f *netFixture) testTwoRuns(t *testing.T, c *caller) {
	type run struct {
		allow, other string
		token        string
		r            *running
	}
	runs := []*run{
		{allow: "allowed.cordon-test", other: "sub.wild.cordon-test"},
		{allow: "sub.wild.cordon-test", other: "allowed.cordon-test"},
	}
	// Both wait for each other inside, so that they overlap: each marks
	// its own workspace and waits for the other's mark (visible read-only).
	boxes := []*box{newBox(t, c), newBox(t, c)}
	for i, x := range runs {
		x.token = "t" + randomHex(6)
		script := f.expand(fmt.Sprintf(`
touch ready
end=$(( $(date +%%s) + 15 ))
until [ -e %[1]s/ready ]; do [ $(date +%%s) -gt $end ] && exit 99; sleep 0.05; done
curl -s -o /dev/null -w 'allowed=%%{http_code}\n' http://%[2]s/{T}-allowed
curl -s -o /dev/null -w 'other=%%{http_code}\n' http://%[3]s/{T}-other
`, boxes[1-i].ws, x.allow, x.other), x.token)
		x.r = boxes[i].start(runSpec{flags: []string{"--allow-domain", x.allow}, args: []string{"sh", "-c", script}})
	}
	for _, x := range runs {
		r := x.r.wait()
		if want := "allowed=200\nother=403\n"; r.code != 0 || r.stdout != want {
			t.Errorf("run allowing %s: want %q\n%s", x.allow, want, r)
		}
		var got []string
		for _, s := range f.seen(t, x.token) {
			got = append(got, s.Host+s.Path)
		}
		if want := []string{x.allow + "/" + x.token + "-allowed"}; !slices.Equal(got, want) {
			t.Errorf("run allowing %s: the server received %q, want %q", x.allow, got, want)
		}
		if want := "cordon: blocked connection to " + x.other + ":80 ("; !strings.Contains(r.stderr, want) {
			t.Errorf("run allowing %s: stderr lacks %q\n%s", x.allow, want, r)
		}
	}
}
