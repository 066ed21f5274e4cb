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
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test network of the proxy tests (TestNetworkProxy, TestOCIProxy, the
// escape suite's network cases): a network namespace behind a veth pair,
// its servers and traps, /etc/hosts names, and the lock that gives it to
// one test at a time.

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

// netUpstreamHosts resolve only in the servers' namespace (its own hosts
// file, which ip netns exec puts over /etc/hosts): an upstream proxy there
// reaches them, the host cannot even name them.
var netUpstreamHosts = []struct{ addr, name string }{
	{netServerAddr, "upstream.cordon-test"},
	{netServerAddr, "upstream-unlisted.cordon-test"},
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
// (or a client tool inside a sandbox):
//
//	CORDON_IT_NET=serve helper DIR GIT_HTTP_BACKEND   the servers, in the test's namespace
//	CORDON_IT_NET=dns helper ADDR NAME                a DNS query over UDP and TCP
const netServerEnv = "CORDON_IT_NET"

func netHelperMain(mode string, args []string) int {
	switch {
	case mode == "serve" && len(args) == 2:
		return netServe(args[0], args[1])
	case mode == "dns" && len(args) == 2:
		return netDNS(args[0], args[1])
	}
	return badMode
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
	// Auth is an HTTP request's Authorization, Body the start of its
	// body (the masked credentials' tests judge by them).
	Auth string `json:"auth,omitempty"`
	Body string `json:"body,omitempty"`
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
			s := netSeen{Via: via, Remote: r.RemoteAddr, Method: r.Method, Host: r.Host, Path: r.URL.RequestURI(), Auth: r.Header.Get("Authorization")}
			if !strings.Contains(r.URL.Path, "git/") {
				b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
				s.Body = string(b)
			}
			if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
				s.Local = a.String()
			}
			if r.TLS != nil {
				s.SNI = r.TLS.ServerName
			}
			record(s)
			if rest, ok := strings.CutPrefix(r.URL.Path, "/auth-git/"); ok {
				// git over HTTPS with a token, as a forge serves it: Basic
				// credentials whose password is DIR/git-password
				want, _ := os.ReadFile(filepath.Join(dir, "git-password"))
				if _, pw, ok := r.BasicAuth(); !ok || len(want) == 0 || pw != string(want) {
					w.Header().Set("WWW-Authenticate", `Basic realm="cordon-test"`)
					http.Error(w, "bad credentials", http.StatusUnauthorized)
					return
				}
				token, _, _ := strings.Cut(rest, "/")
				h := &cgi.Handler{Path: backend, Root: "/auth-git/" + token,
					Env: []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "git"), "GIT_HTTP_EXPORT_ALL=1"}}
				h.ServeHTTP(w, r)
				return
			}
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
		// HTTP/2 with prior knowledge too, as front ends that route
		// plain HTTP/2 by :authority do
		var protos http.Protocols
		protos.SetHTTP1(true)
		protos.SetUnencryptedHTTP2(true)
		go func() { _ = (&http.Server{Handler: handler("http"), Protocols: &protos}).Serve(l) }()
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
		go recordFirstBytes(l, "tcp", record)
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
	ns   string // the servers' network namespace
	veth string // the host's end of the veth pair
	dir  string // the servers' files; readable by everyone
	ca   string // the CA that signed the HTTPS server's certificate
	// roots are this host's roots and ca: what cordon's proxy verifies
	// the servers against (SSL_CERT_FILE) where it ends TLS itself, as on
	// a host with a company CA
	roots    string
	sshd     bool // an ssh server listens on 10.231.0.2:22
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
//
// A test that takes it must not be parallel (its subtests may be): the
// suite's parallel tests get a slot each from -test.parallel (GOMAXPROCS,
// 2 on CI), and a parallel test waiting here for another's network would
// keep its slot from that test's parallel subtests, which need slots to
// finish and give the network back. Run in the suite's serial phase, one
// after the other, the network is always free when the next asks.
func newNetFixture(t *testing.T) *netFixture {
	t.Helper()
	// The testing package does not say; its field does (where it is).
	if p := reflect.ValueOf(t).Elem().FieldByName("isParallel"); p.IsValid() && p.Bool() {
		t.Fatal("a test that takes the test network must not call t.Parallel (see newNetFixture)")
	}
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

// netInProcess is held by the test of this suite that has the test
// network; the next one finds it free (see newNetFixture).
var netInProcess sync.Mutex

// netLock serialises the test network between the tests of this suite,
// and between suites running at once on this host: they would share the
// addresses and the names.
func netLock(t *testing.T) (unlock func()) {
	t.Helper()
	if !netInProcess.TryLock() {
		t.Fatal("the test network is held by another test of this suite: a test that takes it must not call t.Parallel (see newNetFixture)")
	}
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
	if dirs, _ := filepath.Glob("/etc/netns/cordon-it-net-*"); len(dirs) > 0 {
		for _, d := range dirs {
			t.Logf("removing %s of an earlier suite", d)
			_ = os.RemoveAll(d)
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
	for _, h := range append(slices.Clone(netHosts), netUpstreamHosts...) {
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
	sys, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	f.roots = filepath.Join(f.dir, "roots.pem")
	must(t, os.WriteFile(f.roots, append(sys, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...), 0o644))
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
		go recordFirstBytes(l, "host trap", func(s netSeen) {
			f.trapMu.Lock()
			f.traps = append(f.traps, s)
			f.trapMu.Unlock()
		})
	}
}

// recordFirstBytes accepts connections on l until it is closed, and
// records what each sent first (within 3 s, at most 4 KiB) as seen via via.
func recordFirstBytes(l net.Listener, via string, record func(netSeen)) {
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
			record(netSeen{Via: via, Local: c.LocalAddr().String(), Remote: c.RemoteAddr().String(), Data: string(buf[:n])})
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
