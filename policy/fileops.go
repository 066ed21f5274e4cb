package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"cordon.dev/cordon/internal/paths"
)

// The limits of agents' file tools.
const (
	// MaxFileSize is the most a file tool reads or writes at once: 10 MiB.
	MaxFileSize = 10 << 20
	// BinarySniff is how much of a file is searched for a NUL byte to tell
	// a binary file from text.
	BinarySniff = 8 << 10
)

// FileInfo is what cordon found about the path of a file tool.
type FileInfo struct {
	// Path is the path as named, absolute and cleaned.
	Path string `json:"path"`
	// Resolved is Path with every symbolic link resolved (the part that
	// does not exist yet is kept as named).
	Resolved string `json:"resolved"`
	Exists   bool   `json:"exists"`
	Dir      bool   `json:"dir,omitempty"`
	// Regular is set for a regular file (not a device, FIFO or socket).
	Regular bool  `json:"regular,omitempty"`
	Size    int64 `json:"size,omitempty"`
	// Binary is set when the first BinarySniff bytes hold a NUL.
	Binary bool `json:"binary,omitempty"`
}

// StatFile looks at an absolute path the way a file tool would reach it:
// through its symbolic links. It does not follow a FIFO or a device (it
// never opens one).
func StatFile(name string) (FileInfo, error) {
	if !filepath.IsAbs(name) {
		return FileInfo{}, fmt.Errorf("%q is not an absolute path", name)
	}
	if strings.ContainsRune(name, 0) {
		return FileInfo{}, fmt.Errorf("NUL in the path")
	}
	fi := FileInfo{Path: filepath.Clean(name)}
	res, err := resolve(name)
	if err != nil {
		return fi, err
	}
	fi.Resolved = res
	st, err := os.Stat(res)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return fi, nil
	case err != nil:
		return fi, fmt.Errorf("stat %s: %w", res, unwrapPathError(err))
	}
	fi.Exists, fi.Dir, fi.Regular = true, st.IsDir(), st.Mode().IsRegular()
	if !fi.Regular {
		return fi, nil
	}
	fi.Size = st.Size()
	// O_NONBLOCK: a FIFO swapped in since the Stat must not hang the open.
	f, err := os.OpenFile(res, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// Unreadable by the caller: nothing to sniff.
		return fi, nil
	}
	defer f.Close()
	buf := make([]byte, BinarySniff)
	n, _ := io.ReadFull(f, buf)
	fi.Binary = bytes.IndexByte(buf[:n], 0) >= 0
	return fi, nil
}

// resolve follows the symbolic links of an absolute path component by
// component, as the kernel would (".." after a link is the link target's
// parent); from the first component that does not exist the rest is
// joined as named.
func resolve(name string) (string, error) {
	parts := strings.Split(name, "/")
	cur := "/"
	links := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", name, unwrapPathError(err))
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", name)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", name, unwrapPathError(err))
		}
		if !filepath.IsAbs(target) {
			target = cur + "/" + target
		}
		parts = append(strings.Split(target, "/"), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur, nil
}

// resolvedOrSelf resolves a directory of the policy, or keeps it as it is.
func resolvedOrSelf(p string) string {
	if r, err := resolve(p); err == nil {
		return r
	}
	return p
}

// covers reports whether a path pattern names p or a directory above it.
func covers(pattern, p string) bool {
	for {
		if MatchPattern(pattern, p) {
			return true
		}
		if p == "/" || p == "." || p == "" {
			return false
		}
		p = path.Dir(p)
	}
}

// CheckFile decides a file tool's request (Read, Edit, Write, ...) on a
// path, relative to cwd: Authorize with Tool and Path. The decision's File
// says what cordon found there.
func (p *Policy) CheckFile(ctx context.Context, tool, name, cwd string) (Decision, error) {
	return p.Authorize(ctx, Request{Tool: tool, Path: name, Cwd: cwd})
}

