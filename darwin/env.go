package darwin

import (
	"path"
	"strings"

	"cordon.dev/cordon/policy"
)

// sandboxEnv tells tools inside that they run in a sandbox, as on Linux.
var sandboxEnv = []string{"CORDON_SANDBOX=1", "SANDBOX_RUNTIME=1", "IS_SANDBOX=1"}

// defaultPath is the command's PATH when the caller has none, as on Linux:
// macOS's standard directories.
const defaultPath = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// Environ returns the environment of a sandboxed command: the caller's
// environ filtered by the policy, the sandbox markers, an empty
// GIT_TEMPLATE_DIR, TMPDIR in the run's temporary directory, with clang's
// module cache there too (it would otherwise go to the per-user cache
// directory, which is not writable), the package caches' variables, and a
// default PATH when there is none. The proxy's variables are
// netproxy.Env's; append them when the policy allows any domain.
func Environ(p *policy.Policy, r Request, environ []string) []string {
	// No templates for git init and git clone: they would copy hooks into
	// the new repository, where the profile refuses them at any depth (and
	// git gives up when it cannot).
	set := append(append([]string(nil), sandboxEnv...), "GIT_TEMPLATE_DIR=")
	if r.TempDir != "" {
		set = append(set, "TMPDIR="+r.TempDir, "CLANG_MODULE_CACHE_PATH="+path.Join(r.TempDir, "clang-module-cache"))
	}
	for _, k := range r.Caches {
		set = append(set, k.Env)
	}
	names := map[string]bool{}
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	var out []string
	for _, kv := range p.Env.Filter(environ) {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	out = append(out, set...)
	if _, ok := lookupEnv(out, "PATH"); !ok {
		out = append(out, defaultPath)
	}
	return out
}
