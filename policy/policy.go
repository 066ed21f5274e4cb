// Package policy decides what a sandboxed command may touch. It reads the
// settings that describe a sandbox (cordon's own, Claude Code's and
// sandbox-runtime's), merges them with the embedded default policy and
// validates the result into a Policy: the file system paths that are
// readable and writable, the network destinations, the environment that is
// passed in, and the limits. It does no I/O beyond reading settings files and
// resolving the paths they name.
package policy

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Mode is a permission tier. ReadOnly, WorkspaceWrite and DangerFullAccess
// are what a request requires; Prompt and Allow are session modes.
type Mode int

// The permission tiers, in increasing order of what they permit.
const (
	ReadOnly Mode = iota + 1
	WorkspaceWrite
	DangerFullAccess
	Prompt
	Allow
)

var modeNames = map[Mode]string{
	ReadOnly:         "read-only",
	WorkspaceWrite:   "workspace-write",
	DangerFullAccess: "danger-full-access",
	Prompt:           "prompt",
	Allow:            "allow",
}

// String returns the mode's name as it is written in settings and flags.
func (m Mode) String() string {
	if s, ok := modeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode reads a mode name: cordon's own (read-only, workspace-write,
// danger-full-access, prompt, allow) or Claude Code's (plan, default and
// its alias manual, acceptEdits, auto, bypassPermissions, dontAsk).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "read-only", "readonly", "plan":
		return ReadOnly, nil
	case "workspace-write", "workspacewrite", "default", "manual", "acceptedits", "auto", "dontask":
		return WorkspaceWrite, nil
	case "danger-full-access", "dangerfullaccess":
		return DangerFullAccess, nil
	case "prompt":
		return Prompt, nil
	case "allow", "bypasspermissions":
		return Allow, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want read-only, workspace-write, danger-full-access, prompt or allow, or Claude Code's plan, default, acceptEdits, auto, dontAsk or bypassPermissions)", s)
}

// Policy is the validated, merged sandbox policy for one workspace. Paths are
// absolute and clean; "~" has been expanded.
type Policy struct {
	// Workspace is the directory the command may write to (unless Mode is
	// ReadOnly).
	Workspace string
	// Home is the home directory "~" expanded to.
	Home string
	// ClaudeDir is Claude Code's configuration directory: ~/.claude, or
	// $CLAUDE_CONFIG_DIR.
	ClaudeDir string
	// Mode is the session's permission mode. ReadOnly mounts the workspace
	// read-only.
	Mode Mode
	// ModeName is the mode as the settings named it ("plan", "dontAsk",
	// ...): Claude Code's names carry more than the tier.
	ModeName string

	Filesystem Filesystem
	Network    Network
	Env        Env
	Limits     Limits
	// Credentials are the secrets the command sees only as fakes.
	Credentials Credentials

	Sandbox     Sandbox
	Permissions Permissions
	// Hooks are the commands cordon runs before a permission decision and
	// after a run (cordon.hooks).
	Hooks Hooks

	// FailIfUnavailable refuses to run a command when the sandbox cannot
	// give every protection the policy asks for.
	FailIfUnavailable bool
	// Serve has cordon run start cordon serve, the per-user daemon that
	// keeps sandboxes ready, when it does not run (cordon.serve).
	Serve bool
	// Caches are the package managers' caches (cordon.caches).
	Caches Caches
	// SyscallGuard refuses, at the system call, to make the names the
	// policy protects or denies below the writable roots, at any depth
	// (cordon.syscallGuard; on by default).
	SyscallGuard bool
	// Trusted is set when the user trusts the workspace (cordon trust):
	// only then may its own settings files widen the sandbox.
	Trusted bool
	// TrustedDirs are the directories the user and managed settings
	// trust (cordon.trustedWorkspaces), each for the workspaces down to
	// TrustDepth below it: their settings files must stay out of every
	// sandbox's reach.
	TrustedDirs []string
	// SettingsFiles are every settings file cordon reads for this
	// workspace, existing or not: no sandboxed command may write them.
	SettingsFiles []string
	// HostRun are the files that Claude Code's settings and .mcp.json
	// have Claude Code run on the host by itself (a hook's script, the
	// status line, an MCP server's code), in the workspace or the home:
	// no sandboxed command may write them either (hostrun.go).
	HostRun []string
	// Report says where every value came from and what was ignored.
	Report *Report
}

