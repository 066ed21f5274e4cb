package darwin

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	home = "/Users/u"
	ws   = "/Users/u/proj"
)

// tricky is a directory name with everything a profile must quote or
// escape: quotes, a backslash, spaces, parentheses, every regex
// metacharacter, and non-ASCII letters.
const tricky = `My "Proj" (v2) [x]+.$^{a}|b\c?*é 🚀`

// profileCase is one golden profile.
type profileCase struct {
	name   string
	policy func(p *policy.Policy)
	req    func(r *Request)
}

func baseRequest() Request {
	return Request{
		Cwd:     ws,
		TempDir: "/var/folders/zz/abc123/T/cordon-run1",
		Tag:     "run1",
	}
}

// worktreeFS is a host whose workspace is a symbolic link to a git
// worktree with a submodule, whose ~/.aws is a symbolic link, and which has
// a symbolic link loop.
func worktreeFS() fstest.MapFS {
	link := func(to string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(to), Mode: fs.ModeSymlink} }
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"Users/u/proj":                               link("/Volumes/work/proj"),
		"Volumes/work/proj/.git":                     file("gitdir: /Users/u/main/.git/worktrees/proj\n"),
		"Volumes/work/proj/.gitmodules":              file("[submodule \"lib\"]\n\tpath = lib\n[submodule \"evil\"]\n\tpath = ../../etc\n"),
		"Volumes/work/proj/lib/.git":                 file("gitdir: ../../../../Users/u/main/.git/modules/lib\n"),
		"Users/u/main/.git/HEAD":                     file("ref: refs/heads/main\n"),
		"Users/u/main/.git/config":                   file("[core]\n\thooksPath = .husky/_ ; husky\n[include]\n\tpath = team.gitconfig\n"),
		"Volumes/work/proj/.husky/_/h":               file("#!/bin/sh\n"),
		"Users/u/main/.git/hooks":                    link("/Users/u/proj/tools/hooks"), // into the workspace, through its link
		"Volumes/work/proj/tools/hooks/pre-commit":   file("#!/bin/sh\n"),
		"Users/u/main/.git/worktrees/proj/HEAD":      file("ref: refs/heads/proj\n"),
		"Users/u/main/.git/worktrees/proj/commondir": file("../..\n"),
		"Users/u/main/.git/modules/lib/HEAD":         file("ref: refs/heads/main\n"),
		"Users/u/.aws":                               link("/Volumes/keys/aws"),
		"Volumes/keys/aws/credentials":               file("secret"),
		"Users/u/links/loop":                         link("loop"),
		"Users/u/links/relative":                     link("../.config/tool"),
	}
}

// symlinkedHomeFS is a host whose home directory is a symbolic link to
// another volume, the workspace in it.
func symlinkedHomeFS() fstest.MapFS {
	return fstest.MapFS{
		"Users/u":                             {Data: []byte("/Volumes/Home/u"), Mode: fs.ModeSymlink},
		"Volumes/Home/u/proj/.git/HEAD":       {Data: []byte("ref: refs/heads/main\n")},
		"Volumes/Home/u/.ssh/id_ed25519":      {Data: []byte("secret")},
		"Volumes/Home/u/.config/gh/hosts.yml": {Data: []byte("secret")},
	}
}

// nestedFS is a workspace holding other repositories: one and two levels
// down, one deeper, one in node_modules, and one whose .git is a file.
func nestedFS() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"Users/u/proj/.git/HEAD":                   file("ref: refs/heads/main\n"),
		"Users/u/proj/sub/.git/HEAD":               file("ref: refs/heads/main\n"),
		"Users/u/proj/sub/.git/config":             file("[core]\n\thooksPath = .githooks\n"),
		"Users/u/proj/org/lib/.git/HEAD":           file("ref: refs/heads/main\n"),
		"Users/u/proj/a/b/c/.git/HEAD":             file("ref: refs/heads/main\n"),
		"Users/u/proj/node_modules/x/.git/HEAD":    file("ref: refs/heads/main\n"),
		"Users/u/proj/vendor/mod/.git":             file("gitdir: /Users/u/elsewhere/mod.git\n"),
		"Users/u/elsewhere/mod.git/HEAD":           file("ref: refs/heads/main\n"),
		"Users/u/elsewhere/mod.git/hooks/pre-push": file("#!/bin/sh\n"),
	}
}

