package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"cordon.dev/cordon/internal/gitconfig"
	"cordon.dev/cordon/internal/gitindex"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/runtime"
)

// trackedHidden are the files of the workspace's repository that git
// tracks and the policy hides (denyRead): a command cannot open them, but
// git's objects hold their content, which `git show HEAD:.env` prints.
type trackedHidden struct {
	// Top is the repository's working tree.
	Top    string          `json:"top"`
	Hidden []policy.Hidden `json:"hidden"`
}

// findRepository returns the working tree that holds dir (dir or the
// nearest directory above it with a .git) and its git directory, or ""
// for both. A few lstat calls: it runs on every command.
func findRepository(dir string) (top, gitDir string) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return d, dotgit
		case err == nil && fi.Mode().IsRegular():
			// A worktree's or submodule's: "gitdir: PATH".
			data, err := os.ReadFile(dotgit)
			if err != nil {
				return "", ""
			}
			line, _, _ := strings.Cut(string(data), "\n")
			target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
			if !ok {
				return "", ""
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return d, target
		}
		if d == "/" {
			return "", ""
		}
	}
}

// tracked returns the tracked files of the workspace's repository that
// the policy hides, or nothing: no repository, no denyRead entry that
// reaches into it, an index cordon cannot read. The index is read again
// only when it changed (its size, time or inode): what was found is kept
// in cordon's state directory, keyed by the index and the policy's
// entries, so an ordinary run pays a stat and a small read.
func tracked(pol *policy.Policy) trackedHidden {
	top, gitDir := findRepository(pol.Workspace)
	if top == "" {
		return trackedHidden{}
	}
	deny := pol.DenyReadIn(top)
	if len(deny) == 0 {
		return trackedHidden{}
	}
	index := filepath.Join(gitDir, "index")
	fi, err := os.Stat(index)
	if err != nil || !fi.Mode().IsRegular() {
		return trackedHidden{}
	}
	type record struct {
		Size, ModTime int64
		Ino           uint64
		trackedHidden
	}
	now := record{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), trackedHidden: trackedHidden{Top: top}}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		now.Ino = uint64(st.Ino)
	}
	h := sha256.New()
	for _, s := range slices.Concat([]string{index, top}, deny, []string{"allowRead"}, pol.Filesystem.AllowRead) {
		io.WriteString(h, s+"\x00")
	}
	cache := filepath.Join(runtime.StateRoot(), runtime.TrackedDir, hex.EncodeToString(h.Sum(nil)[:12]))
	if data, err := os.ReadFile(cache); err == nil {
		var was record
		if json.Unmarshal(data, &was) == nil && was.Size == now.Size && was.ModTime == now.ModTime && was.Ino == now.Ino && was.Top == top {
			return was.trackedHidden
		}
	}
	names, err := indexPaths(gitDir, index)
	if err != nil {
		return trackedHidden{}
	}
	now.Hidden = pol.HiddenIn(top, names)
	if data, err := json.Marshal(now); err == nil && os.MkdirAll(filepath.Dir(cache), 0o700) == nil {
		// (written whole, then renamed: a concurrent run reads the old or
		// the new record)
		tmp := fmt.Sprintf("%s.%d", cache, os.Getpid())
		if os.WriteFile(tmp, data, 0o600) == nil && os.Rename(tmp, cache) != nil {
			os.Remove(tmp)
		}
	}
	return now.trackedHidden
}

// indexPaths returns the paths the index at index lists (and its shared
// index's, when it is split), in the object format of the repository
// whose git directory is gitDir.
func indexPaths(gitDir, index string) ([]string, error) {
	hash := gitindex.SHA1
	if objectFormat(gitDir) == "sha256" {
		hash = gitindex.SHA256
	}
	data, err := os.ReadFile(index)
	if err != nil {
		return nil, err
	}
	ix, err := gitindex.Parse(data, hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", index, err)
	}
	if ix.Shared == "" {
		return ix.Paths, nil
	}
	// A split index's shared one lies beside it. Its entries the split
	// index deletes are listed too: their content stays in git's objects
	// all the same.
	data, err = os.ReadFile(filepath.Join(filepath.Dir(index), "sharedindex."+ix.Shared))
	if err != nil {
		return nil, err
	}
	shared, err := gitindex.Parse(data, hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", index, err)
	}
	return append(ix.Paths, shared.Paths...), nil
}

// objectFormat returns the repository's extensions.objectFormat ("" for
// git's default, SHA-1), from its config (a worktree's is its common
// directory's).
func objectFormat(gitDir string) string {
	dir := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		if c := strings.TrimSpace(string(data)); filepath.IsAbs(c) {
			dir = c
		} else {
			dir = filepath.Join(gitDir, c)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		return ""
	}
	vars, _ := gitconfig.Parse(data)
	format := ""
	for _, v := range vars {
		if v.Name == "extensions.objectformat" {
			format = strings.ToLower(v.Value)
		}
	}
	return format
}

// notice is what cordon says of the tracked hidden files, or "".
func (t trackedHidden) notice() string {
	if len(t.Hidden) == 0 {
		return ""
	}
	const most = 5
	var names []string
	for i, h := range t.Hidden {
		if i == most {
			names = append(names, fmt.Sprintf("%d more", len(t.Hidden)-most))
			break
		}
		names = append(names, h.Path)
	}
	list := names[0]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	it, its := "it", "its"
	if len(t.Hidden) > 1 {
		it, its = "them", "their"
	}
	return fmt.Sprintf("denyRead hides %s, but git tracks %s in %s: %s content stays readable through git's objects (git show HEAD:%s)",
		list, it, t.Top, its, t.Hidden[0].Path)
}

// sayTracked says, on w, that tracked files are hidden (cordon check,
// which a person asks: every time).
func sayTracked(w io.Writer, pol *policy.Policy) {
	if n := tracked(pol).notice(); n != "" {
		fmt.Fprintf(w, "cordon: warning: %s\n", n)
	}
}