// Sandbox are Claude Code's switches around the sandbox.
type Sandbox struct {
	// Disabled turns the sandbox off (Claude Code's sandbox.enabled false).
	Disabled bool
	// AutoAllowBashIfSandboxed turns an "ask" into "allow" for a command
	// that will run sandboxed.
	AutoAllowBashIfSandboxed bool
	// AllowUnsandboxedCommands lets a request ask to run outside the
	// sandbox (dangerouslyDisableSandbox); it is still asked.
	AllowUnsandboxedCommands bool
	// ExcludedCommands run outside the sandbox: "cmd" exactly, "cmd ..."
	// as a prefix, "cmd:*".
	ExcludedCommands []string
	// EnableWeakerNestedSandbox accepts a sandbox that lacks some
	// protections (inside a container), saying which.
	EnableWeakerNestedSandbox bool
	// AllowNestedUserNamespaces lets the command make user namespaces
	// (rootless containers inside the sandbox).
	AllowNestedUserNamespaces bool
	// EnableWeakerNetworkIsolation lets the command reach macOS's trust
	// daemon (trustd), which Go's crypto/x509, Rust's native-tls and
	// Swift verify certificates through, and which fetches what a
	// certificate names from any host: past the domain filter. macOS
	// only (sandbox-runtime's key).
	EnableWeakerNetworkIsolation bool
	// AllowSocketpair lets the command make AF_UNIX socket pairs (Node's
	// child processes and Python's asyncio need them; they reach nothing
	// outside the sandbox). True by default.
	AllowSocketpair bool
	// IgnoreViolations maps command patterns ("*" for all) to paths whose
	// violations are not reported.
	IgnoreViolations map[string][]string
	// RequireFull refuses to run a command anywhere the full sandbox
	// (namespaces) cannot be made, rather than in the container mode
	// (cordon.requireFullSandbox; sandbox.failIfUnavailable does too).
	RequireFull bool
	// ContainerMode runs every command in the container mode (Landlock and
	// seccomp, no namespaces), even where the full sandbox can be made
	// (cordon.containerMode): to see what a command does in a container
	// before it runs in one.
	ContainerMode bool
	// AcceptUnconfined runs a command with no confinement at all where
	// neither the full sandbox nor the container mode can be made (no user
	// namespaces and no Landlock), with a warning, instead of refusing
	// (cordon.acceptUnconfined).
	AcceptUnconfined bool
}

// Permissions are the permission rules and mode of Claude Code's
// "permissions" settings.
type Permissions struct {
	Allow, Deny, Ask []Rule
	// DisableBypass forbids the Allow (bypassPermissions) mode.
	DisableBypass bool
	// DisableAuto forbids Claude Code's auto mode.
	DisableAuto bool
}

// Hooks are the commands of cordon.hooks; nil when unset.
type Hooks struct {
	// PreDecision is asked before a permission decision (after the deny
	// rules): it may deny, force a prompt, or let the decision continue.
	PreDecision *Hook
	// PostRun is told about every finished run, for audit logs.
	PostRun *Hook
}

// Hook is a command cordon runs on the host with the caller's privileges:
// Args[0] is an absolute path, run without a shell.
type Hook struct {
	Args    []string
	Timeout time.Duration
	// Source is where the hook was set (file:line:col).
	Source string
}

// Filesystem is what a sandboxed command may read and write. Reads are
// allowed everywhere except DenyRead (AllowRead re-opens inside a DenyRead);
// writes are allowed only in the workspace and AllowWrite (DenyWrite wins
// inside an AllowWrite).
type Filesystem struct {
	AllowRead      []string
	DenyRead       []string
	AllowWrite     []string
	DenyWrite      []string
	AllowGitConfig bool
}

