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
		if ok, err := path.Match(strings.ToUpper(p), upper); err == nil && ok {
			return true
		}
	}
	return false
}
