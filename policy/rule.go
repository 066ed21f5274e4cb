package policy

import (
	"fmt"
	"strings"

	"cordon.dev/cordon/policy/shell"
)

// Rule is a permission rule as Claude Code writes them: a tool, and for
// some tools a specifier in parentheses: `Bash(npm run test:*)`,
// `Read(~/.ssh/**)`, `Edit(/src/**)`, `WebFetch(domain:example.com)`, or a
// bare `Bash`.
type Rule struct {
	Tool      string
	Specifier string
	// HasSpecifier distinguishes `Bash()` (an empty specifier, refused) from
	// a bare `Bash` (every use of the tool).
	HasSpecifier bool
	// Path is, for a file tool's rule read from settings (Read, Edit,
	// Write, ...), the specifier as an absolute path pattern, resolved the
	// way Claude Code reads it against the file that holds the rule
	// (derived: not in cordon config's JSON).
	Path string `json:"-"`
}

// ParseRule reads a permission rule.
func ParseRule(s string) (Rule, error) {
	var r Rule
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	tool := s
	if open >= 0 {
		if !strings.HasSuffix(s, ")") {
			return r, fmt.Errorf("rule %q: missing the closing )", s)
		}
		tool = s[:open]
		r.Specifier = s[open+1 : len(s)-1]
		r.HasSpecifier = true
		if strings.TrimSpace(r.Specifier) == "" {
			return r, fmt.Errorf("rule %q: empty ( ); write %s alone to mean every use", s, tool)
		}
	}
	if !validToolName(tool) {
		return r, fmt.Errorf("rule %q: %q is not a tool name (as in Bash, Read, Edit, WebFetch, mcp__server__tool)", s, tool)
	}
	for _, known := range claudeTools {
		if tool != known && strings.EqualFold(tool, known) {
			// Claude Code's tool names are case-sensitive: such a rule
			// would match nothing, a deny that denies nothing.
			return r, fmt.Errorf("rule %q: no tool is named %q; did you mean %s?", s, tool, known)
		}
	}
	r.Tool = tool
	if r.HasSpecifier {
		switch tool {
		case "WebFetch":
			d, ok := strings.CutPrefix(r.Specifier, "domain:")
			if !ok {
				return r, fmt.Errorf("rule %q: WebFetch takes domain:NAME", s)
			}
			norm, err := CheckDomainPattern(d)
			if err != nil {
				return r, fmt.Errorf("rule %q: %w", s, err)
			}
			r.Specifier = "domain:" + norm
		case "Bash":
			// A Bash rule cordon cannot read would be a deny that
			// denies nothing, or an allow that allows too much.
			if _, err := shell.ParsePattern(r.Specifier); err != nil {
				return r, fmt.Errorf("rule %q: %w", s, err)
			}
		case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS":
			if strings.ContainsRune(r.Specifier, 0) {
				return r, fmt.Errorf("rule %q: NUL in a path", s)
			}
		}
	}
	return r, nil
}

// claudeTools are Claude Code's own tools, as its rules name them.
var claudeTools = []string{
	"Bash", "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob", "Grep", "LS",
	"WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "BashOutput", "KillShell", "SlashCommand", "Skill", "ExitPlanMode",
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

// String writes the rule back as Claude Code does.
func (r Rule) String() string {
	if !r.HasSpecifier {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// pathTool reports whether the rule's specifier is a file path pattern,
// and whether the tool writes.
func (r Rule) pathTool() (isPath, writes bool) {
	switch r.Tool {
	case "Read", "Glob", "Grep", "LS":
		return r.HasSpecifier, false
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return r.HasSpecifier, true
	}
	return false, false
}
