package spec

import (
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy"
)

// AnnotationGuard is a JSON Guard: what the runtime's seccomp supervisor
// refuses to let the sandbox make below its writable roots, at the system
// call (see seccomp.Options.Guard).
const AnnotationGuard = "dev.cordon.guard"

// Guard names what no process of the sandbox may create below the writable
// roots — by open(2) with O_CREAT, mkdir, mknod, link, symlink or rename
// into — nor open for writing, link or rename away where it exists: the
// protected names at any depth, the denied paths, and a new git
// repository. The mounts protect what existed when the sandbox was made;
// the guard holds for what does not exist yet, however deep, when it is
// made. Every path is as the sandbox sees it, which for the writable roots
// is as the host does (each is bound at its own path).
type Guard struct {
	// Roots are the writable roots.
	Roots []string `json:"roots"`
	// Protected are paths relative to each root (policy's
	// ProtectedInWritable and git's redirects), protected with what is
	// below them; an element "*" stands for any one name.
	Protected []string `json:"protected,omitempty"`
	// Below are paths relative to every directory below a root, the root
	// included (policy.ProtectedBelow), protected with what is below them.
	Below []string `json:"below,omitempty"`
	// Names are names no new entry below a root may have (a ".git": a
	// repository, or a pointer to one), though what is below an existing
	// one may be made.
	Names []string `json:"names,omitempty"`
	// GitDir are paths relative to every git directory — a ".git" below a
	// root, and GitDirs — protected with what is below them
	// (policy.ProtectedInGitDir, git's redirects).
	GitDir []string `json:"gitDir,omitempty"`
	// GitDirs are the repositories' git directories outside the roots (a
	// worktree's, a submodule's), writable so that git works there.
	GitDirs []string `json:"gitDirs,omitempty"`
	// Paths are absolute paths, protected with what is below them: the
	// caller's own files and cordon's binary where a root covers them.
	Paths []string `json:"paths,omitempty"`
	// DenyRead and DenyWrite are the policy's patterns
	// (policy.MatchPattern): a path one of them matches, or one below a
	// match, is refused.
	DenyRead  []string `json:"denyRead,omitempty"`
	DenyWrite []string `json:"denyWrite,omitempty"`
	// AllowRead are the policy's allowRead patterns, which take a path
	// they match (or one below a match) out of DenyRead, as they re-open
	// it to the sandbox.
	AllowRead []string `json:"allowRead,omitempty"`
}

// RepoNames are the entries that make a directory a git repository to git
// (HEAD, objects and refs side by side) that runs commands (a config, hooks,
// or a commondir naming another git directory's config). A directory below
// a root outside every ".git" may not gain the last of them (see
// Guard.MakesRepo).
var RepoNames = []string{"HEAD", "objects", "refs", "config", "hooks", "commondir"}

// WithGuard records the guard for the runtime.
func WithGuard(g *Guard) Opt {
	return func(s *specs.Spec) error {
		if g == nil {
			return nil
		}
		return withJSONAnnotation(s, AnnotationGuard, g)
	}
}

// guardFor is the guard of a sandbox with the writable roots writable
// (resolved), the git directories gitDirs outside them, the protected
// names (Policy.Protected) and own, the caller's own paths and cordon's
// binary (absolute).
func guardFor(p *policy.Policy, writable, gitDirs, inWritable, inGitDir, own []string) *Guard {
	if len(writable) == 0 {
		return nil
	}
	g := &Guard{
		Roots:     slices.Clone(writable),
		Protected: slices.Clone(inWritable),
		Below:     slices.Clone(policy.ProtectedBelow),
		Names:     []string{".git"},
		GitDir:    slices.Clone(inGitDir),
		GitDirs:   slices.Clone(gitDirs),
		DenyRead:  slices.Clone(p.Filesystem.DenyRead),
		DenyWrite: slices.Clone(p.Filesystem.DenyWrite),
		AllowRead: slices.Clone(p.Filesystem.AllowRead),
	}
	for _, o := range own {
		if slices.ContainsFunc(writable, func(w string) bool { return paths.Under(o, w) }) && !slices.Contains(g.Paths, o) {
			g.Paths = append(g.Paths, o)
		}
	}
	return g
}

// Refuses returns why p (absolute, clean) may not be made, opened for
// writing, linked or renamed away; "" when it may. A path below a
// protected or denied one is refused with it.
func (g *Guard) Refuses(p string) string {
	if why := g.matches(p, false); why != "" {
		return why
	}
	for _, pat := range g.DenyRead {
		if deniedAt(pat, p) && !slices.ContainsFunc(g.AllowRead, func(a string) bool { return deniedAt(a, p) }) {
			return "denied by denyRead " + policy.UnescapePattern(pat)
		}
	}
	for _, pat := range g.DenyWrite {
		if deniedAt(pat, p) {
			return "denied by denyWrite " + policy.UnescapePattern(pat)
		}
	}
	return ""
}

// Carries returns why a directory, or a symbolic link to one, may not be
// put at p (by rename or symlink): p is refused, or a protected path lies
// below it (".claude" of ".claude/settings.json", ".git/modules/x" of a
// submodule's hooks), which its content would bring in unchecked. "" when
// it may.
func (g *Guard) Carries(p string) string {
	if why := g.Refuses(p); why != "" {
		return why
	}
	return g.matches(p, true)
}

