package darwin

import (
	"bufio"
	"io/fs"
	"path"
	"strings"

	"cordon.dev/cordon/internal/paths"
)

// systemLinks are macOS's top-level symbolic links into /private. Seatbelt
// matches the path a file really has, so a rule must name the target. The
// table is fixed, not looked up, so that a profile compiled on Linux is the
// one macOS would get.
var systemLinks = [...]struct{ link, target string }{
	{"/tmp", "/private/tmp"},
	{"/var", "/private/var"},
	{"/etc", "/private/etc"},
}

// canonical rewrites a clean absolute path through systemLinks.
func canonical(p string) string {
	for _, l := range systemLinks {
		if paths.Under(p, l.link) {
			return l.target + p[len(l.link):]
		}
	}
	return p
}

// resolver finds the spellings of a path that Seatbelt may see.
type resolver struct {
	fsys fs.FS // nil: systemLinks only
}

// maxLinks bounds the symbolic links followed for one path.
const maxLinks = 40

// resolve returns p with systemLinks applied and, when the resolver has a
// file system, every symbolic link on the way followed; a missing component
// ends the resolution there (what does not exist yet keeps its name).
func (r resolver) resolve(p string) string {
	p = canonical(path.Clean(p))
	if r.fsys == nil {
		return p
	}
	parts := split(p)
	cur, links := "/", 0
	for i := 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		fi, err := fs.Lstat(r.fsys, fsName(next))
		if err != nil {
			return canonical(path.Join(append([]string{next}, parts[i+1:]...)...))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := fs.ReadLink(r.fsys, fsName(next))
		if links++; err != nil || links > maxLinks {
			return p // a loop or an unreadable link: keep the spelling as written
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		parts = append(split(canonical(path.Clean(target))), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur
}

// spellings returns p canonicalised, and resolved when that differs.
func (r resolver) spellings(p string) []string {
	c := canonical(path.Clean(p))
	if res := r.resolve(p); res != c {
		return []string{c, res}
	}
	return []string{c}
}

// isDir reports whether p is a directory on the resolver's file system.
func (r resolver) isDir(p string) bool {
	if r.fsys == nil {
		return false
	}
	fi, err := fs.Stat(r.fsys, fsName(p))
	return err == nil && fi.IsDir()
}

// gitDirs returns the real git directories of the repository at root and
// of its submodules whose .git is a file ("gitdir: ..."), and a worktree's
// common directory, resolved; and those .git files. The directories must be
// writable for git to commit, and their hooks and config are protected
// wherever they lie; the files must not be rewritten to point elsewhere.
// It reads what mounts.Protect reads on Linux.
func (r resolver) gitDirs(root string) (dirs, gitfiles []string) {
	if r.fsys == nil {
		return nil, nil
	}
	add := func(gitfile string) {
		data, err := fs.ReadFile(r.fsys, fsName(gitfile))
		if err != nil {
			return
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return
		}
		if target = strings.TrimSpace(target); !path.IsAbs(target) {
			target = path.Join(path.Dir(gitfile), target)
		}
		gitdir := r.resolve(target)
		if !r.isDir(gitdir) {
			return
		}
		dirs = append(dirs, gitdir)
		gitfiles = append(gitfiles, gitfile)
		// A worktree's objects and refs live in its common directory.
		if data, err := fs.ReadFile(r.fsys, fsName(path.Join(gitdir, "commondir"))); err == nil {
			common := strings.TrimSpace(string(data))
			if !path.IsAbs(common) {
				common = path.Join(gitdir, common)
			}
			if c := r.resolve(common); r.isDir(c) {
				dirs = append(dirs, c)
			}
		}
	}
	add(path.Join(root, ".git"))
	if f, err := r.fsys.Open(fsName(path.Join(root, ".gitmodules"))); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "=")
			if ok && strings.TrimSpace(k) == "path" {
				sub := path.Clean(strings.TrimSpace(v))
				if !path.IsAbs(sub) && sub != ".." && !strings.HasPrefix(sub, "../") {
					add(path.Join(root, sub, ".git"))
				}
			}
		}
		f.Close()
	}
	return dirs, gitfiles
}

// Bounds of the search for repositories below a writable root: how deep
// (sub/.git, org/proj/.git, as Linux's mount plan searches), and how many
// directories it reads.
const (
	repoDepth = 2
	repoMax   = 4096
)

// nestedRepositories returns the directories below root, down to
// repoDepth, that hold a .git (a directory or a file). Symbolic links are
// not followed, and node_modules and .git are not searched.
func (r resolver) nestedRepositories(root string) []string {
	if r.fsys == nil {
		return nil
	}
	var out []string
	looked := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := fs.ReadDir(r.fsys, fsName(dir))
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() || e.Name() == ".git" || e.Name() == "node_modules" {
				continue // (a symbolic link is not a directory here)
			}
			if looked++; looked > repoMax {
				return
			}
			sub := path.Join(dir, e.Name())
			if _, err := fs.Lstat(r.fsys, fsName(path.Join(sub, ".git"))); err == nil {
				out = append(out, sub)
			}
			if depth < repoDepth {
				walk(sub, depth+1)
			}
		}
	}
	walk(root, 1)
	return out
}

// split returns the components of a clean absolute path.
func split(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// fsName turns an absolute path into a name for fs.FS.
func fsName(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}