// unreadable returns the denyRead entry that hides p, or "": a denyRead
// pattern names it or a directory above it, and no narrower allowRead
// re-opens it.
func (p *Policy) unreadable(name string) string {
	for _, d := range p.Filesystem.DenyRead {
		if covers(d, name) && !p.reopened(d, name) {
			return UnescapePattern(d)
		}
	}
	return ""
}

// reopened reports whether an allowRead narrower than the denyRead entry
// d re-opens name.
func (p *Policy) reopened(d, name string) bool {
	return slices.ContainsFunc(p.Filesystem.AllowRead, func(a string) bool { return covers(a, name) && patternWithin(a, d) })
}

// Hidden is a path the policy hides, and the denyRead entry that hides
// it.
type Hidden struct {
	Path  string `json:"path"`
	Entry string `json:"entry"`
}

// HiddenIn returns those of names, paths relative to the directory dir
// (as git's index lists the files a repository tracks), that the policy
// hides from commands, with the denyRead entry that hides each: one of
// them names the path or a directory above it, and no narrower allowRead
// re-opens it. Only the entries that can reach into dir are matched, and
// each directory once: a repository's hundred thousand files cost
// milliseconds.
func (p *Policy) HiddenIn(dir string, names []string) []Hidden {
	deny := p.DenyReadIn(dir)
	if len(deny) == 0 {
		return nil
	}
	// dirs: the entries that name each directory or one above it.
	dirs := map[string][]string{}
	var coveredDir func(d string) []string
	coveredDir = func(d string) []string {
		if c, ok := dirs[d]; ok {
			return c
		}
		var c []string
		if d != "/" {
			c = slices.Clone(coveredDir(path.Dir(d)))
		}
		for _, e := range deny {
			if !slices.Contains(c, e) && MatchPattern(e, d) {
				c = append(c, e)
			}
		}
		dirs[d] = c
		return c
	}
	var out []Hidden
	for _, n := range names {
		// (a sparse index's directory ends in "/"; a name that leaves dir
		// is no file of its)
		if !fs.ValidPath(strings.TrimSuffix(n, "/")) {
			continue
		}
		abs := path.Join(dir, n)
		for _, e := range deny {
			if (slices.Contains(coveredDir(path.Dir(abs)), e) || MatchPattern(e, abs)) && !p.reopened(e, abs) {
				out = append(out, Hidden{Path: n, Entry: UnescapePattern(e)})
				break
			}
		}
	}
	return out
}

// DenyReadIn returns the denyRead entries that can hide something in or
// below the directory dir: those that name it, a path below it, a
// directory above it, or a glob that can match there.
func (p *Policy) DenyReadIn(dir string) []string {
	var deny []string
	for _, d := range p.Filesystem.DenyRead {
		top := UnescapePattern(d)
		if IsGlob(d) {
			top = PatternBase(d)
		}
		if paths.Under(top, dir) || paths.Under(dir, top) {
			deny = append(deny, d)
		}
	}
	return deny
}

// Claude Code's protected paths: a write to them is never approved
// without asking, except in bypassPermissions mode.
var (
	claudeProtectedDirs  = []string{".git", ".vscode", ".idea", ".husky", ".cargo", ".devcontainer", ".yarn", ".mvn", ".claude"}
	claudeProtectedFiles = []string{
		".gitconfig", ".gitmodules",
		".bashrc", ".bash_profile", ".bash_login", ".bash_aliases", ".bash_logout", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".profile", ".envrc",
		".npmrc", ".yarnrc", ".yarnrc.yml", ".pnp.cjs", ".pnp.loader.mjs", ".pnpmfile.cjs", "bunfig.toml", ".bunfig.toml",
		".bazelrc", ".bazelversion", ".bazeliskrc",
		".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
		"gradle-wrapper.properties", "maven-wrapper.properties",
		".devcontainer.json", ".ripgreprc", "pyrightconfig.json", ".mcp.json", ".claude.json",
	}
)

