package policy

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cordon.dev/cordon/policy/shell"
)

// parseBash is shell.Parse, which refuses what its parser would read
// otherwise than bash (see shell.Parse).
func parseBash(src string) *shell.Script {
	s, _ := shell.Parse(src)
	return s
}

// Sandboxed reports whether a Bash command will run in the sandbox, and if
// not, why — Claude Code's isBashSandboxed, in its order: the sandbox is
// disabled; the command asks to run outside it (dangerouslyDisableSandbox)
// and sandbox.allowUnsandboxedCommands lets it; there is no command; every
// command in it is in sandbox.excludedCommands. Otherwise it runs
// sandboxed.
func (p *Policy) Sandboxed(command string, disableSandbox bool) (bool, string) {
	s := parseBash(command)
	ok, why, _ := p.sandboxGate(command, s, disableSandbox)
	return ok, why
}

// sandboxGate is Sandboxed for a parsed command; outside is set when the
// command runs outside because it asked to.
func (p *Policy) sandboxGate(command string, s *shell.Script, disable bool) (sandboxed bool, why string, outside bool) {
	switch {
	case p.Sandbox.Disabled:
		return false, "the sandbox is disabled (sandbox.enabled is false)", false
	case disable && p.Sandbox.AllowUnsandboxedCommands:
		return false, "it asks to run outside the sandbox (dangerouslyDisableSandbox), and sandbox.allowUnsandboxedCommands lets it", true
	case strings.Trim(command, bashBlanks) == "":
		return false, "there is no command", false
	}
	if e := p.excluded(command, s); e != "" {
		return false, "sandbox.excludedCommands: " + e, false
	}
	if disable {
		return true, "dangerouslyDisableSandbox is ignored: sandbox.allowUnsandboxedCommands is not set", false
	}
	return true, "", false
}

// bashBlanks are what bash skips between commands; a no-break space, a
// vertical tab or U+2028 alone is a command name to bash ("\u00a0" runs a
// program of that name), not the absence of a command.
const bashBlanks = " \t\n"

// excluded returns the excludedCommands entries that take the command out
// of the sandbox, or "". An entry is a command ("docker": docker alone or
// with any arguments) or a rule specifier ("npm run dev:*", "gh pr *"). A
// compound command leaves the sandbox only when every command in it is
// excluded (cd aside): "docker ps && curl x" stays in, and docker fails
// there. A command that does not parse, or runs what is known only at run
// time, stays in.
func (p *Policy) excluded(command string, s *shell.Script) string {
	if len(p.Sandbox.ExcludedCommands) == 0 {
		return ""
	}
	trimmed := strings.Trim(command, bashBlanks)
	type entry struct {
		text string
		pat  shell.Pattern
	}
	var es []entry
	for _, e := range p.Sandbox.ExcludedCommands {
		// A Bash rule's specifier, as in Claude Code: "docker" is docker
		// alone, "docker *" docker with any arguments.
		pat, err := shell.ParsePattern(e)
		if err != nil {
			// Not a rule cordon can read: the command must be it, exactly.
			if trimmed == e {
				return e
			}
			continue
		}
		es = append(es, entry{e, pat})
	}
	if s.Err != nil || len(es) == 0 {
		return ""
	}
	cd, _ := shell.ParsePattern("cd:*")
	var used []string
	for _, c := range s.Commands {
		// As in Claude Code, a redirect to a file, a cd or a command
		// substitution keeps the whole call in the sandbox.
		if c.Dynamic != "" || len(c.Redirects) > 0 || cd.Allows(c) {
			return ""
		}
		if c.Name.Value == "" {
			continue
		}
		i := slices.IndexFunc(es, func(e entry) bool { return e.pat.Allows(c) })
		if i < 0 {
			return ""
		}
		if !slices.Contains(used, es[i].text) {
			used = append(used, es[i].text)
		}
	}
	return strings.Join(used, ", ")
}

