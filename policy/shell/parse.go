package shell

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep Parse bounded whatever the input.
const (
	maxSource   = 1 << 20 // bytes of input
	maxDepth    = 16      // nested bash -c, eval, trap, watch strings
	maxCommands = 4096    // simple commands recorded
	maxSteps    = 1 << 16 // statements visited, loops re-walked included
	maxBraces   = 64      // words one brace expansion may produce
	maxDirs     = 16      // possible working directories tracked after cd
)

// Script is what a bash input would run.
type Script struct {
	// Source is the input as given to Parse.
	Source string
	// Commands lists the simple commands in the order bash would start
	// them: the commands of a substitution come before the command whose
	// words contain it; a loop body appears once.
	Commands []*Command
	// Err is why the input cannot be analysed (it wraps ErrSyntax,
	// ErrTooLarge, ErrTooComplex or ErrNUL). Commands then holds what bash
	// would still run: the complete lines before the one with the error.
	Err error
}

// Command is one simple command: a program, builtin or function call, with
// what the shell sets up around it.
type Command struct {
	// Name is the command name after quote and escape removal ("curl" for
	// "curl", c\url and 'cu'rl; "/usr/bin/curl" keeps its path, see Base).
	// An empty Name is a statement with only assignments or redirections.
	Name Word
	// Args are the arguments after quote removal, brace expansion applied.
	Args []Word
	// Assigns are the environment assignments the command runs with: those
	// in front of it, those of env or sudo wrappers, those in front of an
	// enclosing bash -c. For export, declare, local, readonly and typeset
	// they are the variables the builtin sets.
	Assigns []Assign
	// Redirects are the redirections of the statement.
	Redirects []Redirect
	// Wrappers is the chain of commands this one runs inside, outermost
	// first: sudo in "sudo curl x", then "bash -c" in
	// "sudo bash -c 'curl x'".
	Wrappers []Wrapper
	// Dynamic says why what this command runs is known only at run time
	// ("command name is dynamic: $CMD", "eval runs text known only at run
	// time: $X", "LD_PRELOAD set: ...", ...); empty when it is known now.
	Dynamic string
	// ExtraArgs is set when more arguments are appended at run time
	// (xargs without -I).
	ExtraArgs bool
	// Piped is set when the command's standard input is a pipe from
	// Upstream, the base names of the commands before it in the pipeline.
	Piped    bool
	Upstream []string
	// Dirs lists where the command may run when a cd before it may have
	// moved the shell: "" is the caller's working directory, other entries
	// are absolute, relative to it, or start with "~" for the home
	// directory. Nil means the caller's working directory. DirsUnknown is
	// set when a cd went somewhere that cannot be known (cd "$X", cd -,
	// popd, find -execdir, a cd inside a function).
	Dirs        []string
	DirsUnknown bool
	// RunsText says why the command runs shell commands written in its
	// arguments in another language (sed '1e curl x', awk
	// 'BEGIN{system("curl x")}'), which deny rules cannot see; empty when
	// it does not. The classifier judges the command as usual.
	RunsText string
	// Function is set when Name is a function the script defined before
	// (perhaps only conditionally). Its body's commands are in the script
	// on their own; the call is still judged and matched by its name.
	Function bool
}

// Word is one shell word after expansion as far as it can be known before
// the command runs.
type Word struct {
	// Value is the word after quote and escape removal. For a dynamic word
	// the parts known only at run time keep their source text ($X, $(...)).
	Value string
	// Dynamic is set when the value depends on run time: a parameter,
	// command, arithmetic or process substitution, a glob, ~user.
	Dynamic bool
	// Home is set when Value starts with "~" standing for the home
	// directory: an unquoted ~ or $HOME (not when the script assigns HOME).
	Home bool
	// Base, for a dynamic word whose expansion stays inside one directory
	// (a glob's literal directory, find's start path for {}), is that
	// directory; a leading "~" is the home directory.
	Base string
	// Guess is the value of a dynamic word if unset parameters were empty,
	// $IFS a space and substitutions empty. Deny rules look at it; nothing
	// is ever allowed because of it.
	Guess string
}

// Assign is a variable assignment.
type Assign struct {
	Name  string
	Value Word
}

// Redirect is a redirection of a statement.
type Redirect struct {
	// Op is the operator: ">", ">>", ">|", "<", "<>", ">&", "<&", "&>",
	// "&>>", "<<", "<<-", "<<<".
	Op string
	// Fd is the explicit descriptor ("2" in 2>err.log), or "".
	Fd string
	// Target is the file, the descriptor (>&2), the here-document
	// delimiter or the here-string.
	Target Word
}

// Wrapper is a command that runs another one given as its arguments or as
// a script string.
type Wrapper struct {
	// Name says which wrapper and how: "sudo", "timeout", "env", "xargs",
	// "find -exec", "bash -c", "bash <<", "eval", "trap", "watch", ...
	Name string
	// Args are the wrapper's own words, its name first, up to the wrapped
	// command (a script string excluded).
	Args []Word
}

// Base is the command name without its directory: "curl" for
// /usr/bin/curl.
func (c *Command) Base() string {
	if c.Name.Value == "" {
		return ""
	}
	return path.Base(c.Name.Value)
}

// Argv is the name and arguments as strings.
func (c *Command) Argv() []string {
	if c.Name.Value == "" && len(c.Args) == 0 {
		return nil
	}
	argv := make([]string, 0, 1+len(c.Args))
	argv = append(argv, c.Name.Value)
	for _, a := range c.Args {
		argv = append(argv, a.Value)
	}
	return argv
}

