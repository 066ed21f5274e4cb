package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"cordon.dev/cordon/policy/shell"
)

// Verdict is the outcome of a permission decision.
type Verdict string

// The verdicts, as Claude Code names them.
const (
	VerdictAllow Verdict = "allow"
	VerdictAsk   Verdict = "ask"
	VerdictDeny  Verdict = "deny"
	// VerdictDefer is for a tool cordon does not judge (Task, WebSearch,
	// an MCP tool, ...) that none of its rules decides: Claude Code's own
	// rules and mode decide it (cordon hook claude gives no answer).
	VerdictDefer Verdict = "defer"
)

// Request is one tool call an agent wants to make.
type Request struct {
	// Tool is the tool's name as Claude Code writes it: Bash, Read, Edit,
	// Write, MultiEdit, NotebookEdit, Glob, Grep, LS, WebFetch, Monitor
	// (with a Command, judged as Bash), or any other (decided by its rules
	// alone).
	Tool string
	// Command is Bash's (or Monitor's) command line.
	Command string
	// DisableSandbox is Bash's dangerouslyDisableSandbox.
	DisableSandbox bool
	// Path is the file (or, for Glob, Grep and LS, the directory) of a file
	// tool: absolute, relative to Cwd, or starting with ~/.
	Path string
	// Size is, for Write, the length of the content to write.
	Size int64
	// Partial is set for a Read of part of a file (offset, limit, or a
	// PDF's pages): the size limit does not apply.
	Partial bool
	// URL is WebFetch's.
	URL string
	// Cwd is where the command runs and relative paths start; the
	// workspace when empty.
	Cwd string
	// Mode is the session's permission mode by name (cordon's or Claude
	// Code's: plan, default, acceptEdits, dontAsk, bypassPermissions);
	// empty means the policy's.
	Mode string
	// Input is the tool's input as the agent sent it, for the
	// pre-decision hook; when empty cordon writes one from the fields
	// above.
	Input json.RawMessage
}

// Finding is one reason a request needs more than ReadOnly, or one fact
// that limits it.
type Finding struct {
	// Subject is the sub-command, path or URL the finding is about.
	Subject string
	Mode    Mode
	Reason  string
}

func (f Finding) String() string { return f.Subject + ": " + f.Reason }

// Step is one step of a decision: what it looked at, and what it found.
type Step struct {
	Step   string `json:"step"`
	Result string `json:"result"`
}

// Decision is the answer to a Request, with the trace of the steps that
// led to it.
type Decision struct {
	Verdict Verdict
	// Required is the mode the request needs.
	Required Mode
	// Mode and ModeName are the session's mode.
	Mode     Mode
	ModeName string
	// Reason says why, in one line, for the user and the agent.
	Reason string
	Trace  []Step
	// Sandboxed says whether a Bash command will run in the sandbox.
	Sandboxed bool
	Findings  []Finding
	// File is what cordon found about a file tool's path.
	File *FileInfo
}