// shellRules are the rules of a list that judge a shell tool's command:
// the Bash rules, and for Monitor, which runs its command through the
// shell under the Bash rules (as Claude Code applies them), the rules
// that name Monitor itself.
func shellRules(rules []Rule, tool string) []Rule {
	out := toolRules(rules, "Bash")
	if tool == "Monitor" {
		for _, r := range toolRules(rules, "Monitor") {
			if !r.HasSpecifier && !r.Names("Bash") {
				out = append(out, r)
			}
		}
	}
	return out
}

// bashParamMatch reports whether a Bash deny or ask rule names one of the
// call's parameters besides command (toolParams["Bash"]:
// Bash(run_in_background:true), Bash(dangerouslyDisableSandbox:true))
// with its value (`*` any text), as Claude Code matches Bash(param:value).
// Such a rule is also read as a command pattern (Bash(timeout:*) is the
// timeout command too): either match counts.
func bashParamMatch(r Rule, req Request) bool {
	key, val, ok := strings.Cut(r.Specifier, ":")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !ok || !r.HasSpecifier || !slices.Contains(toolParams["Bash"], key) {
		return false
	}
	if m, known := otherSpec(r, req.Tool, req.Input, true); known {
		return m
	}
	// no input (cordon check): only what the request says
	return key == "dangerouslyDisableSandbox" && wildcardMatch(val, strconv.FormatBool(req.DisableSandbox))
}

// firstShellHit returns the first of a deny or ask list's rules that
// matches the command (any command of the script, wrapped, nested or
// substituted) or a parameter of the call, or nil.
func firstShellHit(rules []Rule, req Request, s *shell.Script) *hit {
	for _, r := range rules {
		if bashParamMatch(r, req) {
			return &hit{rule: r.String(), detail: "a parameter of the call"}
		}
		pat, err := shell.ParsePattern(r.bashSpec())
		if err != nil {
			// Not one simple command (`*| bash*`): Claude Code matches
			// it against the command's text.
			if r.matchesText(req.Command) {
				return &hit{rule: r.String(), detail: commandText(nil, req.Command)}
			}
			continue
		}
		if h, ok := (shell.Patterns{pat}).Match(s); ok {
			return &hit{rule: r.String(), detail: commandText(h.Command, req.Command)}
		}
	}
	return nil
}

// writableDirs are the directories besides the workspace where a command's
// writes need only workspace-write: the literal allowWrite paths (and the
// base of a "dir/**"), and the sandbox's private /tmp.
func (p *Policy) writableDirs(sandboxed bool) []string {
	var out []string
	for _, w := range p.Filesystem.AllowWrite {
		switch {
		case !IsGlob(w):
			out = append(out, UnescapePattern(w))
		case strings.HasSuffix(w, "/**") && !IsGlob(strings.TrimSuffix(w, "/**")):
			out = append(out, UnescapePattern(strings.TrimSuffix(w, "/**")))
		}
	}
	if sandboxed {
		out = append(out, "/tmp")
	}
	return out
}

