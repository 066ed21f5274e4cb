package darwin

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cordon.dev/cordon/policy"
)

// The profiles checked by what they mean: for every golden case, a table of
// operations on objects and the answer cordon's profile must give, asked
// of the evaluator (evaluator_test.go) under Seatbelt's hierarchy of
// operations and read as one flat list, which must agree. The same table
// is asked of the profile sandbox-runtime generates for the same settings
// (srt_test.go); every answer where the two differ is listed in
// srtDifferences with its reason, and docs/macos.md's side-by-side table is
// generated from that list.

// probe is one row: an operation on an object, and cordon's answer. Paths
// may hold {ws} (the workspace as Seatbelt sees it), {home}, {tmp} (the
// command's TMPDIR); addresses {http} and {socks} (the proxy's ports).
type probe struct {
	id   string
	a    access
	want bool
}

func allowed(id string, a access) probe { return probe{id: id, a: a, want: true} }
func denied(id string, a access) probe  { return probe{id: id, a: a, want: false} }

// connect is a TCP connection to host:port; listen a bind to it.
func connect(hostport string) access {
	return access{op: "network-outbound", remote: "tcp " + hostport}
}
func listen(hostport string) access { return access{op: "network-bind", local: "tcp " + hostport} }

// unixConnect is a connection to the unix socket at p.
func unixConnect(p string) access { return access{op: "network-outbound", socket: p} }

// device is op on the device node p of the given vnode type; it carries
// no sandbox extension.
func device(op, p, vnode string) access {
	return access{op: op, path: p, vnode: vnode, plain: true}
}

