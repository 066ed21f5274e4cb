package darwin

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/policy"
)

func TestDiagnose(t *testing.T) {
	exe := &fstest.MapFile{Mode: 0o755}
	mac := fstest.MapFS{"usr/bin/sandbox-exec": exe, "usr/bin/log": exe}
	stat := func(fsys fstest.MapFS) func(string) (fs.FileInfo, error) {
		return func(name string) (fs.FileInfo, error) { return fs.Stat(fsys, strings.TrimPrefix(name, "/")) }
	}
	pol := func(change func(p *policy.Policy)) *policy.Policy {
		p, err := policy.Default(ws, home)
		if err != nil {
			t.Fatal(err)
		}
		change(p)
		return p
	}
	network := func(p *policy.Policy) { p.Network.AllowedDomains = []string{"github.com"} }
	for _, tc := range []struct {
		name    string
		fsys    fstest.MapFS
		p       *policy.Policy
		verdict string
		trust   string // the start of the trustd line's detail
	}{
		{"no network", mac, pol(func(*policy.Policy) {}), "full", "not needed"},
		{"network, trustd closed", mac, pol(network), "full", "closed: Go programs (gh, terraform, kubectl, go), Rust's native-tls and Swift fail HTTPS"},
		{"network, trustd open", mac, pol(func(p *policy.Policy) { network(p); p.Sandbox.EnableWeakerNetworkIsolation = true }), "full", "open (sandbox.enableWeakerNetworkIsolation)"},
		{"settings not read", mac, nil, "full", "not known"},
		{"no sandbox-exec", fstest.MapFS{"usr/bin/log": exe}, pol(network), "unavailable", "closed"},
		{"sandbox-exec not executable", fstest.MapFS{"usr/bin/sandbox-exec": {Mode: 0o644}}, pol(network), "unavailable", "closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(stat(tc.fsys), tc.p)
			if d.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q", d.Verdict, tc.verdict)
			}
			var names []string
			for _, f := range d.Findings {
				names = append(names, f.Name)
				if f.Name == "TLS verification (trustd)" && !strings.HasPrefix(f.Detail, tc.trust) {
					t.Errorf("trustd: %q, want it to start with %q", f.Detail, tc.trust)
				}
			}
			if diff := cmp.Diff([]string{"sandbox-exec", "refusal records", "TLS verification (trustd)", "limits"}, names); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			var b strings.Builder
			if err := d.WriteText(&b); err != nil || !strings.Contains(b.String(), "verdict: ") {
				t.Errorf("WriteText: %v\n%s", err, b.String())
			}
		})
	}
}
