// Package caches knows where package managers keep what they download and
// build outside the project — their caches, and the few install locations
// they fill by themselves (pip --user's site and scripts, poetry's
// virtual environments, the package managers corepack fetches) — and how
// each can be made writable in a sandbox without the host's own directory
// ever being written.
//
// A sandboxed command must not plant a package in the user's cache that
// the host's next unsandboxed install trusts. So each directory is either
// seen through a copy-on-write view (Linux: an overlay whose lower layer
// is the host's directory and whose upper layer is cordon's, kept per
// workspace: the overlay mode), or redirected through the tool's own
// variable to a directory of cordon's, per workspace (macOS, the
// container mode: the redirect mode). Credentials and configuration that
// live beside a cache (cargo's credentials and config in CARGO_HOME,
// gradle.properties in GRADLE_USER_HOME) are never part of it: only the
// cache's own directories are named, and a tool whose cache has no
// variable of its own (cargo, gradle) has no redirect.
//
// The package is pure: it computes paths from a home and an environment,
// and reads nothing. The runtime makes the directories (runtime/caches.go),
// spec turns the views into mounts, darwin into profile rules.
package caches

import (
	"path"
	"slices"
	"strings"

	"cordon.dev/cordon/internal/paths"
)

// Cache is one directory a package manager writes outside the project.
type Cache struct {
	// Name names it (npm, go-mod, pip-user-bin), for cordon config and
	// the directories of cordon's that hold it.
	Name string `json:"name"`
	// Tool is the package manager.
	Tool string `json:"tool"`
	// Path is the host directory the tool uses, absolute, as the tool
	// finds it from the caller's environment; empty when it has none
	// that can be seen through an overlay (the redirect mode only).
	Path string `json:"path,omitempty"`
	// Var is the variable that points the tool elsewhere; empty when the
	// tool has none of the cache's own (the overlay mode only).
	Var string `json:"var,omitempty"`
	// Instead, for a cache with no Path, names the caches it stands for
	// in the overlay mode when one of them has no view: pip's user base
	// redirected whole when its lib or bin cannot be seen through an
	// overlay.
	Instead []string `json:"instead,omitempty"`
}

// Redirect returns the environment entry that points the tool at dir,
// given the caller's environment env: NAME=dir, or for maven the
// caller's MAVEN_OPTS with -Dmaven.repo.local=dir added.
func (c Cache) Redirect(dir string, env []string) string {
	if c.Var == "MAVEN_OPTS" {
		opts := strings.TrimSpace(lookup(env, "MAVEN_OPTS") + " -Dmaven.repo.local=" + dir)
		return "MAVEN_OPTS=" + opts
	}
	return c.Var + "=" + dir
}