// String renders the command for findings: assignments, wrappers, words
// and redirections, quoted where needed.
func (c *Command) String() string {
	var words []string
	for _, w := range c.Wrappers {
		for _, a := range w.Args {
			words = append(words, a.quoted())
		}
		if strings.HasSuffix(w.Name, " -c") && (len(w.Args) == 0 || w.Args[len(w.Args)-1].Value != "-c") {
			words = append(words, "-c")
		}
	}
	if c.Name.Value != "" {
		words = append(words, c.Name.quoted())
	}
	for _, a := range c.Args {
		words = append(words, a.quoted())
	}
	var assigns []string
	for _, a := range c.Assigns {
		kv := a.Name + "=" + a.Value.quoted()
		if !slices.Contains(words, kv) { // env X=1, sudo X=1, export X=1 show it already
			assigns = append(assigns, kv)
		}
	}
	words = append(assigns, words...)
	for _, r := range c.Redirects {
		if r.Op == ">&" || r.Op == "<&" {
			words = append(words, r.Fd+r.Op+r.Target.quoted())
		} else {
			words = append(words, r.Fd+r.Op+" "+r.Target.quoted())
		}
	}
	return strings.Join(words, " ")
}

func (w Word) quoted() string {
	if w.Dynamic || w.Home || w.Value != "" && strings.Trim(w.Value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=:/.,@%+-") == "" {
		return w.Value
	}
	q, err := syntax.Quote(w.Value, syntax.LangBash)
	if err != nil {
		return strconv.Quote(w.Value)
	}
	return q
}

// guessed is the word as deny rules see it.
func (w Word) guessed() string {
	if w.Dynamic {
		return w.Guess
	}
	return w.Value
}

// Parse splits bash input into the simple commands it would run. The
// returned Script is never nil; on error its Err is the error and its
// Commands what bash would still run.
func Parse(src string) (*Script, error) {
	s := &Script{Source: src}
	switch {
	case len(src) > maxSource:
		s.Err = fmt.Errorf("%w: %d bytes", ErrTooLarge, len(src))
		return s, s.Err
	case strings.IndexByte(src, 0) >= 0:
		s.Err = ErrNUL
		return s, s.Err
	}
	p := &parser{s: s, dirs: dirSet{list: []string{""}}}
	err := p.script(src, frame{})
	p.finish()
	if p.full {
		err = ErrTooComplex
	} else if err != nil {
		err = fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	s.Err = err
	return s, err
}

// parser walks the syntax tree of one input and the strings nested in it.
type parser struct {
	s     *Script
	src   string // the text positions refer to: the input or a nested string
	depth int    // nesting of script strings
	steps int
	full  bool // a limit was reached; the result is incomplete

	dirs      dirSet
	late      []*Command      // commands that run later than they appear: function bodies, traps
	lateCd    bool            // a cd inside a function body or trap
	homeSet   bool            // the script assigns HOME
	cdpathSet bool            // the script assigns CDPATH
	chdirs    bool            // the script has a cd
	funcs     map[string]bool // functions defined so far
	params    []string        // $0, $1, ... of the script string being walked, for guesses
	evalText  string          // set by literal: a word makes bash evaluate text as code
}

// frame is what a statement inherits from where it appears.
type frame struct {
	wrappers    []Wrapper
	env         []Assign // assignments in front of an enclosing bash -c
	piped       bool
	upstream    []string
	late        bool
	dirsUnknown bool
	dynamic     string
	params      []string // $0, $1, ... of a script string, for guesses
	extra       bool     // more arguments are appended at run time (parallel)
}

func newSyntaxParser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}

// parseFile parses src as bash reads it, and returns the text the
// positions refer to. The parser continues a comment past a backslash
// that ends its line (before \n or \r\n), where bash ends the comment at
// the newline: "echo x # \\<newline>curl x" would hide curl in the echo's
// words, and "ls # \\<newline>if a; then b; fi" would not parse. Such a
// backslash is read as the blank it is to bash, which keeps every
// position. The blanks are kept only when the parser then finds each in
// a comment and no comment continued: the text before the first of them
// reads alike to both, so its comment is bash's, and so on to the next.
func parseFile(src string) (*syntax.File, string, error) {
	file, err := parseText(src)
	if strings.IndexByte(src, '#') < 0 || !strings.Contains(src, "\\\n") && !strings.Contains(src, "\\\r\n") {
		return file, src, err
	}
	if err != nil {
		// the continued comment may be what does not parse: blank every
		// continuation on a line with a #, keep those in comments
		var cand []int
		for _, i := range continuations(src, 0, len(src)) {
			if strings.IndexByte(src[strings.LastIndexByte(src[:i], '\n')+1:i], '#') >= 0 {
				cand = append(cand, i)
			}
		}
		if len(cand) == 0 {
			return nil, src, err
		}
		all, aerr := parseText(blank(src, cand))
		if aerr != nil {
			return nil, src, err
		}
		var keep []int
		for _, c := range comments(all) {
			for _, i := range cand {
				if c[0] <= i && i < c[1] {
					keep = append(keep, i)
				}
			}
		}
		fixed := blank(src, keep)
		if f, ferr := parseText(fixed); ferr == nil && len(keep) > 0 && asBash(f, fixed, keep) {
			return f, fixed, nil
		}
		return nil, src, err
	}
	var blanked []int
	text := src
	for range 8 {
		var more []int
		for _, c := range comments(file) {
			more = append(more, continuations(text, c[0], c[1])...)
		}
		if len(more) == 0 {
			if asBash(file, text, blanked) {
				return file, text, nil
			}
			break
		}
		blanked = append(blanked, more...)
		text = blank(src, blanked)
		if file, err = parseText(text); err != nil {
			break
		}
	}
	return nil, src, errors.New("a comment ends in a backslash, which the parser does not read as bash does")
}

func parseText(src string) (*syntax.File, error) {
	return newSyntaxParser().Parse(strings.NewReader(src), "")
}

