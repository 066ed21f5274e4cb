package shell

import (
	"strings"
)

// Package managers, language toolchains, container and cloud tools.

// anyWord reports whether args contain one of words.
func anyWord(args []Word, words ...string) bool {
	for _, a := range args {
		for _, w := range words {
			if a.Value == w {
				return true
			}
		}
	}
	return false
}

func judgeNpm(j *judge) {
	base := j.c.Base()
	args := j.c.Args
	global := anyWord(args, "-g", "--global", "--location=global") ||
		func() bool {
			for i, a := range args {
				if a.Value == "--location" && i+1 < len(args) && args[i+1].Value == "global" {
					return true
				}
			}
			return false
		}()
	s, rest := sub(args, "-w", "--workspace", "-C", "--dir", "--cwd", "--filter", "--prefix", "--location",
		"--loglevel", "--registry", "--userconfig", "--globalconfig", "--cache", "--tag", "--otp", "--access",
		"--scope", "--include", "--omit", "--before", "--shell", "--script-shell", "--node-options", "--editor", "--browser")
	if base == "yarn" && s == "global" {
		j.need(DangerFullAccess, "yarn global: installs packages outside the workspace")
		return
	}
	switch s {
	case "", "ls", "list", "ll", "la", "view", "v", "info", "show", "outdated", "help", "root", "prefix", "bin",
		"why", "explain", "search", "s", "fund", "doctor", "ping", "whoami", "query", "licenses", "versions":
		return
	case "audit":
		if anyWord(rest, "fix") {
			j.need(WorkspaceWrite, "npm audit fix: changes dependencies")
		}
		return
	case "version":
		if len(rest) > 0 {
			j.need(WorkspaceWrite, "npm version: bumps the package version")
		}
		return
	case "config", "c", "get", "set":
		s2, _ := sub(rest)
		if s == "get" || s2 == "get" || s2 == "list" || s2 == "ls" || s2 == "" && s == "config" {
			return
		}
		if anyWord(args, "--location=project") {
			j.need(WorkspaceWrite, base+" config: changes the project's configuration")
			return
		}
		j.need(DangerFullAccess, base+" config: changes the user's package manager configuration")
		return
	case "publish", "unpublish", "deprecate", "owner", "access", "token", "adduser", "add-user", "login", "logout",
		"dist-tag", "star", "unstar", "team", "org", "hook", "profile", "npm":
		j.needf(DangerFullAccess, "%s %s: changes the package registry or credentials", base, s)
		return
	case "link", "ln":
		if len(rest) == 0 || global {
			j.needf(DangerFullAccess, "%s link: links a package globally", base)
			return
		}
	case "cache":
		if s2, _ := sub(rest); s2 == "clean" || s2 == "clear" || s2 == "rm" || s2 == "add" || s2 == "prune" {
			j.needf(DangerFullAccess, "%s cache %s: changes the package cache outside the workspace", base, s2)
			return
		}
		return
	case "install", "i", "isntall", "add", "ci", "clean-install", "uninstall", "remove", "rm", "r", "un",
		"unlink", "update", "up", "upgrade", "dedupe", "prune", "rebuild", "install-test", "it":
		if global {
			j.needf(DangerFullAccess, "%s %s -g: installs or removes packages outside the workspace", base, s)
			return
		}
		j.needf(WorkspaceWrite, "%s %s: installs packages into the project (runs their install scripts)", base, s)
		return
	case "run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart", "exec", "x", "dlx", "create", "init", "build", "dev":
		j.needf(WorkspaceWrite, "%s %s: runs package scripts", base, s)
		return
	}
	j.needf(WorkspaceWrite, "%s %s", base, s)
}

func judgeBun(j *judge) {
	s, _ := sub(j.c.Args)
	switch s {
	case "install", "i", "add", "a", "remove", "rm", "update", "link", "unlink", "pm", "publish", "outdated", "audit", "info":
		judgeNpm(j)
		return
	}
	judgeInterpreter(j)
}

func judgePip(j *judge) { judgePipArgs(j, j.c.Args) }

