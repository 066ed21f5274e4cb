package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The hook events cordon hook claude answers.
const (
	// EventPreToolUse is before every tool call: the answer is its
	// permissionDecision.
	EventPreToolUse = "PreToolUse"
	// EventPermissionRequest is when Claude Code is about to ask the user:
	// the answer is a decision (allow or deny), or none (the user is asked).
	EventPermissionRequest = "PermissionRequest"
)

// ClaudeHookInput is Claude Code's PreToolUse (or PermissionRequest) hook
// input.
type ClaudeHookInput struct {
	SessionID      string
	TranscriptPath string
	Cwd            string
	PermissionMode string
	HookEventName  string
	ToolName       string
	ToolUseID      string
	// ToolInput is tool_input's members, in order, values verbatim.
	ToolInput []Member
}

// Member is one member of a JSON object, its value as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseClaudeHook reads Claude Code's PreToolUse (or PermissionRequest)
// hook JSON: session_id, transcript_path, cwd, permission_mode,
// hook_event_name, tool_name, tool_input, tool_use_id (other fields are
// ignored). It refuses input
// that is not UTF-8, a tool_input that is not an object or names a member
// twice, and a Bash command that holds a NUL or a lone UTF-16 surrogate:
// what cordon would rewrite must be what Claude Code sent, byte for byte.
func ParseClaudeHook(data []byte) (*ClaudeHookInput, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrHookInput, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(data) {
		return nil, bad("not UTF-8")
	}
	var raw struct {
		SessionID      *string         `json:"session_id"`
		TranscriptPath *string         `json:"transcript_path"`
		Cwd            *string         `json:"cwd"`
		PermissionMode *string         `json:"permission_mode"`
		HookEventName  *string         `json:"hook_event_name"`
		ToolName       *string         `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		ToolUseID      *string         `json:"tool_use_id"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, bad("%v", err)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	in := &ClaudeHookInput{
		SessionID: str(raw.SessionID), TranscriptPath: str(raw.TranscriptPath), Cwd: str(raw.Cwd),
		PermissionMode: str(raw.PermissionMode), HookEventName: str(raw.HookEventName),
		ToolName: str(raw.ToolName), ToolUseID: str(raw.ToolUseID),
	}
	switch in.HookEventName {
	case "":
		in.HookEventName = EventPreToolUse
	case EventPreToolUse, EventPermissionRequest:
	default:
		return nil, bad("hook_event_name is %q: cordon hook claude answers PreToolUse and PermissionRequest", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, bad("no tool_name")
	}
	if in.Cwd != "" && (!filepath.IsAbs(in.Cwd) || strings.ContainsRune(in.Cwd, 0)) {
		return nil, bad("cwd %q is not an absolute path", in.Cwd)
	}
	if len(raw.ToolInput) == 0 {
		return nil, bad("no tool_input")
	}
	ms, err := members(raw.ToolInput)
	if err != nil {
		return nil, bad("tool_input: %v", err)
	}
	in.ToolInput = ms
	// Monitor runs its command, when it has one, through the shell as Bash.
	if v, ok := in.member("command"); in.ToolName == "Bash" || in.ToolName == "Monitor" && ok && string(v) != "null" {
		if !ok {
			return nil, bad("tool_input has no command")
		}
		cmd, err := strictString(v)
		if err != nil {
			return nil, bad("tool_input.command: %v", err)
		}
		if strings.ContainsRune(cmd, 0) {
			return nil, bad("tool_input.command contains a NUL byte, which bash cannot run as written")
		}
	}
	return in, nil
}

// members reads a JSON object's members in order, refusing a key named
// twice (JSON readers disagree on which one wins).
func members(raw json.RawMessage) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("%q is named twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// strictString decodes a JSON string, refusing a lone UTF-16 surrogate
// escape, which a JSON reader would silently replace.
func strictString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("not a string")
	}
	hex := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		var r rune
		for _, c := range b[:4] {
			r <<= 4
			switch {
			case c >= '0' && c <= '9':
				r |= rune(c - '0')
			case c >= 'a' && c <= 'f':
				r |= rune(c-'a') + 10
			case c >= 'A' && c <= 'F':
				r |= rune(c-'A') + 10
			default:
				return 0, false
			}
		}
		return r, true
	}
	b := []byte(raw)
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r, _ := hex(b[i+1:])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return "", fmt.Errorf("a lone UTF-16 surrogate (\\u%04x) is not text", r)
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return "", fmt.Errorf("a lone UTF-16 surrogate (\\u%04x) is not text", r)
			}
			if lo, _ := hex(b[i+3:]); lo < 0xDC00 || lo > 0xDFFF {
				return "", fmt.Errorf("a lone UTF-16 surrogate (\\u%04x) is not text", r)
			}
			i += 6
		}
	}
	return s, nil
}

