package darwin

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// This file reads profiles back: a small S-expression reader for the SBPL
// cordon and sandbox-runtime write, and a checker for the structure of
// cordon's. evaluator_test.go evaluates what they read.

// node is an atom, a string or a list.
type node struct {
	atom   string
	str    *string
	raw    bool // a #"..." string
	list   []node
	isList bool
	line   int
}

// sbpl prints n back as SBPL.
func (n node) sbpl() string {
	switch {
	case n.isList:
		var parts []string
		for _, c := range n.list {
			parts = append(parts, c.sbpl())
		}
		return "(" + strings.Join(parts, " ") + ")"
	case n.str != nil && n.raw:
		return `#"` + *n.str + `"`
	case n.str != nil:
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(*n.str) + `"`
	}
	return n.atom
}

func (n node) String() string {
	switch {
	case n.isList:
		var parts []string
		for _, c := range n.list {
			parts = append(parts, c.String())
		}
		return "(" + strings.Join(parts, " ") + ")"
	case n.str != nil:
		return fmt.Sprintf("%q", *n.str)
	}
	return n.atom
}

// head returns the operator of a list.
func (n node) head() string {
	if !n.isList || len(n.list) == 0 || n.list[0].isList || n.list[0].str != nil {
		return ""
	}
	return n.list[0].atom
}

// parseSBPL parses a profile into its top-level forms. It accepts only what
// a correctly quoted profile may hold: balanced parentheses, strings whose
// only escapes are \" and \\ and that hold no control character, comments
// from ";" to the end of the line, and the #"..." strings Apple's and
// sandbox-runtime's profiles write regexes in, whose backslashes are their
// own (sbpl1.scm: #"^/private/tmp/\.webdavUDS\.[^/]+$"; Blazakis, "The
// Apple Sandbox": "Apple's custom string syntax").
func parseSBPL(src string) ([]node, error) {
	p := &sexpr{src: src, line: 1}
	var forms []node
	for {
		p.space()
		if p.i == len(p.src) {
			return forms, nil
		}
		n, err := p.node()
		if err != nil {
			return nil, err
		}
		forms = append(forms, n)
	}
}

type sexpr struct {
	src  string
	i    int
	line int
}

func (p *sexpr) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

func (p *sexpr) space() {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == '\n':
			p.line++
			p.i++
		case c == ' ' || c == '\t':
			p.i++
		case c == ';':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *sexpr) node() (node, error) {
	p.space()
	if p.i == len(p.src) {
		return node{}, p.errorf("unexpected end: unbalanced parentheses")
	}
	line := p.line
	switch c := p.src[p.i]; c {
	case '(':
		p.i++
		n := node{isList: true, line: line}
		for {
			p.space()
			if p.i == len(p.src) {
				return node{}, p.errorf("unclosed list opened on line %d", line)
			}
			if p.src[p.i] == ')' {
				p.i++
				return n, nil
			}
			child, err := p.node()
			if err != nil {
				return node{}, err
			}
			n.list = append(n.list, child)
		}
	case ')':
		return node{}, p.errorf("unbalanced ')'")
	case '#':
		if p.i+1 < len(p.src) && p.src[p.i+1] == '"' {
			p.i += 2
			start := p.i
			for p.i < len(p.src) && p.src[p.i] != '"' {
				if c := p.src[p.i]; c < 0x20 || c == 0x7f {
					return node{}, p.errorf("control character in string")
				}
				p.i++
			}
			if p.i == len(p.src) {
				return node{}, p.errorf("unterminated string")
			}
			s := p.src[start:p.i]
			p.i++
			if !utf8.ValidString(s) {
				return node{}, p.errorf("string %q is not UTF-8", s)
			}
			return node{str: &s, raw: true, line: line}, nil
		}
		if p.i+1 < len(p.src) && p.src[p.i+1] == '|' {
			return node{}, p.errorf("block comments are not read")
		}
		return p.atom(line), nil
	case '"':
		p.i++
		var b strings.Builder
		for {
			if p.i == len(p.src) {
				return node{}, p.errorf("unterminated string")
			}
			c := p.src[p.i]
			switch {
			case c == '"':
				p.i++
				s := b.String()
				if !utf8.ValidString(s) {
					return node{}, p.errorf("string %q is not UTF-8", s)
				}
				return node{str: &s, line: line}, nil
			case c == '\\':
				if p.i+1 == len(p.src) || (p.src[p.i+1] != '"' && p.src[p.i+1] != '\\') {
					return node{}, p.errorf("bad escape in string")
				}
				b.WriteByte(p.src[p.i+1])
				p.i += 2
			case c < 0x20 || c == 0x7f:
				return node{}, p.errorf("control character in string")
			default:
				b.WriteByte(c)
				p.i++
			}
		}
	default:
		return p.atom(line), nil
	}
}

