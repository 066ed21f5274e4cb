package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Override is what a pre-decision hook says about a request.
type Override struct {
	// Verdict is deny (the request is denied), ask (the user is asked),
	// allow (the decision continues: rules and mode still apply), or
	// empty (no override).
	Verdict Verdict
	Reason  string
}

// hookOutputLimit bounds what cordon reads of a hook's stdout and stderr.
const hookOutputLimit = 1 << 20

// PreDecisionInput is what a pre-decision hook reads on stdin: Claude
// Code's PreToolUse fields, and cordon's analysis of the request.
type PreDecisionInput struct {
	HookEventName  string          `json:"hook_event_name"` // "PreDecision"
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	Workspace      string          `json:"workspace"`
	// RequiredMode, Sandboxed and Findings are cordon's analysis.
	RequiredMode string        `json:"required_mode"`
	Sandboxed    bool          `json:"sandboxed"`
	Findings     []hookFinding `json:"findings"`
	Trace        []Step        `json:"trace"`
	File         *FileInfo     `json:"file,omitempty"`
}

type hookFinding struct {
	Subject      string `json:"subject"`
	RequiredMode string `json:"required_mode"`
	Reason       string `json:"reason"`
}

// toolInput is a request's input as Claude Code would send it.
func (req Request) toolInput() json.RawMessage {
	if len(req.Input) > 0 {
		return req.Input
	}
	m := map[string]any{}
	switch req.kind() {
	case kindBash:
		m["command"] = req.Command
		if req.DisableSandbox {
			m["dangerouslyDisableSandbox"] = true
		}
	case kindRead, kindWrite:
		key := "file_path"
		switch req.Tool {
		case "NotebookEdit":
			key = "notebook_path"
		case "Glob", "Grep", "LS":
			key = "path"
		case "LSP":
			key = "filePath"
		}
		m[key] = req.Path
	case kindWeb:
		m["url"] = req.URL
	}
	data, _ := json.Marshal(m)
	return data
}

// runPreDecision asks the pre-decision hook about a request.
func (p *Policy) runPreDecision(ctx context.Context, h *Hook, req Request, a *analysis, ses session) (Override, error) {
	in := PreDecisionInput{
		HookEventName: "PreDecision", ToolName: req.Tool, ToolInput: req.toolInput(), Cwd: req.Cwd,
		PermissionMode: ses.name, Workspace: p.Workspace, RequiredMode: a.required.String(),
		Sandboxed: a.sandboxed, Findings: []hookFinding{}, Trace: a.steps, File: a.file,
	}
	for _, f := range a.findings {
		in.Findings = append(in.Findings, hookFinding{f.Subject, f.Mode.String(), f.Reason})
	}
	data, err := json.Marshal(in)
	if err != nil {
		return Override{}, fmt.Errorf("%w: %v", ErrHook, err)
	}
	out, err := h.Run(ctx, data, "preDecision")
	if err != nil {
		return Override{}, err
	}
	return ParseOverride(out)
}

// ParseOverride reads a pre-decision hook's answer: empty (no override),
// {"decision": "deny"|"ask"|"allow", "reason": "..."}, or Claude Code's
// PreToolUse answer {"hookSpecificOutput": {"permissionDecision": ...,
// "permissionDecisionReason": ...}}.
func ParseOverride(out []byte) (Override, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return Override{}, nil
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Specific *struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return Override{}, fmt.Errorf("%w: its answer is not JSON: %v", ErrHook, err)
	}
	if v.Specific != nil && v.Decision == "" {
		v.Decision, v.Reason = v.Specific.Decision, v.Specific.Reason
	}
	switch Verdict(v.Decision) {
	case VerdictAllow, VerdictAsk, VerdictDeny, "":
		return Override{Verdict: Verdict(v.Decision), Reason: v.Reason}, nil
	}
	return Override{}, fmt.Errorf("%w: decision %q is not deny, ask or allow", ErrHook, v.Decision)
}

// Run runs the hook with input on stdin and returns its stdout. The hook
// runs in a process group of its own, which is killed when the timeout
// (or ctx) ends; a non-zero exit status, a timeout or more than 1 MiB of
// output is an error, which names the first line of its stderr.
func (h *Hook) Run(ctx context.Context, input []byte, event string) ([]byte, error) {
	if h == nil || len(h.Args) == 0 {
		return nil, fmt.Errorf("%w: no command", ErrHook)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultPreDecisionTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Args[0], h.Args[1:]...)
	cmd.Env = append(os.Environ(), "CORDON_HOOK="+event)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: a hook's children must not outlive it.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	name := h.Args[0]
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("%w: %s did not answer within %v", ErrHook, name, timeout)
	case err != nil:
		msg := firstLine(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Errorf("%w: %s: %v%s", ErrHook, name, err, msg)
	case stdout.over:
		return nil, fmt.Errorf("%w: %s wrote more than %d bytes", ErrHook, name, hookOutputLimit)
	}
	return stdout.Bytes(), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return abbrev(s)
}

// limitedBuffer keeps the first hookOutputLimit bytes written to it. (Not
// an embedded bytes.Buffer: its ReadFrom would bypass the limit.)
type limitedBuffer struct {
	buf  bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := hookOutputLimit - b.buf.Len(); len(p) > room {
		b.over = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }

var _ io.Writer = (*limitedBuffer)(nil)

// RunReport is what the post-run hook is told about a finished run.
type RunReport struct {
	HookEventName string   `json:"hook_event_name"` // "PostRun"
	ID            string   `json:"id,omitempty"`
	Command       []string `json:"command"`
	Workspace     string   `json:"workspace"`
	Cwd           string   `json:"cwd"`
	// ExitStatus is the command's exit status (128+N for signal N, 124
	// for the timeout); -1 when cordon failed before it ran.
	ExitStatus int `json:"exit_status"`
	// Error is cordon's own error, when there was one.
	Error string `json:"error,omitempty"`
	// Violations are what the sandbox refused or noted during the run.
	Violations []string `json:"violations"`
	DurationMS int64    `json:"duration_ms"`
}

// PostRun tells the post-run hook (cordon.hooks.postRun) about a run. It
// does nothing when there is none; its failure is returned for the caller
// to report, and changes nothing about the run.
func (p *Policy) PostRun(ctx context.Context, r RunReport) error {
	h := p.Hooks.PostRun
	if h == nil {
		return nil
	}
	r.HookEventName = "PostRun"
	if r.Violations == nil {
		r.Violations = []string{}
	}
	if r.Command == nil {
		r.Command = []string{}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = h.Run(ctx, data, "postRun")
	return err
}