// Network is where a sandboxed command may connect. An empty AllowedDomains
// means no network at all.
type Network struct {
	AllowedDomains      []string
	DeniedDomains       []string
	AllowUnixSockets    []string
	AllowAllUnixSockets bool
	AllowLocalBinding   bool
	// HTTPProxyPort and SOCKSProxyPort are where cordon's proxy listens
	// inside the sandbox (cordon.httpProxyPort, cordon.socksProxyPort; 0:
	// the defaults).
	HTTPProxyPort, SOCKSProxyPort int
	// ExternalHTTPProxyPort and ExternalSOCKSProxyPort are, when not 0, a
	// proxy of the user's on the host's loopback that the sandbox's HTTP
	// (or SOCKS) port leads to instead of cordon's own, which then decides
	// what that port reaches (sandbox-runtime's httpProxyPort and
	// socksProxyPort).
	ExternalHTTPProxyPort, ExternalSOCKSProxyPort int `json:",omitempty"`
	// AskCommand is asked about destinations no rule covers.
	AskCommand string
	// StrictAllowlist: only AllowedDomains, never asked (sandbox-runtime's
	// strictAllowlist).
	StrictAllowlist bool
	// DeniedDomainReasons gives, for a DeniedDomains entry, the reason a
	// refusal by it shows and records (deniedDomainReasons).
	DeniedDomainReasons map[string]string `json:",omitempty"`
	// DeniedResolvedAddresses are addresses and CIDR ranges an allowed
	// name may not resolve to (deniedResolvedAddresses).
	DeniedResolvedAddresses []string `json:",omitempty"`
	// ParentProxy is the upstream proxy cordon's proxy goes through
	// (parentProxy); each of its values left empty falls back on
	// cordon's own environment when the run starts.
	ParentProxy ParentProxy `json:",omitzero"`
	// MitmProxy routes some domains through a proxy on a unix socket
	// (mitmProxy).
	MitmProxy *MitmProxy `json:",omitempty"`
	// StripResponseHeaders are never passed back to the command
	// (stripResponseHeaders).
	StripResponseHeaders []string `json:",omitempty"`
	// RequireHostMatch refuses (421) a request whose Host or TLS server
	// name is not its destination's (requireHostMatch);
	// RefuseOpaqueTunnels refuses every CONNECT and SOCKS5 tunnel
	// (refuseOpaqueTunnels).
	RequireHostMatch, RefuseOpaqueTunnels bool `json:",omitempty"`
	// AllowMachLookup are the Mach (XPC) services a command on macOS may
	// look up beyond the sandbox's own list, a name or a prefix ending in
	// "*" (allowMachLookup); nothing on Linux, which has no Mach.
	AllowMachLookup []string `json:",omitempty"`
	// TLSTerminate, when set, has cordon's proxy end the TLS of every
	// tunnel to an allowed host, not only of the hosts of masked
	// credentials (sandbox-runtime's tlsTerminate).
	TLSTerminate *TLSTerminate `json:",omitempty"`
}

// TLSTerminate is sandbox-runtime's tlsTerminate.
type TLSTerminate struct {
	// CACertPath and CAKeyPath are a CA of the user's (PEM), both or
	// neither: without them the run's (or the daemon's) ephemeral CA.
	CACertPath, CAKeyPath string `json:",omitempty"`
	// ExcludeDomains are hosts whose tunnels stay opaque (for clients
	// that pin a certificate, or present one of their own), masked
	// credentials' hosts too.
	ExcludeDomains []string `json:",omitempty"`
	// ExtraCACertPaths are PEM files whose certificates the sandbox
	// trusts too.
	ExtraCACertPaths []string `json:",omitempty"`
	// MaxTunnels bounds the tunnels ended at once (0: 256);
	// HandshakeTimeout a tunnel's TLS handshake (0: 10s).
	MaxTunnels       int           `json:",omitempty"`
	HandshakeTimeout time.Duration `json:",omitempty"`
}

// ParentProxy is sandbox-runtime's parentProxy: the upstream proxy of
// plain http:// requests (HTTP) and of tunnels (HTTPS, falling back on
// HTTP), and the NO_PROXY list of what goes directly.
type ParentProxy struct {
	HTTP, HTTPS, NoProxy string `json:",omitempty"`
}

// MarshalJSON writes the URLs without their passwords (cordon config
// prints the policy).
func (pp ParentProxy) MarshalJSON() ([]byte, error) {
	type plain ParentProxy
	return json.Marshal(plain{HTTP: redactProxyURL(pp.HTTP), HTTPS: redactProxyURL(pp.HTTPS), NoProxy: pp.NoProxy})
}

// MitmProxy is sandbox-runtime's mitmProxy: the requests and tunnels to
// Domains go through the HTTP proxy at the unix socket SocketPath.
type MitmProxy struct {
	SocketPath string
	Domains    []string
}

// Env decides which variables of the caller's environment reach the
// command: a name matching a Deny pattern is dropped unless it matches an
// Allow pattern; Set adds or replaces variables.
type Env struct {
	Deny  []string
	Allow []string
	Set   map[string]string
}