func (p *sexpr) atom(line int) node {
	start := p.i
	for p.i < len(p.src) && !strings.ContainsRune(" \t\n();\"", rune(p.src[p.i])) {
		p.i++
	}
	return node{atom: p.src[start:p.i], line: line}
}

// knownOperations are the SBPL operations a cordon profile may use.
var knownOperations = []string{
	"default",
	"file-read*", "file-read-data", "file-read-metadata", "file-test-existence",
	"file-write*", "file-write-data", "file-write-create", "file-write-unlink", "file-ioctl", "file-link", "file-clone",
	"process-fork", "process-exec", "process-info*", "signal", "mach-priv-task-port",
	"sysctl-read", "sysctl-write", "mach-lookup", "iokit-open",
	"ipc-posix-sem", "ipc-posix-shm", "user-preference-read", "pseudo-tty",
	"system-socket", "network-outbound", "network-inbound", "network-bind",
}

// filterArgs says, for each filter a cordon profile may use, what its
// arguments are: "path" a clean absolute path string, "regex" an anchored
// regular expression string, "string" any string, "filter" one or more
// filters, an atom list the atoms allowed.
var filterArgs = map[string][]string{
	"literal":                    {"path"},
	"subpath":                    {"path"},
	"regex":                      {"regex"},
	"path-regex":                 {"regex"},
	"require-all":                {"filter"},
	"require-not":                {"filter"},
	"vnode-type":                 {"REGULAR-FILE", "DIRECTORY", "SYMLINK", "CHARACTER-DEVICE"},
	"extension":                  {"string"},
	"target":                     {"same-sandbox"},
	"global-name":                {"string"},
	"global-name-prefix":         {"string"},
	"sysctl-name":                {"string"},
	"sysctl-name-prefix":         {"string"},
	"iokit-registry-entry-class": {"string"},
	"socket-domain":              {"AF_UNIX"},
	"remote":                     {"ip", "unix-socket"},
	"local":                      {"ip", "unix-socket"},
}

// checkProfile checks the structure of a parsed profile.
func checkProfile(forms []node, tag string) error {
	if len(forms) < 2 || forms[0].String() != "(version 1)" {
		return fmt.Errorf("the profile must start with (version 1)")
	}
	want := fmt.Sprintf(`(deny default (with message %q))`, MessagePrefix+tag)
	if forms[1].String() != want {
		return fmt.Errorf("second form is %s, want %s", forms[1], want)
	}
	for _, f := range forms[1:] {
		if err := checkRule(f); err != nil {
			return fmt.Errorf("line %d: %s: %w", f.line, f, err)
		}
	}
	return nil
}

func checkRule(f node) error {
	action := f.head()
	if action != "allow" && action != "deny" {
		return fmt.Errorf("unknown top-level form %q", action)
	}
	args := f.list[1:]
	nops := 0
	for nops < len(args) && !args[nops].isList {
		if args[nops].str != nil || !slices.Contains(knownOperations, args[nops].atom) {
			return fmt.Errorf("unknown operation %s", args[nops])
		}
		nops++
	}
	if nops == 0 {
		return fmt.Errorf("no operation")
	}
	filters := args[nops:]
	if action == "deny" {
		if len(filters) == 0 || filters[len(filters)-1].head() != "with" {
			return fmt.Errorf("a deny does not report the run's tag")
		}
		w := filters[len(filters)-1]
		if len(w.list) != 3 || w.list[1].atom != "message" || w.list[2].str == nil || !strings.HasPrefix(*w.list[2].str, MessagePrefix) {
			return fmt.Errorf("bad %s", w)
		}
		filters = filters[:len(filters)-1]
		if len(filters) == 0 && args[0].atom != "default" {
			return fmt.Errorf("a deny without a filter denies everything")
		}
	}
	for _, flt := range filters {
		if err := checkFilter(flt); err != nil {
			return err
		}
	}
	return nil
}

