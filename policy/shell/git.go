package shell

import (
	"slices"
	"strings"
)

// gitReadOnly are the git subcommands that only read, whatever their
// arguments (those with write options are judged in judgeGit).
var gitReadOnly = set("status", "log", "diff", "show", "blame", "annotate", "grep", "rev-parse", "describe",
	"ls-files", "ls-tree", "ls-remote", "cat-file", "shortlog", "rev-list", "merge-base", "name-rev",
	"for-each-ref", "show-ref", "count-objects", "check-ignore", "check-attr", "check-ref-format",
	"check-mailmap", "var", "help", "version", "whatchanged", "range-diff", "diff-tree", "diff-files",
	"diff-index", "show-branch", "cherry", "verify-commit", "verify-tag", "verify-pack", "fsck",
	"get-tar-commit-id", "column", "show-index", "archive", "hash-object", "apply")

// gitBuiltin are git's own commands, which no alias replaces.
var gitBuiltin = set("add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
	"check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index", "cherry",
	"cherry-pick", "clean", "clone", "commit", "commit-graph", "commit-tree", "config", "count-objects", "describe",
	"diff", "diff-files", "diff-index", "diff-tree", "difftool", "fetch", "filter-branch", "format-patch", "fsck",
	"gc", "grep", "hash-object", "help", "init", "log", "ls-files", "ls-remote", "ls-tree", "maintenance", "merge",
	"merge-base", "mergetool", "mv", "name-rev", "notes", "prune", "pull", "push", "range-diff", "read-tree", "rebase",
	"reflog", "remote", "repack", "replace", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email",
	"shortlog", "show", "show-branch", "show-ref", "sparse-checkout", "stash", "status", "submodule", "switch",
	"symbolic-ref", "tag", "update-index", "update-ref", "var", "verify-commit", "verify-tag", "version",
	"whatchanged", "worktree", "write-tree", "for-each-ref", "for-each-repo", "request-pull", "gui", "instaweb")

// gitGlobals are git's options before its subcommand.
type gitGlobals struct {
	// sub is the index of the subcommand in the arguments, len(args)
	// when there is none; dynamic is set when an option or the
	// subcommand is known only at run time (sub is then its index).
	sub     int
	dynamic bool
	// dirs are the -C, --git-dir and --work-tree directories: where git
	// may write.
	dirs []Word
	// configs are the -c and --config-env settings (NAME=VALUE; the
	// value of --config-env is $ENV, dynamic), each with its option.
	configs []gitConfigOpt
	// execPath is set by --exec-path=DIR.
	execPath bool
}

type gitConfigOpt struct {
	kv  Word
	how string
}

// parseGitGlobals reads git's options up to its subcommand.
func parseGitGlobals(args []Word) gitGlobals {
	var g gitGlobals
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if a.Dynamic {
			g.dynamic = true
			break
		}
		if !strings.HasPrefix(v, "-") {
			break
		}
		next := func() Word {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return Word{}
		}
		switch {
		case v == "-C":
			g.dirs = append(g.dirs, next())
		case v == "-c":
			g.configs = append(g.configs, gitConfigOpt{next(), "git -c"})
		case v == "--config-env" || strings.HasPrefix(v, "--config-env="):
			spec, ok := strings.CutPrefix(v, "--config-env=")
			if !ok {
				spec = next().Value
			}
			name, _, _ := strings.Cut(spec, "=")
			g.configs = append(g.configs, gitConfigOpt{Word{Value: name + "=$ENV", Dynamic: true}, "git --config-env"})
		case strings.HasPrefix(v, "--exec-path="):
			g.execPath = true
		case v == "--git-dir" || v == "--work-tree":
			g.dirs = append(g.dirs, next())
		case strings.HasPrefix(v, "--git-dir=") || strings.HasPrefix(v, "--work-tree="):
			_, val, _ := strings.Cut(v, "=")
			g.dirs = append(g.dirs, Word{Value: val, Home: strings.HasPrefix(val, "~/")})
		case v == "--namespace" || v == "--super-prefix" || v == "--attr-source" || v == "--list-cmds":
			next()
		}
	}
	g.sub = min(i, len(args))
	return g
}