var profileCases = []profileCase{
	{name: "default"},
	{name: "read-only", policy: func(p *policy.Policy) { p.Mode = policy.ReadOnly }},
	{name: "allow-write-roots", policy: func(p *policy.Policy) {
		p.Filesystem.AllowWrite = []string{home + "/.cache/go-build", "/tmp/shared", home}
	}},
	{name: "deny-write-in-allow-write", policy: func(p *policy.Policy) {
		p.Filesystem.AllowWrite = []string{home + "/data"}
		p.Filesystem.DenyWrite = []string{home + "/data/locked", ws + "/generated", ws + "/not/there/yet"}
	}},
	{name: "deny-read-allow-read", policy: func(p *policy.Policy) {
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home, ws+"/.env")
		p.Filesystem.AllowRead = []string{ws, home + "/.config/git", home + "/.ssh/known_hosts"}
	}},
	{name: "deny-read-covers-root", policy: func(p *policy.Policy) {
		// The home hidden, the workspace and a cache inside it writable.
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home)
		p.Filesystem.AllowWrite = []string{home + "/.cache/build"}
	}},
	{name: "package-caches", policy: func(p *policy.Policy) {
		// The home hidden: the caches cordon keeps there stay usable.
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home)
	}, req: func(r *Request) {
		k := home + "/.cache/cordon/caches/0123456789abcdef/redirect/"
		r.Caches = []Cache{{Dir: k + "npm", Env: "npm_config_cache=" + k + "npm"}, {Dir: k + "go-mod", Env: "GOMODCACHE=" + k + "go-mod"}}
	}},
	{name: "allow-read-in-credential-store", policy: func(p *policy.Policy) {
		p.Filesystem.AllowRead = []string{home + "/.ssh/known_hosts", home + "/.config/gh/config.yml"}
	}},
	{name: "network-proxy", policy: func(p *policy.Policy) {
		p.Network.AllowedDomains = []string{"github.com", "*.npmjs.org"}
	}, req: func(r *Request) { r.HTTPProxyPort, r.SOCKSProxyPort = 49152, 49153 }},
	{name: "network-one-port", policy: func(p *policy.Policy) {
		p.Network.AllowedDomains = []string{"proxy.golang.org"}
	}, req: func(r *Request) { r.HTTPProxyPort, r.SOCKSProxyPort = 3128, 3128 }},
	{name: "network-trustd", policy: func(p *policy.Policy) {
		p.Sandbox.EnableWeakerNetworkIsolation = true
		p.Network.AllowedDomains = []string{"proxy.golang.org"}
	}, req: func(r *Request) { r.HTTPProxyPort = 3128 }},
	{name: "allow-local-binding", policy: func(p *policy.Policy) { p.Network.AllowLocalBinding = true }},
	{name: "allow-mach-lookup", policy: func(p *policy.Policy) {
		p.Network.AllowMachLookup = []string{"2BUA8C4S2C.com.1password.*", "com.apple.CoreSimulator.CoreSimulatorService"}
	}},
	{name: "allow-unix-sockets", policy: func(p *policy.Policy) {
		p.Network.AllowUnixSockets = []string{"/var/run/docker.sock", home + "/.colima/default/docker.sock", "/tmp/agent-dir"}
	}},
	{name: "allow-all-unix-sockets", policy: func(p *policy.Policy) {
		p.Network.AllowAllUnixSockets = true
		p.Network.AllowUnixSockets = []string{"/var/run/docker.sock"}
	}},
	{name: "tricky-paths", policy: func(p *policy.Policy) {
		// The policy's lists hold patterns: a name is escaped.
		w := home + "/" + tricky
		p.Workspace = w
		p.Filesystem.DenyWrite = []string{policy.EscapePattern(w + `/say "hi"`)}
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead,
			policy.EscapePattern(home+`/back\slash`), home+"/(paren) dir", policy.EscapePattern(w)+"/**/*.key")
		p.Filesystem.AllowWrite = []string{home + "/données ü/日本"}
	}, req: func(r *Request) { r.Cwd = home + "/" + tricky }},
	{name: "globs", policy: func(p *policy.Policy) {
		p.Filesystem.DenyWrite = []string{ws + "/**/*.pem", ws + "/secrets/*.key", ws + "/config/[!a-c]?.json", ws + "/{dist,build/out}/**/*.map"}
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home+"/**/.env", ws+"/app/[slug]/page.tsx", policy.EscapePattern(ws+"/app/[id]/secret.ts"))
		p.Filesystem.AllowWrite = []string{home + "/proj-*"}
	}},
	{name: "protected-every-root", policy: func(p *policy.Policy) {
		p.Filesystem.AllowWrite = []string{home + "/other", home + "/.claude"}
	}},
	{name: "home-writable-own-config", policy: func(p *policy.Policy) {
		p.Filesystem.AllowWrite = []string{home}
		p.SettingsFiles = []string{"/etc/cordon/managed-settings.json", home + "/.config/cordon/settings.json",
			home + "/.claude/settings.json", ws + "/.cordon/settings.json", "/opt/team/cordon.json"}
		p.TrustedDirs = []string{home + "/code"}
	}, req: func(r *Request) { r.Executable = home + "/go/bin/cordon" }},
	{name: "claude-host-scripts", policy: func(p *policy.Policy) {
		// Claude Code's configuration in the workspace ($CLAUDE_CONFIG_DIR)
		// and the scripts its hooks name: not writable
		p.ClaudeDir = ws + "/.claude-config"
		p.HostRun = []string{ws + "/scripts/fmt.sh", ws + "/mcp/server.js"}
	}},
	{name: "allow-git-config", policy: func(p *policy.Policy) { p.Filesystem.AllowGitConfig = true }},
	{name: "symlinked-tmp-var-etc", policy: func(p *policy.Policy) {
		p.Filesystem.AllowWrite = []string{"/var/tmp/build", "/tmp"}
		p.Filesystem.DenyWrite = []string{"/tmp/keep"}
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, "/etc/master.passwd", "/private/var/db/sudo")
	}, req: func(r *Request) { r.TempDir = "/tmp/cordon-run1" }},
	{name: "terminal", req: func(r *Request) { r.Terminal, r.TTY = true, "/dev/ttys004" }},
	{name: "terminal-unknown-device", req: func(r *Request) { r.Terminal = true }},
	{name: "workspace-under-tmp", policy: func(p *policy.Policy) {
		p.Workspace = "/tmp/agent/ws"
	}, req: func(r *Request) { r.Cwd, r.TempDir = "/tmp/agent/ws/sub", "/tmp/cordon-run1" }},
	{name: "symlinks-and-worktree", policy: func(p *policy.Policy) {
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home+"/links/loop/x", home+"/links/relative/token")
	}, req: func(r *Request) { r.FS = worktreeFS() }},
	{name: "symlinked-home", req: func(r *Request) { r.FS = symlinkedHomeFS() }},
	{name: "no-temp-dir", req: func(r *Request) { r.TempDir = "" }},
	{name: "nested-repositories", req: func(r *Request) { r.FS = nestedFS() }},
	{name: "no-socketpair", policy: func(p *policy.Policy) { p.Sandbox.AllowSocketpair = false }},
}