func judgePipArgs(j *judge, args []Word) {
	s, rest := sub(args, "--python", "--log", "--cache-dir", "--proxy", "--cert", "--client-cert", "--timeout", "--retries", "--exists-action", "--trusted-host", "--src", "--root-user-action")
	switch s {
	case "", "list", "show", "freeze", "check", "help", "search", "index", "inspect", "debug", "hash", "tree":
		return
	case "config":
		if s2, _ := sub(rest); s2 == "get" || s2 == "list" || s2 == "debug" || s2 == "" {
			return
		}
		if anyWord(rest, "--site") {
			j.need(WorkspaceWrite, "pip config: changes the environment's configuration")
			return
		}
		j.need(DangerFullAccess, "pip config: changes the user's pip configuration")
		return
	case "cache":
		if s2, _ := sub(rest); s2 == "purge" || s2 == "remove" {
			j.need(DangerFullAccess, "pip cache: deletes the cache outside the workspace")
		}
		return
	case "install", "uninstall", "download", "wheel", "sync":
		for i, a := range rest {
			v := a.Value
			switch {
			case v == "--user":
				j.needf(DangerFullAccess, "pip %s --user: installs into the home directory", s)
			case v == "--break-system-packages" || v == "--system":
				j.needf(DangerFullAccess, "pip %s %s: changes the system's Python packages", s, v)
			case v == "-t" || v == "--target" || v == "--prefix" || v == "--root" || v == "-d" || v == "--dest" || v == "-w" || v == "--wheel-dir":
				if i+1 < len(rest) {
					j.write(rest[i+1], "installs into", change)
				}
			case strings.HasPrefix(v, "--target=") || strings.HasPrefix(v, "--prefix=") || strings.HasPrefix(v, "--root=") || strings.HasPrefix(v, "--dest=") || strings.HasPrefix(v, "--wheel-dir="):
				_, val, _ := strings.Cut(v, "=")
				j.write(Word{Value: val, Dynamic: a.Dynamic}, "installs into", change)
			}
		}
		j.needf(WorkspaceWrite, "pip %s: installs Python packages into the active environment", s)
		return
	}
	j.needf(WorkspaceWrite, "pip %s", s)
}

func judgePipx(j *judge) {
	switch s, _ := sub(j.c.Args); s {
	case "", "list", "environment", "--version", "completions":
		return
	case "run":
		j.need(WorkspaceWrite, "pipx run: runs a package (may download it)")
	default:
		j.needf(DangerFullAccess, "pipx %s: installs tools outside the workspace", s)
	}
}

func judgeUv(j *judge) {
	s, rest := sub(j.c.Args, "--directory", "--project", "--cache-dir", "--python", "-p", "--config-file")
	switch s {
	case "", "version", "tree", "help":
		return
	case "pip":
		judgePipArgs(j, rest)
		return
	case "tool":
		if s2, _ := sub(rest); s2 == "run" || s2 == "list" || s2 == "dir" {
			j.need(WorkspaceWrite, "uv tool: runs a tool")
			return
		}
		j.need(DangerFullAccess, "uv tool: installs tools outside the workspace")
		return
	case "python":
		if s2, _ := sub(rest); s2 == "list" || s2 == "find" || s2 == "dir" {
			return
		}
		j.need(DangerFullAccess, "uv python: installs Python outside the workspace")
		return
	case "self", "publish":
		j.needf(DangerFullAccess, "uv %s", s)
		return
	case "cache":
		if s2, _ := sub(rest); s2 == "dir" {
			return
		}
		j.need(DangerFullAccess, "uv cache: changes the cache outside the workspace")
		return
	}
	j.needf(WorkspaceWrite, "uv %s", s)
}

func judgePoetry(j *judge) {
	s, rest := sub(j.c.Args, "-C", "--directory", "-P", "--project")
	switch s {
	case "", "show", "check", "about", "list", "search", "version":
		if s == "version" && len(rest) > 0 {
			j.need(WorkspaceWrite, "poetry version: bumps the version")
		}
		return
	case "env":
		if s2, _ := sub(rest); s2 == "info" || s2 == "list" {
			return
		}
	case "self", "publish":
		j.needf(DangerFullAccess, "poetry %s", s)
		return
	case "config":
		if anyWord(rest, "--list") || len(rest) <= 1 {
			return
		}
		if !anyWord(rest, "--local") {
			j.need(DangerFullAccess, "poetry config: changes the user's configuration")
			return
		}
	}
	j.needf(WorkspaceWrite, "poetry %s", s)
}

func judgeCargo(j *judge) {
	s, _ := sub(j.c.Args, "--manifest-path", "-Z", "--config", "--color", "-C")
	switch s {
	case "", "version", "metadata", "tree", "search", "locate-project", "pkgid", "verify-project", "read-manifest", "help", "info":
		return
	case "install", "uninstall", "publish", "login", "logout", "owner", "yank":
		j.needf(DangerFullAccess, "cargo %s: changes the home directory or the registry", s)
		return
	case "test", "bench", "nextest":
		j.need(WorkspaceWrite, "runs tests")
	case "run":
		j.need(WorkspaceWrite, "runs a program")
	default:
		j.needf(WorkspaceWrite, "cargo %s", s)
	}
}