// baseProbes is the table every case starts from, with the answers of the
// default policy (workspace-write, no network, the default credential
// stores). Each case changes the answers its settings change and adds
// rows of its own.
var baseProbes = []probe{
	// The workspace: ordinary work.
	allowed("read a workspace file", file("file-read-data", "{ws}/src/main.go")),
	allowed("write a workspace file", file("file-write-data", "{ws}/src/main.go")),
	allowed("create a workspace file", file("file-write-create", "{ws}/src/new.go")),
	allowed("remove or rename a workspace file", file("file-write-unlink", "{ws}/src/main.go")),
	allowed("make a workspace directory", dir("file-write-create", "{ws}/build")),
	allowed("write .git/index", file("file-write-data", "{ws}/.git/index")),
	allowed("create .git/index.lock", file("file-write-create", "{ws}/.git/index.lock")),
	allowed("rename .git/index.lock", file("file-write-unlink", "{ws}/.git/index.lock")),
	allowed("rename onto .git/index", file("file-write-create", "{ws}/.git/index")),
	allowed("write a nested repository's config", file("file-write-create", "{ws}/lib/x/.git/config")),
	allowed("execute a workspace tool", file("process-exec*", "{ws}/node_modules/.bin/tsc")),

	// The workspace: what runs outside the sandbox later.
	denied("write .git/hooks", file("file-write-create", "{ws}/.git/hooks/pre-commit")),
	denied("write .GIT/Hooks (another case)", file("file-write-create", "{ws}/.GIT/Hooks/pre-commit")),
	denied("write .git/hooks through /System/Volumes/Data", file("file-write-create", "/System/Volumes/Data{ws}/.git/hooks/pre-commit")),
	denied("write .git/config", file("file-write-data", "{ws}/.git/config")),
	denied("rename .git", dir("file-write-unlink", "{ws}/.git")),
	denied("write a nested repository's hooks", file("file-write-create", "{ws}/lib/x/.git/hooks/post-checkout")),
	denied("write a deep repository's hooks", file("file-write-create", "{ws}/a/b/c/d/.git/hooks/pre-push")),
	denied("move a hooks directory into a nested repository", dir("file-write-create", "{ws}/lib/x/.git/hooks")),
	denied("write .claude/settings.json", file("file-write-create", "{ws}/.claude/settings.json")),
	denied("write a package's .claude/settings.json", file("file-write-create", "{ws}/packages/web/.claude/settings.json")),
	denied("write .vscode/tasks.json", file("file-write-create", "{ws}/.vscode/tasks.json")),
	denied("write .mcp.json", file("file-write-data", "{ws}/.mcp.json")),
	denied("write .bashrc in the workspace", file("file-write-create", "{ws}/.bashrc")),
	denied("plant a bare repository's HEAD", file("file-write-create", "{ws}/vendor/evil/HEAD")),
	denied("hard-link in the workspace", file("file-link", "{ws}/link")),

	// The system.
	allowed("read /usr/lib", file("file-read-data", "/usr/lib/libSystem.B.dylib")),
	allowed("execute /usr/bin/git", file("process-exec*", "/usr/bin/git")),
	allowed("read /private/etc/hosts", file("file-read-data", "/private/etc/hosts")),
	denied("write /private/etc/hosts", file("file-write-data", "/private/etc/hosts")),
	denied("write /etc/hosts", file("file-write-data", "/etc/hosts")),
	denied("write /usr/local/bin", file("file-write-create", "/usr/local/bin/tool")),
	allowed("read a home file", file("file-read-data", "{home}/notes.txt")),
	denied("write a home file", file("file-write-data", "{home}/notes.txt")),

	// Credential stores and what runs by itself.
	denied("read ~/.ssh", file("file-read-data", "{home}/.ssh/id_ed25519")),
	denied("list ~/.ssh", dir("file-read-data", "{home}/.ssh")),
	denied("stat a file in ~/.ssh", file("file-read-metadata", "{home}/.ssh/id_ed25519")),
	denied("test whether a file in ~/.ssh exists", file("file-test-existence", "{home}/.ssh/id_ed25519")),
	denied("read ~/.SSH (another case)", file("file-read-data", "{home}/.SSH/id_ed25519")),
	denied("read ~/.ssh through /System/Volumes/Data", file("file-read-data", "/System/Volumes/Data{home}/.ssh/id_ed25519")),
	denied("read ~/.aws/credentials", file("file-read-data", "{home}/.aws/credentials")),
	denied("read the login keychain", file("file-read-data", "{home}/Library/Keychains/login.keychain-db")),
	denied("write ~/.ssh/config", file("file-write-data", "{home}/.ssh/config")),
	denied("write ~/.bashrc", file("file-write-data", "{home}/.bashrc")),
	denied("write ~/Library/LaunchAgents", file("file-write-create", "{home}/Library/LaunchAgents/x.plist")),

	// The command's temporary directory.
	allowed("create in $TMPDIR", file("file-write-create", "{tmp}/x")),
	allowed("read in $TMPDIR", file("file-read-data", "{tmp}/x")),
	allowed("remove in $TMPDIR", file("file-write-unlink", "{tmp}/x")),

	// Devices.
	allowed("read /dev/null", device("file-read-data", "/dev/null", "CHARACTER-DEVICE")),
	allowed("write /dev/null", device("file-write-data", "/dev/null", "CHARACTER-DEVICE")),
	denied("read /dev/disk0", device("file-read-data", "/dev/disk0", "BLOCK-DEVICE")),
	denied("write /dev/disk0", device("file-write-data", "/dev/disk0", "BLOCK-DEVICE")),
	denied("read another terminal", device("file-read-data", "/dev/ttys003", "CHARACTER-DEVICE")),

	// The network.
	denied("connect to the HTTP proxy", connect("127.0.0.1:{http}")),
	denied("connect to the SOCKS proxy", connect("127.0.0.1:{socks}")),
	denied("connect to the HTTP proxy over ::1", connect("[::1]:{http}")),
	denied("connect to another loopback port", connect("127.0.0.1:5432")),
	denied("connect to a remote host", connect("93.184.216.34:443")),
	denied("connect to a remote IPv6 host", connect("[2606:2800:220:1::1]:443")),
	denied("listen on the loopback interface", listen("127.0.0.1:8080")),
	denied("listen on a LAN address", listen("192.168.1.20:8080")),
	denied("connect to the Docker socket", unixConnect("/private/var/run/docker.sock")),
	denied("connect to the ssh agent's socket", unixConnect("/private/tmp/com.apple.launchd.abc/Listeners")),
	allowed("log to syslog", unixConnect("/private/var/run/syslog")),

	// Mach services and sysctls.
	denied("look up the keychain (SecurityServer)", access{op: "mach-lookup", name: "com.apple.SecurityServer"}),
	denied("look up Launch Services", access{op: "mach-lookup", name: "com.apple.coreservices.launchservicesd"}),
	denied("look up trustd (TLS verification)", access{op: "mach-lookup", name: "com.apple.trustd.agent"}),
	allowed("look up user and group names", access{op: "mach-lookup", name: "com.apple.system.opendirectoryd.libinfo"}),
	allowed("read kern.hostname", access{op: "sysctl-read", name: "kern.hostname"}),
}

// semanticTable is how a case's table differs from baseProbes.
type semanticTable struct {
	set   map[string]bool // answers changed from baseProbes', by id
	extra []probe
}

// workspaceWrites are the rows that change with the workspace's mode.
var workspaceWrites = []string{
	"write a workspace file", "create a workspace file", "remove or rename a workspace file",
	"make a workspace directory", "write .git/index", "create .git/index.lock", "rename .git/index.lock",
	"rename onto .git/index", "write a nested repository's config",
}

func setAll(ids []string, v bool) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = v
	}
	return m
}

var proxyReachable = map[string]bool{
	"connect to the HTTP proxy": true, "connect to the SOCKS proxy": true, "connect to the HTTP proxy over ::1": true,
}

