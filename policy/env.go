package policy

import (
	"path"
	"strings"
)

// Filter returns the variables of environ (NAME=value) that may be passed
// into the sandbox, followed by the variables of Set. A name is dropped when
// it matches a Deny pattern and no Allow pattern; matching is
// case-insensitive and "*" matches any run of characters.
func (e Env) Filter(environ []string) []string {
	out := make([]string, 0, len(environ)+len(e.Set))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, replaced := e.Set[name]; replaced {
			continue
		}
		if e.Denies(name) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range sortedKeys(e.Set) {
		out = append(out, k+"="+e.Set[k])
	}
	return out
}

// Denies reports whether the variable name is kept out of the sandbox.
func (e Env) Denies(name string) bool {
	return matchAny(e.Deny, name) && !matchAny(e.Allow, name)
}

func matchAny(patterns []string, name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range patterns {
		if matchName(strings.ToUpper(p), upper) {
			return true
		}
	}
	return false
}

// matchName is path.Match(pattern, name) without its cost for the
// patterns the settings hold — NAME, *SUFFIX, PREFIX*, *PART* — which every run
// checks every variable against.
func matchName(pattern, name string) bool {
	// path.Match's * stops at a slash.
	if pattern != "" && strings.IndexByte(name, '/') < 0 {
		switch n := len(pattern); {
		case !hasMeta(pattern):
			return pattern == name
		case pattern[0] == '*' && !hasMeta(pattern[1:]):
			return strings.HasSuffix(name, pattern[1:])
		case pattern[n-1] == '*' && !hasMeta(pattern[:n-1]):
			return strings.HasPrefix(name, pattern[:n-1])
		case n >= 2 && pattern[0] == '*' && pattern[n-1] == '*' && !hasMeta(pattern[1:n-1]):
			return strings.Contains(name, pattern[1:n-1])
		}
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// hasMeta reports whether s holds one of path.Match's special bytes.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}
