package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Pattern is a Claude Code Bash rule specifier: what goes between the
// parentheses of Bash(...).
//
// A pattern is read like shell words (quotes group, a backslash escapes)
// and matched against one simple command's words after quote removal,
// word by word:
//
//   - Exact: "npm run build" matches the command npm run build and nothing
//     else (not npm run build --watch).
//   - Prefix: "npm run test:*" (the legacy form) and "npm run test *" match
//     npm run test alone or followed by any arguments. The prefix ends at a
//     word boundary: neither matches npm run test:unit or npm run tests.
//   - Wildcard: an unquoted * matches any run of characters, spaces and
//     word boundaries included: "ls*" matches ls, lsof and ls -la;
//     "git * main" matches git push origin main; "* --version" any
//     program's --version. A trailing " *" may also match nothing.
//     \* and a quoted * are a literal star.
//   - Any: "" is an error; "*" and the bare tool name "Bash" match every
//     command.
//
// A first word without a slash names a command: it matches /usr/bin/curl
// as well as curl. For allow rules only commands found in the system's
// bin directories count; ./curl or /tmp/curl are other programs. A first
// word with a slash matches that path only.
//
// Redirections are not part of the words a pattern sees: "echo:*" allows
// echo x > file, and Classify judges the file. Arguments known only at run
// time are matched by their source text ($X, $(date)); a command name
// known only at run time is never allowed.
//
// Shell operators (| ; & < > ( ) and backquotes) are an error: a rule
// matches one simple command, and a compound command needs a rule for
// each part.
type Pattern struct {
	spec  string
	any   bool
	prog  []seg  // over the command's words joined by sep
	tail  bool   // ends in " *": the star may also match nothing, with its separator
	short []seg  // prog without the trailing " *", when tail
	lit   int    // complete literal words before the first wildcard
	first string // the first word when it is literal
}

// seg is a literal run or a star of a compiled pattern.
type seg struct {
	lit  string
	star bool
}

// sep separates words when matching; it cannot occur in an argument.
const sep = "\x00"

// ParsePattern reads a rule specifier. It accepts the specifier alone
// ("npm run test:*") or the whole rule ("Bash(npm run test:*)", "Bash").
func ParsePattern(spec string) (Pattern, error) {
	p := Pattern{spec: spec}
	s := spec
	if s == "Bash" {
		p.any = true
		return p, nil
	}
	if inner, ok := strings.CutPrefix(s, "Bash("); ok && strings.HasSuffix(inner, ")") {
		s = strings.TrimSuffix(inner, ")")
	}
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return p, fmt.Errorf("%w %q: empty specifier", ErrPattern, spec)
	case "*", ":*":
		p.any = true
		return p, nil
	}
	if strings.HasSuffix(s, ":*") {
		s = strings.TrimSuffix(s, ":*") + " *"
	}
	words, err := patternWords(s)
	if err != nil {
		return p, fmt.Errorf("%w %q: %w", ErrPattern, spec, err)
	}
	if len(words) == 0 {
		return p, fmt.Errorf("%w %q: empty specifier", ErrPattern, spec)
	}
	if last := words[len(words)-1]; len(words) > 1 && len(last) == 1 && last[0].star {
		p.tail = true
	}
	for i, w := range words {
		if i > 0 {
			p.prog = appendLit(p.prog, sep)
		}
		for _, sg := range w {
			if sg.star {
				if len(p.prog) == 0 || !p.prog[len(p.prog)-1].star {
					p.prog = append(p.prog, sg)
				}
				continue
			}
			p.prog = appendLit(p.prog, sg.lit)
		}
	}
	for _, w := range words {
		if len(w) != 1 || w[0].star {
			break
		}
		p.lit++
	}
	if p.lit > 0 {
		p.first = words[0][0].lit
	}
	if p.tail {
		n := len(p.prog)
		p.short = append([]seg(nil), p.prog[:n-1]...)
		k := len(p.short) - 1
		p.short[k].lit = strings.TrimSuffix(p.short[k].lit, sep)
	}
	return p, nil
}

func appendLit(prog []seg, s string) []seg {
	if n := len(prog); n > 0 && !prog[n-1].star {
		prog[n-1].lit += s
		return prog
	}
	return append(prog, seg{lit: s})
}

