package policy

import (
	"fmt"
	"strings"

	"cordon.dev/cordon/policy/shell"
)

// Rule is a permission rule as Claude Code writes them: a tool, and for
// some tools a specifier in parentheses: `Bash(npm run test:*)`,
// `Read(~/.ssh/**)`, `Edit(/src/**)`, `WebFetch(domain:example.com)`, or a
// bare `Bash`. The tool may be a pattern (`*`, `mcp__*`,
// `mcp__github__*`): `*` matches any run of characters of a tool name.
type Rule struct {
	Tool string
	// Specifier is the text in the parentheses, with Claude Code's
	// escapes (`\(`, `\)`, `\\`) undone.
	Specifier string
	// HasSpecifier distinguishes `Bash()` (an empty specifier, refused) from
	// a bare `Bash` (every use of the tool).
	HasSpecifier bool
	// Path is, for a file tool's rule read from settings (Read, Edit,
	// Write, ...), the specifier as an absolute path pattern, resolved the
	// way Claude Code reads it against the file that holds the rule
	// (derived: not in cordon config's JSON).
	Path string `json:"-"`
	// Inert says why Claude Code reads the rule but never applies it (a
	// path rule for Write, an `mcp__` rule with parentheses, an allow rule
	// whose tool is an unanchored pattern, ...); "" for a rule it applies.
	// cordon drops such a rule from an allow list, as Claude Code does, and
	// keeps it in deny and ask lists, where it only restricts.
	Inert string `json:"-"`
	// Param is, for Claude Code's parameter rule `Tool(param:value)` on a
	// built-in tool (`Bash(run_in_background:true)`, `Agent(model:opus)`),
	// the member of the tool's input it matches: the value is what
	// follows the colon, `*` any text. Claude Code applies it in deny and
	// ask lists; a Bash one is also read as a command pattern.
	Param string `json:"-"`
}

// toolParams are the top-level members of the built-in tools' input that
// a parameter rule may name; primaryParams the ones Claude Code refuses to
// match that way (a rule on them is skipped).
var (
	toolParams = map[string][]string{
		"Bash":         {"timeout", "description", "run_in_background", "dangerouslyDisableSandbox"},
		"Monitor":      {"description", "timeout_ms", "persistent"},
		"Read":         {"offset", "limit", "pages"},
		"Edit":         {"old_string", "new_string", "replace_all"},
		"Write":        {"content"},
		"NotebookEdit": {"cell_id", "new_source", "cell_type", "edit_mode"},
		"Glob":         {"pattern"},
		"Grep":         {"pattern", "glob", "type", "output_mode", "multiline", "head_limit", "offset", "-i", "-n", "-A", "-B", "-C"},
		"WebFetch":     {"prompt"},
		"WebSearch":    {"query"},
		"Agent":        {"description", "prompt", "subagent_type", "model", "isolation", "name", "run_in_background"},
	}
	primaryParams = map[string]string{
		"Bash": "command", "Monitor": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path",
		"NotebookEdit": "notebook_path", "Glob": "path", "Grep": "path", "WebFetch": "url",
	}
)

