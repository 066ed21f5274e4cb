package policy

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, settings string
		has, hasNot    []string
	}{
		{
			name:     "default",
			settings: `{}`,
			has: []string{"Shell commands run in a sandbox", "Permission mode: workspace-write.", "Readable: the whole file system, except:\n  - ~/.ssh\n",
				"Writable: the workspace ~/proj, and /tmp", ".git/hooks", "Network: none.", "*_TOKEN", "To do more:"},
			hasNot: []string{"dangerouslyDisableSandbox", "Denied by rule"},
		},
		{
			name: "widened",
			settings: `{"permissions": {"deny": ["Bash(curl:*)"], "ask": ["Bash(git push:*)"], "defaultMode": "plan"},
				"sandbox": {"allowUnsandboxedCommands": true, "excludedCommands": ["docker"],
				"network": {"allowedDomains": ["github.com"], "deniedDomains": ["gist.github.com"]}}}`,
			has: []string{"Permission mode: plan. Commands may only read", "Writable: nothing but /tmp (read-only mode)",
				"Network: only through cordon's proxy", "github.com", "Never: gist.github.com.", "outside the sandbox (when nothing else is in the same command line): docker",
				"Denied by rule, whatever the mode: Bash(curl:*).", "Always asked of the user: Bash(git push:*).", "dangerouslyDisableSandbox: true"},
		},
		{
			name:     "off",
			settings: `{"sandbox": {"enabled": false}}`,
			has:      []string{"WITHOUT a sandbox"},
			hasNot:   []string{"dangerouslyDisableSandbox"},
		},
	}
	for _, tc := range tests {
		s := f.load(t, "summary-"+tc.name, tc.settings).Summary()
		for _, h := range tc.has {
			if !strings.Contains(s, h) {
				t.Errorf("%s: the summary lacks %q:\n%s", tc.name, h, s)
			}
		}
		for _, h := range tc.hasNot {
			if strings.Contains(s, h) {
				t.Errorf("%s: the summary has %q:\n%s", tc.name, h, s)
			}
		}
	}
}

func TestSandboxed(t *testing.T) {
	p := &Policy{Workspace: "/w", Home: "/h", Sandbox: Sandbox{ExcludedCommands: []string{"docker *", "gh:*", "make test", "kubectl"}}}
	for _, tc := range []struct {
		cmd     string
		disable bool
		want    bool
		why     string
	}{
		{"ls", false, true, ""},
		{"docker ps", false, false, "sandbox.excludedCommands: docker *"},
		// an entry without * is that command alone, as in Claude Code
		{"kubectl", false, false, "kubectl"},
		{"kubectl apply -f x", false, true, ""},
		{"docker", false, false, "docker"},
		{"dockerd", false, true, ""},
		{"gh pr list && docker ps", false, false, "gh:*, docker *"},
		// a cd or a redirect keeps the call in, as in Claude Code
		{"gh pr list && cd x && docker ps", false, true, ""},
		{"docker ps > out.txt", false, true, ""},
		{"docker ps; ls", false, true, ""},
		{"make test", false, false, "make test"},
		{"make test-all", false, true, ""},
		{"  ", false, false, "there is no command"},
		{"ls", true, true, "dangerouslyDisableSandbox is ignored"},
	} {
		got, why := p.Sandboxed(tc.cmd, tc.disable)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("Sandboxed(%q, %v) = %v, %q; want %v, %q", tc.cmd, tc.disable, got, why, tc.want, tc.why)
		}
	}
	p.Sandbox.AllowUnsandboxedCommands = true
	if got, why := p.Sandboxed("ls", true); got || !strings.Contains(why, "allowUnsandboxedCommands lets it") {
		t.Errorf("dangerouslyDisableSandbox allowed: %v %q", got, why)
	}
	p.Sandbox.Disabled = true
	if got, why := p.Sandboxed("ls", false); got || !strings.Contains(why, "disabled") {
		t.Errorf("disabled: %v %q", got, why)
	}
}