// gitCommand is the subcommand and its arguments git runs for args, an
// alias set with -c expanded ("git -c alias.p=push p" is git push), or
// nil when it is unknown now or runs a shell command (alias.x=!cmd).
func gitCommand(args []Word) []Word {
	g := parseGitGlobals(args)
	if g.dynamic || g.sub >= len(args) {
		return nil
	}
	cmd := slices.Clone(args[g.sub:])
	for range 8 { // git refuses alias loops
		found := false
		for k := len(g.configs) - 1; k >= 0; k-- {
			kv := g.configs[k].kv
			key, val, _ := strings.Cut(kv.Value, "=")
			name, ok := strings.CutPrefix(strings.ToLower(key), "alias.")
			if !ok || name != strings.ToLower(cmd[0].Value) || gitBuiltin[cmd[0].Value] {
				// git ignores an alias named as one of its commands
				continue
			}
			if kv.Dynamic || strings.HasPrefix(strings.TrimSpace(val), "!") {
				return nil
			}
			var words []Word
			for _, f := range strings.Fields(val) {
				words = append(words, Word{Value: f})
			}
			if len(words) == 0 {
				return nil
			}
			cmd, found = append(words, cmd[1:]...), true
			break
		}
		if !found {
			return cmd
		}
	}
	return nil
}

func judgeGit(j *judge) {
	args := j.c.Args
	g := parseGitGlobals(args)
	for _, c := range g.configs {
		j.gitConfigPair(c.kv, c.how)
	}
	if g.execPath {
		j.need(DangerFullAccess, "git --exec-path: runs git programs from another directory")
	}
	if g.dynamic {
		j.needf(DangerFullAccess, "git %s: subcommand or option known only at run time", args[g.sub].Value)
		return
	}
	if g.sub >= len(args) {
		return
	}
	cmd := gitCommand(args)
	if cmd == nil {
		j.needf(DangerFullAccess, "git %s: an alias that runs a command", args[g.sub].Value)
		return
	}
	sub, rest := cmd[0].Value, cmd[1:]
	level, why := j.gitSub(sub, rest)
	if level == WorkspaceWrite {
		for _, d := range g.dirs {
			paths, _, ok := j.resolve(d)
			if !ok {
				j.needf(DangerFullAccess, "git %s in %s: directory known only at run time", sub, d.Value)
				continue
			}
			for _, p := range paths {
				if l, where := j.where(p, true, change); l == DangerFullAccess {
					j.needf(DangerFullAccess, "git %s in %s: %s", sub, d.Value, where)
				}
			}
		}
	}
	if why != "" {
		j.need(level, why)
	}
}

