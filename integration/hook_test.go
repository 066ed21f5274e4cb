//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// claudeAnswer is what cordon hook claude prints.
type claudeAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// hook runs cordon hook claude as the box's caller on a Bash payload
// written as Claude Code sends it, and returns the answer.
func (b *box) hook(command, mode string) claudeAnswer {
	b.t.Helper()
	return b.hookIn("0b6e3c1e-7c55-4d1e-9d0c-2f6f4e7b1a90", command, mode)
}

// hookIn is hook in the session with the id, with more flags of cordon
// hook claude.
func (b *box) hookIn(session, command, mode string, flags ...string) claudeAnswer {
	b.t.Helper()
	payload, err := json.Marshal(map[string]any{
		"session_id":      session,
		"transcript_path": filepath.Join(b.home, ".claude/projects/x/0b6e3c1e.jsonl"),
		"cwd":             b.ws,
		"permission_mode": mode,
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input": map[string]any{
			"command":     command,
			"description": "Run it",
			"timeout":     120000,
		},
		"tool_use_id": "toolu_01Hk7bq1xYkz3mJ4Qp9Zr2Vw",
	})
	must(b.t, err)
	r := b.cordon(runSpec{stdin: bytes.NewReader(payload)}, append([]string{"hook", "claude"}, flags...)...)
	if r.code != 0 {
		b.t.Fatalf("cordon hook claude:\n%s", r)
	}
	var a claudeAnswer
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		b.t.Fatalf("cordon hook claude's answer: %v\n%s", err, r)
	}
	return a
}

// noServe keeps a rewritten command (whose cordon run has --serve) from
// starting cordon serve, which would outlive the test.
const noServe = "CORDON_SERVE=0"

// bash runs a command line with bash as the box's caller, in the
// workspace, as Claude Code runs a Bash tool call; env are more NAME=value.
func (b *box) bash(command string, env ...string) result {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = b.ws
	cmd.Env = b.env(env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.c.cred, Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := runLocked(cmd)
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		b.t.Fatalf("bash -c %q: no end after %v\n%s", command, runTimeout, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		b.t.Fatal(err)
	}
	b.t.Logf("bash -c %s → exit %d%s", quote([]string{command}), r.code, logTail(r.stderr))
	return r
}

// updatedCommand returns the rewritten command of an answer, and checks
// that the other members of tool_input came back.
func updatedCommand(t *testing.T, a claudeAnswer) string {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal(a.HookSpecificOutput.UpdatedInput, &in); err != nil {
		t.Fatalf("updatedInput: %v (%s)", err, a.HookSpecificOutput.UpdatedInput)
	}
	if in["description"] != "Run it" || in["timeout"] != float64(120000) {
		t.Errorf("updatedInput lost members of tool_input: %v", in)
	}
	cmd, _ := in["command"].(string)
	if !strings.Contains(cmd, cordonBin+" run ") {
		t.Fatalf("the rewritten command does not run cordon run: %q", cmd)
	}
	return cmd
}

// TestHookRunsSandboxed: the command cordon hook claude gives Claude Code
// in updatedInput, run by bash as Claude Code runs it, runs the original
// in the sandbox — even one the session's mode allows outright: it sees
// CORDON_SANDBOX=1, writes the workspace, cannot write outside it nor read
// the credentials; its output and exit status come back.
func TestHookRunsSandboxed(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		outside := filepath.Join(b.home, "outside.txt")
		original := `echo "sandbox=$CORDON_SANDBOX"
echo 'it'\''s here' > inside.txt
if echo pwned > ` + outside + ` 2>/dev/null; then echo WROTE-OUTSIDE; fi
cat ~/.ssh/id_ed25519 2>/dev/null || echo no-key
echo to-stderr >&2
exit 7`
		a := b.hook(original, "bypassPermissions")
		if a.HookSpecificOutput.PermissionDecision != "allow" || a.HookSpecificOutput.HookEventName != "PreToolUse" {
			t.Fatalf("answer %+v, want allow", a.HookSpecificOutput)
		}
		r := b.bash(updatedCommand(t, a), noServe)
		if r.code != 7 {
			t.Errorf("exit status %d, want the command's 7\n%s", r.code, r)
		}
		for _, want := range []string{"sandbox=1\n", "no-key\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q\n%s", want, r)
			}
		}
		if strings.Contains(r.stdout, "WROTE-OUTSIDE") || strings.Contains(r.stdout, b.token) {
			t.Errorf("the command escaped the sandbox\n%s", r)
		}
		if !strings.Contains(r.stderr, "to-stderr") {
			t.Errorf("stderr lost\n%s", r)
		}
		if got := readFile(filepath.Join(b.ws, "inside.txt")); got != "it's here\n" {
			t.Errorf("inside.txt = %q, want the workspace written", got)
		}
		if got := readFile(outside); got != "original\n" {
			t.Errorf("%s = %q: written from the sandbox", outside, got)
		}
	})
}