// semanticTables are the tables of the golden cases (profileCases).
var semanticTables = map[string]semanticTable{
	"default":   {},
	"read-only": {set: setAll(workspaceWrites, false)},
	"allow-write-roots": {
		set: map[string]bool{"write a home file": true},
		extra: []probe{
			allowed("write the Go build cache", file("file-write-create", "{home}/.cache/go-build/ab/cd")),
			allowed("write /tmp/shared", file("file-write-create", "/private/tmp/shared/x")),
			denied("write .git/hooks in another root", file("file-write-create", "{home}/.cache/go-build/.git/hooks/pre-commit")),
			denied("write ~/.gitconfig in a writable home", file("file-write-data", "{home}/.gitconfig")),
			denied("write ~/.claude/settings.json in a writable home", file("file-write-data", "{home}/.claude/settings.json")),
			denied("write ~/.zshrc in a writable home", file("file-write-data", "{home}/.zshrc")),
			denied("rename ~/.ssh in a writable home", dir("file-write-unlink", "{home}/.ssh")),
		},
	},
	"deny-write-in-allow-write": {
		extra: []probe{
			allowed("write an allowWrite root", file("file-write-data", "{home}/data/x")),
			denied("write a denyWrite path in an allowWrite root", file("file-write-data", "{home}/data/locked/x")),
			denied("write a denyWrite path in the workspace", file("file-write-data", "{ws}/generated/x.go")),
			denied("create a denyWrite path that does not exist yet", dir("file-write-create", "{ws}/not/there/yet")),
			denied("rename a directory above a denyWrite path", dir("file-write-unlink", "{ws}/not")),
			allowed("write beside a denyWrite path", file("file-write-data", "{ws}/generated-not/x.go")),
		},
	},
	"deny-read-allow-read": {
		set: map[string]bool{"read a home file": false},
		extra: []probe{
			allowed("read ~/.ssh/known_hosts (allowRead inside a credential store)", file("file-read-data", "{home}/.ssh/known_hosts")),
			denied("read a denyRead file inside the workspace", file("file-read-data", "{ws}/.env")),
			denied("remove a denyRead file inside the workspace", file("file-write-unlink", "{ws}/.env")),
			allowed("read an allowRead directory inside a denyRead one", file("file-read-data", "{home}/.config/git/config")),
			denied("read beside an allowRead directory", file("file-read-data", "{home}/.config/other/x")),
			allowed("stat a directory on the way to an allowRead path", dir("file-read-metadata", "{home}/.config")),
		},
	},
	"deny-read-covers-root": {
		set: map[string]bool{"read a home file": false},
		extra: []probe{
			allowed("read an allowWrite root inside a denyRead", file("file-read-data", "{home}/.cache/build/out.o")),
			allowed("write an allowWrite root inside a denyRead", file("file-write-create", "{home}/.cache/build/out.o")),
			allowed("remove in an allowWrite root inside a denyRead", file("file-write-unlink", "{home}/.cache/build/out.o")),
			denied("read beside a writable root inside a denyRead", file("file-read-data", "{home}/.cache/other/x")),
			denied("rename a directory above a writable root inside a denyRead", dir("file-write-unlink", "{home}/.cache")),
		},
	},
	"package-caches": {
		set: map[string]bool{"read a home file": false},
		extra: []probe{
			allowed("install into the npm cache cordon keeps", file("file-write-create", "{home}/.cache/cordon/caches/0123456789abcdef/redirect/npm/_cacache/x")),
			allowed("read the npm cache cordon keeps", file("file-read-data", "{home}/.cache/cordon/caches/0123456789abcdef/redirect/npm/_cacache/x")),
			allowed("remove from the module cache cordon keeps", file("file-write-unlink", "{home}/.cache/cordon/caches/0123456789abcdef/redirect/go-mod/x")),
			denied("write beside the caches", file("file-write-create", "{home}/.cache/cordon/caches/0123456789abcdef/workspace")),
			denied("write another workspace's caches", file("file-write-create", "{home}/.cache/cordon/caches/fedcba9876543210/redirect/npm/x")),
			denied("write the host's npm cache", file("file-write-create", "{home}/.npm/_cacache/x")),
		},
	},
	"allow-read-in-credential-store": {
		extra: []probe{
			allowed("read ~/.ssh/known_hosts (allowRead)", file("file-read-data", "{home}/.ssh/known_hosts")),
			allowed("read ~/.config/gh/config.yml (allowRead)", file("file-read-data", "{home}/.config/gh/config.yml")),
			denied("read ~/.config/gh/hosts.yml", file("file-read-data", "{home}/.config/gh/hosts.yml")),
			denied("test whether ~/.config/gh/hosts.yml exists", file("file-test-existence", "{home}/.config/gh/hosts.yml")),
			denied("write ~/.ssh/known_hosts", file("file-write-data", "{home}/.ssh/known_hosts")),
		},
	},
	"network-proxy":    {set: proxyReachable},
	"network-one-port": {set: proxyReachable},
	"network-trustd": {set: map[string]bool{
		"connect to the HTTP proxy": true, "connect to the SOCKS proxy": true, "connect to the HTTP proxy over ::1": true,
		"look up trustd (TLS verification)": true,
	}},
	"allow-mach-lookup": {extra: []probe{
		allowed("look up 1Password's service (a prefix)", access{op: "mach-lookup", name: "2BUA8C4S2C.com.1password.browser-helper"}),
		allowed("look up the iOS Simulator's service", access{op: "mach-lookup", name: "com.apple.CoreSimulator.CoreSimulatorService"}),
		denied("look up a service beside the prefix", access{op: "mach-lookup", name: "2BUA8C4S2C.com.other"}),
		denied("look up a service that extends a name", access{op: "mach-lookup", name: "com.apple.CoreSimulator.CoreSimulatorService2"}),
	}},
	"allow-local-binding": {set: map[string]bool{
		"listen on the loopback interface": true, "connect to another loopback port": true,
		"connect to the HTTP proxy": true, "connect to the SOCKS proxy": true, "connect to the HTTP proxy over ::1": true,
	}},
	"allow-unix-sockets": {
		set: map[string]bool{"connect to the Docker socket": true},
		extra: []probe{
			allowed("connect to colima's Docker socket", unixConnect("{home}/.colima/default/docker.sock")),
			allowed("connect to a socket in an allowed directory", unixConnect("/private/tmp/agent-dir/s.sock")),
			denied("connect to another socket", unixConnect("/private/var/run/mDNSResponder")),
		},
	},
	"allow-all-unix-sockets": {set: map[string]bool{"connect to the Docker socket": true, "connect to the ssh agent's socket": true}},
	"tricky-paths": {
		extra: []probe{
			denied("write a denyWrite name with quotes", file("file-write-data", `{ws}/say "hi"`)),
			denied("read a denyRead name with a backslash", file("file-read-data", `{home}/back\slash`)),
			denied("read a denyRead glob below the workspace", file("file-read-data", "{ws}/a/b/c.key")),
			allowed("write an allowWrite root with non-ASCII letters", file("file-write-create", "{home}/données ü/日本/x")),
		},
	},
	"globs": {
		// A denyWrite glob pins the directories that lead to its static
		// part (build/out): they cannot be made or renamed.
		set: map[string]bool{"make a workspace directory": false},
		extra: []probe{
			denied("write a *.pem at any depth", file("file-write-data", "{ws}/a/b/cert.pem")),
			denied("write secrets/*.key", file("file-write-data", "{ws}/secrets/db.key")),
			allowed("write secrets/*.txt", file("file-write-data", "{ws}/secrets/db.txt")),
			denied("write config/[!a-c]?.json", file("file-write-data", "{ws}/config/dx.json")),
			allowed("write config/ax.json", file("file-write-data", "{ws}/config/ax.json")),
			denied("write a braced glob's match", file("file-write-data", "{ws}/build/out/a/b.js.map")),
			denied("read .env at any depth below home", file("file-read-data", "{home}/x/y/.env")),
			denied("read app/[slug]/page.tsx", file("file-read-data", "{ws}/app/s/page.tsx")),
			denied("read app/[id]/secret.ts (a literal name)", file("file-read-data", "{ws}/app/[id]/secret.ts")),
			allowed("write a proj-* allowWrite root", file("file-write-create", "{home}/proj-x/y")),
		},
	},
	"protected-every-root": {
		extra: []probe{
			denied("write .git/hooks in another root", file("file-write-create", "{home}/other/.git/hooks/pre-commit")),
			denied("write .vscode in another root", file("file-write-create", "{home}/other/.vscode/tasks.json")),
			denied("write ~/.claude/settings.json in a writable ~/.claude", file("file-write-data", "{home}/.claude/settings.json")),
			allowed("write ~/.claude/projects", file("file-write-create", "{home}/.claude/projects/x.jsonl")),
		},
	},
	"home-writable-own-config": {
		set: map[string]bool{"write a home file": true},
		extra: []probe{
			denied("write cordon's own settings", file("file-write-data", "{home}/.config/cordon/settings.json")),
			denied("write cordon's binary", file("file-write-data", "{home}/go/bin/cordon")),
			denied("write a trusted workspace's settings", file("file-write-create", "{home}/code/app/.cordon/settings.json")),
			allowed("write in a trusted directory", file("file-write-create", "{home}/code/app/main.go")),
		},
	},
	"claude-host-scripts": {
		extra: []probe{
			denied("write a script Claude Code's hooks run", file("file-write-data", "{ws}/scripts/fmt.sh")),
			denied("write Claude Code's configuration in the workspace", file("file-write-data", "{ws}/.claude-config/settings.json")),
			allowed("write another script", file("file-write-data", "{ws}/scripts/build.sh")),
		},
	},
	"allow-git-config": {set: map[string]bool{"write .git/config": true}},
	"symlinked-tmp-var-etc": {
		extra: []probe{
			allowed("write /tmp", file("file-write-create", "/private/tmp/x")),
			denied("write a denyWrite path in /tmp", file("file-write-create", "/private/tmp/keep/x")),
			allowed("write /var/tmp/build", file("file-write-create", "/private/var/tmp/build/x")),
			denied("read /etc/master.passwd", file("file-read-data", "/private/etc/master.passwd")),
			denied("read /private/var/db/sudo", file("file-read-data", "/private/var/db/sudo/ts/u")),
		},
	},
	"terminal": {
		extra: []probe{
			allowed("read the run's terminal", device("file-read-data", "/dev/ttys004", "CHARACTER-DEVICE")),
			allowed("write the run's terminal", device("file-write-data", "/dev/ttys004", "CHARACTER-DEVICE")),
			allowed("open /dev/ptmx", device("file-read-data", "/dev/ptmx", "CHARACTER-DEVICE")),
		},
	},
	"terminal-unknown-device": {set: map[string]bool{"read another terminal": true}},
	"workspace-under-tmp": {
		extra: []probe{
			denied("write beside the workspace in /tmp", file("file-write-create", "/private/tmp/agent/other")),
		},
	},
	"symlinks-and-worktree": {
		extra: []probe{
			denied("read a credential store that is a symbolic link", file("file-read-data", "/Volumes/keys/aws/credentials")),
			denied("write hooks linked into the workspace", file("file-write-data", "/Volumes/work/proj/tools/hooks/pre-commit")),
			allowed("write a worktree's common git directory", file("file-write-data", "/Users/u/main/.git/objects/ab/cd")),
			denied("write a submodule's hooks", file("file-write-create", "/Users/u/main/.git/modules/lib/hooks/x")),
			denied("rewrite a submodule's .git file", file("file-write-data", "/Volumes/work/proj/lib/.git")),
			denied("write core.hooksPath", file("file-write-data", "/Volumes/work/proj/.husky/_/h")),
		},
	},
	"symlinked-home": {
		extra: []probe{
			denied("read ~/.ssh where the home really is", file("file-read-data", "/Volumes/Home/u/.ssh/id_ed25519")),
			denied("read ~/.ssh in another case where the home really is", file("file-read-data", "/Volumes/Home/u/.SSH/id_ed25519")),
			denied("write ~/.bashrc where the home really is", file("file-write-data", "/Volumes/Home/u/.bashrc")),
			denied("write .git/hooks where the workspace really is", file("file-write-create", "/Volumes/Home/u/proj/.git/hooks/pre-commit")),
			allowed("write the workspace where it really is", file("file-write-data", "/Volumes/Home/u/proj/src/main.go")),
		},
	},
	"no-temp-dir": {set: map[string]bool{"create in $TMPDIR": false, "remove in $TMPDIR": false}},
	"nested-repositories": {
		extra: []probe{
			denied("write an existing nested repository's hooks", file("file-write-create", "{ws}/sub/.git/hooks/pre-commit")),
			denied("write an existing nested repository's config", file("file-write-data", "{ws}/sub/.git/config")),
			denied("write where a nested repository's config sends git", file("file-write-create", "{ws}/sub/.githooks/pre-commit")),
			denied("write hooks of a repository deeper than Linux looks", file("file-write-create", "{ws}/a/b/c/.git/hooks/pre-commit")),
			denied("write hooks of a repository in node_modules", file("file-write-create", "{ws}/node_modules/x/.git/hooks/pre-commit")),
			allowed("write an existing nested repository's objects", file("file-write-create", "{ws}/sub/.git/objects/ab/cd")),
		},
	},
	"no-socketpair": {},
}