// Limits are resource limits for one run. Zero means no limit.
type Limits struct {
	Memory int64 // bytes
	// MemoryPercent is the memory limit as a share of the machine's
	// memory. With Memory too (an untrusted workspace's size under a
	// share), the smaller of the two applies.
	MemoryPercent float64
	Pids          int64
	CPUs          float64
	Timeout       time.Duration
	OutputLimit   int64 // bytes kept from stdout and stderr
	FileSize      int64 // bytes, the largest file the command may write
	OpenFiles     int64
	TmpSize       int64 // bytes, the size of the private /tmp
}

// ProtectedInGitDir are paths, relative to a git directory, that no
// sandboxed command may write: what they hold runs code on the host the next
// time git runs there (hooks; config's core.hooksPath, core.fsmonitor,
// core.sshCommand, ...). "modules/*/hooks" stands for the hooks of every
// submodule.
var ProtectedInGitDir = []string{
	"hooks", "config", "config.worktree",
	"modules/*/hooks", "modules/*/config",
	"worktrees/*/config.worktree",
}

// ProtectedInWritable are paths, relative to every writable root, that stay
// read-only whatever the settings say (only AllowGitConfig opens the git
// config): git's, the shell's startup files, editors' task and agent
// configuration, and the settings files cordon and Claude Code read.
var ProtectedInWritable = append(prefixed(".git/", ProtectedInGitDir),
	".gitconfig", ".gitmodules",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".profile",
	".mcp.json", ".vscode", ".idea",
	// ripgrep's configuration, when RIPGREP_CONFIG_PATH names it, can give
	// --pre a program to run on every file searched (sandbox-runtime
	// protects it too).
	".ripgreprc",
	// Other agents' and editors' project configuration, which names
	// commands they start on the host by themselves: MCP servers (Cursor,
	// Gemini CLI, Continue, Amazon Q, Roo), hooks (Cursor, Kiro), language
	// servers (Zed, Helix), a dev container's initializeCommand (run on the
	// host when an editor opens the folder), Vim's and Neovim's exrc files.
	".cursor", ".gemini", ".codex", ".continue", ".amazonq", ".roo", ".kiro", ".windsurf",
	".zed", ".helix", ".devcontainer", ".nvim.lua", ".nvimrc", ".exrc",
	".claude/commands", ".claude/agents", ".claude/settings.json", ".claude/settings.local.json",
	// Claude Code runs the hook scripts its settings name on the host;
	// its documentation keeps them here ("$CLAUDE_PROJECT_DIR"/.claude/hooks).
	".claude/hooks",
	// Skills, like commands and agents, are loaded by the next session
	// and grant tools (allowed-tools); Claude uses them unasked.
	".claude/skills",
	".cordon",
	// Package managers' and direnv's project configuration, which the
	// tool on the host reads without asking: an .npmrc's script-shell or
	// a .yarnrc.yml's yarnPath runs at the next install, a .cargo/config's
	// runner or rustc-wrapper at the next build, pip.conf and .pypirc name
	// the index to install from and upload to; direnv loads an .envrc
	// (once allowed) on entering the directory.
	".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", "pip.conf", ".cargo/config.toml", ".cargo/config",
)

// ProtectedBelow are paths, relative to every directory below a writable
// root (two levels down), that stay read-only, and are moved aside after
// the run when they appear: the settings that Claude Code, cordon and
// editors read from whichever directory they are started in (a Claude
// Code hook, an MCP server and a folder-open task are commands they run),
// which a developer starts in a package of the workspace next.
var ProtectedBelow = []string{
	".claude/settings.json", ".claude/settings.local.json",
	".cordon/settings.json", ".cordon/settings.local.json",
	".mcp.json", ".vscode/tasks.json", ".vscode/settings.json",
	".claude/hooks", ".claude/commands", ".claude/agents", ".claude/skills",
	".cursor/mcp.json", ".cursor/hooks.json", ".gemini/settings.json", ".zed/settings.json",
	".devcontainer/devcontainer.json",
	// Package managers read these from the directory they run in and
	// every directory above it (pip.conf from a virtual environment's
	// directory), direnv its .envrc: see ProtectedInWritable.
	".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", ".cargo/config.toml", ".cargo/config",
}