// patternWords splits a specifier into words of literal and star
// segments.
func patternWords(s string) ([][]seg, error) {
	var words [][]seg
	var cur []seg
	inWord := false
	addLit := func(b byte) {
		inWord = true
		if n := len(cur); n > 0 && !cur[n-1].star {
			cur[n-1].lit += string(b)
			return
		}
		cur = append(cur, seg{lit: string(b)})
	}
	end := func() {
		if inWord {
			words = append(words, cur)
		}
		cur, inWord = nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t':
			end()
		case '\n', '|', ';', '&', '<', '>', '(', ')', '`':
			return nil, fmt.Errorf("shell operator %q: a rule matches one simple command", c)
		case '\\':
			if i+1 < len(s) {
				i++
				addLit(s[i])
			}
		case '\'':
			k := strings.IndexByte(s[i+1:], '\'')
			if k < 0 {
				return nil, errors.New("unterminated quote")
			}
			inWord = true
			for _, b := range []byte(s[i+1 : i+1+k]) {
				addLit(b)
			}
			i += k + 1
		case '"':
			i++
			inWord = true
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				addLit(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated quote")
			}
		case '*':
			inWord = true
			if n := len(cur); n == 0 || !cur[n-1].star {
				cur = append(cur, seg{star: true})
			}
		default:
			addLit(c)
		}
	}
	end()
	return words, nil
}

// String is the specifier as given.
func (p Pattern) String() string { return p.spec }

// Match reports whether p names c the way deny and ask rules apply: the
// command is seen through quotes, escapes, its path, its wrappers (sudo
// curl, env curl, bash -c 'curl', xargs curl are all curl) and, for a
// dynamic word, its guess; the wrapped command with its wrappers in front
// (sudo curl x) matches too.
func (p Pattern) Match(c *Command) bool {
	return p.matchDeny(c, denyForms(c))
}

func (p Pattern) matchDeny(c *Command, forms []string) bool {
	if p.any {
		return true
	}
	for _, f := range forms {
		if p.matches(f, true) {
			return true
		}
	}
	// a glob for a name (/usr/bin/cu?l) may name the command
	if c.Name.Dynamic && p.first != "" {
		if g := strings.Fields(c.Name.Guess); len(g) > 0 && strings.ContainsAny(g[0], "*?[") {
			name := g[0]
			if !strings.Contains(p.first, "/") {
				name = path.Base(name)
			}
			if ok, _ := path.Match(name, p.first); ok {
				return true
			}
		}
	}
	return false
}

// denyForms are the word lists, joined, a deny rule is tried against: the
// command by its name, its clean path and its base name, its guess when
// dynamic, git's subcommand without git's options before it, each with
// any suffix of its wrapper chain in front.
func denyForms(c *Command) []string {
	if c.Name.Value == "" && !c.Name.Dynamic {
		return nil
	}
	var names [][]string
	args := wordValues(c.Args, false)
	if c.Name.Dynamic || c.Dynamic != "" {
		var g []string
		for _, w := range append([]Word{c.Name}, c.Args...) {
			g = append(g, strings.Fields(w.guessed())...)
		}
		if len(g) > 0 {
			g[0] = path.Base(g[0])
			names = append(names, g)
		}
	}
	if !c.Name.Dynamic {
		n, base := c.Name.Value, path.Base(c.Name.Value)
		names = append(names, append([]string{n}, args...))
		if strings.Contains(n, "/") {
			names = append(names, append([]string{path.Clean(n)}, args...), append([]string{base}, args...))
		}
		if base == "git" {
			// git -C dir push, git --no-pager push, git -c alias.p=push p:
			// git push
			if cmd := gitCommand(c.Args); cmd != nil && (len(cmd) != len(c.Args) || cmd[0].Value != c.Args[0].Value) {
				names = append(names, append([]string{"git"}, wordValues(cmd, false)...))
			}
		}
		// npm --force publish, docker -H x run, kubectl -n x delete: the
		// subcommand after the program's own options, whichever of them
		// take a value (a deny or ask rule may match a little more)
		for _, sub := range afterOptions(c.Args) {
			names = append(names, append([]string{base}, wordValues(c.Args[sub:], false)...))
		}
	}
	if c.Function && len(c.Args) > 0 {
		// f() { "$@"; }; f curl x: a function may run its arguments
		fa := wordValues(c.Args, true)
		fa[0] = path.Base(fa[0])
		names = append(names, fa)
	}
	var out []string
	for _, n := range names {
		out = append(out, strings.Join(n, sep))
	}
	for k := len(c.Wrappers) - 1; k >= 0; k-- {
		var prefix []string
		for _, w := range c.Wrappers[k:] {
			words := wordValues(w.Args, true)
			if len(words) > 0 {
				words[0] = path.Base(words[0])
			}
			prefix = append(prefix, words...)
			if strings.HasSuffix(w.Name, " -c") && (len(words) == 0 || words[len(words)-1] != "-c") {
				prefix = append(prefix, "-c")
			}
		}
		pre := strings.Join(prefix, sep) + sep
		for _, n := range names {
			out = append(out, pre+strings.Join(n, sep))
		}
	}
	return out
}

