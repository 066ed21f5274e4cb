package policy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHookSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		want     Hooks
		err      string
	}{
		{
			name:     "argv and timeout",
			settings: `{"cordon": {"hooks": {"preDecision": {"command": ["/usr/local/bin/check", "--strict"], "timeout": "2s"}}}}`,
			want:     Hooks{PreDecision: &Hook{Args: []string{"/usr/local/bin/check", "--strict"}, Timeout: 2 * time.Second, Source: "F:1:38"}},
		},
		{
			name:     "a program alone, default timeouts",
			settings: `{"cordon": {"hooks": {"preDecision": {"command": "/bin/pre"}, "postRun": {"command": "~/bin/audit"}}}}`,
			want: Hooks{
				PreDecision: &Hook{Args: []string{"/bin/pre"}, Timeout: DefaultPreDecisionTimeout, Source: "F:1:38"},
				PostRun:     &Hook{Args: []string{"/home/u/bin/audit"}, Timeout: DefaultPostRunTimeout, Source: "F:1:74"},
			},
		},
		{name: "relative program", settings: `{"cordon": {"hooks": {"preDecision": {"command": "check"}}}}`,
			err: `F:1:50: cordon.hooks.preDecision.command: "check" is not an absolute path`},
		{name: "misspelt hook", settings: `{"cordon": {"hooks": {"preDecison": {"command": "/bin/x"}}}}`,
			err: `F:1:23: unknown key "preDecison" in cordon.hooks (did you mean "preDecision"?)`},
		{name: "misspelt key", settings: `{"cordon": {"hooks": {"postRun": {"comand": "/bin/x"}}}}`,
			err: `F:1:35: unknown key "comand" in cordon.hooks.postRun (did you mean "command"?)`},
		{name: "misspelt block", settings: `{"cordon": {"hook": {}}}`,
			err: `F:1:13: unknown key "hook" in cordon (did you mean "hooks"?)`},
		{name: "no command", settings: `{"cordon": {"hooks": {"postRun": {"timeout": "1s"}}}}`,
			err: `F:1:34: cordon.hooks.postRun has no command`},
		{name: "empty argv", settings: `{"cordon": {"hooks": {"postRun": {"command": []}}}}`,
			err: `cordon.hooks.postRun.command is empty`},
		{name: "not strings", settings: `{"cordon": {"hooks": {"postRun": {"command": ["/bin/x", 3]}}}}`,
			err: `F:1:57: cordon.hooks.postRun.command must contain strings, not number`},
		{name: "a number", settings: `{"cordon": {"hooks": {"postRun": {"command": 3}}}}`,
			err: `must be a program's absolute path or an array of strings`},
		{name: "zero timeout", settings: `{"cordon": {"hooks": {"preDecision": {"command": "/bin/x", "timeout": "0s"}}}}`,
			err: `F:1:71: cordon.hooks.preDecision.timeout must be a duration from 1ms to 10m`},
		{name: "long timeout", settings: `{"cordon": {"hooks": {"preDecision": {"command": "/bin/x", "timeout": "1h"}}}}`,
			err: `timeout must be a duration from 1ms to 10m`},
		{name: "not an object", settings: `{"cordon": {"hooks": {"preDecision": "/bin/x"}}}`,
			err: `F:1:38: cordon.hooks.preDecision must be an object, not string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"s/F": {Data: []byte(tc.settings)}}
			p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/s", Home: "/home/u", Settings: []string{"/s/F"}, NoDiscovery: true, FS: fsys})
			if tc.err != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), "/s/F", "F"), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := p.Hooks
			for _, h := range []*Hook{got.PreDecision, got.PostRun} {
				if h != nil {
					h.Source = strings.ReplaceAll(h.Source, "/s/F", "F")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hooks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHookUntrusted: a workspace's own settings cannot name a hook until
// the user trusts it (a hook runs on the host, outside the sandbox).
func TestHookUntrusted(t *testing.T) {
	ws := `{"cordon": {"hooks": {"preDecision": {"command": "/ws/evil"}, "postRun": {"command": "/ws/evil"}}}}`
	for _, trusted := range []bool{false, true} {
		fsys := fstest.MapFS{"ws/.cordon/settings.json": {Data: []byte(ws)}}
		if trusted {
			fsys["home/u/.config/cordon/settings.json"] = &fstest.MapFile{Data: []byte(`{"cordon": {"trustedWorkspaces": ["/ws"]}}`)}
		}
		p, err := Load(LoadOptions{Workspace: "/ws", Cwd: "/ws", Home: "/home/u", FS: fsys, ManagedFiles: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Hooks.PreDecision != nil && p.Hooks.PostRun != nil; got != trusted {
			t.Errorf("trusted %v: hooks %+v", trusted, p.Hooks)
		}
		ignored := 0
		for _, i := range p.Report.Ignored {
			if strings.HasPrefix(i.Key, "cordon.hooks.") && strings.Contains(i.Reason, "not trusted") {
				ignored++
			}
		}
		if want := map[bool]int{false: 2, true: 0}[trusted]; ignored != want {
			t.Errorf("trusted %v: %d hooks reported ignored, want %d: %+v", trusted, ignored, want, p.Report.Ignored)
		}
	}
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook")
	must(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func TestPreDecisionHook(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		body    string
		timeout time.Duration
		command string
		verdict Verdict
		reason  string
	}{
		{name: "deny", body: `echo '{"decision": "deny", "reason": "not on Fridays"}'`, command: "make",
			verdict: VerdictDeny, reason: "denied by the pre-decision hook: not on Fridays"},
		{name: "ask", body: `echo '{"decision": "ask", "reason": "looks odd"}'`, command: "ls",
			verdict: VerdictAsk, reason: "the pre-decision hook asks: looks odd"},
		{name: "allow continues to the mode", body: `echo '{"decision": "allow"}'`, command: "rm -rf ~",
			verdict: VerdictAsk, reason: "it needs danger-full-access"},
		{name: "allow continues to allow", body: `echo '{"decision": "allow"}'`, command: "make",
			verdict: VerdictAllow, reason: "mode is enough"},
		{name: "no answer", body: `cat >/dev/null`, command: "make", verdict: VerdictAllow},
		{name: "Claude Code's answer", body: `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "policy 7"}}'`,
			command: "make", verdict: VerdictDeny, reason: "denied by the pre-decision hook: policy 7"},
		{name: "fails: denied", body: `echo "database unreachable" >&2; exit 3`, command: "ls",
			verdict: VerdictDeny, reason: "the pre-decision hook failed (denied): hook failed: " + "HOOK: exit status 3: database unreachable"},
		{name: "times out: denied", body: `sleep 30 & sleep 30`, timeout: 200 * time.Millisecond, command: "ls",
			verdict: VerdictDeny, reason: "did not answer within 200ms"},
		{name: "garbage: denied", body: `echo 'yes please'`, command: "ls", verdict: VerdictDeny, reason: "not JSON"},
		{name: "unknown decision: denied", body: `echo '{"decision": "maybe"}'`, command: "ls", verdict: VerdictDeny, reason: `"maybe" is not deny, ask or allow`},
		{name: "too much output: denied", body: `head -c 2000000 /dev/zero`, command: "ls", verdict: VerdictDeny, reason: "wrote more than"},
	}
	for _, tc := range tests {
		// Not parallel: a script written while another test forks can be
		// "text file busy" when it is run.
		t.Run(tc.name, func(t *testing.T) {
			p := f.load(t, "hook-"+strings.ReplaceAll(tc.name, " ", "-"), `{}`)
			h := script(t, tc.body)
			p.Hooks.PreDecision = &Hook{Args: []string{h}, Timeout: tc.timeout}
			if tc.timeout == 0 {
				p.Hooks.PreDecision.Timeout = 5 * time.Second
			}
			start := time.Now()
			d, err := p.Authorize(context.Background(), Request{Tool: "Bash", Command: tc.command, Cwd: f.ws})
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %v: the hook's process group was not killed", time.Since(start))
			}
			reason := strings.ReplaceAll(d.Reason, h, "HOOK")
			if d.Verdict != tc.verdict || !strings.Contains(reason, tc.reason) {
				t.Errorf("got %s: %s\nwant %s: ...%s...\ntrace %v", d.Verdict, reason, tc.verdict, tc.reason, d.Trace)
			}
			if !containsStep(d.Trace, "hook") {
				t.Errorf("no hook step in the trace: %v", d.Trace)
			}
		})
	}
}

