package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
		// Claude Code leaves a PermissionRequest unchanged after exit 2:
		// the denial is said in JSON too.
		{"permission request", []string{"hook", "claude"}, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`, 0, `"decision":{"behavior":"allow","updatedInput":{"command":`, ""},
		{"permission request bad settings", []string{"hook", "claude", "--settings", "/nonexistent/s.json"}, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`, 2, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"cordon hook: `, "cannot read"},
		{"permission request bad flag", []string{"hook", "claude", "--bogus"}, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`, 2, `"decision":{"behavior":"deny","message":"cordon hook: flag provided but not defined: -bogus"}`, "flag provided but not defined"},
		{"permission request NUL", []string{"hook", "claude"}, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls\u0000"}}`, 2, `"behavior":"deny"`, "NUL"},
		{"post tool use", []string{"hook", "claude"}, `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, 2, "", "answers PreToolUse and PermissionRequest"},
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

// TestCheckHookAgree: cordon check and cordon hook claude give the same
// decision for the same call, in every mode Claude Code reports; a tool
// that no rule of cordon's decides is "defer" for check, and gets no
// answer from the hook.
func TestCheckHookAgree(t *testing.T) {
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	for _, d := range []string{home, filepath.Join(ws, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"ws/.env": "SECRET=1\n", "ws/src/a.go": "package a\n", "home/notes.txt": "x\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings := filepath.Join(root, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"permissions": {
		"allow": ["Bash(npm test:*)", "TodoWrite"],
		"deny": ["Bash(curl:*)", "Read(./.env)", "WebSearch", "Agent(model:opus)"],
		"ask": ["Bash(git push:*)", "mcp__github"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	calls := []struct {
		tool, input string         // cordon check's
		toolInput   map[string]any // the hook's
	}{
		{"Bash", "ls -la", map[string]any{"command": "ls -la"}},
		{"Bash", "npm test", map[string]any{"command": "npm test"}},
		{"Bash", "make", map[string]any{"command": "make"}},
		{"Bash", "sudo curl x", map[string]any{"command": "sudo curl x"}},
		{"Bash", "git push", map[string]any{"command": "git push"}},
		{"Bash", "rm -rf ~", map[string]any{"command": "rm -rf ~"}},
		{"Read", ".env", map[string]any{"file_path": ws + "/.env"}},
		{"Read", "~/notes.txt", map[string]any{"file_path": "~/notes.txt"}},
		{"Edit", "src/a.go", map[string]any{"file_path": ws + "/src/a.go", "old_string": "a", "new_string": "b"}},
		{"Write", home + "/x.txt", map[string]any{"file_path": home + "/x.txt", "content": "x"}},
		{"Grep", "src", map[string]any{"pattern": "x", "path": "src"}},
		{"LSP", ".env", map[string]any{"operation": "hover", "filePath": ws + "/.env", "line": 1, "character": 1}},
		{"LSP", "src/a.go", map[string]any{"operation": "documentSymbol", "filePath": "src/a.go"}},
		{"WebFetch", "https://example.com/", map[string]any{"url": "https://example.com/", "prompt": "x"}},
		{"WebSearch", "", map[string]any{"query": "x"}},
		{"Agent", `{"subagent_type":"general-purpose","model":"opus","prompt":"x"}`, map[string]any{"subagent_type": "general-purpose", "model": "opus", "prompt": "x"}},
		{"Agent", `{"subagent_type":"general-purpose","prompt":"x"}`, map[string]any{"subagent_type": "general-purpose", "prompt": "x"}},
		{"Monitor", "tail -f build.log", map[string]any{"command": "tail -f build.log", "description": "x", "timeout_ms": 60000}},
		{"Monitor", "curl -sN https://x.example/events", map[string]any{"command": "curl -sN https://x.example/events"}},
		{"Monitor", "rm -rf ~", map[string]any{"command": "rm -rf ~"}},
		{"Task", `{"description":"x","prompt":"y"}`, map[string]any{"description": "x", "prompt": "y"}},
		{"Task", `{"subagent_type":"x","model":"opus"}`, map[string]any{"subagent_type": "x", "model": "opus"}},
		{"TodoWrite", "", map[string]any{"todos": []any{}}},
		{"mcp__github__create_issue", "", map[string]any{"title": "t"}},
		{"mcp__other__x", "", map[string]any{}},
	}
	for _, mode := range []string{"default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"} {
		for _, c := range calls {
			t.Run(mode+"/"+c.tool+"/"+c.input, func(t *testing.T) {
				args := []string{"cordon", "check", "--settings", settings, "--mode", mode, "--tool", c.tool}
				if c.input != "" {
					args = append(args, "--", c.input)
				}
				var out, errOut bytes.Buffer
				stdout, stderr, stdin = &out, &errOut, strings.NewReader("")
				if code := run(context.Background(), args); code != 0 {
					t.Fatalf("check: exit %d: %s", code, errOut.String())
				}
				var d struct{ Decision string }
				if err := json.Unmarshal(out.Bytes(), &d); err != nil {
					t.Fatal(err)
				}
				payload, _ := json.Marshal(map[string]any{
					"session_id": "s", "transcript_path": home + "/t.jsonl", "cwd": ws, "permission_mode": mode,
					"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_input": c.toolInput, "tool_use_id": "toolu_1",
				})
				out.Reset()
				stdin = bytes.NewReader(payload)
				if code := run(context.Background(), []string{"cordon", "hook", "claude", "--settings", settings}); code != 0 {
					t.Fatalf("hook: exit %d: %s", code, errOut.String())
				}
				hook := "defer"
				if out.Len() > 0 {
					var a struct {
						HookSpecificOutput struct{ PermissionDecision string } `json:"hookSpecificOutput"`
					}
					if err := json.Unmarshal(out.Bytes(), &a); err != nil {
						t.Fatal(err)
					}
					hook = a.HookSpecificOutput.PermissionDecision
				}
				if hook != d.Decision {
					t.Errorf("check says %s, the hook %s", d.Decision, hook)
				}
			})
		}
	}
}
