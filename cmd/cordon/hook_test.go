package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestExitStatusCheckHook: cordon check exits 0 with any decision and 125
// on bad input; cordon hook claude exits 0 with an answer and 2 (Claude
// Code blocks the call) with one line on stderr when it cannot answer.
func TestExitStatusCheckHook(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	tests := []struct {
		name   string
		args   []string
		stdin  string
		want   int
		stdout string
		stderr string
	}{
		{"check allow", []string{"check", "--", "ls"}, "", 0, `"decision": "allow"`, ""},
		{"check deny", []string{"check", "--mode", "plan", "--", "make"}, "", 0, `"decision": "deny"`, ""},
		{"check no input", []string{"check"}, "", 125, "", "cordon: no command given"},
		{"check bad mode", []string{"check", "--mode", "x", "--", "ls"}, "", 125, "", "unknown mode"},
		{"hook allow", []string{"hook", "claude"}, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, 0, `"permissionDecision":"allow"`, ""},
		{"hook deny", []string{"hook", "claude"}, `{"tool_name":"Bash","permission_mode":"plan","tool_input":{"command":"make"}}`, 0, `"permissionDecision":"deny"`, ""},
		{"hook other tool", []string{"hook", "claude"}, `{"tool_name":"TodoWrite","tool_input":{}}`, 0, "", ""},
		{"hook empty input", []string{"hook", "claude"}, ``, 2, "", "cordon hook: malformed hook input"},
		{"hook no command", []string{"hook", "claude"}, `{"tool_name":"Bash","tool_input":{}}`, 2, "", "tool_input has no command"},
		{"hook bad settings", []string{"hook", "claude", "--settings", "/nonexistent/s.json"}, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, 2, "", "cordon hook: /nonexistent/s.json: cannot read"},
		{"hook bad flag", []string{"hook", "claude", "--bogus"}, `{}`, 2, "", "cordon hook: flag provided but not defined: -bogus"},
		{"hook bad mode", []string{"hook", "claude", "--mode", "x"}, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, 2, "", `cordon hook: unknown mode "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			stdout, stderr, stdin = &out, &errOut, strings.NewReader(tc.stdin)
			got := run(context.Background(), append([]string{"cordon"}, tc.args...))
			if got != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, out.String(), errOut.String())
			}
			if tc.stdout == "" && out.Len() > 0 || !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			if tc.stderr == "" && errOut.Len() > 0 || !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", errOut.String(), tc.stderr)
			}
			if n := strings.Count(strings.TrimSpace(errOut.String()), "\n"); n > 0 {
				t.Errorf("stderr has %d lines, want one", n+1)
			}
		})
	}
}