// asBash reports whether file, parsed from text, reads text as bash does
// as far as comments go: no comment continues past a backslash, and each
// blanked position is inside a comment.
func asBash(file *syntax.File, text string, blanked []int) bool {
	cs := comments(file)
	for _, c := range cs {
		if len(continuations(text, c[0], c[1])) > 0 {
			return false
		}
	}
	for _, i := range blanked {
		if !slices.ContainsFunc(cs, func(c [2]int) bool { return c[0] <= i && i < c[1] }) {
			return false
		}
	}
	return true
}

// comments are the spans of the comments of file, # included. They are
// found by reflection: syntax.Walk skips some (an if clause's last ones).
func comments(file *syntax.File) [][2]int {
	var out [][2]int
	comment, pos := reflect.TypeFor[syntax.Comment](), reflect.TypeFor[syntax.Pos]()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			switch v.Type() {
			case comment:
				c := v.Interface().(syntax.Comment)
				out = append(out, [2]int{int(c.Pos().Offset()), int(c.End().Offset())})
			case pos:
			default:
				for i := range v.NumField() {
					if v.Type().Field(i).IsExported() {
						walk(v.Field(i))
					}
				}
			}
		}
	}
	walk(reflect.ValueOf(file))
	return out
}

// continuations are the positions in src[from:to] of the backslashes the
// parser takes for a line continuation: before \n or \r\n, not escaped.
func continuations(src string, from, to int) []int {
	var out []int
	for i := from; i < to && i < len(src)-1; i++ {
		if src[i] != '\\' {
			continue
		}
		if src[i+1] == '\n' || strings.HasPrefix(src[i+1:], "\r\n") {
			out = append(out, i)
		} else {
			i++ // an escaped character
		}
	}
	return out
}

// blank returns src with a space at each position of at.
func blank(src string, at []int) string {
	if len(at) == 0 {
		return src
	}
	b := []byte(src)
	for _, i := range at {
		b[i] = ' '
	}
	return string(b)
}

// script parses src and walks it. On a syntax error it walks the complete
// lines before the error's line, as bash runs them before it meets it.
func (p *parser) script(src string, f frame) error {
	read, err := p.parse(src, f)
	if err == nil {
		// What was found stays for the deny rules; the whole is not
		// analysed.
		err = misread(read)
	}
	return err
}

// parse parses src and walks what it runs: all of it, or the lines before
// a syntax error, which bash runs before it stops. It returns src as
// parseFile reads it.
func (p *parser) parse(src string, f frame) (string, error) {
	old := p.src
	defer func() { p.src = old }()
	file, src, err := parseFile(src)
	p.src = src
	if err == nil {
		p.stmts(file.Stmts, f)
		return src, nil
	}
	prefix := src
	for range 8 {
		line := errorLine(err)
		if line <= 1 {
			break
		}
		prefix = firstLines(prefix, line-1)
		file, fixed, perr := parseFile(prefix)
		if perr == nil {
			p.src = fixed
			p.stmts(file.Stmts, f)
			break
		}
		err2 := perr
		if errorLine(err2) >= line {
			break
		}
		err = err2
	}
	return src, err
}

// misread refuses input that mvdan.cc/sh reads otherwise than bash: its
// lexer takes U+0080 for the end of the input and U+0081 for an escaped
// newline, a carriage return that does not end a line for a blank (so
// "ls \r# ; curl x" hides curl in a comment bash does not see), and a
// backslash before \r\n for a line continuation (bash escapes the \r and
// ends the line: "echo a\ \r\n curl x" runs curl). It
// applies to nested strings (bash -c, $'...' decoded) as well; the
// commands found are kept (a deny rule still sees them), the script is
// not analysed.
func misread(src string) error {
	switch {
	case strings.ContainsRune(src, '\u0080') || strings.ContainsRune(src, '\u0081'):
		return errors.New("it holds U+0080 or U+0081, which the parser does not read as bash does")
	case strings.Contains(strings.ReplaceAll(src, "\r\n", ""), "\r"):
		return errors.New("it holds a carriage return, which the parser does not read as bash does")
	case strings.Contains(src, "\\\r\n"):
		return errors.New("it holds a backslash before a carriage return, which the parser does not read as bash does")
	}
	return nil
}

func errorLine(err error) int {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return int(pe.Pos.Line())
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return int(le.Pos.Line())
	}
	return 0
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	i := 0
	for ; n > 0; n-- {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:i]
}

func (p *parser) stmts(list []*syntax.Stmt, f frame) {
	for _, st := range list {
		p.stmt(st, f)
	}
}