// paramRule splits a built-in tool's specifier `param:value` (whitespace
// around the colon dropped) naming one of its input members; primary says
// the member is the tool's main field, which Claude Code does not match so.
func paramRule(tool, spec string) (key, value string, primary, ok bool) {
	k, v, found := strings.Cut(spec, ":")
	if !found {
		return "", "", false, false
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if primaryParams[tool] == k && k != "" {
		return k, v, true, true
	}
	for _, p := range toolParams[tool] {
		if p == k {
			return k, v, false, true
		}
	}
	return "", "", false, false
}

// ParseRule reads a permission rule as Claude Code does: the specifier is
// what lies between the first `(` and a `)` that ends the rule, neither
// escaped with a backslash; `Tool(*)` is the bare `Tool`; whitespace
// around the rule and the tool name is dropped. It refuses what cordon
// cannot read: in a deny or ask list such a rule would be a restriction
// that restricts nothing.
func ParseRule(s string) (Rule, error) {
	var r Rule
	s = strings.TrimSpace(s)
	if s == "" {
		return r, fmt.Errorf("empty rule")
	}
	if countUnescaped(s, '(') != countUnescaped(s, ')') {
		if !strings.HasSuffix(s, ")") {
			return r, fmt.Errorf("rule %q: missing the closing )", s)
		}
		return r, fmt.Errorf("rule %q: unbalanced ( ) (write \\( and \\) for a parenthesis in a specifier)", s)
	}
	tool := s
	if open := indexUnescaped(s, '('); open >= 0 {
		closing := lastIndexUnescaped(s, ')')
		if closing != len(s)-1 || closing < open {
			return r, fmt.Errorf("rule %q: missing the closing )", s)
		}
		tool = strings.TrimSpace(s[:open])
		raw := s[open+1 : closing]
		if strings.TrimSpace(raw) == "" {
			return r, fmt.Errorf("rule %q: empty ( ); write %s alone to mean every use", s, tool)
		}
		if raw != "*" {
			r.Specifier = unescapeRule(raw)
			r.HasSpecifier = true
		}
	}
	if strings.HasPrefix(tool, "mcp__") {
		if !validRuleToolName(tool) {
			return r, fmt.Errorf("rule %q: %q is not a tool name (as in mcp__server, mcp__server__tool, mcp__server__*)", s, tool)
		}
		r.Tool = tool
		server, _, _ := strings.Cut(tool[len("mcp__"):], "__")
		switch {
		case strings.Contains(s, "("):
			// Claude Code skips it when it loads the settings.
			r.Inert = "Claude Code takes no ( ) in an mcp__ rule and skips it"
		case strings.Contains(server, "*"):
			r.Inert = "Claude Code allows with a tool-name pattern only after a literal mcp__server__ and skips it"
		}
		return r, nil
	}
	if !validRuleToolName(tool) {
		return r, fmt.Errorf("rule %q: %q is not a tool name (as in Bash, Read, Edit, WebFetch, mcp__server__tool)", s, tool)
	}
	for _, known := range claudeTools {
		if tool != known && strings.EqualFold(tool, known) {
			// Claude Code's tool names are case-sensitive: such a rule
			// would match nothing, a deny that denies nothing.
			return r, fmt.Errorf("rule %q: no tool is named %q; did you mean %s?", s, tool, known)
		}
	}
	if c := tool[0]; c >= 'a' && c <= 'z' {
		r.Tool = tool
		r.Inert = "Claude Code skips a rule whose tool name does not start with a capital letter"
		return r, nil
	}
	if canonical, ok := legacyTools[tool]; ok {
		tool = canonical
	}
	r.Tool = tool
	if strings.Contains(tool, "*") {
		if r.HasSpecifier {
			return r, fmt.Errorf("rule %q: cordon cannot read a tool-name pattern with a specifier", s)
		}
		// Claude Code honours a pattern in an allow rule only after a
		// literal mcp__server__; deny and ask rules take any.
		r.Inert = "Claude Code allows with a tool-name pattern only after a literal mcp__server__ and skips it"
		return r, nil
	}
	if !r.HasSpecifier {
		return r, nil
	}
	if key, _, primary, ok := paramRule(tool, r.Specifier); ok {
		r.Param = key
		if primary {
			r.Inert = "Claude Code does not match " + tool + "'s " + key + " with a parameter rule and skips it"
		}
		if tool != "Bash" {
			return r, nil
		}
	}
	err := checkSpecifier(&r, s)
	return r, err
}

// checkSpecifier checks the specifier of rule s, whose tool is r.Tool, and
// normalises it (WebFetch's domain) or marks the rule inert where Claude
// Code would skip it.
func checkSpecifier(r *Rule, s string) error {
	tool := r.Tool
	switch tool {
	case "WebFetch":
		d, ok := strings.CutPrefix(r.Specifier, "domain:")
		if !ok {
			return fmt.Errorf("rule %q: WebFetch takes domain:NAME", s)
		}
		norm, err := checkRuleDomain(d)
		if err != nil {
			return fmt.Errorf("rule %q: %w", s, err)
		}
		r.Specifier = "domain:" + norm
	case "Bash":
		if i := strings.Index(r.Specifier, ":*"); i >= 0 && i != len(r.Specifier)-2 || r.Specifier == ":*" {
			r.Inert = "Claude Code takes :* only at the end of a Bash rule, after a command, and skips it"
		}
		// A rule that is not one simple command (`*| bash*`, in Claude
		// Code's own recommended settings) is matched, as Claude Code
		// matches it, against the whole command's text (matchesText);
		// cordon judges an allow only command by command.
		if _, err := shell.ParsePattern(r.Specifier); err != nil && r.Inert == "" {
			r.Inert = "cordon allows by rules of one simple command each (" + err.Error() + ")"
		}
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob", "Grep", "LS":
		if strings.ContainsRune(r.Specifier, 0) {
			return fmt.Errorf("rule %q: NUL in a path", s)
		}
		switch {
		case tool != "Read" && tool != "Edit":
			r.Inert = "Claude Code checks paths against Read and Edit rules only (write Edit(" + r.Specifier + ") or Read(" + r.Specifier + "))"
		case strings.Contains(r.Specifier, ":*"):
			r.Inert = "Claude Code takes :* in Bash rules only and skips it"
		case oddWildcard(r.Specifier):
			r.Inert = "Claude Code skips a path rule with a * inside a name"
		}
	}
	return nil
}

// oddWildcard is Claude Code's test of a path rule whose `*` stands
// inside a name (`a*b`), which it skips when it loads the settings.
func oddWildcard(p string) bool {
	if !strings.Contains(p, "*") || strings.Contains(p, "**") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '*' {
			continue
		}
		if i == 0 || i == len(p)-1 || p[i-1] == '/' || p[i+1] == '.' || p[i+1] == ')' {
			return false
		}
	}
	return true
}