// ProtectedInHome are paths, relative to the home directory, that stay
// read-only whenever a writable root covers them: the settings files cordon
// and Claude Code read, git's and the shells' user configuration, and the
// agents' own configuration. (Outside a writable root they are read-only
// anyway.)
var ProtectedInHome = []string{
	".gitconfig", ".config/git",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".profile",
	".config/fish", ".config/cordon", ".claude/settings.json", ".claude/settings.local.json",
	".claude/commands", ".claude/agents", ".claude/hooks", ".claude/skills", ".claude/plugins", ".claude.json", ".srt-settings.json", ".mcp.json",
	".ssh", ".local/bin",
	// What else runs by itself when the user logs in or starts a shell, a
	// terminal multiplexer, an editor, another agent, a build: files the
	// shells source (Debian's .bashrc sources .bash_aliases), X session
	// scripts, desktop autostart entries and user services, tmux's
	// run-shell, direnv's direnvrc, Vim's and Emacs's init files, Codex's
	// notify command and the MCP servers and hooks of Gemini CLI and
	// Cursor, cargo's rustc-wrapper and yarn's yarnPath. (Not whole editor
	// configuration directories such as ~/.config/nvim: people work in
	// them, and a protected workspace is refused.)
	".bash_aliases", ".bashrc.d", ".xinitrc", ".xprofile", ".xsessionrc", ".pam_environment",
	".config/environment.d", ".config/autostart", ".config/systemd/user",
	".tmux.conf", ".direnvrc", ".vimrc", ".emacs", ".ripgreprc",
	".codex/config.toml", ".gemini/settings.json", ".cursor/mcp.json", ".cursor/hooks.json",
	".cargo/config.toml", ".cargo/config", ".yarnrc.yml", ".yarnrc",
	// The package managers' user configuration (install-time commands,
	// registries; .npmrc and .pypirc are hidden by the default denyRead
	// too, for their tokens), and direnv's: its allow list says which
	// .envrc files it loads without asking.
	".npmrc", ".pypirc", ".config/pip", ".pip", ".envrc", ".config/direnv", ".local/share/direnv",
}

// OwnPaths are the caller's own files that stay read-only wherever a
// writable root covers them, as absolute paths: ProtectedInHome below home
// (its .claude entries also below Claude Code's directory when
// $CLAUDE_CONFIG_DIR puts it elsewhere), the settings files, and the
// scripts Claude Code runs on the host (HostRun). home is the home as the
// caller spells it (darwin canonicalises it).
func (p *Policy) OwnPaths(home string) []string {
	var own []string
	claudeElsewhere := p.ClaudeDir != "" && p.ClaudeDir != path.Join(p.Home, ".claude")
	for _, rel := range ProtectedInHome {
		own = append(own, path.Join(home, rel))
		if in, ok := strings.CutPrefix(rel, ".claude/"); ok && claudeElsewhere {
			own = append(own, path.Join(p.ClaudeDir, in))
		}
	}
	own = append(own, p.SettingsFiles...)
	return append(own, p.HostRun...)
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Protected returns ProtectedInWritable and ProtectedInGitDir as this policy
// applies them: AllowGitConfig leaves git's config files writable (hooks
// stay protected).
func (p *Policy) Protected() (inWritable, inGitDir []string) {
	keep := func(names []string) []string {
		var out []string
		for _, n := range names {
			if p.Filesystem.AllowGitConfig && (path.Base(n) == "config" || path.Base(n) == "config.worktree") {
				continue
			}
			out = append(out, n)
		}
		return out
	}
	return keep(ProtectedInWritable), keep(ProtectedInGitDir)
}

// WritableRoots returns the directories the command may write to: the
// workspace (unless the mode is ReadOnly) and AllowWrite.
func (p *Policy) WritableRoots() []string {
	if p.Mode == ReadOnly {
		return nil
	}
	roots := []string{p.Workspace}
	for _, w := range p.Filesystem.AllowWrite {
		if !slices.Contains(roots, w) {
			roots = append(roots, w)
		}
	}
	return roots
}

// Caches is how the package managers' caches are kept (cordon.caches):
// writable in each sandbox as a copy-on-write view of the user's own (or
// redirected to a directory of cordon's), kept per workspace.
type Caches struct {
	// Enabled makes them writable; off, they are read-only, as the rest
	// of the home.
	Enabled bool
	// MaxSize bounds what cordon keeps of them, in bytes, all workspaces
	// together: past it, the least recently used workspaces' go.
	MaxSize int64
	// MaxAge is how long a workspace's caches may go unused before
	// cordon gc removes them.
	MaxAge time.Duration
}

// The defaults of cordon.caches.
const (
	DefaultCachesMaxSize = 10 << 30
	DefaultCachesMaxAge  = 30 * 24 * time.Hour
)