// afterOptions are the places in args where a subcommand may start after
// options: the first word not an option, and before it every word that
// may be an option's value (after a short option, or with a character a
// subcommand's name does not have: -w pkg, --registry https://r).
func afterOptions(args []Word) []int {
	var out []int
	for i := 1; i < len(args) && i <= 8; i++ {
		prev, w := args[i-1], args[i]
		if prev.Dynamic || w.Dynamic || w.Value == "--" {
			break
		}
		if isOption(w.Value) {
			continue
		}
		if !isOption(prev.Value) && !slices.Contains(out, i-1) {
			break
		}
		out = append(out, i)
		value := isOption(prev.Value) && !strings.Contains(prev.Value, "=") &&
			(len(prev.Value) == 2 || strings.Trim(w.Value, "abcdefghijklmnopqrstuvwxyz-") != "")
		if !value {
			break
		}
	}
	return out
}

func isOption(v string) bool {
	return len(v) > 1 && (v[0] == '-' || v[0] == '+') && v != "--"
}

func wordValues(ws []Word, guess bool) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if guess {
			out = append(out, w.guessed())
		} else {
			out = append(out, w.Value)
		}
	}
	return out
}

// allowForms are what allow rules are tried against: the command by its
// name (and its base name when that is a system path), and the same with
// its wrappers in front, with the number of wrapper words.
type allowForms struct {
	inner       []string
	full        []string
	prefixWords int
	transparent bool
}

func newAllowForms(c *Command) allowForms {
	var af allowForms
	argv := c.Argv()
	af.inner = []string{strings.Join(argv, sep)}
	if n := c.Name.Value; strings.Contains(n, "/") && systemBinDirs[path.Dir(path.Clean(n))] {
		af.inner = append(af.inner, strings.Join(append([]string{path.Base(n)}, argv[1:]...), sep))
	}
	af.transparent = true
	var prefix []string
	for _, w := range c.Wrappers {
		af.transparent = af.transparent && transparentWrapper(w)
		prefix = append(prefix, wordValues(w.Args, false)...)
		if strings.HasSuffix(w.Name, " -c") && (len(w.Args) == 0 || w.Args[len(w.Args)-1].Value != "-c") {
			prefix = append(prefix, "-c")
		}
	}
	if len(c.Wrappers) > 0 {
		af.prefixWords = len(prefix)
		pre := strings.Join(prefix, sep) + sep
		for _, f := range af.inner {
			af.full = append(af.full, pre+f)
		}
	}
	return af
}

// Allows reports whether p allows c the way allow rules apply: the
// command must be known now, be a system command or named by the path the
// pattern gives, and either run through transparent wrappers only (nice,
// timeout, env, xargs, bash -c, ...) or be matched with its wrappers by a
// pattern that names the wrapped command too ("sudo apt update").
func (p Pattern) Allows(c *Command) bool {
	if c.Dynamic != "" || c.Name.Dynamic {
		return false
	}
	if c.Name.Value == "" {
		return true
	}
	return p.allows(c, newAllowForms(c))
}

func (p Pattern) allows(c *Command, af allowForms) bool {
	if p.any {
		return true
	}
	for _, f := range af.inner {
		if af.transparent && p.matches(f, !c.ExtraArgs) {
			return true
		}
	}
	// with its wrappers: the pattern must name the wrapped command
	if p.lit > af.prefixWords {
		for _, f := range af.full {
			if p.matches(f, !c.ExtraArgs) {
				return true
			}
		}
	}
	return false
}