// checkRuleDomain validates the domain of a WebFetch(domain:...) rule:
// besides CheckDomainPattern's forms, Claude Code takes `*` (every host)
// and a `*` within one label (`example.*`), kept as written, lowercased.
func checkRuleDomain(d string) (string, error) {
	if d == "*" {
		return d, nil
	}
	if tld, ok := strings.CutPrefix(strings.ToLower(d), "*."); ok && tld != "" && strings.Trim(tld, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
		// *.com: too broad for the sandbox's lists, a fetch rule all the same
		return "*." + tld, nil
	}
	if !strings.Contains(strings.TrimPrefix(d, "*."), "*") {
		return CheckDomainPattern(d)
	}
	lower := strings.TrimSuffix(strings.ToLower(d), ".")
	for _, label := range strings.Split(lower, ".") {
		if label == "" || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-*") != "" {
			return "", fmt.Errorf("%q is not a host name pattern", d)
		}
	}
	return lower, nil
}

// claudeTools are Claude Code's own tools, as its rules name them.
var claudeTools = []string{
	"Bash", "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob", "Grep", "LS",
	"WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "BashOutput", "KillShell", "SlashCommand", "Skill", "ExitPlanMode",
	"PowerShell", "TaskStop", "TaskOutput",
}

// legacyTools are the old names of Claude Code's tools that its rules
// still take, with the current ones.
var legacyTools = map[string]string{
	"Task": "Agent", "KillShell": "TaskStop", "AgentOutputTool": "TaskOutput", "BashOutputTool": "TaskOutput",
}

