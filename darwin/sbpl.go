package darwin

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxString is the longest string literal put in a profile: sandbox-exec
// refuses literals longer than about 1 KiB ("Error reading string"), which
// would refuse the whole profile.
const maxString = 1024

// quote returns s as an SBPL string literal: in double quotes, with '"'
// and '\' escaped. Control characters, invalid UTF-8 and over-long strings
// are refused rather than encoded: Seatbelt's reader has no escape for them
// that is known to be safe.
func quote(s string) (string, error) {
	if len(s) > maxString {
		return "", fmt.Errorf("%w: %.40q...: longer than the %d bytes a Seatbelt string may hold", ErrInvalid, s, maxString)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalid, s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return "", fmt.Errorf("%w: %q holds a control character", ErrInvalid, s)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// builder writes a profile. The first error sticks and later writes are
// dropped, so that the sections read as straight lines of rules.
type builder struct {
	b       strings.Builder
	err     error
	message string // the quoted tag every deny reports
}

func (b *builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// q quotes s for a filter or comment.
func (b *builder) q(s string) string {
	out, err := quote(s)
	if err != nil {
		b.fail(err)
	}
	return out
}

// line writes one line as it is.
func (b *builder) line(s string) { b.b.WriteString(s + "\n") }

// comment writes a comment block, one "; " line per line of text.
func (b *builder) comment(text string) {
	b.line("")
	for _, l := range strings.Split(text, "\n") {
		b.line(strings.TrimRight("; "+l, " "))
	}
}

// filter returns "(name "arg")" with arg quoted.
func (b *builder) filter(name, arg string) string { return "(" + name + " " + b.q(arg) + ")" }

// all is "(require-all ...)", over several lines when it is long.
func all(filters ...string) string {
	one := "(require-all " + strings.Join(filters, " ") + ")"
	if len(one) <= 90 {
		return one
	}
	return "(require-all " + strings.Join(filters, "\n        ") + ")"
}

// unfiltered writes a rule that applies to every object of its operations.
func (b *builder) unfiltered(action string, ops ...string) {
	b.line("(" + action + " " + strings.Join(ops, " ") + ")")
}

// rule writes "(action ops filters...)" after its comment, if any: one
// line when it is short, otherwise one filter per line. A deny reports the
// run's tag. A rule with no filters is not written at all, comment
// included: without a filter it would match everything.
func (b *builder) rule(comment, action string, ops []string, filters []string) {
	filters = unique(filters)
	if len(filters) == 0 {
		return
	}
	if comment != "" {
		b.comment(comment)
	}
	if action == "deny" {
		filters = append(filters, "(with message "+b.message+")")
	}
	head := "(" + action + " " + strings.Join(ops, " ")
	if one := head + " " + strings.Join(filters, " ") + ")"; len(filters) <= 2 && len(one) <= 100 && !strings.Contains(one, "\n") {
		b.line(one)
		return
	}
	b.line(head)
	for i, f := range filters {
		if i == len(filters)-1 {
			f += ")"
		}
		b.line("    " + f)
	}
}

// unique drops repeated strings, keeping the first.
func unique(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
