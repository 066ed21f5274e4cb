package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Pos is a position in a settings file, 1-based.
type Pos struct {
	Line, Col int
}

// kind is the JSON type of a node.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// node is a parsed JSON value with the position of its first character,
// and the byte offsets of its text: data[off:end].
type node struct {
	kind     kind
	pos      Pos
	off, end int
	boolean  bool
	text     string // string value, or the number as written
	items    []*node
	members  []member
}

type member struct {
	key    string
	keyPos Pos
	keyOff int // the byte offset of the key's opening quote
	value  *node
}

// syntaxError is a JSON error at a position.
type syntaxError struct {
	pos Pos
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.pos.Line, e.pos.Col, e.msg) }

// maxDepth bounds nesting: settings are shallow, and a deep document must
// not exhaust the stack.
const maxDepth = 64

// parseJSON parses one JSON document strictly: no comments, no trailing
// commas, no duplicate keys (a duplicate key in a security policy is a
// mistake or an attack, never intended).
func parseJSON(data []byte) (*node, error) {
	p := &jsonParser{data: data, line: 1, col: 1}
	if len(data) >= 3 && string(data[:3]) == "\xef\xbb\xbf" {
		p.off = 3
	}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.off < len(p.data) {
		return nil, p.errorf("unexpected %s after the document", p.describe())
	}
	return n, nil
}

type jsonParser struct {
	data      []byte
	off       int
	line, col int
}

func (p *jsonParser) pos() Pos { return Pos{p.line, p.col} }

func (p *jsonParser) errorf(format string, args ...any) error {
	return &syntaxError{p.pos(), fmt.Sprintf(format, args...)}
}

func (p *jsonParser) describe() string {
	if p.off >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.off:])
	return strconv.QuoteRune(r)
}

// advance moves over n bytes, keeping line and column (in characters).
func (p *jsonParser) advance(n int) {
	for i := 0; i < n && p.off < len(p.data); {
		r, size := utf8.DecodeRune(p.data[p.off:])
		p.off += size
		i += size
		if r == '\n' {
			p.line++
			p.col = 1
		} else {
			p.col++
		}
	}
}

// expected is the error of an unexpected character where want was
// expected; a comment gets its own message (settings are strict JSON).
func (p *jsonParser) expected(want string) error {
	if p.off < len(p.data) && p.data[p.off] == '/' {
		return p.errorf("comments are not allowed in JSON")
	}
	return p.errorf("unexpected %s, expected %s", p.describe(), want)
}

func (p *jsonParser) space() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.advance(1)
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (*node, error) {
	off := p.off
	n, err := p.scalarOrNested(depth)
	if err != nil {
		return nil, err
	}
	n.off, n.end = off, p.off
	return n, nil
}

func (p *jsonParser) scalarOrNested(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	if p.off >= len(p.data) {
		return nil, p.errorf("unexpected end of file, expected a value")
	}
	start := p.pos()
	switch c := p.data[p.off]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &node{kind: kindString, pos: start, text: s}, nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.data[p.off:]), lit) {
				p.advance(len(lit))
				n := &node{kind: kindBool, pos: start, boolean: lit == "true"}
				if lit == "null" {
					n.kind = kindNull
				}
				return n, nil
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == '/':
		return nil, p.errorf("comments are not allowed in JSON")
	}
	return nil, p.errorf("unexpected %s, expected a value", p.describe())
}

func (p *jsonParser) object(depth int) (*node, error) {
	n := &node{kind: kindObject, pos: p.pos()}
	p.advance(1)
	p.space()
	if p.off < len(p.data) && p.data[p.off] == '}' {
		p.advance(1)
		return n, nil
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != '"' {
			if p.off < len(p.data) && p.data[p.off] == '}' {
				return nil, p.errorf("trailing comma before '}'")
			}
			return nil, p.expected("a key in quotes")
		}
		keyPos, keyOff := p.pos(), p.off
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, &syntaxError{keyPos, fmt.Sprintf("duplicate key %q", key)}
		}
		seen[key] = true
		p.space()
		if p.off >= len(p.data) || p.data[p.off] != ':' {
			return nil, p.errorf("unexpected %s, expected ':' after key %q", p.describe(), key)
		}
		p.advance(1)
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, member{key: key, keyPos: keyPos, keyOff: keyOff, value: v})
		p.space()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.advance(1)
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == '}' {
			p.advance(1)
			return n, nil
		}
		return nil, p.expected("',' or '}'")
	}
}

func (p *jsonParser) array(depth int) (*node, error) {
	n := &node{kind: kindArray, pos: p.pos()}
	p.advance(1)
	p.space()
	if p.off < len(p.data) && p.data[p.off] == ']' {
		p.advance(1)
		return n, nil
	}
	for {
		p.space()
		if p.off < len(p.data) && p.data[p.off] == ']' {
			return nil, p.errorf("trailing comma before ']'")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
		p.space()
		if p.off < len(p.data) && p.data[p.off] == ',' {
			p.advance(1)
			continue
		}
		if p.off < len(p.data) && p.data[p.off] == ']' {
			p.advance(1)
			return n, nil
		}
		return nil, p.expected("',' or ']'")
	}
}

func (p *jsonParser) number() (*node, error) {
	n := &node{kind: kindNumber, pos: p.pos()}
	start := p.off
	end := start
	for end < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[end]) >= 0 {
		end++
	}
	text := string(p.data[start:end])
	if !validNumber(text) {
		return nil, p.errorf("invalid number %q", text)
	}
	n.text = text
	p.advance(end - start)
	return n, nil
}

// validNumber checks JSON's number grammar (ParseFloat is more lenient:
// it takes "+1", "01", ".5" and "1.").
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

func (p *jsonParser) str() (string, error) {
	p.advance(1) // the opening quote
	var b strings.Builder
	for {
		if p.off >= len(p.data) {
			return "", p.errorf("unterminated string")
		}
		c := p.data[p.off]
		switch {
		case c == '"':
			p.advance(1)
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character %q in a string", rune(c))
		case c == '\\':
			if p.off+1 >= len(p.data) {
				return "", p.errorf("unterminated string")
			}
			esc := p.data[p.off+1]
			if r, ok := map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[esc]; ok {
				b.WriteRune(r)
				p.advance(2)
				continue
			}
			if esc != 'u' {
				return "", p.errorf("invalid escape \\%c", esc)
			}
			r, n, err := p.unicodeEscape(p.off)
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			p.advance(n)
		default:
			r, size := utf8.DecodeRune(p.data[p.off:])
			if r == utf8.RuneError && size == 1 {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			b.WriteRune(r)
			p.advance(size)
		}
	}
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at off and
// returns the rune and how many bytes it took.
func (p *jsonParser) unicodeEscape(off int) (rune, int, error) {
	hex := func(at int) (rune, bool) {
		if at+6 > len(p.data) || p.data[at] != '\\' || p.data[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(p.data[at+2:at+6]), 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex(off)
	if !ok {
		return 0, 0, p.errorf("invalid \\u escape")
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex(off + 6); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, nil
			}
		}
		return utf8.RuneError, 6, nil
	}
	return r, 6, nil
}