// side is what the placeholders of a table stand for in one profile.
type side struct {
	ws, home, tmp string
	http, socks   int
}

func (s side) expand(a access) access {
	r := strings.NewReplacer("{ws}", s.ws, "{home}", s.home, "{tmp}", s.tmp,
		"{http}", strconv.Itoa(s.http), "{socks}", strconv.Itoa(s.socks))
	a.path, a.socket = r.Replace(a.path), r.Replace(a.socket)
	a.remote, a.local = r.Replace(a.remote), r.Replace(a.local)
	return a
}

// table returns the case's rows.
func (tc profileCase) table(t *testing.T) []probe {
	t.Helper()
	st, ok := semanticTables[tc.name]
	if !ok {
		t.Fatalf("case %s has no table in semanticTables", tc.name)
	}
	var rows []probe
	for _, p := range baseProbes {
		if v, ok := st.set[p.id]; ok {
			p.want = v
		}
		rows = append(rows, p)
	}
	for id := range st.set {
		if !slices.ContainsFunc(baseProbes, func(p probe) bool { return p.id == id }) {
			t.Fatalf("case %s changes %q, which is not a row", tc.name, id)
		}
	}
	return append(rows, st.extra...)
}

// answer is an evaluator's answer for a table: allowed, denied, or
// undecided (the profile's meaning rests on something not published).
func answer(v verdict, err error) string {
	switch {
	case err != nil:
		return "undecided"
	case v.allow:
		return "allowed"
	}
	return "denied"
}

