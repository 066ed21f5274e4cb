//go:build unix

package runtime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/netproxy"
)

func TestRecorderFinish(t *testing.T) {
	dir := t.TempDir()
	var noted []string
	r := NewRecorder(Options{
		ID:     "run-abc",
		Meta:   Meta{Args: []string{"curl", "https://evil.example"}, Workspace: "/w"},
		Store:  dir,
		Ignore: Ignore{"*": {"telemetry.example"}},
		Notify: func(msg string) { noted = append(noted, msg) },
	})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Add(Violation{Time: at, Kind: KindOperation, Syscall: "mach-lookup", Args: []string{"com.apple.FontServer"}, Command: "java", PID: 7, Reason: "a Mach service not on the sandbox's list"})
	r.Add(Violation{Time: at, Kind: KindOperation, Syscall: "mach-lookup", Args: []string{"com.apple.FontServer"}, Command: "java", PID: 7}) // a repeat
	r.Add(Violation{Time: at, Kind: KindSocket, Syscall: "connect", Args: []string{"/private/var/run/mDNSResponder"}, Path: "/private/var/run/mDNSResponder", Command: "curl"})
	r.Decision(netproxy.Decision{Host: "evil.example", Port: 443, Reason: netproxy.ReasonAllowlist, Rule: "not in allowedDomains"})
	r.Decision(netproxy.Decision{Host: "telemetry.example", Port: 443, Reason: netproxy.ReasonAllowlist, Rule: "not in allowedDomains"}) // ignored
	r.Decision(netproxy.Decision{Host: "github.com", Port: 443, Allowed: true})
	r.Finish()

	want := []string{
		"blocked mach-lookup com.apple.FontServer by java (a Mach service not on the sandbox's list)",
		"blocked connection to evil.example:443 (not in allowedDomains; allow with --allow-domain evil.example or sandbox.network.allowedDomains)",
	}
	if diff := cmp.Diff(want, noted); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	got, err := ReadViolations(dir, Filter{Run: "run-abc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("stored %d violations, want 3 (the unix socket is recorded, not noted): %+v", len(got), got)
	}
	for _, v := range got {
		if v.Run != "run-abc" || v.Workspace != "/w" {
			t.Errorf("not stamped: %+v", v)
		}
	}
	if got[0].Time != at || got[0].PID != 7 || got[0].Target() != "mach-lookup com.apple.FontServer" {
		t.Errorf("first record: %+v", got[0])
	}

	// Nothing refused: nothing stored, nothing noted.
	noted = nil
	empty := t.TempDir()
	NewRecorder(Options{ID: "run-0", Store: empty, Notify: func(msg string) { noted = append(noted, msg) }}).Finish()
	if vs, _ := ReadViolations(empty, Filter{}); len(vs) != 0 || len(noted) != 0 {
		t.Errorf("stored %v, noted %v", vs, noted)
	}
}

// TestNetworkViolationHint: the hint names an entry the allow list would
// take, and none for a destination no entry can name. The host is the
// sandboxed command's: "allow with --allow-domain $(id).example" was
// printed for a command to copy into a shell.
func TestNetworkViolationHint(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"evil.example", "allow with --allow-domain evil.example or sandbox.network.allowedDomains"},
		{"192.0.2.1", "allow with --allow-domain 192.0.2.1 or sandbox.network.allowedDomains"},
		{"2001:db8::1", "allow with --allow-domain [2001:db8::1] or sandbox.network.allowedDomains"},
		{"$(id).example", ""},
		{"a`id`.example", ""},
		{"x;id.example", ""},
		{"a b.example", ""},
		{"a?b.example", ""},
	} {
		t.Run(tc.host, func(t *testing.T) {
			v := NetworkViolation(netproxy.Decision{Host: tc.host, Port: 443, Reason: netproxy.ReasonAllowlist, Rule: "x"})
			if v.Hint != tc.want {
				t.Errorf("hint %q; want %q", v.Hint, tc.want)
			}
		})
	}
}

// TestCredentialRecords: a masked credential's uses are recorded, one
// record per credential, destination and outcome with the number of
// requests; the fakes kept from a host are noted, the substitutions only
// recorded; --kind selects them.
func TestCredentialRecords(t *testing.T) {
	dir := t.TempDir()
	var noted []string
	r := NewRecorder(Options{ID: "run-c", Store: dir, Notify: func(msg string) { noted = append(noted, msg) }})
	own := netproxy.CredentialUse{Name: "env GH_TOKEN", Own: true, Substituted: true}
	own.Host, own.Port, own.TLS = "api.github.com", 443, true
	other := netproxy.CredentialUse{Name: "env GH_TOKEN"}
	other.Host, other.Port, other.TLS = "evil.example", 443, true
	plain := netproxy.CredentialUse{Name: "env GH_TOKEN", Own: true}
	plain.Host, plain.Port = "api.github.com", 80
	for _, u := range []netproxy.CredentialUse{own, own, other, own, plain} {
		r.Add(CredentialViolation(u))
	}
	r.Decision(netproxy.Decision{Host: "denied.example", Port: 443, Reason: netproxy.ReasonAllowlist, Rule: "not in allowedDomains"})
	r.Finish()

	want := []string{
		"kept env GH_TOKEN from evil.example:443 (not among its injectHosts: its fake went out; add the host to the credential's injectHosts if it is to get the real value)",
		"kept env GH_TOKEN from api.github.com:80 (plain HTTP: the real value goes only over TLS, and its fake went out; use https://, or credentials.allowPlaintextInject)",
		"blocked connection to denied.example:443 (not in allowedDomains; allow with --allow-domain denied.example or sandbox.network.allowedDomains)",
	}
	if diff := cmp.Diff(want, noted); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	got, err := ReadViolations(dir, Filter{Kind: KindCredential})
	if err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, v := range got {
		sums = append(sums, v.Summary())
	}
	wantSums := []string{
		"sent env GH_TOKEN's real value to api.github.com:443 in 3 requests (among its injectHosts, over TLS whose server cordon verified)",
		want[0], want[1],
	}
	if diff := cmp.Diff(wantSums, sums); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if got[0].Count != 3 || got[0].Credential != "env GH_TOKEN" || !got[0].Substituted || got[1].Count != 1 || got[1].Substituted {
		t.Errorf("records: %+v", got)
	}
}