func (p *parser) stmt(st *syntax.Stmt, f frame) {
	if st == nil || p.full {
		return
	}
	if p.steps++; p.steps > maxSteps {
		p.full = true
		return
	}
	redirs, in := p.redirects(st.Redirs, f)
	bare := func() {
		if len(redirs) > 0 {
			p.record(&call{redirs: redirs, f: f})
		}
	}
	switch c := st.Cmd.(type) {
	case nil:
		bare()
	case *syntax.CallExpr:
		p.callExpr(c, redirs, in, f)
	case *syntax.BinaryCmd:
		bare()
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			start := len(p.s.Commands)
			p.stmt(c.X, f)
			g := f
			g.piped = true
			g.upstream = append(slices.Clip(f.upstream), p.basesSince(start)...)
			p.stmt(c.Y, g)
			return
		}
		p.stmt(c.X, f)
		p.stmt(c.Y, f)
	case *syntax.Subshell:
		bare()
		p.stmts(c.Stmts, f)
	case *syntax.Block:
		bare()
		p.stmts(c.Stmts, f)
	case *syntax.IfClause:
		bare()
		for ic := c; ic != nil; ic = ic.Else {
			p.stmts(ic.Cond, f)
			p.stmts(ic.Then, f)
		}
	case *syntax.WhileClause:
		bare()
		p.loop(func() {
			p.stmts(c.Cond, f)
			p.stmts(c.Do, f)
		})
	case *syntax.ForClause:
		bare()
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				p.substs(w, f)
			}
		case *syntax.CStyleLoop:
			p.substs(l.Init, f)
			p.substs(l.Cond, f)
			p.substs(l.Post, f)
		}
		p.arithCode(c.Loop, f)
		p.loop(func() { p.stmts(c.Do, f) })
	case *syntax.CaseClause:
		bare()
		p.substs(c.Word, f)
		p.arithCode(c.Word, f)
		for _, it := range c.Items {
			for _, w := range it.Patterns {
				p.substs(w, f)
			}
			p.stmts(it.Stmts, f)
		}
	case *syntax.FuncDecl:
		bare()
		if c.Name != nil {
			if p.funcs == nil {
				p.funcs = map[string]bool{}
			}
			p.funcs[c.Name.Value] = true
		}
		g := f
		g.late = true
		p.stmt(c.Body, g)
	case *syntax.ArithmCmd:
		bare()
		p.substs(c.X, f)
		p.arithCode(c, f)
	case *syntax.TestClause:
		bare()
		p.substs(c.X, f)
		p.arithCode(c, f)
	case *syntax.LetClause:
		bare()
		for _, x := range c.Exprs {
			p.substs(x, f)
		}
		p.arithCode(c, f)
	case *syntax.DeclClause:
		p.declClause(c, redirs, f)
	case *syntax.TimeClause:
		bare()
		if c.Stmt != nil {
			g := f
			args := []Word{{Value: "time"}}
			if c.PosixFormat {
				args = append(args, Word{Value: "-p"})
			}
			g.wrappers = append(slices.Clip(f.wrappers), Wrapper{Name: "time", Args: args})
			p.stmt(c.Stmt, g)
		}
	case *syntax.CoprocClause:
		bare()
		p.substs(c.Name, f)
		p.stmt(c.Stmt, f)
	case *syntax.TestDecl:
		bare()
		p.substs(c.Description, f)
		p.stmt(c.Body, f)
	default:
		// a construct this walker does not know must not pass unseen
		p.record(&call{redirs: redirs, f: f, dynamic: fmt.Sprintf("unsupported construct %T", c)})
	}
}

// loop walks a loop body until the working directories its cd commands
// can reach stop growing, so that a command sees the cd of an earlier
// iteration.
func (p *parser) loop(body func()) {
	start, lateStart := len(p.s.Commands), len(p.late)
	for i := 0; ; i++ {
		before := p.dirs.clone()
		body()
		if p.full || p.dirs.equal(before) {
			return
		}
		if i >= 3 {
			p.dirs.unknown = true
		}
		if i >= 4 {
			return
		}
		p.s.Commands, p.late = p.s.Commands[:start], p.late[:lateStart]
	}
}

func (p *parser) basesSince(start int) []string {
	var out []string
	for _, c := range p.s.Commands[start:] {
		switch {
		case c.Name.Value == "":
		case c.Name.Dynamic:
			out = append(out, strings.Fields(c.Name.Guess)...)
		default:
			out = append(out, c.Base())
		}
	}
	return out
}

// substs walks the command and process substitutions inside an
// expression: words, arithmetic, tests, assignments.
func (p *parser) substs(n syntax.Node, f frame) {
	if n == nil || isNilNode(n) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			p.stmts(x.Stmts, f)
			return false
		case *syntax.ProcSubst:
			p.stmts(x.Stmts, f)
			return false
		case *syntax.ParamExp:
			// syntax.Walk skips a slice's offset and length: ${x:$(curl y)}
			if x.Slice != nil {
				p.substs(x.Slice.Offset, f)
				p.substs(x.Slice.Length, f)
			}
		}
		return true
	})
}

// isNilNode reports a typed nil inside the interface.
func isNilNode(n syntax.Node) bool {
	switch x := n.(type) {
	case *syntax.Word:
		return x == nil
	case *syntax.Assign:
		return x == nil
	case *syntax.BinaryArithm:
		return x == nil
	case *syntax.UnaryArithm:
		return x == nil
	case *syntax.ParenArithm:
		return x == nil
	}
	return false
}

// input is what a command reads as standard input, when a shell would
// take its script from it.
type input struct {
	doc  *Word // a here-document body or here-string
	file bool  // a file (<)
}

func (p *parser) redirects(rs []*syntax.Redirect, f frame) ([]Redirect, *input) {
	if len(rs) == 0 {
		return nil, nil
	}
	var out []Redirect
	var in *input
	for _, r := range rs {
		p.substs(r.Word, f)
		red := Redirect{Op: r.Op.String()}
		if r.N != nil {
			red.Fd = r.N.Value
		}
		if r.Word != nil {
			red.Target = p.literal(r.Word, unquoted)
		}
		stdin := red.Fd == "" || red.Fd == "0"
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc == nil {
				break
			}
			p.substs(r.Hdoc, f)
			var body Word
			if quotedWord(r.Word) {
				body = Word{Value: rawText(r.Hdoc)}
			} else {
				body = p.literal(r.Hdoc, document)
			}
			if stdin {
				in = &input{doc: &body}
			}
		case syntax.WordHdoc:
			if stdin {
				body := red.Target
				body.Value += "\n"
				body.Guess += "\n"
				in = &input{doc: &body}
			}
		case syntax.RdrIn:
			if stdin {
				in = &input{file: true}
			}
		}
		out = append(out, red)
	}
	return out, in
}

