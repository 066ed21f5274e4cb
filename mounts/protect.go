package mounts

import (
	"bufio"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"cordon.dev/cordon/internal/gitconfig"
	"cordon.dev/cordon/internal/paths"
)

// Protection is what keeps the always-protected paths of the writable
// roots out of the command's reach.
type Protection struct {
	// Rules bind the protected paths that exist read-only, and bind every
	// directory between a writable root and a protected path onto itself,
	// so that it cannot be renamed or replaced (the kernel refuses to move a
	// mountpoint): `mv .git x; mkdir .git` must not get a fresh .git/hooks.
	Rules []Rule
	// Roots are further directories that must be writable for the
	// workspace to keep working: the real git directory of a worktree or
	// submodule whose .git is a file. Their own hooks and config are
	// protected by Rules.
	Roots []string
	// Scrub are protected paths that do not exist yet. Nothing can stop a
	// writable directory from gaining a new entry, and no placeholder may
	// be left on the host, so the runtime moves away whatever appears there
	// during the run.
	Scrub []string
	// Links are the symlinks on the way to protected paths (.git/hooks ->
	// ../.githooks, a dotfile manager's ~/.bashrc): what they point to is
	// bound read-only, but a link cannot be, and its directory stays
	// writable. The runtime puts each back after the run when the command
	// replaced it, moving the replacement aside.
	Links []Link
}

// Link is a symlink and its target, as the plan found it.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// Protect computes the protection of the paths protected in each writable
// root (relative to it, see policy.ProtectedInWritable) and in every git
// directory the roots use (relative to it, see policy.ProtectedInGitDir). A
// protected name containing "/*/" stands for the rest of the name in every
// subdirectory there. The directories down to NestedDepth below a root get
// nested (see policy.ProtectedBelow) and, those holding a .git, the
// protected names that begin with ".git/": the same protection, with the
// directories from the root pinned. So do the trusted directories in a
// root (policy.Policy.TrustedDirs) and those down to NestedDepth below
// them: a workspace there trusts its own settings.
func Protect(fsys fs.FS, roots, protected, gitProtected, nested, trusted []string) (Protection, error) {
	type job struct {
		root      string
		protected []string
		writable  bool // one of roots, not a git directory
	}
	var pr Protection
	seen := map[string]bool{}
	var queue []job
	for _, r := range roots {
		queue = append(queue, job{r, protected, true})
	}
	for len(queue) > 0 {
		root, list, writable := queue[0].root, queue[0].protected, queue[0].writable
		queue = queue[1:]
		real, fi, err := Resolve(fsys, root)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || err == nil && !fi.IsDir() {
			// (a git directory the command cannot reach, it cannot change)
			continue
		}
		if err != nil {
			return pr, err
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		if writable {
			list = withNested(fsys, real, list, nested, trusted)
		}
		for _, rel := range expand(fsys, real, list) {
			pr.protect(fsys, real, rel)
		}
		dirs, gitfiles, own := gitDirs(fsys, real)
		if writable {
			// core.hooksPath sends git to hooks elsewhere, often in the
			// working tree (.githooks, husky's .husky/_).
			for _, hp := range gitconfig.HooksPaths(fsys, real, own) {
				for _, r := range roots {
					if rel, ok := strings.CutPrefix(hp, strings.TrimSuffix(r, "/")+"/"); ok {
						pr.protect(fsys, r, rel)
					}
				}
			}
		}
		for _, f := range gitfiles {
			// A .git file names the repository's real git directory:
			// pointed elsewhere, it would hand git hooks of the command's
			// choosing.
			pr.Rules = append(pr.Rules, Rule{Path: f, Access: ReadOnly})
		}
		for _, gitdir := range dirs {
			inRoot := func(r string) bool { return paths.Under(gitdir, r) }
			if !seen[gitdir] && !paths.Below(gitdir, real) && !slices.ContainsFunc(roots, inRoot) && !slices.ContainsFunc(pr.Roots, inRoot) {
				pr.Roots = append(pr.Roots, gitdir)
			}
			// A git directory's hooks and config are protected wherever
			// it lies.
			queue = append(queue, job{gitdir, gitProtected, false})
		}
	}
	return pr, nil
}

// Drop leaves out of the protection every path for which hidden is true:
// what the command cannot see, it cannot change, and a bind there would
// bring it back into view.
func (pr *Protection) Drop(hidden func(string) bool) {
	pr.Rules = slices.DeleteFunc(pr.Rules, func(r Rule) bool { return hidden(r.Path) })
	pr.Roots = slices.DeleteFunc(pr.Roots, hidden)
	pr.Scrub = slices.DeleteFunc(pr.Scrub, hidden)
	pr.Links = slices.DeleteFunc(pr.Links, func(l Link) bool { return hidden(l.Path) })
}

// expand replaces "dir/*/x" in the protected names by the entries of dir
// under root.
func expand(fsys fs.FS, root string, protected []string) []string {
	var out []string
	for _, rel := range protected {
		dir, rest, ok := strings.Cut(rel, "/*/")
		if !ok {
			out = append(out, rel)
			continue
		}
		entries, err := fs.ReadDir(fsys, rel2fs(path.Join(root, dir)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, expand(fsys, root, []string{path.Join(dir, e.Name(), rest)})...)
			}
		}
	}
	return out
}