// transparentWrapper reports a wrapper that changes nothing an allow rule
// cares about: not the user, not the root, not the program.
func transparentWrapper(w Wrapper) bool {
	if len(w.Args) > 0 {
		n := w.Args[0].Value
		if w.Args[0].Dynamic || strings.Contains(n, "/") && !systemBinDirs[path.Dir(path.Clean(n))] {
			return false
		}
	}
	name := w.Name
	if i := strings.IndexByte(name, ' '); i > 0 {
		name = name[:i]
	}
	switch name {
	case "timeout", "time", "nice", "nohup", "stdbuf", "ionice", "setsid", "command", "builtin", "exec", "env",
		"unbuffer", "taskset", "chrt", "xargs", "find", "eval", "trap", "watch", "busybox", "toybox", "coreutils", "flock",
		"uv", "poetry", "pipenv", "pdm", "rye", "hatch", "bundle", "conda", "mamba", "micromamba", "pnpm", "yarn",
		"mise", "npx", "npm", "source", ".":
		return true
	}
	for _, sh := range shells {
		if name == sh {
			return true
		}
	}
	return false
}

// matches runs the compiled pattern over the joined words s. Without
// exact, more arguments follow at run time: only a pattern ending in a
// star can match.
func (p Pattern) matches(s string, exact bool) bool {
	if s == "" {
		return false
	}
	if !exact && (len(p.prog) == 0 || !p.prog[len(p.prog)-1].star) {
		return false
	}
	if glob(p.prog, s) {
		return true
	}
	// "npm test *" also matches npm test alone
	return p.tail && glob(p.short, s)
}

// glob matches s against literal and star segments; a star matches any
// run of bytes.
func glob(prog []seg, s string) bool {
	if len(prog) == 0 {
		return s == ""
	}
	// literal head and tail anchor the match
	first := prog[0]
	if !first.star {
		if !strings.HasPrefix(s, first.lit) {
			return false
		}
		s = s[len(first.lit):]
		prog = prog[1:]
		if len(prog) == 0 {
			return s == ""
		}
	}
	last := prog[len(prog)-1]
	if !last.star {
		if !strings.HasSuffix(s, last.lit) {
			return false
		}
		s = s[:len(s)-len(last.lit)]
		prog = prog[:len(prog)-1]
	}
	// now prog starts and ends with stars: find each literal greedily left to right
	for _, sg := range prog {
		if sg.star {
			continue
		}
		i := strings.Index(s, sg.lit)
		if i < 0 {
			return false
		}
		s = s[i+len(sg.lit):]
	}
	return true
}

// Patterns is a rule list.
type Patterns []Pattern

// Hit is the command a pattern matched.
type Hit struct {
	Pattern Pattern
	Command *Command // nil when a pattern matching everything matched a script without commands
}

// Match reports the first simple command of s a pattern matches: how deny
// and ask rules apply, to every command, wrapped, nested or substituted.
// For a script that does not parse the commands bash would still run are
// tried.
func (ps Patterns) Match(s *Script) (Hit, bool) {
	for _, p := range ps {
		if p.any {
			var c *Command
			if len(s.Commands) > 0 {
				c = s.Commands[0]
			}
			return Hit{Pattern: p, Command: c}, true
		}
	}
	for _, c := range s.Commands {
		forms := denyForms(c)
		for _, p := range ps {
			if p.matchDeny(c, forms) {
				return Hit{Pattern: p, Command: c}, true
			}
		}
	}
	return Hit{}, false
}

// Allow reports whether the patterns allow s: it parses, and every simple
// command in it is known now and allowed by a pattern. Statements with
// only assignments or redirections need no pattern. When s is not
// allowed, why says which command stopped it.
func (ps Patterns) Allow(s *Script) (ok bool, why string) {
	if s.Err != nil {
		return false, "cannot be analysed: " + s.Err.Error()
	}
	for _, c := range s.Commands {
		if c.Dynamic != "" {
			return false, abbrev(c.String()) + ": " + c.Dynamic
		}
		if c.Name.Value == "" {
			continue // nothing runs
		}
		af := newAllowForms(c)
		allowed := false
		for _, p := range ps {
			if p.allows(c, af) {
				allowed = true
				break
			}
		}
		if !allowed {
			return false, abbrev(c.String()) + ": no rule allows it"
		}
	}
	return true, ""
}