// quotedWord reports a here-document delimiter with any quoting, which
// turns off expansion in the body.
func quotedWord(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, `\`) {
				return true
			}
		}
	}
	return false
}

func rawText(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		if l, ok := part.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		}
	}
	return b.String()
}

func (p *parser) callExpr(ce *syntax.CallExpr, redirs []Redirect, in *input, f frame) {
	// substitutions run before the command
	for _, a := range ce.Assigns {
		p.substs(a, f)
	}
	for _, w := range ce.Args {
		p.substs(w, f)
	}
	c := &call{redirs: redirs, in: in, f: f}
	p.evalText = ""
	for _, a := range ce.Assigns {
		c.assigns = append(c.assigns, p.assign(a))
	}
	for i, w := range ce.Args {
		ws, braced := p.words(w)
		if i == 0 && braced && c.dynamic == "" {
			c.dynamic = "brace expansion in the command name"
		}
		c.words = append(c.words, ws...)
	}
	if c.dynamic == "" {
		c.dynamic = p.evalText
	}
	if c.dynamic == "" {
		c.dynamic = codeInNames(c.words, c.assigns)
	}
	if c.dynamic == "" {
		c.dynamic = arithText(ce)
	}
	p.call(c)
}

func (p *parser) assign(a *syntax.Assign) Assign {
	out := Assign{}
	if a.Name != nil {
		out.Name = a.Name.Value
	}
	switch {
	case a.Array != nil:
		out.Value = Word{Value: p.text(a.Array), Dynamic: true}
	case a.Value != nil:
		out.Value = p.literal(a.Value, unquoted)
	}
	if a.Index != nil {
		out.Value.Dynamic = true
	}
	p.noteAssign(out.Name)
	return out
}

// varNameBuiltins take variable names, whose array subscripts bash
// evaluates as arithmetic, command substitutions included.
var varNameBuiltins = map[string]bool{"printf": true, "read": true, "unset": true, "mapfile": true, "readarray": true,
	"getopts": true, "test": true, "[": true, "let": true, "wait": true, "declare": true, "typeset": true, "local": true,
	"export": true, "readonly": true, "printf -v": true}

// codeInNames says why literal text in a command would be evaluated as
// code later: an assignment of text that looks like a command
// substitution, or an array subscript holding one given to a builtin that
// takes variable names.
func codeInNames(words []Word, assigns []Assign) string {
	for _, a := range assigns {
		if !a.Value.Dynamic && looksLikeCode(a.Value.Value) {
			return a.Name + " is assigned text that bash may evaluate as code"
		}
	}
	if len(words) == 0 || words[0].Dynamic || !varNameBuiltins[path.Base(words[0].Value)] {
		return ""
	}
	for _, w := range words[1:] {
		if !w.Dynamic && strings.Contains(w.Value, "[") && looksLikeCode(w.Value) {
			return "array subscript with a command substitution: " + w.Value
		}
	}
	return ""
}

func (p *parser) noteAssign(name string) {
	switch name {
	case "HOME":
		p.homeSet = true
	case "CDPATH":
		p.cdpathSet = true
	}
}

// declClause records export, declare, local, readonly and typeset as a
// command whose Assigns are the variables it sets.
func (p *parser) declClause(d *syntax.DeclClause, redirs []Redirect, f frame) {
	c := &call{redirs: redirs, f: f}
	c.words = []Word{{Value: d.Variant.Value}}
	p.evalText = ""
	for _, a := range d.Args {
		p.substs(a, f)
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			w := p.literal(a.Value, unquoted)
			if w.Dynamic && c.dynamic == "" {
				c.dynamic = d.Variant.Value + " with computed arguments: " + w.Value
			}
			c.words = append(c.words, w)
		case a.Naked && a.Name != nil:
			c.words = append(c.words, Word{Value: a.Name.Value})
		default:
			as := p.assign(a)
			c.assigns = append(c.assigns, as)
			w := as.Value
			w.Value = as.Name + "=" + w.Value
			if w.Dynamic {
				w.Guess = as.Name + "=" + w.Guess
			}
			w.Home = false
			c.words = append(c.words, w)
		}
	}
	if c.dynamic == "" {
		c.dynamic = p.evalText
	}
	if c.dynamic == "" {
		c.dynamic = codeInNames(c.words, c.assigns)
	}
	if c.dynamic == "" {
		c.dynamic = arithText(d)
	}
	p.record(c)
}

// words converts a command word, applying brace expansion; braced reports
// that brace expansion applied.
func (p *parser) words(w *syntax.Word) (ws []Word, braced bool) {
	split := *w // SplitBraces replaces the word it is given
	if syntax.SplitBraces(&split) && hasBraces(&split) {
		if braceCount(&split) <= maxBraces {
			for _, x := range expand.Braces(&split) {
				ws = append(ws, p.literal(x, unquoted))
			}
			return ws, true
		}
		lw := p.literal(w, unquoted)
		lw.Dynamic, lw.Base, lw.Guess = true, "", lw.Value
		return []Word{lw}, true
	}
	return []Word{p.literal(w, unquoted)}, false
}

func hasBraces(w *syntax.Word) bool {
	for _, part := range w.Parts {
		if _, ok := part.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// braceCount is how many words brace expansion of w produces, capped just
// above maxBraces.
func braceCount(w *syntax.Word) int {
	n := 1
	for _, part := range w.Parts {
		be, ok := part.(*syntax.BraceExp)
		if !ok {
			continue
		}
		k := 0
		if be.Sequence {
			k = seqLen(be)
		} else {
			for _, e := range be.Elems {
				k += braceCount(e)
				if k > maxBraces {
					break
				}
			}
		}
		n *= max(k, 1)
		if n > maxBraces {
			return maxBraces + 1
		}
	}
	return n
}

func seqLen(be *syntax.BraceExp) int {
	if len(be.Elems) < 2 {
		return 1
	}
	from, err1 := strconv.ParseInt(be.Elems[0].Lit(), 10, 64)
	to, err2 := strconv.ParseInt(be.Elems[1].Lit(), 10, 64)
	if err1 != nil || err2 != nil {
		a, b := be.Elems[0].Lit(), be.Elems[1].Lit()
		if a == "" || b == "" {
			return maxBraces + 1
		}
		from, to = int64(a[0]), int64(b[0])
	}
	d := to - from
	if d < 0 {
		d = -d
	}
	if d > 1<<20 {
		return maxBraces + 1
	}
	incr := int64(1)
	if len(be.Elems) > 2 {
		if n, err := strconv.ParseInt(be.Elems[2].Lit(), 10, 64); err == nil && n != 0 {
			if n < 0 {
				n = -n
			}
			incr = n
		}
	}
	return int(d/incr) + 1
}

// text is the source text of a node.
func (p *parser) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if !n.Pos().IsValid() || !n.End().IsValid() || start < 0 || end > len(p.src) || start > end {
		return "…"
	}
	return p.src[start:end]
}

// quoting is how backslashes behave in a literal part.
type quoting int

const (
	unquoted quoting = iota
	double           // inside "..."
	document         // a here-document body with expansion
)

// literal converts a word the way the shell would, as far as it can be
// known now.
func (p *parser) literal(w *syntax.Word, q quoting) Word {
	var val, guess strings.Builder
	var out Word
	glob := -1 // offset in val of the first unquoted glob character
	dyn := func(text, g string) {
		out.Dynamic = true
		val.WriteString(text)
		guess.WriteString(g)
	}
	lit := func(s string) {
		val.WriteString(s)
		guess.WriteString(s)
	}
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 && q == unquoted && strings.HasPrefix(v, "~") {
				end := strings.IndexByte(v, '/')
				if end < 0 {
					end = len(v)
				}
				switch user := v[1:end]; {
				case end == len(v) && i+1 < len(w.Parts):
					// the tilde prefix runs into an expansion or quotes
					dyn(v, v)
					v = ""
				case user == "":
					out.Home = true
					lit("~")
					v = v[end:]
				case user == "+":
					lit(".")
					v = v[end:]
				default: // ~-, ~user: a directory known only at run time
					dyn(v[:end], v[:end])
					v = v[end:]
				}
			}
			if q == unquoted {
				if g := unescapeUnquoted(&val, &guess, v); g >= 0 && glob < 0 {
					glob = g
				}
			} else {
				lit(unescapeQuoted(v, q))
			}
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v = ansiC(v)
			}
			lit(v)
		case *syntax.DblQuoted:
			for j, in := range x.Parts {
				switch y := in.(type) {
				case *syntax.Lit:
					lit(unescapeQuoted(y.Value, double))
				case *syntax.ParamExp:
					p.checkParam(y)
					if i == 0 && j == 0 && isHome(y) {
						out.Home = true
						lit("~")
						continue
					}
					dyn(p.text(y), p.paramGuess(y))
				default:
					dyn(p.text(y), "")
				}
			}
		case *syntax.ParamExp:
			p.checkParam(x)
			if i == 0 && isHome(x) {
				out.Home = true
				lit("~")
				continue
			}
			dyn(p.text(x), p.paramGuess(x))
		case *syntax.ExtGlob:
			t := p.text(x)
			dyn(t, t)
		default: // command, arithmetic and process substitutions, unexpanded braces
			dyn(p.text(part), "")
		}
	}
	out.Value = val.String()
	if out.Home && out.Value != "~" && !strings.HasPrefix(out.Value, "~/") {
		// ${HOME}x is not a path under home
		out.Home = false
		out.Dynamic = true
	}
	if glob >= 0 {
		if !out.Dynamic {
			out.Base = globBase(out.Value, glob)
		}
		out.Dynamic = true
	}
	if out.Dynamic {
		out.Guess = guess.String()
	}
	return out
}

// ansiC decodes the escapes of a $'...' string as bash does; a NUL ends
// it.
func ansiC(s string) string {
	var b strings.Builder
	digits := func(i, n int, base int) (int, int) {
		v, k := 0, 0
		for ; k < n && i+k < len(s); k++ {
			d := -1
			switch ch := s[i+k]; {
			case ch >= '0' && ch <= '9':
				d = int(ch - '0')
			case ch >= 'a' && ch <= 'f':
				d = int(ch-'a') + 10
			case ch >= 'A' && ch <= 'F':
				d = int(ch-'A') + 10
			}
			if d < 0 || d >= base {
				break
			}
			v = v*base + d
		}
		return v, k
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString("\\c")
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, k := digits(i, 3, 8)
			i += k - 1
			b.WriteByte(byte(v))
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			v, k := digits(i+1, n, 16)
			if k == 0 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			i += k
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	out, _, _ := strings.Cut(b.String(), "\x00")
	return out
}

// unescapeUnquoted appends an unquoted literal after backslash removal to
// val and guess, returning the offset in val of its first glob character
// or -1.
func unescapeUnquoted(val, guess *strings.Builder, s string) int {
	glob := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '\n' {
				continue
			}
			c = s[i]
		case c == '*' || c == '?' || c == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			if glob < 0 {
				glob = val.Len()
			}
		}
		val.WriteByte(c)
		guess.WriteByte(c)
	}
	return glob
}

// unescapeQuoted removes the backslashes that escape something inside
// double quotes or a here-document body.
func unescapeQuoted(s string, q quoting) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch n := s[i+1]; {
			case n == '\n':
				i++
				continue
			case n == '$' || n == '`' || n == '\\' || n == '"' && q == double:
				i++
				b.WriteByte(n)
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkParam notes ${x@P}: prompt expansion runs the command
// substitutions in the variable's value.
func (p *parser) checkParam(pe *syntax.ParamExp) {
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && strings.Contains(pe.Exp.Word.Lit(), "P") {
		p.evalText = "${...@P} runs the command substitutions in a variable"
	}
}

// arithCode records a statement whose arithmetic holds literal text bash
// evaluates as code ((( 'a[$(curl x)]' )) runs curl), as a command known
// only at run time.
func (p *parser) arithCode(n syntax.Node, f frame) {
	if why := arithText(n); why != "" {
		p.record(&call{f: f, dynamic: why})
	}
}

// arithText says why n, outside its command substitutions, gives bash
// literal text to evaluate as arithmetic that holds a command
// substitution: an array subscript in it runs the substitution. The
// arithmetic contexts: (( )), $(( )), $[ ], let, for (( )), an array
// subscript, and [[ ]]'s -v and numeric comparisons.
func arithText(n syntax.Node) string {
	if n == nil || isNilNode(n) {
		return ""
	}
	why := ""
	check := func(n syntax.Node) {
		if n == nil || isNilNode(n) || why != "" {
			return
		}
		syntax.Walk(n, func(m syntax.Node) bool {
			text := ""
			switch x := m.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				return false // walked as commands of their own
			case *syntax.SglQuoted:
				text = x.Value
			case *syntax.Lit:
				text = x.Value
			}
			if looksLikeCode(text) {
				why = "arithmetic evaluates text as code: " + text
			}
			return why == ""
		})
	}
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ArithmCmd:
			check(x.X)
		case *syntax.ArithmExp:
			check(x.X)
		case *syntax.LetClause:
			for _, e := range x.Exprs {
				check(e)
			}
		case *syntax.CStyleLoop:
			check(x.Init)
			check(x.Cond)
			check(x.Post)
		case *syntax.ParamExp:
			check(x.Index)
		case *syntax.Assign:
			check(x.Index)
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
				check(x.X)
				check(x.Y)
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				check(x.X)
			}
		}
		return why == ""
	})
	return why
}