// srtDifference is a row where sandbox-runtime's profile answers otherwise
// than cordon's, and why cordon answers as it does.
type srtDifference struct {
	srt    string // allowed, denied, undecided
	reason string
}

// srtDifferences are the conscious differences, by row id, or by
// "case: row id" for one case only.
var srtDifferences = map[string]srtDifference{
	// Every case.
	"look up the keychain (SecurityServer)":           {"allowed", "securityd hands out the keychain items whose access list lets any program read them, and asks the user for the others: credentials stay out (`git-credential-osxkeychain` fails, by design)"},
	"look up Launch Services":                         {"allowed", "Launch Services opens documents and starts applications, outside the sandbox"},
	"read the login keychain":                         {"allowed", "`~/Library/Keychains` holds the user's secrets, encrypted with the login password: a copy can be attacked offline"},
	"read ~/.SSH (another case)":                      {"allowed", "APFS is case-insensitive by default: `~/.SSH` is `~/.ssh`, so every deny matches in either case"},
	"write .GIT/Hooks (another case)":                 {"allowed", "APFS is case-insensitive by default: `.GIT/Hooks` is `.git/hooks`, so every deny matches in either case"},
	"read ~/.ssh through /System/Volumes/Data":        {"allowed", "the data volume is also mounted at `/System/Volumes/Data`: every deny matches that spelling too (whether Seatbelt is ever handed it is not known)"},
	"read /dev/disk0":                                 {"allowed", "no device node is readable but those a shell uses: the disks are readable by root and the operator group (`sudo cordon run`)"},
	"read another terminal":                           {"allowed", "another terminal of the user's is another session's keystrokes and screen; the command gets a terminal of its own"},
	"write .claude/settings.json":                     {"allowed", "Claude Code runs the hooks its settings name, on the host: its settings are protected in every writable root and two levels below (sandbox-runtime protects `.claude/commands` and `.claude/agents`)"},
	"write a package's .claude/settings.json":         {"allowed", "an agent started in a package of the workspace reads the settings there: protected two levels below every writable root, as on Linux"},
	"plant a bare repository's HEAD":                  {"allowed", "beside `objects/` and `refs/`, a `HEAD` makes a bare repository, whose config and hooks the next git command run there uses"},
	"move a hooks directory into a nested repository": {"allowed", "sandbox-runtime's any-depth rule covers what is below `.git/hooks`, not the directory: one prepared elsewhere can be renamed into place"},
	"write a nested repository's config":              {"denied", "git cannot make a repository without writing its config: sandbox-runtime's any-depth `.git/config` rule makes `git init` and `git clone` fail below the working directory. cordon protects the config of the repositories that exist when the run starts"},
	"hard-link in the workspace":                      {"undecided", "sandbox-runtime allows `file-write*` in the writable roots and does not name `file-link`, whose place among the operations is not published: whether a hard link (a readable alias of a read-denied file) can be made there is not known. cordon denies it by name"},
	"log to syslog":                                   {"denied", "`syslog(3)` writes the system log through this socket, and nothing comes back through it"},
	"connect to the HTTP proxy":                       {"allowed", "with no allowed domain, sandbox-runtime still starts its proxy (which refuses every request) and lets the command reach it; cordon starts none"},
	"connect to the SOCKS proxy":                      {"allowed", "with no allowed domain, sandbox-runtime still starts its proxy (which refuses every request) and lets the command reach it; cordon starts none"},
	"connect to the HTTP proxy over ::1":              {"allowed", "with no allowed domain, sandbox-runtime still starts its proxy (which refuses every request) and lets the command reach it; cordon starts none"},

	// The home writable.
	"write ~/Library/LaunchAgents":                          {"allowed", "with the home writable, what runs by itself outside the sandbox stays read-only: launchd starts `~/Library/LaunchAgents` at the next login"},
	"write ~/.ssh/config":                                   {"allowed", "with the home writable, the credential stores stay read-only: several name commands the host runs (ssh's `ProxyCommand`)"},
	"write ~/.bashrc":                                       {"allowed", "with the home writable, the shells' startup files stay read-only, as on Linux"},
	"write ~/.zshrc in a writable home":                     {"allowed", "the shells' startup files stay read-only wherever the writable roots are, as on Linux"},
	"write ~/.gitconfig in a writable home":                 {"allowed", "git's own configuration (`core.pager`, aliases) stays read-only wherever the writable roots are, as on Linux"},
	"write ~/.claude/settings.json in a writable home":      {"allowed", "Claude Code's user settings name hooks the host runs: read-only wherever the writable roots are, as on Linux"},
	"write ~/.claude/settings.json in a writable ~/.claude": {"allowed", "Claude Code's user settings name hooks the host runs: read-only wherever the writable roots are, as on Linux"},
	"write cordon's own settings":                           {"allowed", "every settings file cordon reads stays read-only wherever the writable roots are"},
	"write cordon's binary":                                 {"allowed", "the host runs cordon next (as a Claude Code hook): read-only wherever the writable roots are"},
	"write a trusted workspace's settings":                  {"allowed", "the settings of a workspace in a trusted directory widen its own sandbox: protected there and two levels below, as on Linux"},
	"write .git/hooks in another root":                      {"allowed", "the protected names are protected in every writable root; sandbox-runtime protects them in the working directory"},
	"write .vscode in another root":                         {"allowed", "the protected names are protected in every writable root; sandbox-runtime protects them in the working directory"},

	// One case each.
	"workspace-under-tmp: write .git/hooks":                                   {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: write .git/config":                                  {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: rename .git":                                        {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: write .vscode/tasks.json":                           {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: write .mcp.json":                                    {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: write .bashrc in the workspace":                     {"allowed", "the command runs in a subdirectory: sandbox-runtime protects the working directory, cordon every writable root, the workspace's root among them"},
	"workspace-under-tmp: write a nested repository's hooks":                  {"allowed", "the command runs in a subdirectory: sandbox-runtime's any-depth rules start at the working directory"},
	"workspace-under-tmp: write a deep repository's hooks":                    {"allowed", "the command runs in a subdirectory: sandbox-runtime's any-depth rules start at the working directory"},
	"symlinks-and-worktree: write hooks linked into the workspace":            {"allowed", "cordon reads `.git` files, `.gitmodules` and git's config: where the hooks are is protected wherever it is"},
	"symlinks-and-worktree: write core.hooksPath":                             {"allowed", "cordon reads git's config: where `core.hooksPath` points is protected"},
	"symlinks-and-worktree: rewrite a submodule's .git file":                  {"allowed", "a `.git` file points git at its git directory: rewritten, at hooks of the command's making"},
	"symlinks-and-worktree: write a worktree's common git directory":          {"denied", "cordon makes a worktree's and a submodule's git directory writable, with their own protections: `git commit` works in a worktree"},
	"symlinked-home: read ~/.ssh in another case where the home really is":    {"allowed", "APFS is case-insensitive by default: `~/.SSH` is `~/.ssh`, so every deny matches in either case, in every spelling of the home"},
	"nested-repositories: write where a nested repository's config sends git": {"allowed", "cordon reads the config of the repositories in the writable roots: where `core.hooksPath` points is protected"},
	"claude-host-scripts: write a script Claude Code's hooks run":             {"allowed", "Claude Code runs these scripts on the host"},
	"claude-host-scripts: write Claude Code's configuration in the workspace": {"allowed", "Claude Code's configuration directory names what the host runs"},
	"globs: write config/[!a-c]?.json":                                        {"allowed", "gitignore's `[!a-c]` is a negated class; sandbox-runtime reads `!` as a member of the class"},
	"globs: write config/ax.json":                                             {"denied", "gitignore's `[!a-c]` is a negated class; sandbox-runtime reads `!` as a member of the class"},
	"globs: write a proj-* allowWrite root":                                   {"denied", "a glob in `allowWrite` covers what is below each match, as a path does; sandbox-runtime's regex matches the match itself"},
	"package-caches: read a workspace file":                                   {"denied", "a writable root inside a `denyRead` is readable, as on Linux where its bind lies over the denied directory; sandbox-runtime hides it, so the command cannot read what it may write"},
	"package-caches: install into the npm cache cordon keeps":                 {"denied", "cordon points the package managers at caches of its own, kept per workspace (docs/settings.md, cordon.caches); sandbox-runtime leaves them read-only, so `npm install` and `go mod download` fail"},
	"package-caches: read the npm cache cordon keeps":                         {"denied", "cordon points the package managers at caches of its own, kept per workspace (docs/settings.md, cordon.caches); sandbox-runtime leaves them read-only, so `npm install` and `go mod download` fail"},
	"package-caches: remove from the module cache cordon keeps":               {"denied", "cordon points the package managers at caches of its own, kept per workspace (docs/settings.md, cordon.caches); sandbox-runtime leaves them read-only, so `npm install` and `go mod download` fail"},
	"deny-read-covers-root: read a workspace file":                            {"denied", "a writable root inside a `denyRead` is readable, as on Linux where its bind lies over the denied directory; sandbox-runtime hides it, so the command cannot read what it may write"},
	"deny-read-covers-root: read an allowWrite root inside a denyRead":        {"denied", "a writable root inside a `denyRead` is readable, as on Linux where its bind lies over the denied directory; sandbox-runtime hides it, so the command cannot read what it may write"},
	"tricky-paths: read a denyRead glob below the workspace":                  {"allowed", "sandbox-runtime's globs have no escapes: a glob below a directory whose name holds `[`, `*`, `?` or `\\` cannot be written in its settings, and is left out of them"},
	"no-temp-dir: create in $TMPDIR":                                          {"allowed", "the case gives cordon no temporary directory; sandbox-runtime's is `/tmp/claude`"},
	"no-temp-dir: remove in $TMPDIR":                                          {"allowed", "the case gives cordon no temporary directory; sandbox-runtime's is `/tmp/claude`"},
	"allow-local-binding: listen on a LAN address":                            {"allowed", "`allowLocalBinding` keeps servers on the loopback interface; sandbox-runtime binds `(local ip \"*:*\")` (for dual-stack sockets), so a server listens on every interface"},
}

// TestProfileMeaning asks every golden profile its table, and the profile
// sandbox-runtime generates for the same settings the same table.
func TestProfileMeaning(t *testing.T) {
	var srtCases []srtCase
	built := map[string]struct {
		p *policy.Policy
		r Request
	}{}
	for _, tc := range profileCases {
		p, r := tc.build(t)
		built[tc.name] = struct {
			p *policy.Policy
			r Request
		}{p, r}
		srtCases = append(srtCases, srtSettings(t, tc.name, p, r))
	}
	srt := srtProfiles(t, srtCases)
	type seen struct {
		cases  []string
		cordon string
	}
	differences := map[string]*seen{}
	for _, tc := range profileCases {
		t.Run(tc.name, func(t *testing.T) {
			p, r, sb := tc.compiledRules(t)
			res := resolver{fsys: r.FS}
			ours := side{ws: res.resolve(p.Workspace), home: home, tmp: res.resolve(r.TempDir), http: r.HTTPProxyPort, socks: r.SOCKSProxyPort}
			if r.TempDir == "" {
				ours.tmp = "/private/var/folders/zz/abc123/T/cordon-none"
			}
			if ours.http == 0 {
				ours.http = srtHTTPPort
			}
			if ours.socks == 0 {
				ours.socks = ours.http
			}
			theirs := side{ws: ours.ws, home: home, tmp: srtTempDir, http: srtHTTPPort, socks: srtSOCKSPort}
			if networkOn(p) {
				theirs.http, theirs.socks = ours.http, ours.socks
			}
			srtSB, err := loadSBPL(srt[tc.name], nil)
			if err != nil {
				t.Fatalf("sandbox-runtime's profile: %v", err)
			}
			for _, row := range tc.table(t) {
				a := ours.expand(row.a)
				v, err := decideBoth(sb, a)
				if err != nil {
					t.Errorf("%s: %v", row.id, err)
				} else if v.allow != row.want {
					t.Errorf("%s: %s is %s by line %d, want %s", row.id, a, answer(v, nil), v.line, answer(verdict{allow: row.want}, nil))
				}
				got := answer(srtSB.decide(theirs.expand(row.a)))
				if got == answer(verdict{allow: row.want}, nil) {
					continue
				}
				key := tc.name + ": " + row.id
				d, ok := srtDifferences[key]
				if !ok {
					key = row.id
					d, ok = srtDifferences[row.id]
				}
				switch {
				case !ok:
					v, err := srtSB.decide(theirs.expand(row.a))
					t.Errorf("%s: sandbox-runtime's profile answers %s (line %d, %v), cordon's %s: not in srtDifferences",
						row.id, got, v.line, err, answer(verdict{allow: row.want}, nil))
				case d.srt != got:
					t.Errorf("%s: sandbox-runtime's profile answers %s, srtDifferences says %s", row.id, got, d.srt)
				default:
					if differences[key] == nil {
						differences[key] = &seen{cordon: answer(verdict{allow: row.want}, nil)}
					}
					differences[key].cases = append(differences[key].cases, tc.name)
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	for key := range srtDifferences {
		if differences[key] == nil {
			t.Errorf("srtDifferences lists %q, which no case shows", key)
		}
	}
	checkDifferencesDoc(t, func(key string) ([]string, string) { return differences[key].cases, differences[key].cordon })
}

// checkDifferencesDoc compares docs/macos.md's side-by-side table with the
// one srtDifferences makes (rewritten with -update).
func checkDifferencesDoc(t *testing.T, seen func(key string) (cases []string, cordon string)) {
	t.Helper()
	var keys []string
	for k := range srtDifferences {
		keys = append(keys, k)
	}
	// The rows of every case first, then those of one case, by case.
	sort.Slice(keys, func(i, j int) bool {
		oi, oj := strings.Contains(keys[i], ": "), strings.Contains(keys[j], ": ")
		if oi != oj {
			return oj
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	b.WriteString("| row | cordon | sandbox-runtime | cases | why |\n|---|---|---|---|---|\n")
	all := len(profileCases)
	for _, k := range keys {
		d := srtDifferences[k]
		row := k
		if _, id, ok := strings.Cut(k, ": "); ok {
			row = id
		}
		cases, ours := seen(k)
		where := strings.Join(cases, ", ")
		if len(cases) > all/2 {
			var but []string
			for _, tc := range profileCases {
				if !slices.Contains(cases, tc.name) {
					but = append(but, tc.name)
				}
			}
			where = "all"
			if len(but) > 0 {
				where = "all but " + strings.Join(but, ", ")
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row, ours, d.srt, where, d.reason)
	}
	const begin, end = "<!-- srt-differences: generated by go test ./darwin -run TestProfileMeaning -update -->\n", "<!-- srt-differences end -->\n"
	file := filepath.Join("..", "docs", "macos.md")
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no %q ... %q section", file, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	want := before + begin + b.String() + end + after
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != string(doc) {
		t.Errorf("%s's side-by-side table is not the one srtDifferences makes (run go test ./darwin -run TestProfileMeaning -update)", file)
	}
}
