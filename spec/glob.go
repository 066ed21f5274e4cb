package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"cordon.dev/cordon/policy"
)

// MaxGlobEntries bounds the walk that expands one glob: a pattern that
// would make every run read a whole disk is refused rather than half
// enforced. A workspace is walked whole, node_modules and all: a monorepo
// of a million files costs its runs about a second (the walk reads 250,000
// entries in 0.2 s with a warm cache), which a narrower pattern avoids.
const MaxGlobEntries = 2_000_000

// errTooBroad is wrapped when a glob covers too much to expand.
var errTooBroad = errors.New("covers too many files to enforce")

// expandPattern returns the paths on the host that match a policy pattern
// (see policy.IsGlob): the path itself for a plain one, whether it exists
// or not, and every existing match for a glob.
func expandPattern(fsys fs.FS, pattern string) ([]string, error) {
	if !policy.IsGlob(pattern) {
		return []string{policy.UnescapePattern(pattern)}, nil
	}
	base := policy.PatternBase(pattern)
	var matches []string
	seen := 0
	err := fs.WalkDir(fsys, fsName(base), func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			// An unreadable or vanished directory has no matches we could
			// see; the file system view of the sandbox is the same.
			if d != nil && d.IsDir() && name != fsName(base) {
				return fs.SkipDir
			}
			return nil
		}
		seen++
		if seen > MaxGlobEntries {
			return fmt.Errorf("%w (more than %d entries below %s): name a narrower directory", errTooBroad, MaxGlobEntries, base)
		}
		p := "/" + name
		if name == "." {
			p = "/"
		}
		if policy.MatchPattern(pattern, p) {
			matches = append(matches, p)
		}
		if d.IsDir() && !couldMatchBelow(pattern, p) {
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: glob %s: %w", ErrInvalid, pattern, err)
	}
	return matches, nil
}

// couldMatchBelow reports whether anything below dir could match the
// pattern: false when dir already departs from the pattern's fixed
// elements, so that the walk need not enter it.
func couldMatchBelow(pattern, dir string) bool {
	pe := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	de := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if dir == "/" {
		return true
	}
	for i, d := range de {
		if i >= len(pe) {
			return false
		}
		if pe[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pe[i], d); !ok && !strings.ContainsAny(pe[i], "{") {
			return false
		}
	}
	return true
}

// fsName turns an absolute path into a name for fs.FS.
func fsName(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}