// looksLikeCode reports literal text that bash evaluates as code when it
// reaches arithmetic, an array subscript or ${x@P}.
func looksLikeCode(v string) bool {
	return strings.Contains(v, "$(") || strings.Contains(v, "`")
}

func isHome(pe *syntax.ParamExp) bool {
	return pe.Param != nil && pe.Param.Value == "HOME" && !pe.Excl && !pe.Length && !pe.Width &&
		pe.Index == nil && pe.Slice == nil && pe.Repl == nil && pe.Exp == nil && pe.Names == 0
}

// paramGuess is what a parameter expands to if unset, except $IFS (a
// space) and the positional parameters of a bash -c string.
func (p *parser) paramGuess(pe *syntax.ParamExp) string {
	if pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.Index != nil {
		return ""
	}
	return paramValue(pe.Param.Value, p.params)
}

func paramValue(name string, params []string) string {
	switch name {
	case "IFS":
		return " "
	case "@", "*":
		if len(params) > 1 {
			return strings.Join(params[1:], " ")
		}
	}
	if n, err := strconv.Atoi(name); err == nil && n >= 0 && n < len(params) {
		return params[n]
	}
	return ""
}

// globBase is the directory a glob's matches stay in: the literal
// directory before its first glob character, unless a later component
// could match "..".
func globBase(v string, glob int) string {
	slash := strings.LastIndexByte(v[:glob], '/')
	base := "."
	if slash == 0 {
		base = "/"
	} else if slash > 0 {
		base = v[:slash]
	}
	for _, comp := range strings.Split(v[slash+1:], "/") {
		if comp == ".." {
			return ""
		}
		if strings.HasPrefix(comp, ".") {
			if ok, err := path.Match(comp, ".."); ok || err != nil {
				return ""
			}
		}
	}
	return base
}

