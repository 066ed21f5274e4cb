package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// The file system lists of a Policy hold path patterns: absolute paths in
// which `*` matches within one path element, `**` (a whole element) any
// number of elements, `?` one character, `[...]` a class and `{a,b}` either
// word, as gitignore and bmatcuk/doublestar read them; a backslash makes the
// next character literal. A path with none of these is itself.

const patternMeta = `*?[]{}\`

// IsGlob reports whether the pattern has an unescaped metacharacter.
func IsGlob(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

// EscapePattern turns a literal path into a pattern that matches exactly it.
func EscapePattern(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(patternMeta, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// UnescapePattern returns the path a pattern without metacharacters names.
func UnescapePattern(pattern string) string {
	if !strings.Contains(pattern, `\`) {
		return pattern
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '\\' && i+1 < len(pattern) {
			i++
		}
		b.WriteByte(pattern[i])
	}
	return b.String()
}

// ValidatePattern checks that a pattern is absolute and well formed, and
// that it can match something: a deny rule that matches nothing fails open.
func ValidatePattern(pattern string) error {
	if !strings.HasPrefix(pattern, "/") {
		return fmt.Errorf("%q is not an absolute path", pattern)
	}
	if !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("%q is not a valid pattern (unbalanced [ ] or { }, or a trailing \\)", pattern)
	}
	for _, elem := range strings.Split(pattern, "/") {
		if strings.Contains(elem, "**") && elem != "**" {
			return fmt.Errorf("%q: ** must be a whole path element (as in a/**/b)", pattern)
		}
		if strings.Contains(elem, "[]") || strings.Contains(elem, "[!]") || strings.Contains(elem, "[^]") {
			return fmt.Errorf("%q has an empty character class and can match nothing", pattern)
		}
	}
	return nil
}

// MatchPattern reports whether the path matches the pattern.
func MatchPattern(pattern, p string) bool {
	ok, err := doublestar.Match(pattern, p)
	return err == nil && ok
}

// PatternBase returns the longest directory of a pattern that has no
// metacharacter: the place to start looking for its matches.
func PatternBase(pattern string) string {
	elems := strings.Split(pattern, "/")
	base := "/"
	for _, e := range elems[:len(elems)-1] {
		if IsGlob(e) {
			break
		}
		base = path.Join(base, UnescapePattern(e))
	}
	if !IsGlob(pattern) {
		return path.Dir(UnescapePattern(pattern))
	}
	return base
}