// MovedIn reports whether a directory renamed from from to to may bring
// in what a denied pattern matches there but did not where it was: the
// runtime then looks at what it holds (with Refuses, at its new path)
// before it is moved. Everything made below from was checked when it was
// made, for the patterns that could match there.
func (g *Guard) MovedIn(from, to string) bool {
	for _, pat := range slices.Concat(g.DenyRead, g.DenyWrite) {
		if couldMatchBelow(pat, to) && !couldMatchBelow(pat, from) && !deniedAt(pat, to) {
			return true
		}
	}
	return false
}

// InGitDir reports whether p lies in a git directory (below a ".git" in a
// root, or in one of GitDirs), where git's own files (HEAD, objects, refs,
// config) are made as a matter of course.
func (g *Guard) InGitDir(p string) bool {
	for _, d := range g.GitDirs {
		if paths.Under(p, d) {
			return true
		}
	}
	root := g.root(p)
	if root == "" {
		return false
	}
	return slices.Contains(strings.Split(strings.TrimPrefix(p, root), "/"), ".git")
}

// InRoot reports whether p is a writable root or lies below one.
func (g *Guard) InRoot(p string) bool {
	return slices.ContainsFunc(g.Roots, func(r string) bool { return paths.Under(p, r) })
}

// root returns the writable root p lies strictly below, the deepest; "".
func (g *Guard) root(p string) string {
	root := ""
	for _, r := range g.Roots {
		if paths.Below(p, r) && len(r) > len(root) {
			root = r
		}
	}
	return root
}

// matches returns why p, or with prefix a path that p lies on the way to
// (a proper prefix of it), is protected by name; "".
func (g *Guard) matches(p string, prefix bool) string {
	for _, f := range g.Paths {
		if hit(f, p, prefix) {
			return "protected: " + f
		}
	}
	for _, d := range g.GitDirs {
		if paths.Below(p, d) {
			rel := strings.Split(strings.TrimPrefix(p, strings.TrimSuffix(d, "/")+"/"), "/")
			if pat := matchRel(g.GitDir, rel, prefix); pat != "" {
				return "protected: " + pat + " of the git directory " + d
			}
		}
	}
	root := g.root(p)
	if root == "" {
		return ""
	}
	elems := strings.Split(strings.TrimPrefix(p, strings.TrimSuffix(root, "/")+"/"), "/")
	if pat := matchRel(g.Protected, elems, prefix); pat != "" {
		return "protected: " + pat + " of the writable root " + root
	}
	// Every directory from the root down to p's own.
	for i := range elems {
		rest := elems[i:]
		if pat := matchRel(g.Below, rest, prefix); pat != "" {
			return "protected: " + pat + ", wherever it lies below a writable root"
		}
		if len(rest) == 1 && !prefix && slices.Contains(g.Names, rest[0]) {
			return "a new " + rest[0] + " below a writable root: a repository git on the host would run the hooks and config of"
		}
		if rest[0] == ".git" && len(rest) > 1 {
			if pat := matchRel(g.GitDir, rest[1:], prefix); pat != "" {
				return "protected: .git/" + pat + " of every repository below a writable root"
			}
		}
	}
	return ""
}

// matchRel returns the first of patterns (relative, "*" an element that
// stands for any name) that elems lies in or, with prefix, on the way to.
func matchRel(patterns []string, elems []string, prefix bool) string {
	for _, pat := range patterns {
		pe := strings.Split(pat, "/")
		if prefix && len(elems) >= len(pe) || !prefix && len(elems) < len(pe) {
			continue
		}
		ok := true
		for i := range min(len(pe), len(elems)) {
			if pe[i] != "*" && pe[i] != elems[i] {
				ok = false
				break
			}
		}
		if ok {
			return pat
		}
	}
	return ""
}

// hit reports whether p is f or below it, or with prefix, lies on the way
// to it.
func hit(f, p string, prefix bool) bool {
	if prefix {
		return paths.Below(f, p)
	}
	return paths.Under(p, f)
}

// deniedAt reports whether pattern matches p or a directory above it.
func deniedAt(pattern, p string) bool {
	if !policy.IsGlob(pattern) {
		return paths.Under(p, policy.UnescapePattern(pattern))
	}
	if !paths.Under(p, policy.PatternBase(pattern)) {
		return false
	}
	for q := p; ; q = parentDir(q) {
		if policy.MatchPattern(pattern, q) {
			return true
		}
		if q == "/" {
			return false
		}
	}
}

// parentDir is path.Dir for clean absolute paths.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// MakesRepo reports whether the directory dir (below a root, in no git
// directory) would become a repository that runs commands by gaining an
// entry named name, has reporting which RepoNames it holds already: it
// would then hold HEAD, objects and refs, and a config, hooks or
// commondir, and did not before. A repository that was one already (a
// mirror clone kept in the workspace) keeps working.
func MakesRepo(name string, has func(string) bool) bool {
	if !slices.Contains(RepoNames, name) {
		return false
	}
	held := func(n string) bool { return n == name || has(n) }
	repo := func(h func(string) bool) bool {
		return h("HEAD") && h("objects") && h("refs") && (h("config") || h("hooks") || h("commondir"))
	}
	return !repo(has) && repo(held)
}