// record adds a simple command to the script.
func (p *parser) record(c *call) *Command {
	if len(p.s.Commands) >= maxCommands {
		p.full = true
		return nil
	}
	f := c.f
	cmd := &Command{
		Redirects: c.redirs,
		Wrappers:  f.wrappers,
		Dynamic:   c.dynamic,
		ExtraArgs: c.extra || f.extra,
		Piped:     f.piped,
		Upstream:  f.upstream,
	}
	if cmd.Dynamic == "" {
		cmd.Dynamic = f.dynamic
	}
	cmd.Assigns = append(slices.Clip(f.env), c.assigns...)
	if len(c.words) > 0 {
		cmd.Name, cmd.Args = c.words[0], c.words[1:]
		switch {
		case cmd.Dynamic != "":
		case cmd.Name.Dynamic:
			cmd.Dynamic = "command name is dynamic: " + cmd.Name.Value
		case cmd.Name.Value == "":
			cmd.Dynamic = "empty command name"
		}
		cmd.Function = !cmd.Name.Dynamic && p.funcs[cmd.Name.Value]
	}
	if cmd.Dynamic == "" && c.extra && !cmd.Name.Dynamic && runsOperand(cmd.Base()) {
		// xargs sudo, xargs sh -c: the command or script comes from the input
		cmd.Dynamic = cmd.Base() + " runs what xargs reads from the input"
	}
	if cmd.Dynamic == "" {
		for _, a := range cmd.Assigns {
			if why := riskyVar(a.Name, a.Value); why != "" {
				cmd.Dynamic = a.Name + " set: " + why
				break
			}
		}
	}
	if cmd.Dynamic == "" && !cmd.Name.Dynamic {
		var doc *Word
		if c.in != nil {
			doc = c.in.doc
		}
		cmd.RunsText = runsText(cmd, doc)
	}
	if b := cmd.Base(); cmd.Dynamic == "" && (b == "npm" || b == "pnpm" || b == "yarn" || b == "npx") && slices.ContainsFunc(cmd.Args, func(w Word) bool {
		return strings.HasPrefix(w.Value, "--script-shell") || strings.HasPrefix(w.Value, "--node-options")
	}) {
		// npm test --script-shell='curl x' runs the test script through curl
		cmd.Dynamic = b + " --script-shell runs the scripts through another program"
	}
	if cmd.Dynamic == "" && cmd.Base() == "hash" && slices.ContainsFunc(cmd.Args, func(w Word) bool {
		return w.Dynamic || strings.HasPrefix(w.Value, "-") && strings.Contains(w.Value, "p")
	}) {
		// hash -p /usr/bin/curl c; c x runs curl
		cmd.Dynamic = "hash -p makes a command name run another program"
	}
	if cmd.Dynamic == "" && cmd.Base() == "git" {
		// git -c core.pager='curl x' log runs curl, as GIT_PAGER would
		for _, c := range parseGitGlobals(cmd.Args).configs {
			key, val := gitConfigSplit(c.kv)
			k := strings.ToLower(key)
			if (k == "core.pager" || k == "core.editor" || k == "sequence.editor" || strings.HasPrefix(k, "pager.")) && safePager(val) {
				continue // git -c core.pager=cat, as GIT_PAGER=cat
			}
			if gitConfigRuns(c.kv) {
				cmd.Dynamic = c.how + " " + key + ": makes git run commands"
				break
			}
		}
		if sub := gitCommand(cmd.Args); cmd.Dynamic == "" && len(sub) > 0 && sub[0].Value == "grep" {
			if pager := gitGrepPager(sub[1:]); pager != "" {
				cmd.Dynamic = "git grep -O" + pager + ": runs a command with the matching files"
			}
		}
	}
	if len(p.dirs.list) > 1 || p.dirs.list[0] != "" {
		cmd.Dirs = slices.Clone(p.dirs.list)
	}
	cmd.DirsUnknown = p.dirs.unknown || f.dirsUnknown
	if f.late {
		p.late = append(p.late, cmd)
	}
	p.s.Commands = append(p.s.Commands, cmd)
	if !cmd.Name.Dynamic {
		switch cmd.Base() {
		case "cd", "pushd", "popd":
			p.chdir(cmd, f)
		}
	}
	return cmd
}