// build returns the case's policy and request.
func (tc profileCase) build(t *testing.T) (*policy.Policy, Request) {
	t.Helper()
	p, err := policy.Default(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	if tc.policy != nil {
		tc.policy(p)
	}
	r := baseRequest()
	if tc.req != nil {
		tc.req(&r)
	}
	return p, r
}

func TestProfileGolden(t *testing.T) {
	if len(profileCases) < 15 {
		t.Fatalf("%d golden cases; the issue asks for at least 15", len(profileCases))
	}
	for _, tc := range profileCases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := tc.build(t)
			got, err := compile(p, r)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", tc.name+".sbpl")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("profile differs from %s (-want +got):\n%s", file, diff)
			}
			checkCompiled(t, got, p, r)
		})
	}
}

// TestGoldenFilesAreCases keeps testdata free of profiles no case writes.
func TestGoldenFilesAreCases(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.sbpl")
	names := map[string]bool{}
	for _, tc := range profileCases {
		names[tc.name] = true
	}
	for _, f := range files {
		if !names[strings.TrimSuffix(filepath.Base(f), ".sbpl")] {
			t.Errorf("%s belongs to no case", f)
		}
	}
}

// compiledRules builds the case, compiles its profile and reads it for
// evaluation.
func (tc profileCase) compiledRules(t *testing.T) (*policy.Policy, Request, *sbProfile) {
	t.Helper()
	p, r := tc.build(t)
	profile, err := compile(p, r)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := loadSBPL(profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, r, sb
}

// decideBoth asks sb about a under Seatbelt's hierarchy of operations and
// as one flat list (see evaluator_test.go): a cordon profile must mean the
// same either way.
func decideBoth(sb *sbProfile, a access) (verdict, error) {
	v, err := sb.decide(a)
	if err != nil {
		return v, err
	}
	flat, err := sb.decideFlat(a)
	if err != nil {
		return v, fmt.Errorf("read as one list: %w", err)
	}
	if flat.allow != v.allow {
		return v, fmt.Errorf("%s: %v by line %d, but %v by line %d read as one list", a, v.allow, v.line, flat.allow, flat.line)
	}
	return v, nil
}

// checkCompiled parses a generated profile, checks its structure and asks
// the evaluator what the policy promises.
func checkCompiled(t *testing.T, profile string, p *policy.Policy, r Request) {
	t.Helper()
	forms, err := parseSBPL(profile)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := checkProfile(forms, r.Tag); err != nil {
		t.Fatalf("structure: %v", err)
	}
	sb, err := loadSBPL(profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sb.notUnderstood() {
		if strings.HasPrefix(f, "regex ") {
			t.Errorf("a regex the evaluator does not read: %s", f)
		}
	}
	res := resolver{fsys: r.FS}
	c, err := newCompiler(p, r)
	if err != nil {
		t.Fatal(err)
	}
	hasGlob := func(e string) bool { return !c.literalOnly(e) }
	// pathOf is the path a literal entry names (the workspace is a path).
	pathOf := func(e string) string {
		if e == p.Workspace {
			return e
		}
		return policy.UnescapePattern(e)
	}
	unescaped := func(list []string) []string {
		var out []string
		for _, e := range list {
			if !hasGlob(e) {
				out = append(out, canonical(pathOf(e)))
			}
		}
		return out
	}
	denyWrite := unescaped(p.Filesystem.DenyWrite)
	denyRead := unescaped(p.Filesystem.DenyRead)
	allowRead := unescaped(p.Filesystem.AllowRead)
	expect := func(op, p string, vnode string, want bool, why string) {
		t.Helper()
		if vnode == "" {
			vnode = "REGULAR-FILE"
		}
		v, err := decideBoth(sb, access{op: op, path: p, vnode: vnode})
		if err != nil {
			t.Errorf("%v: %s", err, why)
			return
		}
		if v.allow != want {
			verb := map[bool]string{true: "allowed", false: "denied"}
			t.Errorf("%s %s is %s (line %d), want %s: %s", op, p, verb[v.allow], v.line, verb[want], why)
		}
	}

	// What every profile allows and denies.
	expect("file-read-data", "/usr/bin/git", "", true, "reads are allowed")
	expect("file-read-data", "/dev/null", "CHARACTER-DEVICE", true, "/dev/null")
	expect("file-write-data", "/dev/null", "CHARACTER-DEVICE", true, "/dev/null")
	expect("file-read-data", "/dev/disk0", "", false, "devices are denied")
	expect("file-write-data", "/usr/local/bin/x", "", false, "writes outside the roots")
	if !underAny(home+"/elsewhere", unescaped(p.WritableRoots())) {
		expect("file-write-data", home+"/elsewhere/x", "", false, "writes outside the roots")
	}
	expect("file-link", ws+"/x", "", false, "hard links could alias denied files")
	// Root in the sandbox must not take the host's exception or special
	// ports (the task ports of crashing processes outside, launchd's).
	expect("mach-host-exception-port-set", "", "", false, "the host's exception port")
	expect("mach-host-special-port-set", "", "", false, "the host's special ports")
	if !r.Terminal || r.TTY != "" {
		if v, err := decideBoth(sb, access{op: "file-read-data", path: "/dev/ttys003", vnode: "CHARACTER-DEVICE", plain: true}); err != nil || v.allow {
			t.Errorf("file-read-data /dev/ttys003: allowed %v (line %d, %v): the user's other terminals", v.allow, v.line, err)
		}
	}
	if r.TTY != "" {
		expect("file-read-data", r.TTY, "CHARACTER-DEVICE", true, "the run's terminal")
		expect("file-write-data", r.TTY, "CHARACTER-DEVICE", true, "the run's terminal")
	}
	if r.TempDir != "" {
		expect("file-write-create", res.resolve(r.TempDir)+"/x", "", true, "the run's temporary directory")
		// A directory moved there to be edited and moved back.
		expect("file-write-create", res.resolve(r.TempDir)+"/x/.claude/settings.json", "", false, "nested names in the temporary directory")
		expect("file-write-create", res.resolve(r.TempDir)+"/x/.vscode", "DIRECTORY", false, "nested names in the temporary directory")
		tempInRoot := false
		for _, w := range p.WritableRoots() {
			tempInRoot = tempInRoot || !hasGlob(w) && paths.Below(res.resolve(r.TempDir), res.resolve(pathOf(w)))
		}
		if !tempInRoot {
			expect("file-write-create", res.resolve(r.TempDir)+"/x/remote.git/HEAD", "", true, "bare repositories in the temporary directory")
		}
	}

	// Writable roots and what stays protected in them.
	inWritable, inGitDir := p.Protected()
	// A planted commondir sends git to a config and hooks elsewhere.
	for _, g := range []string{"commondir", "modules/*/commondir", "worktrees/*/commondir"} {
		inWritable, inGitDir = append(inWritable, ".git/"+g), append(inGitDir, g)
	}
	type rootCase struct {
		dir       string
		protected []string
	}
	var roots []rootCase
	for _, w := range p.WritableRoots() {
		if w != p.Workspace && hasGlob(w) {
			continue // compiled and checked by the glob tests
		}
		for _, s := range res.spellings(pathOf(w)) {
			roots = append(roots, rootCase{s, inWritable})
		}
		dirs, _ := res.gitDirs(res.resolve(pathOf(w)))
		for _, g := range dirs {
			roots = append(roots, rootCase{g, inGitDir})
		}
	}
	for _, rc := range roots {
		file := rc.dir + "/src/main.go"
		if !underAny(file, denyWrite) {
			expect("file-write-data", file, "", true, "inside a writable root")
			expect("file-write-create", file, "", true, "inside a writable root")
			expect("file-write-unlink", file, "", true, "rm inside a writable root")
		}
		for _, name := range rc.protected {
			prot := rc.dir + "/" + strings.ReplaceAll(name, "*", "sub")
			for _, op := range []string{"file-write-data", "file-write-create", "file-write-unlink", "file-write-mode"} {
				expect(op, prot, "", false, "protected in every writable root")
				expect(op, prot+"/pre-commit", "", false, "protected in every writable root")
			}
			for _, dir := range ancestors(prot) {
				expect("file-write-unlink", dir, "DIRECTORY", false, "an ancestor of a protected path cannot be renamed")
				expect("file-write-create", dir, "DIRECTORY", false, "an ancestor of a protected path cannot be planted")
			}
			// A case-insensitive volume: .GIT/HOOKS is .git/hooks.
			other := rc.dir + "/" + strings.ToUpper(strings.ReplaceAll(name, "*", "sub"))
			expect("file-write-create", other+"/pre-commit", "", false, "protected in either case")
			if literalPattern(prot).onDataVolume() {
				expect("file-write-create", "/System/Volumes/Data"+prot+"/pre-commit", "", false, "protected through the data volume's mount point")
			}
			expect("file-write-data", other, "", false, "protected in either case")
			for _, dir := range ancestors(other) {
				if paths.Below(dir, rc.dir) {
					expect("file-write-create", dir, "DIRECTORY", false, "an ancestor of a protected path, in either case")
				}
			}
		}
		if slices.Contains(rc.protected, ".git/hooks") {
			// The names protected below every directory two levels down
			// (policy.ProtectedBelow), and the directories they lie in.
			for _, below := range []string{"", "/pkg", "/apps/web", "/Apps/WEB"} {
				for _, name := range policy.ProtectedBelow {
					expect("file-write-create", rc.dir+below+"/"+name, "", false, "protected two levels below a root")
					expect("file-write-data", rc.dir+below+"/"+strings.ToUpper(name)+"/x", "", false, "protected two levels below a root")
					if d := path.Dir(name); d != "." {
						expect("file-write-create", rc.dir+below+"/"+d, "DIRECTORY", false, "a directory nested names lie in")
						expect("file-write-unlink", rc.dir+below+"/"+d, "DIRECTORY", false, "a directory nested names lie in")
					}
				}
			}
			// A bare repository planted where a later git command runs.
			for _, head := range []string{"/HEAD", "/a/HEAD", "/a/b/c/HEAD", "/A/head"} {
				expect("file-write-create", rc.dir+head, "", false, "a bare repository's HEAD")
			}
			if !underAny(rc.dir, denyWrite) {
				for _, head := range []string{"/.git/HEAD", "/sub/.git/HEAD", "/.git/refs/remotes/origin/HEAD", "/.git/worktrees/w/HEAD", "/a/b/c/d/HEAD"} {
					expect("file-write-create", rc.dir+head, "", true, "git's own HEAD files, and deeper than Linux looks")
				}
				expect("file-write-create", rc.dir+"/a/b/c/.claude/settings.json", "", true, "deeper than Linux protects")
				expect("file-write-create", rc.dir+"/node_modules/pkg/.vscode/settings.json", "", true, "node_modules is left out")
				expect("file-write-create", rc.dir+"/pkg/.claude/notes.md", "", true, "the rest of a .claude directory")
			}
			expect("file-write-data", rc.dir+"/.git", "REGULAR-FILE", false, "a .git file")
			expect("file-write-create", rc.dir+"/.git/objects/ab/cdef", "", !underAny(rc.dir, denyWrite), "git writes objects")
		}
		if !p.Filesystem.AllowGitConfig && slices.Contains(rc.protected, ".git/config") {
			expect("file-write-data", rc.dir+"/.git/config", "", false, "git config")
		}
		if p.Filesystem.AllowGitConfig {
			expect("file-write-data", rc.dir+"/.git/config", "", true, "allowGitConfig")
		}
	}

	// denyWrite, and its ancestors.
	for _, d := range denyWrite {
		for _, s := range res.spellings(d) {
			expect("file-write-data", s, "", false, "denyWrite")
			expect("file-write-data", upperBase(s), "", false, "denyWrite, in either case")
			expect("file-write-create", s+"/x", "", false, "denyWrite")
			for _, a := range ancestors(s) {
				expect("file-write-unlink", a, "DIRECTORY", false, "an ancestor of a denyWrite path")
			}
		}
	}

	// Reads: credential stores always, denyRead unless allowRead.
	creds, _ := policy.Default(p.Workspace, home)
	stores := append(unescaped(creds.Filesystem.DenyRead), home+"/Library/Keychains")
	for _, c := range stores {
		for _, s := range res.spellings(c) {
			expect("file-read-data", s, "", false, "a credential store")
			expect("file-read-data", s+"/id_ed25519", "", false, "a credential store")
			expect("file-write-unlink", s, "", false, "a credential store cannot be moved out")
			expect("file-write-data", s+"/config", "", false, "a credential store names commands the host runs")
			expect("file-write-create", s, "DIRECTORY", false, "a credential store cannot be planted")
			expect("file-read-data", upperBase(s)+"/id_ed25519", "", false, "a credential store, in either case")
			if literalPattern(s).onDataVolume() {
				expect("file-read-data", "/System/Volumes/Data"+s+"/id_ed25519", "", false, "a credential store, through the data volume's mount point")
			}
			expect("file-write-create", upperBase(s), "DIRECTORY", false, "a credential store, in either case")
		}
	}
	expect("file-write-create", home+"/Library/LaunchAgents/evil.plist", "", false, "launchd's agents")
	expect("file-write-data", home+"/Library/Preferences/com.apple.Terminal.plist", "", false, "Terminal's startup command")
	expect("file-write-create", home+"/Library/Application Support/iTerm2/Scripts/AutoLaunch/x.py", "", false, "iTerm2's AutoLaunch scripts")
	// What Linux keeps read-only whatever the roots: the home's own
	// configuration and the settings files.
	own := slices.Clone(p.SettingsFiles)
	if r.Executable != "" {
		own = append(own, r.Executable) // cordon itself, which the host runs next
	}
	// The workspaces of a trusted directory, two levels down: their
	// settings widen their own sandboxes.
	for _, td := range p.TrustedDirs {
		for _, below := range []string{"", "/org", "/org/proj"} {
			for _, name := range policy.ProtectedBelow {
				expect("file-write-create", td+below+"/"+name, "", false, "a trusted workspace's settings")
			}
		}
	}
	for _, h := range policy.ProtectedInHome {
		own = append(own, home+"/"+h)
	}
	for _, o := range own {
		for _, s := range res.spellings(o) {
			expect("file-write-data", s, "", false, "the home's own configuration and the settings files")
			expect("file-write-create", s+"/x", "", false, "the home's own configuration and the settings files")
			for _, a := range ancestors(s) {
				expect("file-write-unlink", a, "DIRECTORY", false, "an ancestor of the home's own configuration")
			}
		}
	}
	if fsys, ok := r.FS.(fstest.MapFS); ok && fsys["Volumes/work/proj/.git"] != nil { // worktreeFS
		expect("file-read-data", "/Volumes/keys/aws/credentials", "", false, "a symlinked credential store")
		expect("file-write-data", "/Volumes/work/proj/tools/hooks/pre-commit", "", false, "a hooks directory linked into the workspace")
		expect("file-write-data", "/Volumes/work/proj/tools/other", "", true, "the rest of the workspace")
		expect("file-write-data", "/Users/u/main/.git/objects/ab/cd", "", true, "a worktree's common git directory")
		expect("file-write-data", "/Users/u/main/.git/modules/lib/index", "", true, "a submodule's git directory")
		expect("file-write-data", "/Users/u/main/.git/modules/lib/hooks/x", "", false, "a submodule's hooks")
		expect("file-write-data", "/Volumes/work/proj/lib/.git", "", false, "a submodule's .git file")
		expect("file-write-unlink", "/Volumes/work/proj/lib/.git", "", false, "a submodule's .git file")
		expect("file-write-data", "/Volumes/work/proj/lib/main.c", "", true, "a submodule's files")
		// Where the config sends git: core.hooksPath (husky's .husky/_, and
		// .husky whose scripts it runs) and an included config file.
		expect("file-write-data", "/Volumes/work/proj/.husky/_/h", "", false, "core.hooksPath")
		expect("file-write-create", "/Volumes/work/proj/.husky/pre-commit", "", false, "husky's scripts")
		expect("file-write-unlink", "/Volumes/work/proj/.husky", "DIRECTORY", false, "the way to core.hooksPath")
		expect("file-write-create", "/Users/u/main/.git/team.gitconfig", "", false, "a file the config includes")
	}
	// readable is the reference: a path in a credential store only through
	// an allowRead inside that store; a path in a denyRead only through an
	// allowRead, a writable root or the temporary directory inside that
	// denyRead.
	var writable []string
	for _, w := range p.WritableRoots() {
		if !hasGlob(w) {
			writable = append(writable, res.resolve(pathOf(w)))
		}
	}
	if r.TempDir != "" {
		writable = append(writable, res.resolve(r.TempDir))
	}
	readable := func(x string) bool {
		reopened := func(d string, keep []string) bool {
			for _, a := range keep {
				if underAny(x, []string{a}) && underAny(a, []string{d}) {
					return true
				}
			}
			return false
		}
		for _, s := range stores {
			if underAny(x, []string{s}) && !reopened(s, allowRead) {
				return false
			}
		}
		for _, d := range denyRead {
			if underAny(x, []string{d}) && !reopened(d, append(append([]string(nil), allowRead...), writable...)) {
				return false
			}
		}
		return true
	}
	var probes []string
	for _, x := range append(append([]string(nil), denyRead...), allowRead...) {
		probes = append(probes, x, x+"/x", path.Dir(x)+"/sibling")
	}
	for _, x := range probes {
		want := readable(x)
		expect("file-read-data", x, "", want, "denyRead, allowRead and the credential stores")
		if !want {
			expect("file-write-unlink", x, "", false, "a read-denied path cannot be moved out")
			expect("file-read-data", upperBase(x), "", false, "denied in either case")
		}
	}
	for _, a := range allowRead {
		for _, anc := range ancestors(a) {
			expect("file-read-metadata", anc, "DIRECTORY", true, "stat on the way to an allowRead path")
		}
	}
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// upperBase returns p with its last component in upper case.
func upperBase(p string) string { return path.Join(path.Dir(p), strings.ToUpper(path.Base(p))) }

// ancestors returns the directories above p, not counting "/".
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}

func TestProfileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy func(p *policy.Policy)
		req    func(r *Request)
		want   string
	}{
		{name: "bad tag", req: func(r *Request) { r.Tag = `a" (allow default)` }, want: "run tag"},
		{name: "empty tag", req: func(r *Request) { r.Tag = "" }, want: "run tag"},
		{name: "relative cwd", req: func(r *Request) { r.Cwd = "proj" }, want: "not absolute"},
		{name: "relative temp", req: func(r *Request) { r.TempDir = "tmp" }, want: "not absolute"},
		{name: "relative cache", req: func(r *Request) { r.Caches = []Cache{{Dir: "npm", Env: "npm_config_cache=npm"}} }, want: "not absolute"},
		{name: "cache without variable", req: func(r *Request) { r.Caches = []Cache{{Dir: "/c/npm", Env: "/c/npm"}} }, want: "NAME=value"},
		{name: "relative entry", policy: func(p *policy.Policy) { p.Filesystem.DenyRead = []string{"x"} }, want: "not absolute"},
		{name: "newline in path", policy: func(p *policy.Policy) {
			p.Filesystem.DenyWrite = []string{ws + "/a\n(allow file-write*)"}
		}, want: "control character"},
		{name: "invalid utf-8", policy: func(p *policy.Policy) { p.Filesystem.DenyWrite = []string{ws + "/\xff"} }, want: "UTF-8"},
		{name: "too long", policy: func(p *policy.Policy) {
			p.Filesystem.DenyWrite = []string{ws + "/" + strings.Repeat("a", 1100)}
		}, want: "longer than"},
		{name: "network without proxy", policy: func(p *policy.Policy) {
			p.Network.AllowedDomains = []string{"github.com"}
		}, want: "no proxy port"},
		{name: "bad port", req: func(r *Request) { r.HTTPProxyPort = 70000 }, want: "proxy port"},
		{name: "bad tty", req: func(r *Request) { r.Terminal, r.TTY = true, "/dev/disk0" }, want: "terminal"},
		{name: "root writable", policy: func(p *policy.Policy) { p.Filesystem.AllowWrite = []string{"/"} }, want: "whole host"},
		{name: "every top directory writable", policy: func(p *policy.Policy) { p.Filesystem.AllowWrite = []string{"/*"} }, want: "whole host"},
		{name: "glob class of nothing", policy: func(p *policy.Policy) {
			p.Filesystem.DenyWrite = []string{ws + "/[/]x"}
		}, want: ""},
		{name: "non-ascii class", policy: func(p *policy.Policy) {
			p.Filesystem.DenyWrite = []string{ws + "/[é]"}
		}, want: "ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, r := profileCase{policy: tc.policy, req: tc.req}.build(t)
			_, err := Profile(p, r)
			if tc.want == "" {
				// "[" then "/" splits the class: the component is a name.
				if err != nil {
					t.Fatalf("Profile: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Profile error = %v, want ErrInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

func TestProfileNoPolicy(t *testing.T) {
	if _, err := Profile(nil, baseRequest()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Profile(nil) error = %v", err)
	}
}

// TestProtectedAfterAllow is the structural rule of the profile: for each
// protected path of each writable root, a deny that covers it comes after
// the allow that opens its root (read as one list, the last match wins;
// see evaluator_test.go for how Seatbelt reads it).
func TestProtectedAfterAllow(t *testing.T) {
	for _, tc := range profileCases {
		t.Run(tc.name, func(t *testing.T) {
			p, r, rules := tc.compiledRules(t)
			inWritable, _ := p.Protected()
			res := resolver{fsys: r.FS}
			c, err := newCompiler(p, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.WritableRoots() {
				if !c.literalOnly(w) {
					continue
				}
				dir := res.resolve(w)
				allowAt := -1
				for i, rl := range rules.rules {
					if rl.allow && rl.covers("file-write-data") && rl.matches(file("file-write-data", dir+"/x")) {
						allowAt = i
					}
				}
				if allowAt < 0 {
					t.Fatalf("no rule allows writing in %s", dir)
				}
				for _, name := range inWritable {
					prot := dir + "/" + strings.ReplaceAll(name, "*", "sub")
					found := false
					for _, rl := range rules.rules[allowAt+1:] {
						if !rl.allow && rl.covers("file-write-data") && rl.matches(file("file-write-data", prot)) {
							found = true
						}
					}
					if !found {
						t.Errorf("no deny after line %d covers %s", rules.rules[allowAt].line, prot)
					}
				}
			}
		})
	}
}

// FuzzProfile: whatever the paths, a profile either is refused with
// ErrInvalid or parses, keeps to the known operations and filters, and
// quotes every string.
func FuzzProfile(f *testing.F) {
	for _, s := range []string{`a"b`, `a\b`, "a(b)", "**/*.pem", "[!a-c]?", "{x,y}", "é 🚀", "a\nb", "..", "[é]"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, glob string) {
		p, err := policy.Default(ws, home)
		if err != nil {
			t.Fatal(err)
		}
		p.Filesystem.DenyWrite = []string{ws + "/" + glob, policy.EscapePattern(ws + "/" + name)}
		p.Filesystem.DenyRead = append(p.Filesystem.DenyRead, home+"/"+glob)
		p.Filesystem.AllowRead = []string{policy.EscapePattern(home + "/" + name)}
		p.Filesystem.AllowWrite = []string{"/data/" + glob}
		p.Network.AllowUnixSockets = []string{"/tmp/" + name}
		r := baseRequest()
		r.Cwd = ws + "/" + name
		profile, err := Profile(p, r)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		forms, err := parseSBPL(profile)
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, profile)
		}
		if err := checkProfile(forms, r.Tag); err != nil {
			t.Fatalf("structure: %v", err)
		}
	})
}

// TestNestedRepositories: the repositories in a writable root, down to two
// levels, get what the root's own .git gets, as on Linux.
func TestNestedRepositories(t *testing.T) {
	_, _, rules := profileCase{req: func(r *Request) { r.FS = nestedFS() }}.compiledRules(t)
	for _, tc := range []struct {
		op, path, vnode string
		want            bool
	}{
		{"file-write-create", ws + "/sub/.git/hooks/pre-commit", "", false},
		{"file-write-data", ws + "/sub/.git/config", "", false},
		{"file-write-create", ws + "/sub/.GIT/HOOKS/pre-commit", "", false},
		{"file-write-unlink", ws + "/sub/.git", "DIRECTORY", false},
		{"file-write-create", ws + "/sub/.githooks/pre-commit", "", false},
		{"file-write-create", ws + "/sub/.git/objects/ab/cd", "", true},
		{"file-write-data", ws + "/sub/main.go", "", true},
		{"file-write-create", ws + "/org/lib/.git/hooks/post-checkout", "", false},
		{"file-write-data", ws + "/vendor/mod/.git", "REGULAR-FILE", false},
		{"file-write-create", "/Users/u/elsewhere/mod.git/hooks/pre-push", "", false},
		{"file-write-create", "/Users/u/elsewhere/mod.git/objects/ab/cd", "", true},
		// Deeper than Linux looks, and node_modules: not searched, but
		// the hooks of every repository are protected at any depth.
		{"file-write-create", ws + "/a/b/c/.git/config", "", true},
		{"file-write-create", ws + "/node_modules/x/.git/config", "", true},
		{"file-write-create", ws + "/a/b/c/.git/hooks/pre-commit", "", false},
		{"file-write-create", ws + "/node_modules/x/.git/hooks/pre-commit", "", false},
	} {
		vnode := tc.vnode
		if vnode == "" {
			vnode = "REGULAR-FILE"
		}
		if v, err := decideBoth(rules, access{op: tc.op, path: tc.path, vnode: vnode}); err != nil || v.allow != tc.want {
			t.Errorf("%s %s: allowed %v (line %d, %v), want %v", tc.op, tc.path, v.allow, v.line, err, tc.want)
		}
	}
}

// TestLongPathsFold: a workspace whose folded regexes would be longer than
// a profile's string may be keeps its profile, the protected names below
// it still matched in either case.
func TestLongPathsFold(t *testing.T) {
	long := home + "/" + strings.Repeat("abcdefghij/", 22) + "proj"
	p, r := profileCase{policy: func(p *policy.Policy) { p.Workspace = long }, req: func(r *Request) { r.Cwd = long }}.build(t)
	profile, err := Profile(p, r)
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	forms, err := parseSBPL(profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkProfile(forms, r.Tag); err != nil {
		t.Fatal(err)
	}
	rules, err := loadSBPL(profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-write-create", long + "/.git/hooks/pre-commit", false},
		{"file-write-create", long + "/.GIT/Hooks/pre-commit", false},
		{"file-write-create", long + "/pkg/.Claude/settings.json", false},
		{"file-write-create", long + "/a/HEAD", false},
		{"file-write-create", long + "/src/main.go", true},
	} {
		if v, err := decideBoth(rules, file(tc.op, tc.path)); err != nil || v.allow != tc.want {
			t.Errorf("%s %s: allowed %v (line %d, %v), want %v", tc.op, tc.path, v.allow, v.line, err, tc.want)
		}
	}
}

// TestNoAllowReopensDeny: in SBPL the last matching rule wins, so once the
// profile starts denying writes no allow that touches writes may follow,
// and once it denies reads (denyRead, the credential stores) only the
// device nodes' reads and stat on the way to an allowRead path may be
// allowed again.
func TestNoAllowReopensDeny(t *testing.T) {
	writeOps := []string{"file-write-data", "file-write-create", "file-write-unlink", "file-write-mode", "file-write-xattr", "file-link", "file-clone"}
	for _, tc := range profileCases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, rules := tc.compiledRules(t)
			writeDenied, readDenied := false, false
			for _, rl := range rules.rules {
				if rl.filter == nil && slices.Contains(rl.ops, "default") {
					continue
				}
				if !rl.allow {
					writeDenied = writeDenied || slices.ContainsFunc(writeOps, rl.covers)
					onlyDev := true
					for _, f := range rl.filters() {
						onlyDev = onlyDev && f.src == `(subpath "/dev")`
					}
					readDenied = readDenied || rl.covers("file-read-data") && !onlyDev
					continue
				}
				if writeDenied && slices.ContainsFunc(writeOps, rl.covers) {
					t.Errorf("line %d: an allow of writes after the write denies", rl.line)
				}
				if readDenied && rl.covers("file-read-data") {
					for _, f := range rl.filters() {
						if s := f.src; !strings.HasPrefix(s, `(literal "/dev/`) && !strings.HasPrefix(s, `(subpath "/dev/`) &&
							s != `(literal "/dev")` && !strings.Contains(s, `"^/dev/ttys`) {
							t.Errorf("line %d: an allow of reads after the read denies: %s", rl.line, s)
						}
					}
				}
			}
			if !writeDenied || !readDenied {
				t.Fatalf("no write or read deny found")
			}
		})
	}
}
