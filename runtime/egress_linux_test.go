package runtime

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestParseNameservers(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"kubelet's", "search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n", []string{"10.96.0.10:53"}},
		{"several, IPv6, a zone", "nameserver 10.0.0.2\nnameserver  fd00::a\t# comment\nnameserver fe80::1%eth0\n", []string{"10.0.0.2:53", "[fd00::a]:53", "[fe80::1%eth0]:53"}},
		{"comments and junk skipped", "# nameserver 10.0.0.1\n; nameserver 10.0.0.2\nnameserver\nnameserver dns.example\nnameservers 10.0.0.3\n nameserver 10.0.0.4", []string{"10.0.0.4:53"}},
		{"CRLF", "nameserver 10.0.0.5\r\n", []string{"10.0.0.5:53"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseNameservers([]byte(tc.in))); diff != "" {
				t.Errorf("parseNameservers(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// FuzzParseNameservers: every server is an address and port 53, as a
// dialer takes it.
func FuzzParseNameservers(f *testing.F) {
	for _, s := range []string{"nameserver 10.96.0.10\n", "nameserver ::1\nnameserver 1.2.3.4 extra\n", "nameserver fe80::1%lo", "#x\n\x00nameserver\t9.9.9.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, srv := range parseNameservers([]byte(s)) {
			if !strings.HasSuffix(srv, ":53") {
				t.Fatalf("parseNameservers(%q): %q has no port 53", s, srv)
			}
			if _, err := netip.ParseAddrPort(srv); err != nil {
				t.Fatalf("parseNameservers(%q): %q: %v", s, srv, err)
			}
		}
	})
}

// TestPodNameservers: the servers come from the file bound last at
// /etc/resolv.conf; a FIFO there (a pod's hostPath) is not opened.
func TestPodNameservers(t *testing.T) {
	dir := t.TempDir()
	first, last := filepath.Join(dir, "first"), filepath.Join(dir, "last")
	if err := os.WriteFile(first, []byte("nameserver 10.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last, []byte("nameserver 10.0.0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	bind := func(srcs ...string) *specs.Spec {
		s := &specs.Spec{}
		for _, src := range srcs {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc//resolv.conf", Source: src, Type: "bind"})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		s    *specs.Spec
		want []string
	}{
		{"the last bind", bind(first, last), []string{"10.0.0.2:53"}},
		{"none", bind(), nil},
		{"a FIFO", bind(fifo), nil},
		{"missing", bind(filepath.Join(dir, "missing")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podNameservers(tc.s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodDialAddressesOnly: the pod's dialer refuses a name, which would
// be resolved outside the pod, before it enters any namespace.
func TestPodDialAddressesOnly(t *testing.T) {
	if _, err := podDial("/nonexistent")(context.Background(), "tcp", "example.com:443"); err == nil || !strings.Contains(err.Error(), "addresses only") {
		t.Errorf("podDial of a name: %v, want a refusal", err)
	}
}