// chdir follows a cd: later commands may run in the new directory, or
// still in the old one if it fails.
func (p *parser) chdir(cmd *Command, f frame) {
	p.chdirs = true
	if f.late {
		p.lateCd = true
	}
	args := cmd.Args
	for len(args) > 0 && !args[0].Dynamic && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "-" {
		done := args[0].Value == "--"
		args = args[1:]
		if done {
			break
		}
	}
	switch {
	case cmd.Base() == "popd":
		p.dirs.unknown = true
	case len(args) == 0:
		if cmd.Base() == "cd" {
			p.dirs.add(Word{Value: "~", Home: true})
		} else {
			p.dirs.unknown = true
		}
	case args[0].Dynamic || args[0].Value == "-" || strings.HasPrefix(args[0].Value, "+"):
		p.dirs.unknown = true
	default:
		p.dirs.add(args[0])
	}
}

// finish applies what is known only at the end: function bodies and traps
// run later, where any cd of the script may have taken the shell; a script
// that assigns HOME makes ~ unknown.
func (p *parser) finish() {
	for _, c := range p.late {
		c.Dirs = nil
		if len(p.dirs.list) > 1 || p.dirs.list[0] != "" {
			c.Dirs = slices.Clone(p.dirs.list)
		}
		c.DirsUnknown = c.DirsUnknown || p.dirs.unknown || p.lateCd
	}
	if !p.homeSet && !(p.cdpathSet && p.chdirs) {
		return
	}
	unhome := func(w *Word) {
		if w.Home {
			w.Home, w.Dynamic, w.Base, w.Guess = false, true, "", w.Value
		}
		if strings.HasPrefix(w.Base, "~") {
			w.Base = ""
		}
	}
	for _, c := range p.s.Commands {
		if p.cdpathSet && p.chdirs {
			c.DirsUnknown = true
		}
		if !p.homeSet {
			continue
		}
		unhome(&c.Name)
		for i := range c.Args {
			unhome(&c.Args[i])
		}
		for i := range c.Redirects {
			unhome(&c.Redirects[i].Target)
		}
		for i := range c.Assigns {
			unhome(&c.Assigns[i].Value)
		}
		for i := range c.Wrappers {
			for j := range c.Wrappers[i].Args {
				unhome(&c.Wrappers[i].Args[j])
			}
		}
		for i, d := range c.Dirs {
			if strings.HasPrefix(d, "~") {
				c.Dirs[i] = d
				c.DirsUnknown = true
			}
		}
	}
}

// dirSet is where the shell may be after the cd commands seen so far.
type dirSet struct {
	list    []string // "" is the caller's working directory
	unknown bool
}

func (d dirSet) clone() dirSet {
	return dirSet{list: slices.Clone(d.list), unknown: d.unknown}
}

func (d dirSet) equal(o dirSet) bool {
	if d.unknown || o.unknown {
		return d.unknown == o.unknown
	}
	return slices.Equal(d.list, o.list)
}

// add records a cd to t from any directory the shell may be in; the
// shell may also still be where it was, if the cd failed.
func (d *dirSet) add(t Word) {
	if d.unknown {
		return
	}
	for _, e := range slices.Clone(d.list) {
		n := chdirTo(e, t)
		if !slices.Contains(d.list, n) {
			d.list = append(d.list, n)
		}
	}
	if len(d.list) > maxDirs {
		d.unknown = true
	}
}

// chdirTo is the directory cd t reaches from e, in the notation of
// Command.Dirs. cd resolves .. lexically, as bash does by default.
func chdirTo(e string, t Word) string {
	v := t.Value
	norm := func(s string) string {
		if s == "." {
			return ""
		}
		return s
	}
	switch {
	case t.Home:
		return homeJoin(".", strings.TrimPrefix(v, "~"))
	case path.IsAbs(v):
		return path.Clean(v)
	case e == "":
		return norm(path.Clean(v))
	case path.IsAbs(e):
		return path.Clean(e + "/" + v)
	case strings.HasPrefix(e, "~"):
		return homeJoin(strings.TrimPrefix(strings.TrimPrefix(e, "~"), "/"), v)
	}
	return norm(path.Clean(e + "/" + v))
}

// homeJoin is "~" followed by rel joined to more, kept relative so that
// ".." above home survives.
func homeJoin(rel, more string) string {
	if rel == "" {
		rel = "."
	}
	r := path.Clean(rel + "/" + strings.TrimPrefix(more, "/"))
	if r == "." {
		return "~"
	}
	return "~/" + r
}