func judgeRustup(j *judge) {
	s, rest := sub(j.c.Args)
	switch s {
	case "", "show", "which", "doc", "help", "--version":
		return
	case "toolchain", "target", "component":
		if s2, _ := sub(rest); s2 == "list" {
			return
		}
	case "run":
		j.need(WorkspaceWrite, "rustup run: runs a program")
		return
	}
	j.needf(DangerFullAccess, "rustup %s: changes toolchains outside the workspace", s)
}

// containerReadOnly are the docker subcommands (and subcommands of its
// object commands) that only read.
var containerReadOnly = set("ps", "images", "inspect", "logs", "version", "info", "top", "port", "stats",
	"history", "search", "diff", "events", "ls", "list", "df", "show", "config", "help")

func judgeDocker(j *judge) {
	s, rest := sub(j.c.Args, "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--url", "--connection")
	switch s {
	case "":
		return
	case "container", "image", "network", "volume", "system", "context", "compose", "buildx", "manifest",
		"plugin", "node", "service", "stack", "secret", "trust", "machine", "pod", "builder":
		s2, _ := sub(rest, "-f", "--file", "-p", "--project-name", "--env-file", "--profile", "--project-directory")
		if s2 == "" || containerReadOnly[s2] || s == "compose" && (s2 == "images" || s2 == "top" || s2 == "port" || s2 == "version") {
			return
		}
		j.needf(DangerFullAccess, "%s %s %s: controls the container daemon (root-equivalent)", j.c.Base(), s, s2)
		return
	}
	if containerReadOnly[s] {
		return
	}
	j.needf(DangerFullAccess, "%s %s: controls the container daemon (root-equivalent)", j.c.Base(), s)
}

func judgeKubectl(j *judge) {
	s, rest := sub(j.c.Args, "-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token", "--as")
	switch s {
	case "", "get", "describe", "logs", "explain", "api-resources", "api-versions", "version", "cluster-info",
		"top", "diff", "events", "wait", "completion", "help", "kustomize":
		return
	case "config":
		if s2, _ := sub(rest); s2 == "view" || s2 == "get-contexts" || s2 == "current-context" || s2 == "get-clusters" || s2 == "get-users" {
			return
		}
		j.need(DangerFullAccess, "kubectl config: changes cluster credentials")
		return
	case "auth":
		if s2, _ := sub(rest); s2 == "can-i" || s2 == "whoami" {
			return
		}
	case "rollout":
		if s2, _ := sub(rest); s2 == "status" || s2 == "history" {
			return
		}
	case "plugin":
		if s2, _ := sub(rest); s2 == "list" {
			return
		}
	case "port-forward", "proxy":
		j.needf(WorkspaceWrite, "kubectl %s: opens a connection to the cluster", s)
		return
	}
	j.needf(DangerFullAccess, "kubectl %s: changes a Kubernetes cluster", s)
}

func judgeHelm(j *judge) {
	s, rest := sub(j.c.Args, "-n", "--namespace", "--kube-context", "--kubeconfig")
	switch s {
	case "", "list", "ls", "status", "get", "history", "show", "inspect", "search", "template", "lint", "version", "env", "verify", "help":
		return
	case "repo", "dependency", "dep", "plugin":
		if s2, _ := sub(rest); s2 == "list" || s2 == "ls" {
			return
		}
	}
	j.needf(DangerFullAccess, "helm %s: changes a cluster or the user's configuration", s)
}

func judgeTerraform(j *judge) {
	s, rest := sub(j.c.Args, "-chdir")
	switch s {
	case "", "plan", "validate", "show", "output", "version", "providers", "graph", "console", "help":
		return
	case "fmt":
		if anyWord(rest, "-check") {
			return
		}
		j.need(WorkspaceWrite, "formats files")
		return
	case "state":
		if s2, _ := sub(rest); s2 == "list" || s2 == "show" || s2 == "pull" {
			return
		}
	case "workspace":
		if s2, _ := sub(rest); s2 == "list" || s2 == "show" {
			return
		}
	case "init", "get":
		j.needf(WorkspaceWrite, "%s %s: downloads providers and modules", j.c.Base(), s)
		return
	}
	j.needf(DangerFullAccess, "%s %s: changes real infrastructure", j.c.Base(), s)
}