// gitSub judges one git subcommand.
func (j *judge) gitSub(sub string, rest []Word) (Level, string) {
	ops, opts := operands(rest, optSpec{})
	first := ""
	if len(ops) > 0 {
		first = ops[0].Value
	}
	for _, a := range rest {
		for _, p := range []string{"--upload-pack", "--receive-pack", "--exec", "-u"} {
			if (a.Value == p || strings.HasPrefix(a.Value, p+"=")) && (sub == "clone" || sub == "fetch" || sub == "pull" || sub == "push" || sub == "ls-remote" || sub == "archive") {
				j.needf(DangerFullAccess, "git %s %s: runs a command", sub, p)
			}
		}
		if strings.HasPrefix(a.Value, "ext::") || strings.HasPrefix(a.Value, "fd::") {
			j.needf(DangerFullAccess, "git %s %s: the ext transport runs a command", sub, a.Value)
		}
		if strings.HasPrefix(a.Value, "--template") && (sub == "clone" || sub == "init") {
			j.needf(DangerFullAccess, "git %s %s: installs hooks from a template", sub, a.Value)
		}
	}
	switch sub {
	case "config":
		return j.gitConfig(rest)
	case "diff", "log", "show", "diff-tree", "diff-index", "diff-files", "range-diff", "whatchanged":
		for i, a := range rest {
			if v, ok := strings.CutPrefix(a.Value, "--output="); ok {
				j.write(Word{Value: v, Dynamic: a.Dynamic}, "writes", data)
			} else if a.Value == "--output" && i+1 < len(rest) {
				j.write(rest[i+1], "writes", data)
			}
		}
		return ReadOnly, ""
	case "archive":
		for i, a := range rest {
			if v, ok := strings.CutPrefix(a.Value, "--output="); ok {
				j.write(Word{Value: v, Dynamic: a.Dynamic}, "writes", data)
			} else if (a.Value == "-o" || a.Value == "--output") && i+1 < len(rest) {
				j.write(rest[i+1], "writes", data)
			}
		}
		return ReadOnly, ""
	case "hash-object":
		if has(opts, "w") {
			return WorkspaceWrite, "git hash-object -w: writes objects"
		}
		return ReadOnly, ""
	case "apply":
		if has(opts, "--check", "--stat", "--numstat", "--summary") && !has(opts, "--apply", "--index", "--cached") {
			return ReadOnly, ""
		}
		return WorkspaceWrite, "git apply: patches files"
	case "branch":
		listing := has(opts, "l", "--list", "--show-current", "a", "--all", "r", "--remotes", "v", "vv", "--verbose", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
		for k := range opts {
			switch strings.TrimPrefix(k, "?") {
			case "d", "D", "m", "M", "c", "C", "f", "--delete", "--move", "--copy", "--force", "u", "--set-upstream-to", "--unset-upstream", "--edit-description", "t", "--track", "--no-track", "--create-reflog":
				return WorkspaceWrite, "git branch: changes branches"
			}
		}
		if len(ops) == 0 || listing {
			return ReadOnly, ""
		}
		return WorkspaceWrite, "git branch: creates a branch"
	case "tag":
		for k := range opts {
			switch strings.TrimPrefix(k, "?") {
			case "a", "s", "u", "d", "f", "m", "F", "--annotate", "--sign", "--delete", "--force", "--message", "--file", "--local-user":
				return WorkspaceWrite, "git tag: changes tags"
			}
		}
		if len(ops) == 0 || has(opts, "l", "--list", "v", "--verify") {
			return ReadOnly, ""
		}
		return WorkspaceWrite, "git tag: creates a tag"
	case "remote":
		if first == "" || first == "show" || first == "get-url" {
			return ReadOnly, ""
		}
	case "stash":
		if first == "list" || first == "show" {
			return ReadOnly, ""
		}
	case "worktree":
		if first == "list" {
			return ReadOnly, ""
		}
		if first == "add" && len(ops) > 1 {
			j.write(ops[1], "adds a worktree in", change)
		}
	case "reflog":
		if first == "" || first == "show" || first == "exists" || first == "list" {
			return ReadOnly, ""
		}
	case "notes":
		if first == "" || first == "list" || first == "show" {
			return ReadOnly, ""
		}
	case "submodule":
		if first == "" || first == "status" || first == "summary" {
			return ReadOnly, ""
		}
	case "bisect":
		if first == "log" || first == "visualize" || first == "view" {
			return ReadOnly, ""
		}
	case "lfs":
		if first == "ls-files" || first == "status" || first == "env" || first == "version" || first == "logs" {
			return ReadOnly, ""
		}
	case "format-patch":
		if has(opts, "--stdout") {
			return ReadOnly, ""
		}
		if o, ok := opt(opts, "o", "--output-directory"); ok {
			j.write(o, "writes patches into", change)
		}
	case "clone":
		switch {
		case len(ops) >= 2:
			j.write(ops[1], "clones into", change)
		case len(ops) == 1 && !ops[0].Dynamic:
			name := strings.TrimSuffix(strings.TrimRight(ops[0].Value, "/"), ".git")
			if k := strings.LastIndexAny(name, "/:"); k >= 0 {
				name = name[k+1:]
			}
			j.write(Word{Value: name}, "clones into", change)
		}
		for i, a := range rest {
			if (a.Value == "-c" || a.Value == "--config") && i+1 < len(rest) {
				j.gitConfigPair(rest[i+1], "git clone -c")
			}
		}
		return WorkspaceWrite, "git clone: downloads a repository"
	case "init":
		if len(ops) > 0 {
			j.write(ops[0], "creates a repository in", change)
		}
	}
	if sub == "grep" {
		if pager := gitGrepPager(rest); pager != "" {
			return DangerFullAccess, "git grep -O" + pager + ": runs a command"
		}
	}
	if gitReadOnly[sub] {
		return ReadOnly, ""
	}
	return WorkspaceWrite, "git " + sub
}

// gitGrepPager is the command git grep -O<cmd> (--open-files-in-pager=cmd,
// or a prefix of it) runs with the matching files, or "".
func gitGrepPager(args []Word) string {
	for _, a := range args {
		v := a.Value
		if v == "--" {
			break
		}
		if name, val, ok := strings.Cut(v, "="); ok && len(name) >= 4 && strings.HasPrefix("--open-files-in-pager", name) {
			return cmpOr(val, "''")
		}
		// -O bundled with other short options: -iOvim (not -eFOO, a pattern)
		if !strings.HasPrefix(v, "--") && strings.HasPrefix(v, "-") {
			for i := 1; i < len(v); i++ {
				if v[i] == 'O' && i+1 < len(v) {
					return v[i+1:]
				}
				if strings.IndexByte("efABCm0123456789O", v[i]) >= 0 {
					break
				}
			}
		}
	}
	return ""
}

// gitConfig judges git config: reads are ReadOnly, writes to the user's
// or system configuration, or of keys that make git run commands, are
// DangerFullAccess.
func (j *judge) gitConfig(args []Word) (Level, string) {
	scope := ""
	var file *Word
	action := ""
	var ops []Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case a.Dynamic:
			ops = append(ops, a)
		case v == "--global" || v == "--system":
			scope = v
		case v == "-f" || v == "--file":
			if i+1 < len(args) {
				i++
				file = &args[i]
			}
		case strings.HasPrefix(v, "--file="):
			file = &Word{Value: strings.TrimPrefix(v, "--file=")}
		case v == "--blob" || v == "--type" || v == "--default" || v == "--comment":
			i++
		case v == "-l" || v == "--list" || strings.HasPrefix(v, "--get"):
			action = "read"
		case v == "-e" || v == "--edit":
			action = "edit"
		case v == "--add" || strings.HasPrefix(v, "--replace-all") || strings.HasPrefix(v, "--unset") || v == "--rename-section" || v == "--remove-section":
			action = "write"
		case strings.HasPrefix(v, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if action == "" && len(ops) > 0 && !ops[0].Dynamic {
		switch ops[0].Value {
		case "get", "list":
			action = "read"
			ops = ops[1:]
		case "set", "unset", "rename-section", "remove-section":
			action = "write"
			ops = ops[1:]
		case "edit":
			action = "edit"
		}
	}
	if action == "" {
		action = "read"
		if len(ops) >= 2 {
			action = "write"
		}
	}
	if action == "read" {
		return ReadOnly, ""
	}
	if file != nil {
		j.write(*file, "git config writes", change)
	}
	switch scope {
	case "--global":
		return DangerFullAccess, "git config --global: writes the user's git configuration"
	case "--system":
		return DangerFullAccess, "git config --system: writes the system git configuration"
	}
	if action == "edit" {
		return DangerFullAccess, "git config --edit: any key can be set"
	}
	if len(ops) > 0 {
		val := Word{}
		if len(ops) > 1 {
			val = ops[1]
		}
		if ops[0].Dynamic || gitKeyRuns(ops[0].Value, val) {
			return DangerFullAccess, "git config " + ops[0].Value + ": makes git run commands"
		}
	}
	return WorkspaceWrite, "git config: changes the repository's configuration"
}

// gitConfigPair judges a key=value given on the command line.
func (j *judge) gitConfigPair(kv Word, how string) {
	if key, _ := gitConfigSplit(kv); gitConfigRuns(kv) {
		j.needf(DangerFullAccess, "%s %s: makes git run commands", how, key)
	}
}

// gitConfigSplit splits a key=value given on the command line; the value
// is dynamic when the pair is.
func gitConfigSplit(kv Word) (string, Word) {
	key, val, _ := strings.Cut(kv.Value, "=")
	return key, Word{Value: val, Dynamic: kv.Dynamic}
}

// gitConfigRuns reports a key=value given on the command line that makes
// git run commands: a key known only at run time, or one gitKeyRuns names
// (only the value is dynamic when the key is literal).
func gitConfigRuns(kv Word) bool {
	key, val := gitConfigSplit(kv)
	return kv.Dynamic && (key == "" || strings.Contains(key, "$")) || gitKeyRuns(key, val)
}

// gitKeyRuns reports a git configuration key whose value git runs as a
// command, loads as configuration or trusts.
func gitKeyRuns(key string, val Word) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass",
		"core.gitproxy", "core.worktree", "core.alternaterefscommand", "credential.helper", "diff.external",
		"gpg.program", "sequence.editor", "uploadpack.packobjectshook", "include.path", "init.templatedir",
		"safe.directory", "sendemail.smtpserver", "web.browser", "protocol.allow":
		return true
	}
	last := k
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		last = k[i+1:]
	}
	switch {
	case strings.HasPrefix(k, "alias."):
		return val.Dynamic || strings.HasPrefix(strings.TrimSpace(val.Value), "!")
	case strings.HasPrefix(k, "filter."), strings.HasPrefix(k, "pager."), strings.HasPrefix(k, "includeif."),
		strings.HasPrefix(k, "hook."), strings.HasPrefix(k, "protocol."):
		return true
	case strings.HasPrefix(k, "submodule.") && last == "update":
		return val.Dynamic || strings.HasPrefix(strings.TrimSpace(val.Value), "!")
	}
	switch last {
	case "textconv", "command", "cmd", "driver", "helper", "program", "uploadpack", "receivepack", "proxy",
		"sshcommand", "hookspath", "fsmonitor", "editor", "askpass", "path", "tool":
		return true
	}
	return false
}