func validToolName(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// validRuleToolName is validToolName for a rule, which may name a
// pattern of tools (`*`, `mcp__*`): a `*` stands where a letter may.
func validRuleToolName(s string) bool {
	return validToolName(strings.ReplaceAll(s, "*", "x"))
}

// Names reports whether the rule names the tool: by its name, as a bare
// `mcp__server` rule names every tool of that server, or as a pattern
// matching the whole name.
func (r Rule) Names(tool string) bool {
	switch {
	case r.Tool == tool || legacyTools[tool] == r.Tool:
		// a rule reads Task as Agent: it names a call an older Claude
		// Code makes to Task too
		return true
	case strings.Contains(r.Tool, "*"):
		return wildcardMatch(r.Tool, tool)
	case strings.HasPrefix(r.Tool, "mcp__") && !strings.Contains(r.Tool[len("mcp__"):], "__"):
		return strings.HasPrefix(tool, r.Tool+"__")
	}
	return false
}

// namesKind reports whether the rule names a tool of the family (Read,
// Glob, Grep, LS share the Read rules; Edit, Write, MultiEdit,
// NotebookEdit the Edit rules); a pattern names the family when it names
// one of its tools.
func (r Rule) namesKind(kind toolKind) bool {
	if !strings.Contains(r.Tool, "*") {
		return kindOf(r.Tool) == kind
	}
	for _, t := range claudeTools {
		if kindOf(t) == kind && r.Names(t) {
			return true
		}
	}
	return false
}

// wildcardMatch matches a name against a pattern in which `*` stands for
// any run of characters.
func wildcardMatch(pattern, name string) bool {
	star, next := -1, 0
	p, n := 0, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, next = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			next++
			p, n = star+1, next
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// String writes the rule back as Claude Code does, escaping the
// parentheses and backslashes of the specifier.
func (r Rule) String() string {
	if !r.HasSpecifier {
		return r.Tool
	}
	return r.Tool + "(" + escapeRule(r.Specifier) + ")"
}

// matchesText reports whether a Bash rule's specifier matches a command's
// text as Claude Code matches it: `*` stands for any text, `cmd:*` is cmd
// alone or followed by a space and anything, a final " *" (the rule's
// only `*`) may match nothing.
func (r Rule) matchesText(cmd string) bool {
	if !r.HasSpecifier {
		return true
	}
	cmd = strings.TrimSpace(cmd)
	spec := r.Specifier
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	}
	if head, ok := strings.CutSuffix(spec, " *"); ok && !strings.Contains(head, "*") && cmd == head {
		return true
	}
	return wildcardMatch(spec, cmd)
}

// bashSpec is a Bash rule as shell.ParsePattern reads it: the specifier
// without Claude Code's escapes; a rule whose tool is a pattern (`*`,
// `B*`) is the bare Bash.
func (r Rule) bashSpec() string {
	if !r.HasSpecifier {
		return "Bash"
	}
	return "Bash(" + r.Specifier + ")"
}

func escapeRule(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// unescapeRule undoes Claude Code's escapes in a specifier, in its order:
// the parentheses, then the backslashes.
func unescapeRule(s string) string {
	s = strings.ReplaceAll(s, `\(`, "(")
	s = strings.ReplaceAll(s, `\)`, ")")
	return strings.ReplaceAll(s, `\\`, `\`)
}

// escaped reports whether the byte at i follows an odd number of
// backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func countUnescaped(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == c && !escaped(s, i) {
			n++
		}
	}
	return n
}

func indexUnescaped(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c && !escaped(s, i) {
			return i
		}
	}
	return -1
}

func lastIndexUnescaped(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c && !escaped(s, i) {
			return i
		}
	}
	return -1
}

// pathTool reports whether the rule's specifier is a file path pattern,
// and whether the tool writes.
func (r Rule) pathTool() (isPath, writes bool) {
	if r.Param != "" {
		return false, false // a parameter rule names no path
	}
	switch r.Tool {
	case "Read", "Glob", "Grep", "LS", "NotebookRead":
		return r.HasSpecifier, false
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return r.HasSpecifier, true
	}
	return false, false
}