// protect handles one protected path below root: pins the directories on
// the way, binds the path read-only when it exists, scrubs it otherwise.
func (pr *Protection) protect(fsys fs.FS, root, rel string) {
	parts := strings.Split(rel, "/")
	cur := root
	pinned := len(pr.Rules)
	for i, part := range parts {
		next := path.Join(cur, part)
		fi, err := fs.Lstat(fsys, rel2fs(next))
		if errors.Is(err, fs.ErrPermission) {
			// Out of the command's reach: it can neither change what is
			// there nor create it, and the directories on the way need
			// no pin. Nor is it scrubbed: what is there is someone
			// else's, and was before the run.
			pr.Rules = pr.Rules[:pinned]
			return
		}
		if err != nil {
			pr.Scrub = append(pr.Scrub, path.Join(root, rel))
			return
		}
		last := i == len(parts)-1
		if fi.Mode()&fs.ModeSymlink != 0 {
			// The link itself cannot be bound; what it points to can. A
			// target outside the writable roots is read-only already.
			target, err := fs.ReadLink(fsys, rel2fs(next))
			if err != nil {
				return
			}
			pr.Links = append(pr.Links, Link{Path: next, Target: target})
			rest := path.Join(parts[i+1:]...)
			if real, _, err := Resolve(fsys, next); err == nil {
				if last {
					pr.Rules = append(pr.Rules, Rule{Path: real, Access: ReadOnly})
				} else {
					pr.protect(fsys, real, rest)
				}
				return
			}
			// A dangling link: what appears where it points is the
			// protected path's content.
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			if t := path.Join(path.Clean(target), rest); paths.Under(t, root) {
				pr.Scrub = append(pr.Scrub, t)
			}
			return
		}
		if last || !fi.IsDir() {
			// A file where a directory of the protected path belongs is
			// protected itself: .git as a file ("gitdir: ...") must not be
			// pointed at a directory of the command's choosing.
			pr.Rules = append(pr.Rules, Rule{Path: next, Access: ReadOnly})
			return
		}
		pr.Rules = append(pr.Rules, Rule{Path: next, Access: ReadWrite})
		cur = next
	}
}

