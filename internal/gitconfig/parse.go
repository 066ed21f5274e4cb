package gitconfig

import (
	"errors"
	"fmt"
	"strings"
)

// Var is one variable of a config file as git itself reads it.
type Var struct {
	// Name is the variable's full name as git spells it: the section and
	// the key lowercased, a quoted subsection as written
	// ("remote.Origin.url"), a subsection of the old [section.sub] form
	// lowercased.
	Name string
	// Value is the value as git hands it to its users; NoValue says the
	// line had no "=" (a boolean true).
	Value   string
	NoValue bool
}

// Section, Subsection and Key split Name as git does: the section is
// before the first dot, the key after the last, the subsection between
// (which may hold dots).
func (v Var) Section() string {
	s, _, _ := strings.Cut(v.Name, ".")
	return s
}

// Subsection is the part of Name between the section and the key; "".
func (v Var) Subsection() string {
	i, j := strings.IndexByte(v.Name, '.'), strings.LastIndexByte(v.Name, '.')
	if i < 0 || i == j {
		return ""
	}
	return v.Name[i+1 : j]
}

// Key is the part of Name after its last dot.
func (v Var) Key() string {
	return v.Name[strings.LastIndexByte(v.Name, '.')+1:]
}

// ErrSyntax is the error of a config file Parse does not read exactly as
// git would.
var ErrSyntax = errors.New("not a git config file cordon can read exactly as git does")

// Parse reads a config file as git's own parser does (config.c), strictly:
// what git would refuse, and what git might read otherwise than Parse
// would (a NUL byte, which ends a value early in git's C strings, a
// control character, a lone carriage return), is an error. A caller that
// decides on the variables therefore decides on exactly what git will
// use. Includes are not followed: they are variables like any other.
func Parse(data []byte) ([]Var, error) {
	p := &parser{data: data}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.pos = 3 // git skips a UTF-8 byte order mark
	}
	for i, c := range data {
		if c == 0 || c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f ||
			c == '\r' && (i+1 >= len(data) || data[i+1] != '\n') {
			return nil, fmt.Errorf("%w: control character 0x%02x at byte %d", ErrSyntax, c, i)
		}
	}
	var out []Var
	section := ""
	for {
		c, eof := p.next()
		if eof {
			return out, nil
		}
		switch {
		case c == '\n' || c == ' ' || c == '\t':
			continue
		case c == '#' || c == ';':
			for c != '\n' {
				if c, eof = p.next(); eof {
					return out, nil
				}
			}
			continue
		case c == '[':
			s, err := p.header()
			if err != nil {
				return nil, p.errorf("%v", err)
			}
			section = s
			continue
		case !isAlpha(c):
			return nil, p.errorf("unexpected %q", c)
		}
		if section == "" {
			return nil, p.errorf("a variable outside any section")
		}
		v, err := p.variable(c)
		if err != nil {
			return nil, p.errorf("%v", err)
		}
		v.Name = section + "." + v.Name
		out = append(out, v)
	}
}

type parser struct {
	data []byte
	pos  int
	line int
}

// next is git's get_next_char: "\r\n" reads as "\n"; at the end it
// reads "\n" with eof set only once nothing is left.
func (p *parser) next() (byte, bool) {
	if p.pos >= len(p.data) {
		return '\n', true
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c, false
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, p.line+1, fmt.Sprintf(format, args...))
}

// header reads a section header after its "[": git's get_base_var and
// get_extended_base_var.
func (p *parser) header() (string, error) {
	var name strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof || c == '\n':
			return "", errors.New("an unfinished section header")
		case c == ']':
			return checkSection(name.String())
		case c == ' ' || c == '\t':
			base, err := checkSection(name.String())
			if err != nil {
				return "", err
			}
			return p.subsection(base)
		case !isKeyChar(c) && c != '.':
			return "", fmt.Errorf("%q in a section name", c)
		}
		name.WriteByte(lower(c))
	}
}

// checkSection refuses a section name git would read as a name with an
// empty part.
func checkSection(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return "", fmt.Errorf("the section name %q", name)
	}
	return name, nil
}

// subsection reads the quoted subsection of the section base.
func (p *parser) subsection(base string) (string, error) {
	c := byte(' ')
	for c == ' ' || c == '\t' {
		var eof bool
		if c, eof = p.next(); eof || c == '\n' {
			return "", errors.New("an unfinished section header")
		}
	}
	if c != '"' {
		return "", errors.New(`a subsection not in double quotes`)
	}
	var sub strings.Builder
	for {
		c, eof := p.next()
		if eof || c == '\n' {
			return "", errors.New("an unfinished subsection")
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, eof = p.next(); eof || c == '\n' {
				return "", errors.New("an unfinished subsection")
			}
		}
		sub.WriteByte(c)
	}
	if c, _ := p.next(); c != ']' {
		return "", errors.New(`no "]" after a subsection`)
	}
	return base + "." + sub.String(), nil
}

// variable reads a "key = value" line whose first character is first:
// git's get_value and parse_value.
func (p *parser) variable(first byte) (Var, error) {
	var name strings.Builder
	name.WriteByte(lower(first))
	c, eof := p.next()
	for !eof && isKeyChar(c) {
		name.WriteByte(lower(c))
		c, eof = p.next()
	}
	for c == ' ' || c == '\t' {
		c, eof = p.next()
	}
	v := Var{Name: name.String()}
	if c == '\n' || eof {
		v.NoValue = true
		return v, nil
	}
	if c == '#' || c == ';' {
		// git reads "key # comment" as an error ("bad config line").
		return v, errors.New("a comment after a key without a value")
	}
	if c != '=' {
		return v, fmt.Errorf("%q after the key %s", c, v.Name)
	}
	var value strings.Builder
	quoted, comment := false, false
	trim := -1 // where trailing white space began
	for {
		c, eof := p.next()
		if c == '\n' {
			if quoted {
				return v, errors.New("an unfinished quoted value")
			}
			s := value.String()
			if trim >= 0 {
				s = s[:trim]
			}
			v.Value = s
			return v, nil
		}
		if eof {
			continue // (next reads "\n")
		}
		if comment {
			continue
		}
		if (c == ' ' || c == '\t') && !quoted {
			if trim < 0 {
				trim = value.Len()
			}
			if value.Len() > 0 {
				value.WriteByte(c)
			}
			continue
		}
		if !quoted && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = -1
		switch c {
		case '\\':
			e, _ := p.next()
			switch e {
			case '\n':
				continue
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case 'n':
				e = '\n'
			case '\\', '"':
			default:
				return v, fmt.Errorf("an unknown escape \\%c", e)
			}
			value.WriteByte(e)
		case '"':
			quoted = !quoted
		default:
			value.WriteByte(c)
		}
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