func (in *ClaudeHookInput) member(key string) (json.RawMessage, bool) {
	for _, m := range in.ToolInput {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Request turns the hook input into a Request under the session's mode
// (permission_mode), with its tool_input verbatim for the pre-decision
// hook. cwd is where Claude Code runs (the input's, when it gives one).
func (in *ClaudeHookInput) Request(cwd string) (Request, error) {
	if in.Cwd != "" {
		cwd = in.Cwd
	}
	req := Request{Tool: in.ToolName, Cwd: cwd, Mode: in.PermissionMode}
	var obj bytes.Buffer
	obj.WriteByte('{')
	for i, m := range in.ToolInput {
		if i > 0 {
			obj.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		obj.Write(k)
		obj.WriteByte(':')
		obj.Write(m.Value)
	}
	obj.WriteByte('}')
	req.Input = obj.Bytes()

	get := func(key string, required bool) (string, error) {
		v, ok := in.member(key)
		if !ok || string(v) == "null" {
			if required {
				return "", fmt.Errorf("%w: tool_input has no %s", ErrHookInput, key)
			}
			return "", nil
		}
		s, err := strictString(v)
		if err != nil {
			return "", fmt.Errorf("%w: tool_input.%s: %v", ErrHookInput, key, err)
		}
		return s, nil
	}
	var err error
	switch in.ToolName {
	case "Bash":
		req.Command, err = get("command", true)
		if v, ok := in.member("dangerouslyDisableSandbox"); ok && string(v) != "null" {
			if err := json.Unmarshal(v, &req.DisableSandbox); err != nil {
				return req, fmt.Errorf("%w: tool_input.dangerouslyDisableSandbox is not true or false", ErrHookInput)
			}
		}
	case "Monitor":
		// a command (judged as Bash) or a WebSocket (any other tool)
		req.Command, err = get("command", false)
	case "Read":
		req.Path, err = get("file_path", true)
		// offset and limit take lines, pages a PDF's pages: a part
		_, off := in.member("offset")
		_, lim := in.member("limit")
		_, pages := in.member("pages")
		req.Partial = off || lim || pages
	case "Write":
		req.Path, err = get("file_path", true)
		if err == nil {
			var content string
			content, err = get("content", false)
			req.Size = int64(len(content))
		}
	case "Edit", "MultiEdit":
		req.Path, err = get("file_path", true)
	case "NotebookEdit":
		req.Path, err = get("notebook_path", true)
	case "Glob", "Grep", "LS":
		req.Path, err = get("path", in.ToolName == "LS")
		if req.Path == "" {
			req.Path = "."
		}
	case "LSP":
		// a file (judged as a Read of it), or none (workspaceSymbol)
		req.Path, err = get("filePath", false)
	case "WebFetch":
		req.URL, err = get("url", true)
	}
	return req, err
}

// AnswerClaude decides a PreToolUse call under p and writes the answer;
// nil for a tool cordon does not judge that none of its rules decides
// (Claude Code's own rules decide those). For a PermissionRequest, the
// answer is a decision, allow or deny; nil when cordon would ask too (the
// user answers Claude Code's prompt). cwd is used when the input names none. The session's mode is
// mode when set, else the input's permission_mode, else the policy's (a
// permission_mode cordon does not know counts as unset, but never gives
// more than Claude Code's default mode). A Bash command that runs
// sandboxed is rewritten to run under rc, with --mode added when the
// session's mode is not the policy's: the sandbox follows the mode (plan
// makes the workspace read-only).
func (p *Policy) AnswerClaude(ctx context.Context, in *ClaudeHookInput, cwd, mode string, rc RunCommand) (*ClaudeHookOutput, error) {
	if !validToolName(in.ToolName) {
		return nil, nil // no rule can name it: Claude Code's own rules decide
	}
	req, err := in.Request(cwd)
	if err != nil {
		return nil, err
	}
	if _, err := ParseMode(req.Mode); err != nil {
		// A mode cordon does not know is not bypassPermissions: the
		// settings' mode, but never more than Claude Code's default.
		unknown := req.Mode != ""
		req.Mode = ""
		if unknown && (p.Mode == Allow || p.Mode == DangerFullAccess) {
			req.Mode = "default"
		}
	}
	if mode != "" {
		req.Mode = mode
	}
	d, err := p.Authorize(ctx, req)
	if err != nil {
		return nil, err
	}
	if d.Verdict == VerdictDefer {
		return nil, nil
	}
	if d.ModeName != p.ModeName {
		rc.Flags = append(append([]string(nil), rc.Flags...), "--mode", d.ModeName)
	}
	out, err := in.Answer(d, rc)
	if err != nil {
		return nil, err
	}
	if in.HookEventName == EventPermissionRequest {
		return out.permissionRequest(), nil
	}
	return &out, nil
}

// permissionRequest turns a PreToolUse answer into a PermissionRequest
// one; nil for an ask, which leaves the prompt to the user.
func (o ClaudeHookOutput) permissionRequest() *ClaudeHookOutput {
	h := o.HookSpecificOutput
	var dec RequestDecision
	switch h.PermissionDecision {
	case VerdictAllow:
		dec = RequestDecision{Behavior: VerdictAllow, UpdatedInput: h.UpdatedInput}
	case VerdictDeny:
		dec = RequestDecision{Behavior: VerdictDeny, Message: h.PermissionDecisionReason}
	default:
		return nil
	}
	return &ClaudeHookOutput{HookSpecificOutput: ClaudeDecision{HookEventName: EventPermissionRequest, Decision: &dec}}
}

// DenyPermissionRequest is the answer to a PermissionRequest that cordon
// cannot decide: Claude Code leaves the permission flow as it is after a
// hook that exits 2, so the denial must be said.
func DenyPermissionRequest(why string) *ClaudeHookOutput {
	return &ClaudeHookOutput{HookSpecificOutput: ClaudeDecision{
		HookEventName: EventPermissionRequest,
		Decision:      &RequestDecision{Behavior: VerdictDeny, Message: why},
	}}
}

// ClaudeHookOutput is the hook's answer to Claude Code.
type ClaudeHookOutput struct {
	HookSpecificOutput ClaudeDecision `json:"hookSpecificOutput"`
}

// ClaudeDecision is the hookSpecificOutput of an answer: for PreToolUse,
// permissionDecision, permissionDecisionReason and updatedInput; for
// PermissionRequest, decision.
type ClaudeDecision struct {
	HookEventName            string           `json:"hookEventName"`
	PermissionDecision       Verdict          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string           `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage  `json:"updatedInput,omitempty"`
	Decision                 *RequestDecision `json:"decision,omitempty"`
}

// RequestDecision is a PermissionRequest answer's decision: behavior allow
// (with updatedInput for a Bash command that runs sandboxed) or deny (with
// message, which Claude reads).
type RequestDecision struct {
	Behavior     Verdict         `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// RunCommand is how a rewritten Bash command calls cordon: its path and
// the flags of cordon run (--workspace, --settings, ...).
type RunCommand struct {
	Cordon string
	Flags  []string
}

// Wrap returns a bash command line that runs command, byte for byte, in
// bash under cordon run: CORDON run FLAGS... -- bash -c 'COMMAND' (bash -c
// -- 'COMMAND' when it starts with - or +), every word single-quoted where
// needed ('\” for a quote). It refuses a NUL
// (bash cannot take one) and text that is not UTF-8.
func (rc RunCommand) Wrap(command string) (string, error) {
	for _, s := range append([]string{rc.Cordon, command}, rc.Flags...) {
		if strings.ContainsRune(s, 0) {
			return "", fmt.Errorf("cannot run a command with a NUL byte under cordon")
		}
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("cannot run a command that is not UTF-8 text under cordon")
		}
	}
	if rc.Cordon == "" {
		return "", fmt.Errorf("no cordon path")
	}
	var b strings.Builder
	b.WriteString(ShellQuote(rc.Cordon))
	b.WriteString(" run")
	for _, f := range rc.Flags {
		b.WriteByte(' ')
		b.WriteString(ShellQuote(f))
	}
	b.WriteString(" -- bash -c ")
	if optionLike(command) {
		// bash -c '-x' takes -x for its own option and runs nothing
		b.WriteString("-- ")
	}
	b.WriteString(singleQuote(command))
	return b.String(), nil
}

// WrapCwd is Wrap for a command whose working directory carries over to
// the next command, as it does in Claude Code's own shell, which runs a
// command and then records where the shell is: cordon run --cwd-fd 3
// writes the directory the sandboxed shell ended in, when it is the
// host's own, on the pipe of a command substitution, and the caller's
// shell moves there (\builtin: a cd function of the user's shell
// snapshot is not run). The exit status is the command's; the caller's
// shell stays where it is when the command fails or cordon writes
// nothing.
func (rc RunCommand) WrapCwd(command string) (string, error) {
	rc.Flags = append([]string{"--cwd-fd", "3"}, rc.Flags...)
	w, err := rc.Wrap(command)
	if err != nil {
		return "", err
	}
	return "{ cordon_cwd=$(" + w + ` 3>&1 >&4 4>&-) && { \builtin cd -- "${cordon_cwd:-.}" 2>/dev/null || :; }; } 4>&1`, nil
}

// optionLike reports a command that bash, given it after -c, would read
// as its own options.
func optionLike(command string) bool {
	return strings.HasPrefix(command, "-") || strings.HasPrefix(command, "+")
}

// ShellQuote quotes a word for bash: as it is when it holds only
// characters bash gives no meaning, single-quoted otherwise.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-+,:@%", c) >= 0) {
			return singleQuote(s)
		}
	}
	return s
}