func containsStep(trace []Step, name string) bool {
	for _, s := range trace {
		if s.Step == name {
			return true
		}
	}
	return false
}

// TestPreDecisionHookInput: the hook reads the request, Claude Code's
// fields and cordon's analysis; a deny rule decides before it runs.
func TestPreDecisionHookInput(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "hook-input", `{"permissions": {"deny": ["Bash(curl:*)"]}}`)
	out := filepath.Join(t.TempDir(), "input.json")
	p.Hooks.PreDecision = &Hook{Args: []string{script(t, `cat > "$1"; echo "$CORDON_HOOK" > "$1.event"`), out}, Timeout: 5 * time.Second}

	d, err := p.Authorize(context.Background(), Request{Tool: "Bash", Command: "curl x", Cwd: f.ws})
	if err != nil || d.Verdict != VerdictDeny {
		t.Fatalf("%v %v", d, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran although a deny rule decided")
	}

	input := json.RawMessage(`{"command":"rm -rf ~","description":"clean up","timeout":60000}`)
	if _, err := p.Authorize(context.Background(), Request{Tool: "Bash", Command: "rm -rf ~", Cwd: f.ws, Mode: "acceptEdits", Input: input}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"hook_event_name": "PreDecision", "tool_name": "Bash", "permission_mode": "acceptEdits",
		"cwd": f.ws, "workspace": f.ws, "required_mode": "danger-full-access", "sandboxed": true,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if ti, _ := got["tool_input"].(map[string]any); ti["description"] != "clean up" || ti["command"] != "rm -rf ~" {
		t.Errorf("tool_input = %v, want the input as given", got["tool_input"])
	}
	if fs, _ := got["findings"].([]any); len(fs) == 0 {
		t.Errorf("no findings: %s", data)
	}
	if ev, _ := os.ReadFile(out + ".event"); strings.TrimSpace(string(ev)) != "preDecision" {
		t.Errorf("CORDON_HOOK=%q", ev)
	}
}

func TestPostRunHook(t *testing.T) {
	f := newFixture(t)
	p := f.load(t, "post", `{}`)
	if err := p.PostRun(context.Background(), RunReport{Command: []string{"true"}}); err != nil {
		t.Errorf("no hook: %v", err)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	p.Hooks.PostRun = &Hook{Args: []string{script(t, `cat > "$1"`), out}, Timeout: 5 * time.Second}
	r := RunReport{ID: "run-1", Command: []string{"sh", "-c", "exit 3"}, Workspace: f.ws, Cwd: f.ws, ExitStatus: 3,
		Violations: []string{"blocked connection to example.com:443"}, DurationMS: 12}
	if err := p.PostRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	var got RunReport
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	r.HookEventName = "PostRun"
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	p.Hooks.PostRun = &Hook{Args: []string{script(t, `echo disk full >&2; exit 1`)}, Timeout: 5 * time.Second}
	if err := p.PostRun(context.Background(), r); !errors.Is(err, ErrHook) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing hook: %v, want ErrHook naming its stderr", err)
	}
}

// TestTrustDepth: a directory in cordon.trustedWorkspaces trusts the
// workspaces down to TrustDepth below it, not deeper (a sandboxed command
// of the trusted workspace could write the settings there), and only from
// the user's or the managed settings.
func TestTrustDepth(t *testing.T) {
	user := &layer{scope: ScopeUser, trusted: []entry{{V: "/src"}}}
	project := &layer{scope: ScopeProject, trusted: []entry{{V: "/"}}}
	for _, tc := range []struct {
		ws   string
		want bool
	}{
		{"/src", true}, {"/src/app", true}, {"/src/org/app", true},
		{"/src/org/app/pkg", false}, {"/src/a/b/c/d", false}, {"/srcx", false}, {"/other", false},
	} {
		if got := isTrusted([]string{tc.ws}, []*layer{user, project}); got != tc.want {
			t.Errorf("isTrusted(%s) = %v, want %v", tc.ws, got, tc.want)
		}
	}
}