func checkFilter(f node) error {
	name := f.head()
	spec, ok := filterArgs[name]
	if !ok {
		return fmt.Errorf("unknown filter %s", f)
	}
	args := f.list[1:]
	if len(args) == 0 {
		return fmt.Errorf("filter %s without argument", f)
	}
	switch spec[0] {
	case "path":
		if len(args) != 1 || args[0].str == nil {
			return fmt.Errorf("%s: want one string", f)
		}
		if s := *args[0].str; !path.IsAbs(s) || path.Clean(s) != s {
			return fmt.Errorf("%s: not a clean absolute path", f)
		}
		return nil
	case "regex":
		if len(args) != 1 || args[0].str == nil {
			return fmt.Errorf("%s: want one string", f)
		}
		re := *args[0].str
		if !strings.HasPrefix(re, "^") || (!strings.HasSuffix(re, "$") && re != "^/") {
			return fmt.Errorf("%s: regex not anchored", f)
		}
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		return nil
	case "string":
		if len(args) != 1 || args[0].str == nil {
			return fmt.Errorf("%s: want one string", f)
		}
		return nil
	case "filter":
		for _, a := range args {
			if err := checkFilter(a); err != nil {
				return err
			}
		}
		return nil
	}
	if args[0].isList || args[0].str != nil || !slices.Contains(spec, args[0].atom) {
		return fmt.Errorf("%s: unknown argument %s", f, args[0])
	}
	switch name {
	case "remote", "local":
		if len(args) != 2 {
			return fmt.Errorf("%s: want a kind and an address", f)
		}
		if args[0].atom == "ip" {
			if args[1].str == nil || !regexp.MustCompile(`^(localhost|\*):([0-9]+|\*)$`).MatchString(*args[1].str) {
				return fmt.Errorf("%s: bad address", f)
			}
			return nil
		}
		return checkFilter(args[1])
	}
	if len(args) != 1 {
		return fmt.Errorf("%s: too many arguments", f)
	}
	return nil
}

func TestParseSBPLRejects(t *testing.T) {
	for _, src := range []string{
		`(version 1`,
		`(version 1))`,
		`(allow file-read* (literal "/a\n"))`,
		"(allow file-read* (literal \"/a\x01\"))",
		`(allow file-read* (literal "/a\q"))`,
		`(allow file-read* (literal "/a))`,
	} {
		if _, err := parseSBPL(src); err == nil {
			t.Errorf("parseSBPL(%q) accepted it", src)
		}
	}
}

func TestCheckProfileRejects(t *testing.T) {
	head := "(version 1)\n(deny default (with message \"cordon:t\"))\n"
	for name, body := range map[string]string{
		"unknown operation":   `(allow file-frobnicate)`,
		"unknown filter":      `(allow file-read* (prefix "/a"))`,
		"relative path":       `(allow file-read* (subpath "a/b"))`,
		"unclean path":        `(allow file-read* (subpath "/a/../b"))`,
		"unanchored regex":    `(allow file-read* (regex "/a"))`,
		"bad regex":           `(allow file-read* (regex "^/a($"))`,
		"deny without tag":    `(deny file-read* (subpath "/a"))`,
		"deny of everything":  `(deny file-read* (with message "cordon:t"))`,
		"bad address":         `(allow network-outbound (remote ip "example.com:443"))`,
		"operation as string": `(allow "file-read*")`,
	} {
		forms, err := parseSBPL(head + body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := checkProfile(forms, "t"); err == nil {
			t.Errorf("%s: checkProfile accepted %s", name, body)
		}
	}
}
