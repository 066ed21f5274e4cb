package spec

import (
	"path"
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
	// ProtectedInWritable but its .git/ paths, which GitDir covers),
	// protected with what is below them; an element "*" stands for any
	// one name.
	Protected []string `json:"protected,omitempty"`
	// Below are paths relative to every directory below a root, the root
	// included (policy.ProtectedBelow), protected with what is below them.
	Below []string `json:"below,omitempty"`
	// Names are names nothing below a root may be renamed or linked to (a
	// ".git": a repository prepared elsewhere, its hooks in place). A new
	// one may be made empty (git init, git clone), its hooks are refused
	// by GitDir.
	Names []string `json:"names,omitempty"`
	// GitDir are paths relative to every git directory — a ".git" below a
	// root, and GitDirs — protected with what is below them
	// (policy.ProtectedInGitDir, git's redirects); see Refuses for hooks
	// and Refusal.GitDir for the rest.
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
		Protected: slices.DeleteFunc(slices.Clone(inWritable), func(rel string) bool { return strings.HasPrefix(rel, ".git/") }),
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

// Refusal is why the guard refuses a path.
type Refusal struct {
	Reason string
	// Content, when set, says what the path is: a file the runtime may
	// write for the sandbox, by a rename onto it, once it has checked
	// what the renamed file holds (a repository's config, a .gitmodules).
	Content Content
	// GitDir, when set, is the git directory whose own redirect the rule
	// protects (a worktree's commondir): git writes it as it makes the
	// directory, so the caller lets a git directory made during the run
	// have one, and looks at it after the run.
	GitDir string
}

// Content is a kind of protected file the guard decides by content.
type Content int

const (
	// NoContent is a path refused whatever it would hold.
	NoContent Content = iota
	// GitConfig is a repository's config or config.worktree, which git
	// rewrites whole by renaming config.lock onto it.
	GitConfig
	// Gitmodules is a writable root's .gitmodules, which git rewrites the
	// same way.
	Gitmodules
)

// Refuses returns why p (absolute, clean) may not be made, opened for
// writing, linked or renamed away; nil when it may. A path below a
// protected or denied one is refused with it. In a git directory, a new
// hooks directory may be made, empty, and the sample hooks git copies
// into it (NAME.sample, which git never runs).
func (g *Guard) Refuses(p string) *Refusal {
	r := g.matches(p, false)
	if r != nil && r.Content == NoContent {
		return r
	}
	// (a config that a pattern denies is refused whatever it holds)
	for _, pat := range g.DenyRead {
		if deniedAt(pat, p) && !slices.ContainsFunc(g.AllowRead, func(a string) bool { return deniedAt(a, p) }) {
			return &Refusal{Reason: "denied by denyRead " + policy.UnescapePattern(pat)}
		}
	}
	for _, pat := range g.DenyWrite {
		if deniedAt(pat, p) {
			return &Refusal{Reason: "denied by denyWrite " + policy.UnescapePattern(pat)}
		}
	}
	return r
}

// Carries returns why a directory, or a symbolic link to one, may not be
// put at p (by rename or symlink): p is refused, or a protected path lies
// below it (".claude" of ".claude/settings.json", ".git/modules/x" of a
// submodule's hooks, a hooks directory, a .git), which its content would
// bring in unchecked; nil when it may.
func (g *Guard) Carries(p string) *Refusal {
	if r := g.Refuses(p); r != nil {
		return r
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

// IsGitDir reports whether the directory p, made during the run, may be
// a git directory git makes: a ".git" below a root, a worktree's
// (worktrees/NAME) or a submodule's (anywhere below modules/, whose names
// may hold slashes) in a git directory.
func (g *Guard) IsGitDir(p string) bool {
	gd, rel := g.gitDirOf(p)
	switch {
	case gd == "":
		return false
	case len(rel) == 0:
		return path.Base(p) == ".git"
	case rel[0] == "modules":
		return len(rel) >= 2
	case rel[0] == "worktrees":
		return len(rel) == 2
	}
	return false
}

// gitDirOf returns the outermost git directory p lies in or is (a ".git"
// below a root, or one of GitDirs) and p relative to it; "".
func (g *Guard) gitDirOf(p string) (string, []string) {
	for _, d := range g.GitDirs {
		if paths.Under(p, d) {
			return d, relElems(p, d)
		}
	}
	root := g.root(p)
	if root == "" {
		return "", nil
	}
	elems := relElems(p, root)
	if i := slices.Index(elems, ".git"); i >= 0 {
		return path.Join(root, path.Join(elems[:i+1]...)), elems[i+1:]
	}
	return "", nil
}

// relElems is p, below or at dir, relative to it as elements; none for
// dir itself.
func relElems(p, dir string) []string {
	rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
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
// (a proper prefix of it), is protected by name; nil.
func (g *Guard) matches(p string, prefix bool) *Refusal {
	for _, f := range g.Paths {
		if hit(f, p, prefix) {
			return &Refusal{Reason: "protected: " + f}
		}
	}
	for _, d := range g.GitDirs {
		if paths.Below(p, d) {
			rel := strings.Split(strings.TrimPrefix(p, strings.TrimSuffix(d, "/")+"/"), "/")
			if r := g.inGitDir(d, rel, prefix); r != nil {
				r.Reason += " of the git directory " + d
				return r
			}
		}
	}
	root := g.root(p)
	if root == "" {
		return nil
	}
	elems := strings.Split(strings.TrimPrefix(p, strings.TrimSuffix(root, "/")+"/"), "/")
	if pat := matchRel(g.Protected, elems, prefix); pat != "" {
		r := &Refusal{Reason: "protected: " + pat + " of the writable root " + root}
		if pat == ".gitmodules" && len(elems) == 1 {
			r.Content = Gitmodules
		}
		return r
	}
	// Every directory from the root down to p's own.
	for i := range elems {
		rest := elems[i:]
		if pat := matchRel(g.Below, rest, prefix); pat != "" {
			return &Refusal{Reason: "protected: " + pat + ", wherever it lies below a writable root"}
		}
		if len(rest) == 1 && prefix && slices.Contains(g.Names, rest[0]) {
			return &Refusal{Reason: "a " + rest[0] + " brought in whole by a rename or a link: a repository git on the host would run the hooks and config of"}
		}
		if rest[0] == ".git" && len(rest) > 1 {
			gd := path.Join(root, path.Join(elems[:i+1]...))
			if r := g.inGitDir(gd, rest[1:], prefix); r != nil {
				r.Reason += " of every repository below a writable root"
				return r
			}
		}
	}
	return nil
}

// inGitDir decides rel, a path relative to the git directory gd, by the
// GitDir rules. In a hooks directory git's samples (NAME.sample, which git
// never runs) may be made, and the directory itself, empty; a config is
// decided by content (Refusal.Content); a commondir may be written in a
// git directory made during the run (Refusal.GitDir). With prefix, rel
// lies on the way to one of them, or may, or is one: a directory brought
// there would bring them in unchecked.
func (g *Guard) inGitDir(gd string, rel []string, prefix bool) *Refusal {
	for _, pat := range g.GitDir {
		pe := strings.Split(pat, "/")
		end, onWay := gitMatch(pe, rel, 0, 0)
		if prefix {
			if onWay || end == len(rel) {
				return &Refusal{Reason: "protected: " + pat}
			}
			continue
		}
		if end < 0 {
			continue
		}
		below := rel[end:]
		switch pe[len(pe)-1] {
		case "hooks":
			if len(below) == 0 || len(below) == 1 && strings.HasSuffix(below[0], ".sample") {
				continue
			}
			return &Refusal{Reason: "protected: " + pat}
		case "config", "config.worktree":
			if len(below) == 0 {
				return &Refusal{Reason: "protected: " + pat, Content: GitConfig}
			}
		case "commondir":
			if len(below) == 0 {
				return &Refusal{Reason: "protected: " + pat, GitDir: path.Join(gd, path.Join(rel[:end-1]...))}
			}
		}
		return &Refusal{Reason: "protected: " + pat}
	}
	return nil
}

// gitMatch matches rel[j:] against the pattern elements pe[i:], where "*"
// stands for one name, or after "modules" for one or more (a submodule's
// name may hold slashes; the shortest is tried first). It returns how
// many elements of rel the whole pattern matched (rel then lies at the
// pattern's path or below it), or -1 and whether rel ends on the way to
// a path the pattern matches.
func gitMatch(pe, rel []string, i, j int) (end int, onWay bool) {
	switch {
	case i == len(pe):
		return j, false
	case j == len(rel):
		return -1, true
	case pe[i] == "*" && i > 0 && pe[i-1] == "modules":
		for k := j + 1; k <= len(rel); k++ {
			e, w := gitMatch(pe, rel, i+1, k)
			if e >= 0 {
				return e, false
			}
			onWay = onWay || w
		}
		return -1, onWay
	case pe[i] != "*" && pe[i] != rel[j]:
		return -1, false
	}
	return gitMatch(pe, rel, i+1, j+1)
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

// ContentOf says whether p (absolute, clean) is a file the guard decides
// by content: a repository's config below the roots at any depth (by the
// policy's names, policy.ProtectedInGitDir), or a root's .gitmodules. The
// runtime's checks after the run use it where the guard did not run.
func ContentOf(roots []string, p string) Content {
	for _, r := range roots {
		if !paths.Below(p, r) {
			continue
		}
		elems := relElems(p, r)
		if len(elems) == 1 && elems[0] == ".gitmodules" {
			return Gitmodules
		}
		for i, e := range elems {
			if e != ".git" {
				continue
			}
			rel := elems[i+1:]
			for _, pat := range policy.ProtectedInGitDir {
				base := path.Base(pat)
				if base != "config" && base != "config.worktree" {
					continue
				}
				if end, _ := gitMatch(strings.Split(pat, "/"), rel, 0, 0); end == len(rel) {
					return GitConfig
				}
			}
		}
	}
	return NoContent
}

// GitFileOK reports whether data, the content of a ".git" file at p made
// during the run (a worktree's, a submodule's), names the git directory
// git makes for one: below worktrees/ or modules/ of a ".git" or of one of
// GitDirs. One that names any other directory could hand git on the host
// a config and hooks the command wrote elsewhere.
func (g *Guard) GitFileOK(p string, data []byte) bool {
	target, ok := strings.CutPrefix(string(data), "gitdir: ")
	if !ok {
		return false
	}
	target = strings.TrimRight(target, " \t\r\n")
	if target == "" || strings.ContainsAny(target, "\n\x00") {
		return false
	}
	if !path.IsAbs(target) {
		target = path.Join(path.Dir(p), target)
	}
	target = path.Clean(target)
	if slices.Contains(g.GitDirs, target) {
		// a worktree's of a repository outside the roots, which the plan
		// found
		return true
	}
	gd, rel := g.gitDirOf(target)
	return gd != "" && len(rel) >= 2 && (rel[0] == "worktrees" && len(rel) == 2 || rel[0] == "modules")
}

// CommondirOK reports whether data, the content of a commondir at p
// written during the run, names the git directory that holds p's: a
// worktree's (GITDIR/worktrees/NAME/commondir) names GITDIR. Any other
// would have git read a config and hooks from where it names.
func CommondirOK(p string, data []byte) bool {
	target := strings.TrimRight(string(data), " \t\r\n")
	if target == "" || strings.ContainsAny(target, "\n\x00") {
		return false
	}
	own := path.Dir(p)
	if path.Base(path.Dir(own)) != "worktrees" {
		return false
	}
	if !path.IsAbs(target) {
		target = path.Join(own, target)
	}
	return path.Clean(target) == path.Dir(path.Dir(own))
}