// TestHookRewriteExact: bash hands the sandboxed shell the original
// command byte for byte, however it is quoted.
func TestHookRewriteExact(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		body := "$HOME 'single' \"double\" `backquote` \\ $(no) ${x:-y} !! h\u00e9llo \t tab"
		original := "cat <<'EOF'\n" + body + "\nEOF"
		a := b.hook(original, "acceptEdits")
		if a.HookSpecificOutput.PermissionDecision != "allow" {
			t.Fatalf("answer %+v, want allow", a.HookSpecificOutput)
		}
		r := b.bash(updatedCommand(t, a), noServe)
		if r.code != 0 || r.stdout != body+"\n" {
			t.Errorf("got %q, want %q\n%s", r.stdout, body+"\n", r)
		}
	})
}

// TestHookPlanMode: in plan mode the rewritten command runs with the
// workspace read-only, and what plan mode forbids is denied outright.
func TestHookPlanMode(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		b := newBox(t, c)
		must(t, os.WriteFile(filepath.Join(b.ws, "README.md"), []byte("hello\n"), 0o644))
		b.chown()
		if a := b.hook("touch new.txt", "plan"); a.HookSpecificOutput.PermissionDecision != "deny" || len(a.HookSpecificOutput.UpdatedInput) > 0 {
			t.Errorf("touch in plan mode: %+v, want deny without updatedInput", a.HookSpecificOutput)
		}
		a := b.hook("cat README.md", "plan")
		if a.HookSpecificOutput.PermissionDecision != "allow" {
			t.Fatalf("cat in plan mode: %+v, want allow", a.HookSpecificOutput)
		}
		cmd := updatedCommand(t, a)
		if !strings.Contains(cmd, "--mode plan") {
			t.Errorf("the rewritten command does not keep plan mode: %q", cmd)
		}
		if r := b.bash(cmd, noServe); r.code != 0 || r.stdout != "hello\n" {
			t.Errorf("cat README.md:\n%s", r)
		}
		// The same sandbox, asked to write: read-only.
		sneaky := strings.Replace(cmd, "'cat README.md'", "'touch new.txt'", 1)
		if r := b.bash(sneaky, noServe); r.code == 0 || exists(filepath.Join(b.ws, "new.txt")) {
			t.Errorf("the plan-mode sandbox let the workspace be written:\n%s", r)
		}
	})
}

// TestHookWarnsOncePerSession: a warning of cordon run's (here, about
// limits an unprivileged caller's sandbox enforces by rlimit alone) is
// said in the first Bash call of each Claude Code session, not in every
// call's result; without a session, once per boot.
func TestHookWarnsOncePerSession(t *testing.T) {
	t.Parallel()
	c := callers["user"]
	requires(t, needCaller(c))
	b := newBox(t, c)
	root, state := privateState(t, b)
	call := func(session string) string {
		t.Helper()
		a := b.hookIn(session, "true", "acceptEdits", "--memory", "4096M")
		r := b.bash(updatedCommand(t, a), state, noServe)
		if r.code != 0 {
			t.Fatalf("the call failed:\n%s", r)
		}
		return r.stderr
	}
	const warned = "cordon: warning: "
	first := call("session-1")
	if !strings.Contains(first, warned) || !strings.Contains(first, "said once per session") {
		t.Fatalf("the first call of a session said no warning:\n%s", first)
	}
	for _, tc := range []struct {
		session string
		want    bool
	}{{"session-1", false}, {"session-1", false}, {"session-2", true}, {"session-2", false}, {"session-1", false}} {
		if got := call(tc.session); strings.Contains(got, warned) != tc.want {
			t.Errorf("a call in %s said %q; want a warning: %v", tc.session, got, tc.want)
		}
	}
	// A command of the sandbox cannot silence the next session's
	// warning: the records are out of its reach.
	a := b.hookIn("session-0", `ls "$CORDON_STATE_ROOT"/said; mkdir -p "$CORDON_STATE_ROOT/said/x" && touch "$CORDON_STATE_ROOT/said/x/y"; echo done`, "bypassPermissions")
	r := b.bash(updatedCommand(t, a), state, noServe)
	if !strings.Contains(r.stdout, "done") || strings.TrimSpace(r.stdout) != "done" || exists(filepath.Join(root, "said", "x", "y")) {
		t.Errorf("the sandbox sees or writes cordon's records:\n%s", r)
	}
	if got := call("session-3"); !strings.Contains(got, warned) {
		t.Errorf("a new session was not warned:\n%s", got)
	}
}