// For returns the caches of the package managers cordon knows, for a
// caller with the home directory home and the environment env (NAME=value)
// on the system goos ("linux", "darwin"). Paths the environment names
// relative are ignored, as the tools ignore them; a cache inside another
// is left out (the outer one covers it).
func For(home string, env []string, goos string) []Cache {
	get := func(name string) string {
		v := lookup(env, name)
		if !path.IsAbs(v) {
			return ""
		}
		return path.Clean(v)
	}
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	h := func(rel string) string { return path.Join(home, rel) }
	// XDG's directories on Linux; macOS's own for the tools that use them.
	cacheHome := or(get("XDG_CACHE_HOME"), h(".cache"))
	dataHome := or(get("XDG_DATA_HOME"), h(".local/share"))
	sysCache := cacheHome
	if goos == "darwin" {
		sysCache = h("Library/Caches")
	}
	gopath := h("go")
	if gp := lookup(env, "GOPATH"); gp != "" {
		if first, _, _ := strings.Cut(gp, ":"); path.IsAbs(first) {
			gopath = path.Clean(first)
		}
	}
	// A module cache of its own only where GOMODCACHE puts it outside
	// GOPATH/pkg.
	gomodcache := get("GOMODCACHE")
	if gomodcache != "" && paths.Under(gomodcache, path.Join(gopath, "pkg")) {
		gomodcache = ""
	}
	gocache := or(get("GOCACHE"), path.Join(sysCache, "go-build"))
	if lookup(env, "GOCACHE") == "off" {
		gocache = ""
	}
	pnpmStore := path.Join(dataHome, "pnpm/store")
	pnpmCache := path.Join(cacheHome, "pnpm")
	yarnCache := path.Join(cacheHome, "yarn")
	pipCache := path.Join(cacheHome, "pip")
	poetryCache := path.Join(cacheHome, "pypoetry")
	if goos == "darwin" {
		pnpmStore, pnpmCache = h("Library/pnpm/store"), h("Library/Caches/pnpm")
		yarnCache, pipCache, poetryCache = h("Library/Caches/Yarn"), h("Library/Caches/pip"), h("Library/Caches/pypoetry")
	}
	cargoHome := or(get("CARGO_HOME"), h(".cargo"))
	gradleHome := or(get("GRADLE_USER_HOME"), h(".gradle"))
	userBase := or(get("PYTHONUSERBASE"), h(".local"))

	all := []Cache{
		{Name: "npm", Tool: "npm", Path: or(get("npm_config_cache"), h(".npm")), Var: "npm_config_cache"},
		// node-gyp's headers, for native modules built at install.
		{Name: "node-gyp", Tool: "npm", Path: or(get("npm_config_devdir"), path.Join(cacheHome, "node-gyp")), Var: "npm_config_devdir"},
		{Name: "pnpm-store", Tool: "pnpm", Path: or(get("npm_config_store_dir"), pnpmStore), Var: "npm_config_store_dir"},
		{Name: "pnpm", Tool: "pnpm", Path: or(get("npm_config_cache_dir"), pnpmCache), Var: "npm_config_cache_dir"},
		{Name: "yarn", Tool: "yarn", Path: or(get("YARN_CACHE_FOLDER"), yarnCache), Var: "YARN_CACHE_FOLDER"},
		{Name: "yarn-berry", Tool: "yarn", Path: or(get("YARN_GLOBAL_FOLDER"), h(".yarn/berry")), Var: "YARN_GLOBAL_FOLDER"},
		// The package managers corepack fetches, which it runs later.
		{Name: "corepack", Tool: "corepack", Path: or(get("COREPACK_HOME"), path.Join(cacheHome, "node/corepack")), Var: "COREPACK_HOME"},
		{Name: "bun", Tool: "bun", Path: or(get("BUN_INSTALL_CACHE_DIR"), h(".bun/install/cache")), Var: "BUN_INSTALL_CACHE_DIR"},
		{Name: "pip", Tool: "pip", Path: or(get("PIP_CACHE_DIR"), pipCache), Var: "PIP_CACHE_DIR"},
		// pip install --user: the user site and its scripts (on PATH),
		// seen through views; redirected, the whole user base.
		{Name: "pip-user-lib", Tool: "pip", Path: path.Join(userBase, "lib")},
		{Name: "pip-user-bin", Tool: "pip", Path: path.Join(userBase, "bin")},
		{Name: "pip-user", Tool: "pip", Var: "PYTHONUSERBASE", Instead: []string{"pip-user-lib", "pip-user-bin"}},
		{Name: "uv", Tool: "uv", Path: or(get("UV_CACHE_DIR"), path.Join(cacheHome, "uv")), Var: "UV_CACHE_DIR"},
		// Also poetry's virtual environments, which the host runs.
		{Name: "poetry", Tool: "poetry", Path: or(get("POETRY_CACHE_DIR"), poetryCache), Var: "POETRY_CACHE_DIR"},
		// Not CARGO_HOME: it holds the credentials and the config.
		{Name: "cargo-registry", Tool: "cargo", Path: path.Join(cargoHome, "registry")},
		{Name: "cargo-git", Tool: "cargo", Path: path.Join(cargoHome, "git")},
		// GOPATH/pkg: the module cache and the checksum database's
		// cache, which go must write too (redirected: GOPATH, so that
		// go install's bin is the workspace's as well).
		{Name: "go-path", Tool: "go", Path: path.Join(gopath, "pkg"), Var: "GOPATH"},
		{Name: "go-mod", Tool: "go", Path: gomodcache, Var: "GOMODCACHE"},
		{Name: "go-build", Tool: "go", Path: gocache, Var: "GOCACHE"},
		{Name: "maven", Tool: "maven", Path: h(".m2/repository"), Var: "MAVEN_OPTS"},
		// Not GRADLE_USER_HOME: its gradle.properties holds credentials,
		// its init scripts run at every build.
		{Name: "gradle-caches", Tool: "gradle", Path: path.Join(gradleHome, "caches")},
		{Name: "gradle-wrapper", Tool: "gradle", Path: path.Join(gradleHome, "wrapper")},
		{Name: "gradle-daemon", Tool: "gradle", Path: path.Join(gradleHome, "daemon")},
		{Name: "gradle-native", Tool: "gradle", Path: path.Join(gradleHome, "native")},
		{Name: "gradle-jdks", Tool: "gradle", Path: path.Join(gradleHome, "jdks")},
	}
	var out []Cache
	for i, c := range all {
		// (go-mod: only where GOMODCACHE is apart; go-build: not when
		// the caller has turned the build cache off)
		if c.Path == "" && c.Var == "" || c.Name == "go-mod" && c.Path == "" || c.Name == "go-build" && c.Path == "" {
			continue
		}
		if c.Path != "" && slices.ContainsFunc(all, func(o Cache) bool { return o.Path != "" && paths.Below(c.Path, o.Path) }) ||
			slices.ContainsFunc(all[:i], func(o Cache) bool { return o.Path == c.Path }) {
			c.Path = ""
			if c.Var == "" {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// lookup returns the last value of name in env.
func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