// claudeProtectedPath says why Claude Code protects an absolute path in a
// writable root (a Bash command's write: Claude Code checks a
// redirection's target, which the rewrite to cordon run hides from it),
// or "".
func (p *Policy) claudeProtectedPath(abs string) string {
	return claudeProtectedIn(abs, p.writableRoot(abs))
}

// claudeProtectedIn says why Claude Code protects an absolute path in the
// writable root root, or "" (and "" when root is).
func claudeProtectedIn(abs, root string) string {
	if root == "" {
		return ""
	}
	if what := claudeProtected(strings.TrimPrefix(abs, strings.TrimSuffix(root, "/")+"/")); what != "" {
		return "writes " + what + ", a path Claude Code protects (it asks before writing it)"
	}
	return ""
}

// claudeProtected returns the protected directory or file of Claude
// Code's that a path relative to a writable root is or lies in, or "".
func claudeProtected(rel string) string {
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		switch {
		case c == ".claude" && i+1 < len(parts) && parts[i+1] == "worktrees":
			// where Claude Code keeps its own worktrees
		case slices.Contains(claudeProtectedDirs, c) && i+1 < len(parts):
			return c + "/"
		case c == ".config" && i+2 < len(parts) && parts[i+1] == "git":
			return ".config/git/"
		}
	}
	if base := parts[len(parts)-1]; slices.Contains(claudeProtectedFiles, base) {
		return base
	}
	return ""
}

// planFile reports a plan file of Claude Code's: a Markdown file directly
// in the plans directory of its configuration directory, which it writes
// in plan mode.
func (p *Policy) planFile(name string) bool {
	dir := p.ClaudeDir
	if dir == "" {
		if p.Home == "" {
			return false
		}
		dir = filepath.Join(p.Home, ".claude")
	}
	return filepath.Dir(name) == filepath.Join(dir, "plans") && strings.HasSuffix(name, ".md")
}

// hiddenBelow returns a denyRead entry that hides something strictly
// below the directory dir, or "": a search of dir would reach it. The
// entries a Read deny rule names are left out: Claude Code keeps what its
// Read rules deny out of its searches itself.
func (p *Policy) hiddenBelow(dir string) string {
	byRule := func(d, top string) bool {
		for _, r := range p.Permissions.Deny {
			if kindOf(r.Tool) == kindRead && r.Path != "" && (r.Path == d || covers(r.Path, top)) {
				return true
			}
		}
		return false
	}
	for _, d := range p.Filesystem.DenyRead {
		top := UnescapePattern(d)
		if IsGlob(d) {
			top = PatternBase(d)
		}
		if top == dir || !paths.Under(top, dir) && !paths.Under(resolvedOrSelf(top), dir) || byRule(d, top) {
			continue
		}
		if !p.reopened(d, top) {
			return UnescapePattern(d)
		}
	}
	return ""
}

// readOnly returns why no command may write p whatever the mode: a
// denyWrite entry, an always-protected path, a settings file.
func (p *Policy) readOnly(name string, roots []string) string {
	for _, d := range p.Filesystem.DenyWrite {
		if covers(d, name) {
			return "denyWrite " + UnescapePattern(d)
		}
	}
	inWritable, _ := p.Protected()
	for _, root := range roots {
		for _, rel := range inWritable {
			if covers(EscapePattern(root)+"/"+rel, name) {
				return "the always-protected " + rel + " (in " + root + ")"
			}
		}
	}
	for _, f := range p.OwnPaths(p.Home) {
		if paths.Under(name, f) {
			if rel, ok := strings.CutPrefix(f, p.Home+"/"); ok && p.Home != "" {
				return "the always-protected ~/" + rel
			}
			return "the always-protected " + f
		}
	}
	return ""
}