func judgeGo(j *judge) {
	s, rest := sub(j.c.Args)
	switch s {
	case "", "version", "list", "doc", "help":
		return
	case "env":
		for _, a := range rest {
			if a.Value == "-w" || a.Value == "-u" {
				j.need(DangerFullAccess, "go env -w: changes the user's Go environment")
				return
			}
		}
		return
	case "mod":
		s2, rest2 := sub(rest)
		switch s2 {
		case "graph", "why", "verify", "help":
			return
		case "edit":
			for _, a := range rest2 {
				if a.Value == "-json" || a.Value == "-print" {
					return
				}
			}
		}
		j.needf(WorkspaceWrite, "go mod %s", s2)
		return
	case "clean":
		for _, a := range rest {
			switch a.Value {
			case "-cache", "-modcache", "-testcache", "-fuzzcache":
				j.needf(DangerFullAccess, "go clean %s: deletes a cache outside the workspace", a.Value)
			}
		}
	case "install":
		for _, a := range j.c.Assigns {
			if a.Name == "GOBIN" {
				j.write(a.Value, "installs into", change)
				j.need(WorkspaceWrite, "go install")
				return
			}
		}
		j.need(DangerFullAccess, "go install: installs a program outside the workspace (GOBIN)")
		return
	}
	for i, a := range rest {
		if a.Value == "-o" && i+1 < len(rest) {
			j.write(rest[i+1], "writes", change)
		}
	}
	switch s {
	case "build", "vet", "generate", "fix", "fmt", "tool", "work", "get", "clean":
		j.needf(WorkspaceWrite, "go %s", s)
	case "test":
		j.need(WorkspaceWrite, "runs tests")
	case "run":
		j.need(WorkspaceWrite, "runs a program")
	default:
		j.needf(WorkspaceWrite, "go %s", s)
	}
}

func judgeGofmt(j *judge) {
	ops, opts := operands(j.c.Args, optSpec{flags: "wldesS", args: "r", long: " cpuprofile "})
	if !has(opts, "w") {
		return
	}
	for _, w := range ops {
		j.write(w, "formats", change)
	}
	j.need(WorkspaceWrite, "formats files")
}