// TestHookServed: with cordon serve running, cordon hook claude is
// answered by the daemon, without starting Go (it answers under an
// address space limit Go's runtime cannot start in), exactly as the
// process answers, from the caller's environment (its HOME's rules, not
// the daemon's); a policy that runs a program of the user's to decide
// (hooks.preDecision, with the caller's environment) and a flag the
// daemon does not take are left to the process, which blocks the call
// (exit 2) when it cannot start.
func TestHookServed(t *testing.T) {
	t.Parallel()
	eachCaller(t, func(t *testing.T, c *caller) {
		requires(t, needTool("prlimit"))
		sb := newServeBox(t, c)
		// The caller's home, not the daemon's: a deny rule of Claude
		// Code's settings there.
		other := filepath.Join(sb.dir, "other-home")
		must(t, os.MkdirAll(filepath.Join(other, ".claude"), 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Bash(curl:*)"]}}`+"\n"), 0o644))
		sb.chown()
		sb.serve()
		payload := func(command string) []byte {
			data, err := json.Marshal(map[string]any{
				"session_id": "s1", "cwd": sb.ws, "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse",
				"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "Run it"}, "tool_use_id": "toolu_1",
			})
			must(t, err)
			return data
		}
		noGo := []string{toolPath("prlimit"), "--as=268435456", "--"}
		hook := func(command string, via []string, env []string, flags ...string) result {
			t.Helper()
			return sb.cordon(runSpec{stdin: bytes.NewReader(payload(command)), via: via, env: append(env, sb.stateEnv, "HOME="+other)},
				append([]string{"hook", "claude"}, flags...)...)
		}
		for _, command := range []string{"make test", "curl https://example.com"} {
			served := hook(command, noGo, nil)
			cold := hook(command, nil, []string{"CORDON_SERVE=0"})
			if served.code != 0 || served.stdout == "" {
				t.Fatalf("%s: not answered by the daemon:\n%s", command, served)
			}
			if served.stdout != cold.stdout || served.stderr != cold.stderr || cold.code != 0 {
				t.Errorf("%s: the daemon's answer is not the process's:\n%s\n--- the process:\n%s", command, served, cold)
			}
		}
		if r := hook("curl https://example.com", noGo, nil); !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
			t.Errorf("the daemon's answer does not follow the caller's settings:\n%s", r)
		}

		// Left to the process, which cannot start under the limit: it
		// blocks the call.
		must(t, os.MkdirAll(filepath.Join(other, ".config", "cordon"), 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".config", "cordon", "settings.json"), []byte(`{"cordon": {"hooks": {"preDecision": {"command": ["/bin/true"]}}}}`+"\n"), 0o644))
		sb.chown()
		for _, tc := range []struct {
			name  string
			flags []string
		}{{"hooks.preDecision", nil}, {"a flag the daemon does not take", []string{"--nope"}}} {
			if r := hook("make test", noGo, nil, tc.flags...); r.code != 2 || !strings.Contains(r.stderr, "RLIMIT_AS") {
				t.Errorf("%s: want the process, exit 2 (blocked) where it cannot start:\n%s", tc.name, r)
			}
		}
	})
}