// writableRoot returns the writable root (the workspace, or an allowWrite
// pattern) that holds p, or "".
func (p *Policy) writableRoot(name string) string {
	if p.Workspace != "" && (paths.Under(name, p.Workspace) || paths.Under(name, resolvedOrSelf(p.Workspace))) {
		return p.Workspace
	}
	for _, w := range p.Filesystem.AllowWrite {
		if covers(w, name) {
			return UnescapePattern(w)
		}
		if !IsGlob(w) && paths.Under(name, resolvedOrSelf(UnescapePattern(w))) {
			return UnescapePattern(w)
		}
	}
	return ""
}

// roots are the writable roots, as named and resolved, for the protected
// paths.
func (p *Policy) roots() []string {
	var out []string
	add := func(r string) {
		for _, x := range []string{r, resolvedOrSelf(r)} {
			if x != "" && !containsString(out, x) {
				out = append(out, x)
			}
		}
	}
	add(p.Workspace)
	for _, w := range p.Filesystem.AllowWrite {
		if !IsGlob(w) {
			add(UnescapePattern(w))
		}
	}
	return out
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// fileRules returns the first rule of a list for the tool's family (Read,
// Glob, Grep and LS share the Read rules; Edit, Write, MultiEdit and
// NotebookEdit the edit rules) that names one of the paths; a bare rule
// names every path. With all set, every path must be named.
func fileRules(rules []Rule, kind toolKind, all bool, paths ...string) *Rule {
	for _, r := range rules {
		if !r.namesKind(kind) {
			continue
		}
		if !r.HasSpecifier {
			return &r
		}
		if r.Path == "" {
			continue
		}
		n := 0
		for _, x := range paths {
			if covers(r.Path, x) {
				n++
			}
		}
		if all && n == len(paths) || !all && n > 0 {
			return &r
		}
	}
	return nil
}

// analyseFile judges a file tool's path: the deny rules the sandbox uses,
// the workspace boundary after symbolic links, and the size and binary
// limits.
func (p *Policy) analyseFile(req Request, a *analysis) error {
	if req.Path == "" {
		return fmt.Errorf("%s: no path", req.Tool)
	}
	if strings.ContainsRune(req.Path, 0) {
		return fmt.Errorf("%s: NUL in the path", req.Tool)
	}
	abs := p.absPath(req.Path, req.Cwd)
	fi, err := StatFile(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Tool, abs, err)
	}
	a.file = &fi
	paths := []string{fi.Path}
	if fi.Resolved != fi.Path {
		paths = append(paths, fi.Resolved)
		a.step("path", "%s resolves to %s", fi.Path, fi.Resolved)
	}
	write := a.kind == kindWrite

	// deny: the rules, then what the sandbox hides or keeps read-only
	family := kindRead
	if write {
		family = kindWrite
	}
	if r := fileRules(p.Permissions.Deny, family, false, paths...); r != nil {
		a.deny = &hit{rule: r.String(), detail: fi.Path}
	} else if r := fileRules(p.Permissions.Deny, kindRead, false, paths...); write && r != nil {
		a.deny = &hit{rule: r.String(), detail: fi.Path + " cannot be read, so it cannot be edited"}
	}
	if a.deny == nil {
		a.deny = paramHit(p.Permissions.Deny, req)
	}
	for _, x := range paths {
		if a.deny != nil {
			break
		}
		if d := p.unreadable(x); d != "" {
			a.deny = &hit{rule: "denyRead " + d, detail: x}
		} else if d := p.hiddenBelow(x); d != "" && (req.Tool == "Grep" || req.Tool == "Glob") {
			// the tool runs outside the sandbox: it would read what
			// the sandbox hides
			a.deny = &hit{rule: "denyRead " + d, detail: "inside " + x + ", which " + req.Tool + " would search (search a path that does not hold it)"}
		} else if write {
			if why := p.readOnly(x, p.roots()); why != "" {
				a.deny = &hit{rule: why, detail: x}
			}
		}
	}

	// what it needs
	if write && p.planFile(fi.Path) && p.planFile(fi.Resolved) {
		a.planFile = true
	}
	if write {
		lexRoot, realRoot := p.writableRoot(fi.Path), p.writableRoot(fi.Resolved)
		switch {
		case realRoot != "" && (lexRoot != "" || fi.Resolved == fi.Path):
			a.need(fi.Path, WorkspaceWrite, "writes inside "+realRoot)
			for _, x := range []struct{ path, root string }{{fi.Path, lexRoot}, {fi.Resolved, realRoot}} {
				if a.deny != nil {
					continue
				}
				if why := claudeProtectedIn(x.path, x.root); why != "" {
					// what the next command or session runs on the host,
					// which Claude Code asks about in every mode but
					// bypassPermissions
					a.need(fi.Path, DangerFullAccess, why)
					break
				}
			}
		case lexRoot != "":
			a.need(fi.Path, DangerFullAccess, "a symbolic link takes it out of "+lexRoot+" to "+fi.Resolved)
		default:
			a.need(fi.Path, DangerFullAccess, "writes outside the workspace and allowWrite")
		}
	} else if lexRoot := p.writableRoot(fi.Path); lexRoot != "" && fi.Resolved != fi.Path && p.writableRoot(fi.Resolved) == "" {
		a.step("path", "a symbolic link takes it out of %s (reads are allowed everywhere but denyRead)", lexRoot)
	}

	// limits
	mib := func(n int64) string {
		if n%(1<<20) == 0 {
			return fmt.Sprintf("%d MiB", n>>20)
		}
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	}
	switch {
	case req.Tool == "LSP":
		// the language server reads the file, not the tool's output
	case fi.Exists && !fi.Dir && !fi.Regular:
		a.refuse = fi.Path + " is not a regular file (a device, FIFO or socket)"
	case fi.Dir && req.Tool != "Glob" && req.Tool != "Grep" && req.Tool != "LS":
		a.refuse = fi.Path + " is a directory"
	case req.Tool == "Read" && !req.Partial && fi.Size > MaxFileSize:
		a.refuse = fmt.Sprintf("%s is %s, more than the %s a tool reads at once (read it in parts)", fi.Path, mib(fi.Size), mib(MaxFileSize))
	case req.Tool == "Write" && req.Size > MaxFileSize:
		a.refuse = fmt.Sprintf("the content is %s, more than the %s a tool writes at once", mib(req.Size), mib(MaxFileSize))
	case write && req.Tool != "Write" && fi.Size > MaxFileSize:
		a.refuse = fmt.Sprintf("%s is %s, more than the %s a tool edits at once", fi.Path, mib(fi.Size), mib(MaxFileSize))
	case write && req.Tool != "Write" && fi.Binary:
		a.refuse = fi.Path + " is a binary file (a NUL in its first 8 KiB): it cannot be edited as text"
	case fi.Binary:
		a.findings = append(a.findings, Finding{fi.Path, ReadOnly, "a binary file (a NUL in its first 8 KiB)"})
	}

	// ask and allow rules
	if r := fileRules(p.Permissions.Ask, family, false, paths...); r != nil {
		a.ask = &hit{rule: r.String(), detail: fi.Path}
	} else if h := paramHit(p.Permissions.Ask, req); h != nil {
		a.ask = h
	}
	// An allow rule must name where the path really leads, unless it
	// stays in the writable root it is named in.
	allowPaths := paths
	if root := p.writableRoot(fi.Path); len(paths) > 1 && root != "" && p.writableRoot(fi.Resolved) == root {
		allowPaths = paths[:1]
	}
	if r := fileRules(p.Permissions.Allow, family, true, allowPaths...); r != nil {
		a.allow = &hit{rule: r.String(), detail: fi.Path}
	}
	a.step("classify", "%s %s requires %s", req.Tool, fi.Path, a.required)
	return nil
}