// analyseBash classifies a command and matches its rules.
func (p *Policy) analyseBash(req Request, a *analysis) {
	s := parseBash(req.Command)
	sandboxed, why, outside := p.sandboxGate(req.Command, s, req.DisableSandbox)
	a.sandboxed = sandboxed
	if outside {
		a.outside = "it asks to run outside the sandbox (dangerouslyDisableSandbox)"
	}
	protected := func(abs string) string {
		why := p.claudeProtectedPath(abs)
		if why != "" {
			a.protectedWrite = true
		}
		return why
	}
	cl := shell.Classify(s, shell.Context{Workspace: p.Workspace, Home: p.Home, Cwd: req.Cwd, Writable: p.writableDirs(sandboxed), Protected: protected})
	for _, f := range cl.Findings {
		a.need(f.Command, levelMode(f.Level), f.Reason)
	}
	a.required = max(a.required, levelMode(cl.Level))
	if !sandboxed && a.required > ReadOnly && strings.Trim(req.Command, bashBlanks) != "" {
		// Only the sandbox keeps a command to the workspace: outside it,
		// a build, a test, an install run with all the user's rights,
		// which Claude Code asks about in its default mode.
		a.need(abbrev(req.Command), DangerFullAccess, "runs outside the sandbox, where nothing keeps what it needs ("+a.required.String()+") to the workspace")
	}
	where := "runs sandboxed"
	if !sandboxed {
		where = "runs outside the sandbox"
	}
	if why != "" {
		where += ": " + why
	}
	a.step("classify", "%s %s requires %s", req.Tool, abbrev(req.Command), a.required)
	a.step("sandbox", "%s", where)

	// deny rules: any command they match, wrapped, nested or substituted
	deny := shellRules(p.Permissions.Deny, req.Tool)
	a.deny = firstShellHit(deny, req, s)
	askRules := shellRules(p.Permissions.Ask, req.Tool)
	switch {
	case a.deny == nil && len(deny) > 0:
		a.unsure = unsure(s, "deny")
	case a.deny == nil && len(askRules) > 0:
		// an ask rule is a promise too, bypassPermissions included
		a.unsure = unsure(s, "ask")
	}

	// ask rules, the same way
	a.ask = firstShellHit(askRules, req, s)

	// allow rules: every command, known now
	var ps shell.Patterns
	var names []string
	for _, r := range shellRules(p.Permissions.Allow, req.Tool) {
		if pat, err := shell.ParsePattern(r.bashSpec()); err == nil {
			ps = append(ps, pat)
			names = append(names, r.String())
		}
	}
	if len(ps) == 0 {
		return
	}
	ok, whyNot := ps.Allow(s)
	if !ok {
		a.notCovered = "not covered: " + whyNot
		return
	}
	var used []string
	for _, c := range s.Commands {
		if c.Name.Value == "" {
			continue
		}
		for i, pat := range ps {
			if pat.Allows(c) {
				if !slices.Contains(used, names[i]) {
					used = append(used, names[i])
				}
				break
			}
		}
	}
	// Rules see a command's words, not its redirections: the classifier
	// judges where those write.
	for _, f := range cl.Findings {
		if f.Level == shell.DangerFullAccess && strings.HasPrefix(f.Reason, "redirect to ") {
			a.allowBlocked = strings.Join(used, ", ") + " covers the command, not its redirection (" + f.String() + ")"
			return
		}
	}
	if len(used) == 0 {
		return // no command: the mode judges its redirections
	}
	a.allow = &hit{rule: strings.Join(used, ", ")}
}

// unsure says why the deny (or ask) rules may not see everything s runs.
func unsure(s *shell.Script, kind string) string {
	if s.Err != nil {
		return "it cannot be analysed (" + s.Err.Error() + "), so the " + kind + " rules cannot see all it would run"
	}
	for _, c := range s.Commands {
		if c.Dynamic != "" {
			return abbrev(c.String()) + " runs what is known only at run time (" + c.Dynamic + "), which " + article(kind) + " rule may match"
		}
		if c.RunsText != "" {
			return abbrev(c.String()) + " runs shell commands the " + kind + " rules cannot read (" + abbrev(c.RunsText) + "), which " + article(kind) + " rule may match"
		}
	}
	return ""
}

func article(kind string) string {
	if kind == "ask" {
		return "an ask"
	}
	return "a " + kind
}

func commandText(c *shell.Command, src string) string {
	if c == nil {
		return abbrev(src)
	}
	return abbrev(c.String())
}

// abbrev shortens a command or path for a reason.
func abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// absPath makes a tool's path absolute: relative to cwd, ~ the home. It
// does not clean it: "link/.." is for the kernel the parent of the link's
// target, and StatFile resolves it so.
func (p *Policy) absPath(path, cwd string) string {
	switch {
	case path == "~" || strings.HasPrefix(path, "~/"):
		return p.Home + path[1:]
	case filepath.IsAbs(path):
		return path
	}
	return cwd + "/" + path
}