// withNested is list, the protected paths of the writable root root, with
// what the directories below it get. Other repositories in the root
// (clones in ~/code, a vendored checkout) get what its own .git gets, and
// every directory the nested names, from the root down: the directories
// on the way are pinned too. So do the trusted directories in the root and
// those below them.
func withNested(fsys fs.FS, root string, list, nested, trusted []string) []string {
	var inGit []string
	for _, rel := range list {
		if strings.HasPrefix(rel, ".git/") {
			inGit = append(inGit, rel)
		}
	}
	firsts := []string{".git"}
	for _, rel := range nested {
		first, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(firsts, first) {
			firsts = append(firsts, first)
		}
	}
	list = slices.Clone(list)
	var dirs []nestedDir
	if len(inGit) > 0 || len(nested) > 0 {
		// (otherwise nothing below would be protected)
		dirs = nestedDirs(fsys, root, firsts)
	}
	for _, t := range trusted {
		if !paths.Below(t, root) || len(nested) == 0 {
			continue
		}
		rel := strings.TrimPrefix(t, strings.TrimSuffix(root, "/")+"/")
		// Its own settings, whether they exist or not (those that do not
		// are moved aside if they appear); git's only if it is a
		// repository.
		own := nestedDir{rel: rel}
		for _, f := range firsts {
			if _, err := fs.Lstat(fsys, rel2fs(path.Join(t, f))); err == nil || f != ".git" {
				own.has = append(own.has, f)
			}
		}
		dirs = append(dirs, own)
		for _, d := range nestedDirs(fsys, t, firsts) {
			d.rel = rel + "/" + d.rel
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		for _, rel := range nested {
			first, _, _ := strings.Cut(rel, "/")
			if slices.Contains(d.has, first) {
				list = append(list, d.rel+"/"+rel)
			}
		}
		if slices.Contains(d.has, ".git") {
			for _, rel := range inGit {
				list = append(list, d.rel+"/"+rel)
			}
			// Its config's core.hooksPath and includes, as the root's.
			sub := path.Join(root, d.rel)
			for _, hp := range gitconfig.HooksPaths(fsys, sub, []string{path.Join(sub, ".git")}) {
				if rel, ok := strings.CutPrefix(hp, strings.TrimSuffix(root, "/")+"/"); ok {
					list = append(list, rel)
				}
			}
		}
	}
	return list
}

// Bounds of the search below a writable root for repositories and nested
// protected names: how deep (sub/.git, org/proj/.git), and how many
// directories it looks at.
const (
	NestedDepth = 2
	nestedMax   = 4096
)

// nestedDir is a directory below a writable root (rel, relative to it)
// and which of the names searched for it holds.
type nestedDir struct {
	rel string
	has []string
}

// nestedDirs returns the directories below root, at most NestedDepth deep,
// that hold one of names (as any kind of entry). Symlinks are not followed,
// and node_modules, where package managers keep nothing a developer works
// in, is not searched.
func nestedDirs(fsys fs.FS, root string, names []string) []nestedDir {
	var out []nestedDir
	looked := 0
	var walk func(rel string, subdirs []string, depth int)
	walk = func(rel string, subdirs []string, depth int) {
		for _, name := range subdirs {
			if name == ".git" || name == "node_modules" {
				continue
			}
			if looked++; looked > nestedMax {
				return
			}
			sub := path.Join(rel, name)
			has, below, err := entries(fsys, rel2fs(path.Join(root, sub)), names)
			if err != nil {
				continue
			}
			if len(has) > 0 {
				out = append(out, nestedDir{rel: sub, has: has})
			}
			if depth < NestedDepth {
				walk(sub, below, depth+1)
			}
		}
	}
	if _, subdirs, err := entries(fsys, rel2fs(root), nil); err == nil {
		walk("", subdirs, 1)
	}
	return out
}

// gitDirs returns the real git directories of the repository at root and
// of its submodules when their .git is a file ("gitdir: ..."), and the
// common directory of a worktree, resolved; and those .git files.
func gitDirs(fsys fs.FS, root string) (dirs, gitfiles, own []string) {
	// own are the repository's own git directories: a submodule's lies in
	// one of them (modules/NAME), where a .git file the command wrote into
	// an uninitialised submodule's directory cannot point elsewhere.
	if real, fi, err := Resolve(fsys, path.Join(root, ".git")); err == nil && fi.IsDir() {
		own = append(own, real)
	}
	add := func(gitfile string, sub bool) {
		data, err := fs.ReadFile(fsys, rel2fs(gitfile))
		if err != nil {
			return
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return
		}
		target = strings.TrimSpace(target)
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(gitfile), target)
		}
		gitdir, fi, err := Resolve(fsys, target)
		if err != nil || !fi.IsDir() {
			return
		}
		// A git directory holds HEAD: a .git file (or a commondir) naming
		// the home must not make it writable; a submodule's lies in the
		// repository's own.
		isGitDir := func(d string) bool {
			head, err := fs.Stat(fsys, rel2fs(path.Join(d, "HEAD")))
			return err == nil && head.Mode().IsRegular() &&
				(!sub || slices.ContainsFunc(own, func(g string) bool { return paths.Below(d, g) }))
		}
		if !isGitDir(gitdir) {
			return
		}
		gitfiles = append(gitfiles, gitfile)
		dirs = append(dirs, gitdir)
		if !sub {
			own = append(own, gitdir)
		}
		// A worktree's objects and refs live in its common directory.
		if data, err := fs.ReadFile(fsys, rel2fs(path.Join(gitdir, "commondir"))); err == nil {
			common := strings.TrimSpace(string(data))
			if !path.IsAbs(common) {
				common = path.Join(gitdir, common)
			}
			if c, fi, err := Resolve(fsys, common); err == nil && fi.IsDir() && isGitDir(c) {
				dirs = append(dirs, c)
				if !sub {
					own = append(own, c)
				}
			}
		}
	}
	add(path.Join(root, ".git"), false)
	if f, err := fsys.Open(rel2fs(path.Join(root, ".gitmodules"))); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "=")
			if ok && strings.TrimSpace(k) == "path" {
				sub := path.Clean(strings.TrimSpace(v))
				if !path.IsAbs(sub) && !strings.HasPrefix(sub, "..") {
					add(path.Join(root, sub, ".git"), true)
				}
			}
		}
		f.Close()
	}
	return dirs, gitfiles, own
}

// rel2fs turns an absolute path into a name for fs.FS.
func rel2fs(p string) string { return rel(p) }
