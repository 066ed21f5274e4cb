package gitconfig

import (
	"fmt"
	"slices"
	"strings"
)

// A sandboxed command may rewrite a repository's config (git remote add,
// git branch -m, git submodule add, git clone) but must not leave in it
// what makes git on the host run a command, or send it elsewhere: the
// next git status would run core.fsmonitor, git fetch remote.x.uploadpack,
// git submodule update submodule.x.update=!cmd. What git writes in the
// course of ordinary work is a small, known set of variables; Check
// accepts those (with values that run nothing) and refuses the rest, unless
// the config already held the same variable with the same value (the
// user's own filter.lfs, core.hooksPath = .husky).

// Kind is the kind of file Check decides on.
type Kind int

const (
	// Repository is a repository's config or config.worktree.
	Repository Kind = iota
	// Modules is a .gitmodules file.
	Modules
)

// Rules are what Check needs to know beyond the file.
type Rules struct {
	Kind Kind
	// Worktree reports whether core.worktree may be the value (a path,
	// relative to the git directory) or nil when none may: git sets it
	// in a submodule's git directory, naming its working tree.
	Worktree func(value string) bool
}

// UnsafeError is Check's refusal: the variable, and why.
type UnsafeError struct {
	Name, Value, Reason string
}

func (e *UnsafeError) Error() string {
	if e.Name == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s = %q: %s", e.Name, e.Value, e.Reason)
}

// maxSize bounds a config file Check reads.
const maxSize = 1 << 20

// Check decides whether a config file may go from prev (nil: a new file)
// to next: next must read exactly as git reads it (Parse), and each of
// its variables must be one git writes in ordinary work, with a value that
// runs nothing and names no command transport, or one prev held already
// with the same value. The error is an *UnsafeError, naming the first
// variable refused.
func Check(prev, next []byte, r Rules) error {
	if len(next) > maxSize {
		return &UnsafeError{Reason: fmt.Sprintf("larger than %d bytes", maxSize)}
	}
	vars, err := Parse(next)
	if err != nil {
		return &UnsafeError{Reason: err.Error()}
	}
	// What prev held, as git reads it; nothing when git could not.
	held := map[Var]int{}
	if old, err := Parse(prev); err == nil {
		for _, v := range old {
			held[v]++
		}
	}
	for _, v := range vars {
		if held[v] > 0 {
			held[v]--
			continue
		}
		if why := unsafe(v, r); why != "" {
			return &UnsafeError{Name: v.Name, Value: v.Value, Reason: why}
		}
	}
	return nil
}

// unsafe says why git must not get v from a sandboxed command; "".
func unsafe(v Var, r Rules) string {
	section, sub, key := v.Section(), v.Subsection(), v.Key()
	if r.Kind == Modules {
		if section != "submodule" || sub == "" {
			return "not a submodule's variable"
		}
		return submoduleVar(v, key, true)
	}
	switch section {
	case "core":
		if sub != "" {
			break
		}
		switch key {
		case "repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode",
			"symlinks", "autocrlf", "eol", "safecrlf", "quotepath", "checkstat", "trustctime", "sharedrepository",
			"abbrev", "compression", "loosecompression", "bigfilethreshold", "sparsecheckout", "sparsecheckoutcone",
			"splitindex", "untrackedcache", "commentchar", "commentstring", "whitespace", "filesreflocktimeout",
			"packedrefstimeout", "preloadindex", "fscache", "longpaths", "multipackindex", "commitgraph":
			return ""
		case "worktree":
			if r.Worktree != nil && r.Worktree(v.Value) {
				return ""
			}
			return "a working tree outside the writable roots"
		}
	case "extensions":
		switch key {
		case "objectformat", "compatobjectformat", "refstorage", "worktreeconfig", "partialclone", "noop", "preciousobjects":
			if sub == "" {
				return ""
			}
		}
	case "remote":
		if sub == "" {
			break
		}
		switch key {
		case "url", "pushurl":
			return transport(v.Value)
		case "fetch", "push", "tagopt", "prune", "prunetags", "mirror", "skipdefaultupdate", "skipfetchall",
			"promisor", "partialclonefilter", "followremotehead":
			return ""
		}
	case "branch":
		switch key {
		case "remote", "merge", "rebase", "pushremote", "description":
			if sub != "" {
				return ""
			}
		}
	case "submodule":
		if sub == "" {
			switch key {
			case "active", "recurse", "fetchjobs", "propagatebranches":
				return ""
			}
			break
		}
		return submoduleVar(v, key, false)
	case "user":
		switch key {
		case "name", "email", "useconfigonly":
			if sub == "" {
				return ""
			}
		}
	case "init":
		if key == "defaultbranch" && sub == "" {
			return ""
		}
	case "pull":
		if (key == "rebase" || key == "ff") && sub == "" {
			return ""
		}
	case "push":
		switch key {
		case "default", "autosetupremote", "followtags":
			if sub == "" {
				return ""
			}
		}
	case "fetch":
		switch key {
		case "prune", "prunetags", "recursesubmodules", "writecommitgraph", "parallel":
			if sub == "" {
				return ""
			}
		}
	case "gc":
		switch key {
		case "auto", "autodetach", "autopacklimit", "writecommitgraph":
			if sub == "" {
				return ""
			}
		}
	case "index":
		if (key == "version" || key == "threads" || key == "skiphash") && sub == "" {
			return ""
		}
	case "rerere":
		if (key == "enabled" || key == "autoupdate") && sub == "" {
			return ""
		}
	case "advice", "color":
		// What git prints, and in which colour.
		return ""
	}
	return "not a variable git writes in ordinary work (cordon accepts only those that run no command and send git nowhere else)"
}

// submoduleVar decides submodule.NAME.key, in a .gitmodules file when
// modules.
func submoduleVar(v Var, key string, modules bool) string {
	if slices.Contains(strings.Split(v.Subsection(), "/"), "..") {
		return "a submodule name that leaves the modules directory"
	}
	switch key {
	case "url":
		return transport(v.Value)
	case "update":
		switch v.Value {
		case "checkout", "rebase", "merge", "none":
			return ""
		}
		return "a submodule update that runs a command"
	case "path":
		if !modules {
			break
		}
		if strings.HasPrefix(v.Value, "-") {
			return "a path git would take for an option"
		}
		return ""
	case "active", "branch", "fetchrecursesubmodules", "ignore", "shallow":
		return ""
	}
	return "not a variable git writes in ordinary work (cordon accepts only those that run no command and send git nowhere else)"
}

// transport refuses a URL git would fetch with a command (ext::, fd::
// transports) or take for an option.
func transport(url string) string {
	u := strings.TrimSpace(url)
	if strings.HasPrefix(u, "-") {
		return "a URL git would take for an option"
	}
	// <transport>::<address> runs git-remote-<transport>.
	i := 0
	for i < len(u) && (isAlpha(u[i]) || i > 0 && (u[i] >= '0' && u[i] <= '9' || u[i] == '+' || u[i] == '.' || u[i] == '-')) {
		i++
	}
	if strings.HasPrefix(u[i:], "::") {
		switch strings.ToLower(u[:i]) {
		case "ext", "fd":
			return "a URL whose " + u[:i] + ":: transport runs a command"
		}
	}
	return ""
}