// MarshalJSON writes the decision as cordon check prints it.
func (d Decision) MarshalJSON() ([]byte, error) {
	type finding struct {
		Subject      string `json:"subject"`
		RequiredMode string `json:"requiredMode"`
		Reason       string `json:"reason"`
	}
	out := struct {
		Decision     Verdict   `json:"decision"`
		RequiredMode string    `json:"requiredMode"`
		Mode         string    `json:"mode"`
		Reason       string    `json:"reason"`
		Trace        []Step    `json:"trace"`
		Sandboxed    bool      `json:"sandboxed"`
		Findings     []finding `json:"findings"`
		File         *FileInfo `json:"file,omitempty"`
	}{
		Decision: d.Verdict, RequiredMode: d.Required.String(), Mode: d.ModeName, Reason: d.Reason,
		Trace: d.Trace, Sandboxed: d.Sandboxed, Findings: []finding{}, File: d.File,
	}
	if out.Trace == nil {
		out.Trace = []Step{}
	}
	for _, f := range d.Findings {
		out.Findings = append(out.Findings, finding{f.Subject, f.Mode.String(), f.Reason})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // commands are full of && and >
	err := enc.Encode(out)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// Err returns nil unless the decision is a denial, then a *DeniedError.
func (d Decision) Err() error {
	if d.Verdict != VerdictDeny {
		return nil
	}
	rule := ""
	for _, s := range d.Trace {
		if s.Step == "deny rules" && strings.HasPrefix(s.Result, "deny: denied by ") {
			rule = strings.TrimPrefix(s.Result, "deny: denied by ")
			if i := strings.Index(rule, ": "); i >= 0 {
				rule = rule[:i]
			}
		}
	}
	return &DeniedError{Rule: rule, Reason: d.Reason}
}

// hit is a rule (or a policy entry) that applies to a request.
type hit struct {
	rule   string // "Bash(curl:*)", "denyRead /home/u/.ssh", ...
	detail string // what it matched
}

func (h *hit) String() string {
	if h.detail == "" {
		return h.rule
	}
	return h.rule + ": " + h.detail
}

// toolKind is how cordon judges a tool.
type toolKind int

const (
	kindOther toolKind = iota
	kindBash
	kindRead  // Read, Glob, Grep, LS
	kindWrite // Edit, Write, MultiEdit, NotebookEdit
	kindWeb   // WebFetch
)

// kind is how cordon judges the request: a Monitor that runs a command
// as Bash (it goes through the shell under the Bash rules), one that
// watches a WebSocket as any other tool; an LSP call on a file as a read
// of it (the Read rules apply), one on the whole workspace as any other
// tool.
func (req Request) kind() toolKind {
	switch {
	case req.Tool == "Monitor" && req.Command != "":
		return kindBash
	case req.Tool == "LSP" && req.Path != "":
		// Claude Code applies the Read rules to LSP's file
		return kindRead
	}
	return kindOf(req.Tool)
}

// toolKinds are the tools cordon judges by what they touch (besides
// Monitor and LSP, judged by their input; see Request.kind).
var toolKinds = map[string]toolKind{
	"Bash": kindBash,
	"Read": kindRead, "Glob": kindRead, "Grep": kindRead, "LS": kindRead, "NotebookRead": kindRead,
	"Edit": kindWrite, "Write": kindWrite, "MultiEdit": kindWrite, "NotebookEdit": kindWrite,
	"WebFetch": kindWeb,
}

func kindOf(tool string) toolKind {
	return toolKinds[tool] // kindOther when not there
}

// analysis is what a request is, before any decision: what it needs, which
// rules apply, whether it runs sandboxed.
type analysis struct {
	kind      toolKind
	required  Mode
	findings  []Finding
	steps     []Step
	sandboxed bool
	// outside is set when a Bash command asked to run outside the sandbox
	// and may: that is asked, never allowed silently.
	outside string
	deny    *hit
	// refuse is a limit the request breaks (size, binary, not a URL):
	// denied whatever the rules and the mode say.
	refuse string
	// unsure says why a deny rule may match what the request runs
	// without cordon seeing it now: the request is then never allowed
	// silently.
	unsure string
	ask    *hit
	allow  *hit
	// planFile is set for a write to Claude Code's plan file, which its
	// plan mode writes while it edits nothing else.
	planFile bool
	// protectedWrite is set when a Bash command writes one of Claude
	// Code's protected paths, which the sandbox leaves writable and
	// autoAllowBashIfSandboxed does not approve.
	protectedWrite bool
	// allowBlocked says why the allow rules that cover a command do not
	// decide it; notCovered which command they do not cover.
	allowBlocked, notCovered string
	file                     *FileInfo
}

func (a *analysis) step(name, format string, args ...any) {
	a.steps = append(a.steps, Step{name, fmt.Sprintf(format, args...)})
}

func (a *analysis) need(subject string, m Mode, reason string) {
	a.required = max(a.required, m)
	if m > ReadOnly {
		a.findings = append(a.findings, Finding{subject, m, reason})
	}
}

// Authorize decides whether req may be attempted under p, in this order:
//
//  1. deny rules (and the policy's file and network denials, and the
//     limits a file tool must keep): any match denies;
//  2. the pre-decision hook (cordon.hooks.preDecision): deny stops, ask
//     forces a prompt, allow lets the decision continue;
//  3. ask rules, and a Bash command that asks to run outside the sandbox:
//     a prompt;
//  4. allow rules, or the session's mode is sufficient for what the
//     request requires: allow;
//  5. escalation: the prompt mode, or workspace-write asked for
//     danger-full-access (or, in Claude Code's default mode, a file edit):
//     a prompt; autoAllowBashIfSandboxed turns that prompt into an allow
//     for a Bash command that will run sandboxed;
//  6. otherwise deny, saying why.
//
// In Claude Code's dontAsk mode every prompt is a denial. A Bash command
// that deny rules cannot judge entirely now (it does not parse, or runs
// what is known only at run time) is never allowed silently: it is asked.
// The error is for a request cordon cannot read (an unknown mode name, a
// missing field); the decision then is a denial.
func (p *Policy) Authorize(ctx context.Context, req Request) (Decision, error) {
	ses, note, err := p.session(req.Mode)
	d := Decision{Verdict: VerdictDeny, Mode: ses.tier, ModeName: ses.name}
	if err != nil {
		d.Reason = err.Error()
		return d, err
	}
	if req.Cwd == "" {
		req.Cwd = p.Workspace
	}
	a, err := p.analyse(req)
	if err != nil {
		d.Reason = err.Error()
		d.Trace = []Step{{"request", err.Error()}}
		return d, err
	}
	if note != "" {
		a.step("mode", "%s", note)
	}
	d.Required, d.Sandboxed, d.Findings, d.File = a.required, a.sandboxed, a.findings, a.file
	p.decide(ctx, req, ses, a, &d)
	return d, nil
}

// decide runs the steps of Authorize over an analysed request.
func (p *Policy) decide(ctx context.Context, req Request, ses session, a *analysis, d *Decision) {
	trace := append([]Step(nil), a.steps...)
	done := func(v Verdict, step, reason string) {
		if v == VerdictAllow && a.unsure != "" {
			trace = append(trace, Step{"deny rules", "not allowed silently: " + a.unsure})
			v, reason = VerdictAsk, reason+"; but "+a.unsure
		}
		if v == VerdictAsk && ses.dontAsk() {
			trace = append(trace, Step{"dontAsk", "a prompt is a denial in dontAsk mode"})
			v, reason = VerdictDeny, reason+" (dontAsk mode denies what it would ask)"
		}
		trace = append(trace, Step{step, string(v) + ": " + reason})
		d.Verdict, d.Reason, d.Trace = v, reason, trace
	}

	// 1. deny rules
	switch {
	case a.deny != nil:
		done(VerdictDeny, "deny rules", "denied by "+a.deny.String())
		return
	case a.refuse != "":
		done(VerdictDeny, "limits", a.refuse)
		return
	}
	trace = append(trace, Step{"deny rules", "no deny rule matches"})

	// 2. the pre-decision hook
	if h := p.Hooks.PreDecision; h != nil {
		o, err := p.runPreDecision(ctx, h, req, a, ses)
		switch {
		case err != nil:
			// A hook that fails must not let anything through.
			done(VerdictDeny, "hook", "the pre-decision hook failed (denied): "+err.Error())
			return
		case o.Verdict == VerdictDeny:
			done(VerdictDeny, "hook", "denied by the pre-decision hook"+reasonSuffix(o.Reason))
			return
		case o.Verdict == VerdictAsk:
			done(VerdictAsk, "hook", "the pre-decision hook asks"+reasonSuffix(o.Reason))
			return
		case o.Verdict == VerdictAllow:
			trace = append(trace, Step{"hook", "allow: the decision continues" + reasonSuffix(o.Reason)})
		default:
			trace = append(trace, Step{"hook", "no override"})
		}
	}

	// 3. ask rules, and running outside the sandbox
	switch {
	case a.ask != nil:
		done(VerdictAsk, "ask rules", "asked by "+a.ask.String())
		return
	case a.outside != "":
		done(VerdictAsk, "sandbox", a.outside)
		return
	}
	trace = append(trace, Step{"ask rules", "no ask rule matches"})

	// 4. allow rules, or the mode
	edit := a.kind == kindWrite
	switch {
	case a.planFile && strings.EqualFold(ses.name, "plan"):
		done(VerdictAllow, "mode", "the plan file, which Claude Code's plan mode writes")
		return
	case a.allow != nil:
		done(VerdictAllow, "allow rules", "allowed by "+a.allow.String())
		return
	case a.kind == kindOther:
		// cordon cannot tell what the tool does: what no rule of its
		// own decides is Claude Code's to decide, by its rules and mode.
		trace = append(trace, Step{"allow rules", "no allow rule covers it"})
		done(VerdictDefer, "final", "no rule of cordon's decides "+req.Tool+": Claude Code's own rules and mode decide it")
		return
	case a.allowBlocked != "":
		trace = append(trace, Step{"allow rules", a.allowBlocked})
	case a.notCovered != "":
		trace = append(trace, Step{"allow rules", a.notCovered})
	default:
		trace = append(trace, Step{"allow rules", "no allow rule covers it"})
	}
	if ses.sufficient(a.required, edit) {
		done(VerdictAllow, "mode", fmt.Sprintf("the %s mode is enough for what it needs (%s)", ses.name, a.required))
		return
	}
	trace = append(trace, Step{"mode", fmt.Sprintf("the %s mode is not enough: it needs %s%s", ses.name, a.required, a.why())})

	// 5. escalation
	v, why := ses.escalation(a.required, edit)
	if v == VerdictAsk && a.kind == kindBash && a.sandboxed && !a.protectedWrite && p.Sandbox.AutoAllowBashIfSandboxed {
		trace = append(trace, Step{"escalation", "ask: " + why})
		done(VerdictAllow, "autoAllowBashIfSandboxed", "it runs sandboxed and sandbox.autoAllowBashIfSandboxed is set (it would be asked: "+why+")")
		return
	}
	if a.allowBlocked != "" {
		why += "; " + a.allowBlocked
	} else {
		why += a.why()
	}
	if v == VerdictAsk {
		done(VerdictAsk, "escalation", why)
		return
	}
	// 6. deny
	done(VerdictDeny, "final", why)
}

// why names the first finding that made the request need its mode.
func (a *analysis) why() string {
	for _, f := range a.findings {
		if f.Mode == a.required {
			return " (" + f.String() + ")"
		}
	}
	return ""
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// session is the permission mode a decision runs under.
type session struct {
	tier Mode
	name string
}

// session resolves a mode name (empty: the policy's).
func (p *Policy) session(name string) (session, string, error) {
	s := session{tier: p.Mode, name: p.ModeName}
	if name != "" {
		m, err := ParseMode(name)
		if err != nil {
			return session{tier: ReadOnly, name: name}, "", err
		}
		s = session{tier: m, name: name}
	}
	if s.tier == 0 {
		s.tier = WorkspaceWrite
	}
	if s.name == "" {
		s.name = s.tier.String()
	}
	if s.tier == Allow && p.Permissions.DisableBypass {
		return session{tier: WorkspaceWrite, name: "default"}, "the " + s.name + " mode is forbidden by permissions.disableBypassPermissionsMode: default instead", nil
	}
	if strings.EqualFold(s.name, "auto") && p.Permissions.DisableAuto {
		return session{tier: WorkspaceWrite, name: "default"}, "the auto mode is forbidden by permissions.disableAutoMode: default instead", nil
	}
	return s, "", nil
}

// dontAsk is Claude Code's mode that denies what it would ask.
func (s session) dontAsk() bool { return strings.EqualFold(s.name, "dontAsk") }

// asksEdits is Claude Code's default mode (manual is its other name),
// which asks before every file edit, and its dontAsk mode, which denies
// what default would ask (acceptEdits and auto accept the edits inside
// the workspace).
func (s session) asksEdits() bool {
	return strings.EqualFold(s.name, "default") || strings.EqualFold(s.name, "manual") || s.dontAsk()
}

// sufficient reports whether the session allows, by its mode alone, a
// request that requires m.
func (s session) sufficient(m Mode, edit bool) bool {
	switch s.tier {
	case Allow, DangerFullAccess:
		return true
	case WorkspaceWrite:
		if edit && m == WorkspaceWrite && s.asksEdits() {
			return false
		}
		return m <= WorkspaceWrite
	}
	return m <= ReadOnly
}

// escalation is what becomes of a request the mode is not sufficient for.
func (s session) escalation(m Mode, edit bool) (Verdict, string) {
	switch {
	case s.tier == Prompt:
		return VerdictAsk, fmt.Sprintf("it needs %s; the %s mode asks for anything beyond reading", m, s.name)
	case s.tier == WorkspaceWrite && m == DangerFullAccess:
		return VerdictAsk, fmt.Sprintf("it needs %s; the %s mode asks for anything beyond the workspace", m, s.name)
	case s.tier == WorkspaceWrite && edit && s.dontAsk():
		return VerdictAsk, "a file edit needs approval, as in the default mode (acceptEdits allows edits inside the workspace)"
	case s.tier == WorkspaceWrite && edit:
		return VerdictAsk, "the " + s.name + " mode asks before a file edit (acceptEdits allows edits inside the workspace)"
	}
	return VerdictDeny, fmt.Sprintf("it needs %s; the %s mode is read-only", m, s.name)
}

// analyse works out what a request needs and which rules apply.
func (p *Policy) analyse(req Request) (*analysis, error) {
	a := &analysis{kind: req.kind(), required: ReadOnly}
	if !filepath.IsAbs(req.Cwd) {
		return nil, fmt.Errorf("the working directory %q is not absolute", req.Cwd)
	}
	switch a.kind {
	case kindBash:
		p.analyseBash(req, a)
	case kindRead, kindWrite:
		if err := p.analyseFile(req, a); err != nil {
			return nil, err
		}
	case kindWeb:
		p.analyseWeb(req, a)
	default:
		if req.Tool == "" || !validToolName(req.Tool) {
			return nil, fmt.Errorf("%q is not a tool name", req.Tool)
		}
		p.analyseOther(req, a)
	}
	return a, nil
}

// toolRules are the rules of a list that name the tool (Rule.Names: a
// bare mcp__server rule names every tool of that server, `*` every tool).
func toolRules(rules []Rule, tool string) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Names(tool) {
			out = append(out, r)
		}
	}
	return out
}

// analyseOther judges a tool cordon knows nothing of by its rules alone.
// A rule with a specifier is judged where cordon can read it (otherSpec);
// a deny or ask rule it cannot judge may apply, so it asks.
func (p *Policy) analyseOther(req Request, a *analysis) {
	a.need(req.Tool, DangerFullAccess, "cordon cannot tell what "+req.Tool+" does; only rules decide it")
	// first returns the first rule that matches the call, else the first
	// one cordon cannot judge (unsure).
	first := func(rules []Rule, params bool) (match, unsure *Rule) {
		for _, r := range rules {
			if !r.HasSpecifier {
				return &r, nil
			}
			m, known := otherSpec(r, req.Tool, req.Input, params)
			switch {
			case m:
				return &r, nil
			case !known && unsure == nil:
				unsure = &r
			}
		}
		return nil, unsure
	}
	// A call under an old name (Task, KillShell) is the tool's: rules are
	// read under the new one.
	tool := req.Tool
	if c, ok := legacyTools[tool]; ok {
		tool = c
	}
	deny, ask := toolRules(p.Permissions.Deny, tool), toolRules(p.Permissions.Ask, tool)
	if r, u := first(deny, true); r != nil {
		a.deny = &hit{rule: r.String()}
	} else if u != nil {
		a.ask = &hit{rule: u.String(), detail: "a deny rule cordon cannot judge; it may apply"}
	}
	if r, u := first(ask, true); a.ask == nil && r != nil {
		a.ask = &hit{rule: r.String()}
	} else if a.ask == nil && u != nil {
		a.ask = &hit{rule: u.String(), detail: "an ask rule cordon cannot judge; it may apply"}
	}
	// Claude Code's parameter rules are for deny and ask only.
	if r, _ := first(toolRules(p.Permissions.Allow, tool), false); r != nil {
		a.allow = &hit{rule: r.String()}
	}
	a.step("request", "%s: only its rules decide it", req.Tool)
}

// otherSpec reports whether a rule's specifier matches a call of a tool
// cordon does not judge, and whether cordon can tell at all: Claude Code's
// parameter rules, Tool(param:value) (with params), match a top-level
// scalar member of the tool's input, written as sent, * any text;
// Agent(TYPE) (and Task(TYPE)) the subagent_type; Skill(name) and
// Skill(name *) the skill. Without the call's input nothing can be told.
func otherSpec(r Rule, tool string, input json.RawMessage, params bool) (match, known bool) {
	var in map[string]json.RawMessage
	if len(input) == 0 || json.Unmarshal(input, &in) != nil {
		return false, false
	}
	scalar := func(key string) (string, bool) { return scalarMember(in, key) }
	if key, val, ok := strings.Cut(r.Specifier, ":"); ok && params {
		got, ok := scalar(strings.TrimSpace(key))
		return ok && wildcardMatch(strings.TrimSpace(val), got), true
	}
	switch tool {
	case "Agent", "Task":
		got, ok := scalar("subagent_type")
		return ok && got == r.Specifier, true
	case "Skill":
		// Skill(name) the name, Skill(name *) a prefix of it; a deny or
		// ask rule also reaches a qualified name (plugin:name) by its
		// unqualified one, as in Claude Code
		name, ok := scalar("skill")
		if !ok {
			return false, true
		}
		names := []string{name}
		if i := strings.LastIndex(name, ":"); params && i >= 0 {
			names = append(names, name[i+1:])
		}
		spec := strings.TrimSpace(r.Specifier)
		prefix, wild := strings.CutSuffix(spec, " *")
		if !wild {
			prefix, wild = strings.CutSuffix(spec, ":*")
		}
		for _, n := range names {
			if n == spec || wild && strings.HasPrefix(n, prefix) {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

// scalarMember returns a top-level member of a tool's input that is a
// string, a number or a boolean, as Claude Code compares it with a
// parameter rule: a string's text, the others as written.
func scalarMember(in map[string]json.RawMessage, key string) (string, bool) {
	v, ok := in[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var x any
	switch json.Unmarshal(v, &x); x.(type) {
	case float64, bool:
		return string(bytes.TrimSpace(v)), true
	}
	return "", false
}

// paramHit returns the first parameter rule of a deny or ask list, for the
// tool by its own name, that matches the request's input, or nil.
func paramHit(rules []Rule, req Request) *hit {
	var in map[string]json.RawMessage
	if json.Unmarshal(req.toolInput(), &in) != nil {
		return nil
	}
	for _, r := range toolRules(rules, req.Tool) {
		if r.Param == "" || r.Inert != "" {
			continue
		}
		_, val, _, _ := paramRule(r.Tool, r.Specifier)
		if got, ok := scalarMember(in, r.Param); ok && wildcardMatch(val, got) {
			return &hit{rule: r.String(), detail: r.Param + " is " + abbrev(got)}
		}
	}
	return nil
}

// levelMode maps the classifier's levels onto the modes.
func levelMode(l shell.Level) Mode {
	switch l {
	case shell.ReadOnly:
		return ReadOnly
	case shell.WorkspaceWrite:
		return WorkspaceWrite
	}
	return DangerFullAccess
}