func judgeAws(j *judge) {
	s, rest := sub(j.c.Args, "--profile", "--region", "--output", "--endpoint-url", "--query", "--cli-read-timeout", "--cli-connect-timeout", "--color", "--ca-bundle")
	op, opRest := sub(rest, "--profile", "--region", "--output", "--endpoint-url", "--query")
	switch {
	case s == "" || s == "help" || op == "help":
		return
	case s == "configure":
		if op == "list" || op == "get" || op == "list-profiles" {
			return
		}
		j.need(DangerFullAccess, "aws configure: changes cloud credentials")
		return
	case s == "s3":
		switch op {
		case "ls", "presign":
			return
		case "cp", "sync", "mv":
			ops, _ := operands(opRest, optSpec{})
			if len(ops) >= 2 {
				if dst := ops[len(ops)-1]; !strings.HasPrefix(dst.Value, "s3://") {
					j.write(dst, "downloads into", change)
				}
			}
			if op == "mv" {
				j.need(DangerFullAccess, "aws s3 mv: deletes cloud objects")
			}
			j.needf(WorkspaceWrite, "aws s3 %s: copies cloud objects", op)
			return
		}
	case strings.HasPrefix(op, "describe-") || strings.HasPrefix(op, "list-") || strings.HasPrefix(op, "get-") || op == "wait":
		return
	}
	j.needf(DangerFullAccess, "aws %s %s: changes cloud resources", s, op)
}

func judgeGcloud(j *judge) {
	args := j.c.Args
	for _, a := range args {
		if a.Value == "delete" || a.Value == "set" || a.Value == "login" || a.Value == "activate-service-account" || a.Value == "print-access-token" {
			j.needf(DangerFullAccess, "gcloud %s: changes cloud resources or credentials", a.Value)
			return
		}
	}
	for _, a := range args {
		switch a.Value {
		case "list", "describe", "info", "version", "help", "get-value", "get-iam-policy", "read":
			return
		}
	}
	if len(args) == 0 {
		return
	}
	j.need(DangerFullAccess, "gcloud: changes cloud resources")
}

func judgeAz(j *judge) {
	args := j.c.Args
	for _, a := range args {
		if a.Value == "delete" || a.Value == "login" || a.Value == "set" || a.Value == "purge" {
			j.needf(DangerFullAccess, "az %s: changes cloud resources or credentials", a.Value)
			return
		}
	}
	for _, a := range args {
		switch a.Value {
		case "list", "show", "version", "--version", "help", "--help":
			return
		}
	}
	if len(args) == 0 {
		return
	}
	j.need(DangerFullAccess, "az: changes cloud resources")
}

func judgeGh(j *judge) {
	s, rest := sub(j.c.Args, "-R", "--repo")
	s2, _ := sub(rest, "-R", "--repo", "-L", "--limit", "-s", "--state", "-q", "--jq", "-t", "--template", "--json", "-a", "--author", "-l", "--label", "-b", "--branch")
	if anyWord(rest, "delete") || s2 == "delete" {
		j.needf(DangerFullAccess, "gh %s delete: deletes on GitHub", s)
		return
	}
	switch s {
	case "", "status", "search", "--version", "version", "help", "browse":
		return
	case "auth":
		if s2 == "status" {
			return
		}
		j.needf(DangerFullAccess, "gh auth %s: changes or prints GitHub credentials", s2)
		return
	case "api":
		for _, a := range rest {
			v := a.Value
			if v == "-X" || v == "--method" || strings.HasPrefix(v, "--method=") || v == "-f" || v == "-F" || v == "--field" || v == "--raw-field" || v == "--input" || strings.HasPrefix(v, "-X") && len(v) > 2 {
				j.need(WorkspaceWrite, "gh api: changes GitHub state")
				return
			}
		}
		return
	case "pr", "issue", "repo", "run", "release", "workflow", "gist", "label", "cache", "ruleset", "variable", "secret", "project", "codespace", "org", "extension":
		switch s2 {
		case "list", "view", "status", "diff", "checks", "watch", "ls":
			return
		}
		if s == "secret" || s == "variable" || s == "extension" || s == "codespace" {
			j.needf(DangerFullAccess, "gh %s %s: changes GitHub settings or runs remote code", s, s2)
			return
		}
	}
	j.needf(WorkspaceWrite, "gh %s %s: changes GitHub state", s, s2)
}

// systemPackages judges a system package manager given its read-only
// subcommands.
func systemPackages(j *judge, readOnlySubs map[string]bool, withArg ...string) {
	s, _ := sub(j.c.Args, withArg...)
	if s == "" || readOnlySubs[s] {
		return
	}
	j.needf(DangerFullAccess, "%s %s: changes system packages", j.c.Base(), s)
}

