package darwin

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"cordon.dev/cordon/internal/paths"
)

// A pattern is an absolute path whose components are either names, taken
// as they are, or globs as policy reads them (gitignore's and doublestar's
// syntax): "*" and "?" within a component ("?" is one byte to Seatbelt),
// "[...]" classes of ASCII characters ("!" or "^" negates, ranges,
// "[:alpha:]"-style classes), "\" escaping the next character, and "**" as
// a whole component for any number of directories. Braces ("{a,b}") are
// expanded before a pattern is read (see expandBraces). Only globs are
// compiled to regexes.
type pattern struct {
	segs []segment
}

// segment is one component of a pattern.
type segment struct {
	text string
	glob bool // text is a glob, not a name
}

// literalPattern is the absolute, clean path p taken as a name.
func literalPattern(p string) pattern {
	var pt pattern
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if s != "" {
			pt.segs = append(pt.segs, segment{text: s})
		}
	}
	return pt
}

// globPattern reads the absolute pattern p (braces expanded). A component
// without an unescaped metacharacter is a name, its escapes removed. ok is
// false when every component is a name.
func globPattern(p string) (pt pattern, ok bool) {
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if s == "" || s == "." {
			continue
		}
		g := hasMeta(s)
		if !g {
			s = unescape(s)
		}
		if s == "**" && len(pt.segs) > 0 && pt.segs[len(pt.segs)-1] == (segment{"**", true}) {
			continue // "**/**" is "**"
		}
		pt.segs = append(pt.segs, segment{text: s, glob: g})
		ok = ok || g
	}
	return pt, ok
}

// hasMeta reports whether a component has an unescaped "*", "?" or "[".
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescape removes the backslashes that escape the next character.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// maxBraceExpansions bounds what one pattern's braces expand to.
const maxBraceExpansions = 64

// expandBraces returns the patterns "{a,b}" alternatives stand for, nested
// braces included: "/x/{a,b{c,d}}" is "/x/a", "/x/bc" and "/x/bd". A brace
// without a matching close, or an escaped one, is itself.
func expandBraces(p string) ([]string, error) {
	open, close, commas := -1, -1, []int(nil)
	depth := 0
scan:
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			if depth--; depth == 0 {
				close = i
				break scan
			}
		}
	}
	if close < 0 {
		return []string{p}, nil
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		rest, err := expandBraces(p[:open] + p[start:end] + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxBraceExpansions {
			return nil, fmt.Errorf("%w: %s: braces expand to more than %d patterns", ErrInvalid, p, maxBraceExpansions)
		}
		start = end + 1
	}
	return out, nil
}

// literal returns the path of a pattern without globs.
func (pt pattern) literal() (string, bool) {
	var b strings.Builder
	for _, s := range pt.segs {
		if s.glob {
			return "", false
		}
		b.WriteString("/" + s.text)
	}
	if b.Len() == 0 {
		return "/", true
	}
	return b.String(), true
}

// key identifies a pattern: two patterns with the same key match the same
// paths (String does not tell a name "*" from a glob "*").
func (pt pattern) key() string { return fmt.Sprint(pt.segs) }