// singleQuote quotes s as one shell word.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Answer builds the hook's answer to a decision. For a Bash (or Monitor)
// command that runs sandboxed and is not denied, updatedInput is the tool input with
// every member kept as it came and command rewritten to run under cordon
// (rc); other answers carry no updatedInput.
func (in *ClaudeHookInput) Answer(d Decision, rc RunCommand) (ClaudeHookOutput, error) {
	out := ClaudeHookOutput{HookSpecificOutput: ClaudeDecision{
		HookEventName:            EventPreToolUse,
		PermissionDecision:       d.Verdict,
		PermissionDecisionReason: "cordon: " + d.Reason,
	}}
	if in.ToolName != "Bash" && in.ToolName != "Monitor" || !d.Sandboxed || d.Verdict == VerdictDeny {
		return out, nil
	}
	raw, _ := in.member("command")
	cmd, err := strictString(raw)
	if err != nil {
		return out, fmt.Errorf("%w: tool_input.command: %v", ErrHookInput, err)
	}
	// Claude Code keeps the working directory of a Bash call that runs in
	// the foreground; Monitor's and the background's stay where they are.
	wrap := rc.WrapCwd
	if bg, _ := in.member("run_in_background"); in.ToolName == "Monitor" || string(bg) == "true" {
		wrap = rc.Wrap
	}
	wrapped, err := wrap(cmd)
	if err != nil {
		return out, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range in.ToolInput {
		if i > 0 {
			b.WriteByte(',')
		}
		_ = enc.Encode(m.Key)
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if m.Key == "command" {
			_ = enc.Encode(wrapped)
			b.Truncate(b.Len() - 1)
			continue
		}
		b.Write(m.Value)
	}
	b.WriteByte('}')
	out.HookSpecificOutput.UpdatedInput = b.Bytes()
	out.HookSpecificOutput.PermissionDecisionReason += " (runs sandboxed: cordon run)"
	return out, nil
}