func judgeApt(j *judge) {
	if anyWord(j.c.Args, "-s", "--simulate", "--dry-run", "--just-print", "--no-act", "--recon") {
		return
	}
	if s, _ := sub(j.c.Args, "-o", "-c", "-t"); s == "download" || s == "source" {
		j.write(Word{Value: "."}, "downloads into", change)
		j.need(WorkspaceWrite, "downloads packages")
		return
	}
	systemPackages(j, set("list", "search", "show", "showsrc", "policy", "depends", "rdepends", "changelog", "madison", "check", "help", "moo"), "-o", "-c", "-t")
}

func judgeDpkg(j *judge) {
	for _, a := range j.c.Args {
		switch a.Value {
		case "-l", "-L", "-s", "-S", "-p", "-c", "-I", "--list", "--listfiles", "--status", "--search", "--print-avail",
			"--get-selections", "--print-architecture", "--print-foreign-architectures", "--compare-versions",
			"--contents", "--info", "--version", "--help", "--audit", "-C", "--verify", "-V":
			return
		}
	}
	j.need(DangerFullAccess, "dpkg: changes system packages")
}

func judgeRpm(j *judge) {
	for _, a := range j.c.Args {
		v := a.Value
		if strings.HasPrefix(v, "-q") || v == "--query" || v == "-V" || v == "--verify" || v == "--eval" || v == "-E" || v == "--showrc" || v == "-K" || v == "--checksig" || v == "--version" {
			return
		}
	}
	j.need(DangerFullAccess, "rpm: changes system packages")
}

func judgeDnf(j *judge) {
	if anyWord(j.c.Args, "--assumeno") {
		return
	}
	systemPackages(j, set("list", "info", "search", "provides", "whatprovides", "repolist", "repoquery", "check-update", "deplist", "history", "help", "--version"), "-c", "--config", "--repo", "--enablerepo", "--disablerepo", "--setopt")
}

func judgeZypper(j *judge) {
	systemPackages(j, set("search", "se", "info", "if", "list-updates", "lu", "repos", "lr", "packages", "pa", "patches", "what-provides", "wp", "help"))
}

func judgePacman(j *judge) {
	if len(j.c.Args) == 0 {
		return
	}
	v := j.c.Args[0].Value
	switch {
	case strings.HasPrefix(v, "-Q") || strings.HasPrefix(v, "-T") || v == "-V" || v == "--version" || v == "-h" || v == "--help":
		return
	case (strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "-F")) && len(v) > 2 && strings.Trim(v[2:], "silgpqx") == "":
		return
	}
	j.need(DangerFullAccess, "pacman: changes system packages")
}

func judgeApk(j *judge) {
	systemPackages(j, set("info", "list", "search", "policy", "stats", "version", "dot", "audit"))
}

func judgeBrew(j *judge) {
	s, _ := sub(j.c.Args)
	switch s {
	case "", "list", "ls", "info", "abv", "search", "config", "doctor", "dr", "outdated", "deps", "uses", "leaves",
		"--prefix", "--cellar", "--repository", "--cache", "--env", "commands", "desc", "cat", "log", "tap-info",
		"shellenv", "home", "homepage", "--version", "help", "formulae", "casks":
		return
	case "install", "uninstall", "remove", "rm", "upgrade", "update", "reinstall", "tap", "untap", "link", "ln",
		"unlink", "pin", "unpin", "cleanup", "autoremove", "services", "bundle", "postinstall", "migrate":
		j.needf(DangerFullAccess, "brew %s: changes installed software", s)
		return
	}
	j.needf(WorkspaceWrite, "brew %s", s)
}

func judgeSnap(j *judge) {
	systemPackages(j, set("list", "info", "find", "version", "services", "connections", "changes", "aliases", "help", "whoami"))
}

func judgeFlatpak(j *judge) {
	systemPackages(j, set("list", "info", "search", "remotes", "history", "ps", "--version", "help"))
}

func judgePort(j *judge) {
	systemPackages(j, set("installed", "list", "info", "search", "contents", "deps", "rdeps", "outdated", "echo", "version", "help", "provides"))
}

func judgeNixEnv(j *judge) {
	for _, a := range j.c.Args {
		if a.Value == "-q" || a.Value == "--query" || strings.HasPrefix(a.Value, "-q") {
			return
		}
	}
	j.need(DangerFullAccess, "nix-env: changes the user's profile")
}