// String returns the pattern as written.
func (pt pattern) String() string {
	var b strings.Builder
	for _, s := range pt.segs {
		b.WriteString("/" + s.text)
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// join returns the pattern for rel below pt.
func (pt pattern) join(rel pattern) pattern {
	return pattern{segs: append(append([]segment(nil), pt.segs...), rel.segs...)}
}

// static returns the number of leading components that are names.
func (pt pattern) static() int {
	for i, s := range pt.segs {
		if s.glob {
			return i
		}
	}
	return len(pt.segs)
}

// staticPath is the path of pt's leading names, up to its first glob.
func (pt pattern) staticPath() string { return pattern{segs: pt.segs[:pt.static()]}.String() }

// rebase replaces the first n components (names) of pt by the path dir.
func (pt pattern) rebase(n int, dir string) pattern {
	return literalPattern(dir).join(pattern{segs: pt.segs[n:]})
}

// ancestors returns the directories that lead to pt, nearest first, not
// counting "/": every proper prefix, as long as it contains no "**" (the
// directories a "**" stands for are any directories at all).
func (pt pattern) ancestors() []pattern {
	var out []pattern
	for n := len(pt.segs) - 1; n > 0; n-- {
		out = append(out, pattern{segs: pt.segs[:n]})
	}
	for i, s := range pt.segs {
		if s.glob && s.text == "**" {
			// keep only the prefixes shorter than i+1 components
			var kept []pattern
			for _, a := range out {
				if len(a.segs) <= i {
					kept = append(kept, a)
				}
			}
			return kept
		}
	}
	return out
}

// regex compiles pt to an anchored POSIX extended regular expression.
// subtree also matches everything below what pt matches, as subpath does
// for a name.
func (pt pattern) regex(subtree bool) (string, error) { return pt.compile(subtree, len(pt.segs)) }

// foldedRegex is regex matching every ASCII letter in either case, names
// and globs alike: "/.git/hooks" also matches "/.GIT/Hooks". A deny must be
// written so on a case-insensitive volume (APFS's default), where both name
// the same file and Seatbelt compares the path it is given byte for byte.
// Other letters (é, ß) are matched as written.
//
// A path on the data volume is also matched through the volume's own
// mount point, /System/Volumes/Data: /Users/u/.ssh is
// /System/Volumes/Data/Users/u/.ssh too. Whether Seatbelt is ever given
// that spelling (the kernel builds paths through the firmlinks by
// default) is not known here; a deny that matches both costs nothing.
//
// Folding makes a regex up to four times as long as its path, and a
// string in a profile holds at most maxString bytes: when the regex would
// not fit in budget, the leading components are left as they are, one by
// one (the directories nearest "/", which the command's own working
// directory keeps spelled as they are), rather than the profile refused.
func (pt pattern) foldedRegex(subtree bool) (string, error) {
	return pt.foldedWithin(subtree, maxString)
}

// foldedWithin is foldedRegex for a regex that must fit in budget bytes
// once quoted.
func (pt pattern) foldedWithin(subtree bool, budget int) (string, error) {
	var re string
	for from := 0; from <= len(pt.segs); from++ {
		var err error
		if re, err = pt.compile(subtree, from); err != nil {
			return "", err
		}
		if pt.onDataVolume() {
			re = "^(" + quoteName(dataVolume, true) + ")?" + strings.TrimPrefix(re, "^")
		}
		if quotedLen(re) <= budget {
			break
		}
	}
	return re, nil
}

// quotedLen is the length of s once quoted (see quote).
func quotedLen(s string) int {
	return len(s) + strings.Count(s, `\`) + strings.Count(s, `"`) + 2
}

// dataVolume is where macOS mounts the data volume, whose top directories
// the system volume's firmlinks (/usr/share/firmlinks) show at "/".
const dataVolume = "/System/Volumes/Data"

// firmlinked are the firmlinks of the system volume into the data volume.
var firmlinked = []string{"/Users", "/Applications", "/Library", "/Volumes", "/opt", "/private", "/cores", "/usr/local", "/AppleInternal"}

// onDataVolume reports whether pt's static part lies below a firmlink.
func (pt pattern) onDataVolume() bool {
	static := pt.staticPath()
	for _, f := range firmlinked {
		if paths.Under(static, f) {
			return true
		}
	}
	return false
}

// compile writes the regex of pt, its components from foldFrom on
// matching either case.
func (pt pattern) compile(subtree bool, foldFrom int) (string, error) {
	var b strings.Builder
	b.WriteString("^")
	for i, s := range pt.segs {
		switch {
		case s.glob && s.text == "**" && i == len(pt.segs)-1:
			b.WriteString("/.+")
		case s.glob && s.text == "**":
			b.WriteString("(/.*)?")
		case s.glob:
			re, err := segmentRegex(s.text, i >= foldFrom)
			if err != nil {
				return "", fmt.Errorf("%w: glob %s: %v", ErrInvalid, pt, err)
			}
			b.WriteString("/" + re)
		default:
			b.WriteString("/" + quoteName(s.text, i >= foldFrom))
		}
	}
	if len(pt.segs) == 0 {
		b.WriteString("/")
	}
	if subtree {
		b.WriteString("(/.*)?")
	}
	b.WriteString("$")
	return b.String(), nil
}

// regexSpecial are the characters quoteMeta escapes: every character with
// a meaning in a POSIX extended regular expression (and in Go's syntax,
// which the tests compile with).
const regexSpecial = `\.+*?()|[]{}^$`

// quoteMeta escapes s for a regular expression.
func quoteMeta(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(regexSpecial, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quoteName escapes s for a regular expression and, with fold, matches
// each ASCII letter in either case.
func quoteName(s string, fold bool) string {
	if !fold {
		return quoteMeta(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isLower(c):
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
		case isUpper(c):
			b.WriteString("[" + string(c) + string(c-'A'+'a') + "]")
		default:
			b.WriteString(quoteMeta(s[i : i+1]))
		}
	}
	return b.String()
}

// segmentRegex compiles one glob component; the result never matches "/".
// fold matches each ASCII letter in either case.
func segmentRegex(s string, fold bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '*':
			for i < len(s) && s[i] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
			i++
		case '\\':
			if i+1 == len(s) {
				b.WriteString(`\\`) // a trailing backslash is itself
				i++
				continue
			}
			_, n := utf8.DecodeRuneInString(s[i+1:])
			b.WriteString(quoteName(s[i+1:i+1+n], fold))
			i += 1 + n
		case '[':
			end := classEnd(s[i:])
			if end < 0 {
				b.WriteString(`\[`) // an unclosed "[" is itself
				i++
				continue
			}
			re, err := classRegex(s[i:i+end+1], fold)
			if err != nil {
				return "", err
			}
			b.WriteString(re)
			i += end + 1
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(quoteName(s[i:i+n], fold))
			i += n
		}
	}
	return b.String(), nil
}

// classEnd returns the index of the "]" that closes the class opening s,
// or -1: a "]" first (after "!" or "^") is a member, "\" escapes, and
// "[:name:]" is one member.
func classEnd(s string) int {
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		i++
	}
	for first := true; i < len(s); first = false {
		switch {
		case s[i] == ']' && !first:
			return i
		case s[i] == '\\':
			i += 2
		case strings.HasPrefix(s[i:], "[:"):
			if j := strings.Index(s[i+2:], ":]"); j >= 0 {
				i += j + 4
			} else {
				i++
			}
		default:
			i++
		}
	}
	return -1
}

// posixClasses are the named classes a bracket expression may hold.
var posixClasses = map[string]func(byte) bool{
	"alnum":  func(c byte) bool { return isDigit(c) || isLower(c) || isUpper(c) },
	"alpha":  func(c byte) bool { return isLower(c) || isUpper(c) },
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"digit":  isDigit,
	"lower":  isLower,
	"upper":  isUpper,
	"xdigit": func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' },
	"space":  func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"punct":  func(c byte) bool { return c > ' ' && c < 0x7f && !isDigit(c) && !isLower(c) && !isUpper(c) },
	"graph":  func(c byte) bool { return c > ' ' && c < 0x7f },
	"print":  func(c byte) bool { return c >= ' ' && c < 0x7f },
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// classRegex compiles a closed bracket expression ("[...]") to a bracket
// expression that means the same in POSIX and in Go and never matches "/";
// fold adds the other case of each ASCII letter (a negated class then
// leaves out both).
func classRegex(s string, fold bool) (string, error) {
	body := s[1 : len(s)-1]
	neg := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		neg, body = true, body[1:]
	}
	var set [128]bool
	member := func(i int) (byte, int, error) {
		c, n := body[i], 1
		if c == '\\' && i+1 < len(body) {
			c, n = body[i+1], 2
		}
		if c >= utf8.RuneSelf {
			return 0, 0, fmt.Errorf("character class %s: only ASCII characters are supported", s)
		}
		return c, n, nil
	}
	for i := 0; i < len(body); {
		if strings.HasPrefix(body[i:], "[:") {
			if j := strings.Index(body[i+2:], ":]"); j >= 0 {
				name := body[i+2 : i+2+j]
				in, ok := posixClasses[name]
				if !ok {
					return "", fmt.Errorf("character class %s: unknown class [:%s:]", s, name)
				}
				for c := range byte(0x80) {
					set[c] = set[c] || in(c)
				}
				i += j + 4
				continue
			}
		}
		lo, n, err := member(i)
		if err != nil {
			return "", err
		}
		i += n
		hi := lo
		if i+1 < len(body) && body[i] == '-' {
			if hi, n, err = member(i + 1); err != nil {
				return "", err
			}
			i += 1 + n
		}
		for c := int(lo); c <= int(hi); c++ { // an empty range adds nothing
			set[c] = true
		}
	}
	if fold {
		for c := byte('a'); c <= 'z'; c++ {
			up := c - 'a' + 'A'
			set[c], set[up] = set[c] || set[up], set[c] || set[up]
		}
	}
	for c := range byte(0x20) {
		set[c] = false // no control characters in paths
	}
	set[0x7f] = false
	set['/'] = neg // a class never matches "/"
	if set['\\'] {
		return "", fmt.Errorf("character class %s: a backslash cannot be expressed in a class", s)
	}
	var members []byte
	for c := range byte(0x80) {
		if set[c] {
			members = append(members, c)
		}
	}
	switch {
	case !neg && len(members) == 0:
		return "", fmt.Errorf("character class %s matches nothing", s)
	case !neg && len(members) == 1:
		return quoteMeta(string(members[0])), nil
	}
	return renderClass(set, neg), nil
}

// renderClass writes a bracket expression for set: "]" first, "-" last,
// "[" only where "[." "[=" "[:" cannot form, "^" never first.
func renderClass(set [128]bool, neg bool) string {
	var b strings.Builder
	b.WriteString("[")
	if neg {
		b.WriteString("^")
	}
	if set[']'] {
		b.WriteString("]")
	}
	kind := func(c byte) int {
		switch {
		case isDigit(c):
			return 1
		case isLower(c):
			return 2
		case isUpper(c):
			return 3
		}
		return 0
	}
	normal := func(c byte) bool { return set[c] && !strings.ContainsRune("]^[-", rune(c)) }
	wrote := false
	for c := 0; c < 0x80; c++ {
		if !normal(byte(c)) {
			continue
		}
		end := c
		for end+1 < 0x80 && normal(byte(end+1)) && kind(byte(end+1)) != 0 && kind(byte(end+1)) == kind(byte(c)) {
			end++
		}
		if kind(byte(c)) != 0 && end-c >= 2 {
			b.WriteString(string(rune(c)) + "-" + string(rune(end)))
			c = end
		} else {
			b.WriteByte(byte(c))
		}
		wrote = true
	}
	caretFirst := !neg && !set[']'] && !wrote
	if set['^'] && !caretFirst {
		b.WriteString("^")
	}
	if set['['] {
		b.WriteString("[")
	}
	if set['^'] && caretFirst {
		if set['['] {
			b.WriteString("^") // "[[^" : "[" first, so "^" is a member
		} else {
			b.WriteString("-^")
			return b.String() + "]"
		}
	}
	if set['-'] {
		b.WriteString("-")
	}
	return b.String() + "]"
}
