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
// patterns the settings hold — NAME, *SUFFIX, PREFIX* — which every run
// checks every variable against.
func matchName(pattern, name string) bool {
	const meta = `*?[\`
	// path.Match's * stops at a slash.
	if pattern != "" && !strings.Contains(name, "/") {
		switch n := len(pattern); {
		case !strings.ContainsAny(pattern, meta):
			return pattern == name
		case pattern[0] == '*' && !strings.ContainsAny(pattern[1:], meta):
			return strings.HasSuffix(name, pattern[1:])
		case pattern[n-1] == '*' && !strings.ContainsAny(pattern[:n-1], meta):
			return strings.HasPrefix(name, pattern[:n-1])
		}
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
