package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
	"cordon.dev/cordon/mounts"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/seccomp"
)

// plan is the file system part of a sandbox.
type plan struct {
	mounts   []specs.Mount
	scrub    Scrub
	landlock []LandlockRule
	// checks are what the paths inside the writable roots must be once
	// the mounts are made; the init verifies them (see mounts.Check).
	checks []mounts.Check
	// env are the variables of the package caches' redirects.
	env []string
	// guard is what the runtime refuses to let the command make below
	// the writable roots; nil without writable roots.
	guard *Guard
}

// Scrub is what the runtime clears after a run (AnnotationScrub): what
// appeared at protected paths that did not exist, and new matches of
// denyWrite globs in the writable roots. Nothing can keep a writable
// directory from gaining an entry, and cordon leaves no placeholder on the
// host, so these are moved aside when the command is done.
type Scrub struct {
	Paths []string    `json:"paths,omitempty"`
	Globs []ScrubGlob `json:"globs,omitempty"`
	// Roots are the writable roots, searched for bare repositories planted
	// during the run (HEAD, objects/ and refs/ side by side: git would
	// take the directory for a repository and run its config's commands).
	// GitDirs are the repositories' own git directories, which look the
	// same and are left alone.
	Roots   []string `json:"roots,omitempty"`
	GitDirs []string `json:"gitDirs,omitempty"`
	// Nested are names (policy.ProtectedBelow) that, created or changed
	// during the run in a directory below a root, are moved aside: those
	// that existed were bound read-only.
	Nested []string `json:"nested,omitempty"`
	// Trusted are the trusted directories in the writable roots
	// (policy.Policy.TrustedDirs), whose nested names are checked as deep
	// below them.
	Trusted []string `json:"trusted,omitempty"`
	// Links are the symlinks on the way to protected paths, which the
	// command can replace (see mounts.Protection): each is put back after
	// the run, the replacement moved aside.
	Links []mounts.Link `json:"links,omitempty"`
	// Protected are the existing read-only paths inside the writable
	// roots, in the container mode, which cannot make them read-only: the
	// runtime records them before the run and puts back what changed.
	Protected []string `json:"protected,omitempty"`
}

// agentSocket is the ssh-agent's socket the full sandbox binds into its
// private /tmp, or "": with allowAllUnixSockets (sandbox-runtime's
// meaning: the agent reachable) and SSH_AUTH_SOCK let into the command's
// environment (cordon.env.allow), naming a socket below the host's /tmp,
// which ssh-agent uses and the sandbox's own /tmp hides. Elsewhere the
// socket is in sight already (read-only, which a connection does not
// mind). The container mode shares the host's /tmp.
func agentSocket(p *policy.Policy, req Request, fsys fs.FS) (string, error) {
	if !p.Network.AllowAllUnixSockets || req.Mode != ModeFull {
		return "", nil
	}
	var sock string
	for _, kv := range p.Env.Filter(req.Env) {
		if v, ok := strings.CutPrefix(kv, "SSH_AUTH_SOCK="); ok {
			sock = v
		}
	}
	if !path.IsAbs(sock) || !paths.Under(path.Clean(sock), "/tmp") {
		return "", nil
	}
	real, fi, err := mounts.Resolve(fsys, path.Clean(sock))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return "", nil // no agent there: ssh-add says so inside
	}
	if err != nil {
		return "", fmt.Errorf("SSH_AUTH_SOCK: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket || !paths.Under(real, "/tmp") {
		return "", nil
	}
	return real, nil
}

// NestedDepth is how deep below a writable root (and a trusted directory in
// one) the plan protects Scrub.Nested, and so how deep the runtime looks
// for them after the run.
const NestedDepth = mounts.NestedDepth

// Targets returns the paths the runtime must check after the run: the
// protected paths, and the matches of the denyWrite globs that were not
// there before. The walk does not follow symlinks.
func (sc Scrub) Targets(fsys fs.FS) []string {
	out := slices.Clone(sc.Paths)
	for _, g := range sc.Globs {
		matches, _ := expandPattern(fsys, g.Pattern)
		for _, m := range matches {
			if !slices.Contains(g.Existing, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// ScrubGlob is a denyWrite glob and the matches it had before the run.
type ScrubGlob struct {
	Pattern  string   `json:"pattern"`
	Existing []string `json:"existing,omitempty"`
}

// mountPlan turns the policy's path rules into the mount list.
func mountPlan(p *policy.Policy, req Request, fsys fs.FS) (plan, error) {
	var pl plan
	// The host as the command sees it: what it cannot reach, the plan
	// neither protects nor hides (see mounts.Reach).
	var groups []uint32
	if req.Mode != ModeFull {
		// (the full sandbox's user namespace has none; the container
		// mode's command keeps the caller's)
		groups = req.Groups
	}
	reach := mounts.AsCommand(fsys, req.UID, req.GID, groups)
	defer func() {
		for _, d := range reach.Unreached() {
			req.debugf("nothing below %s is protected or hidden: the sandbox cannot enter it (permission denied)", d)
		}
	}()
	// What every path was when the plan resolved it, for the checks.
	fsys = mounts.NewRecorder(reach)
	ws, fi, err := mounts.Resolve(fsys, p.Workspace)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return pl, fmt.Errorf("%w: workspace %s does not exist", ErrInvalid, p.Workspace)
		case errors.Is(err, fs.ErrPermission):
			return pl, fmt.Errorf("%w: the sandbox cannot reach the workspace %s: %w (the command runs with the caller's ids and no capabilities, even as root)", ErrInvalid, p.Workspace, err)
		}
		return pl, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return pl, fmt.Errorf("%w: workspace %s is not a directory", ErrInvalid, p.Workspace)
	}
	if ws == "/" {
		return pl, fmt.Errorf("%w: the workspace cannot be / (it would make the whole host writable)", ErrInvalid)
	}

	expand := func(patterns []string) ([]string, error) {
		var out []string
		for _, pat := range patterns {
			paths, err := expandPattern(fsys, pat)
			if err != nil {
				return nil, err
			}
			out = append(out, paths...)
		}
		return out, nil
	}
	denyWrite, err := expand(p.Filesystem.DenyWrite)
	if err != nil {
		return pl, err
	}
	denyRead, err := expand(p.Filesystem.DenyRead)
	if err != nil {
		return pl, err
	}
	allowRead, err := expand(p.Filesystem.AllowRead)
	if err != nil {
		return pl, err
	}
	covered := func(x string, by []string) bool {
		return slices.ContainsFunc(by, func(d string) bool { return paths.Under(x, d) })
	}

	// The writable roots: the workspace and allowWrite — except where a
	// denyWrite covers them (denyWrite wins), and those already inside
	// another root (a bind per file would pin every file in place).
	var rules []mounts.Rule
	var writable []string
	if p.Mode == policy.ReadOnly {
		rules = append(rules, mounts.Rule{Path: ws, Access: mounts.ReadOnly})
	} else {
		writable = []string{ws}
		for _, pat := range p.Filesystem.AllowWrite {
			var paths []string
			if base, ok := strings.CutSuffix(pat, "/**"); ok && !policy.IsGlob(base) {
				// dir/** is the directory, whatever it will hold.
				paths = []string{policy.UnescapePattern(base)}
			} else if paths, err = expandPattern(fsys, pat); err != nil {
				return pl, err
			}
			writable = append(writable, paths...)
		}
		writable = slices.DeleteFunc(writable, func(w string) bool { return w != ws && covered(w, denyWrite) })
		// No setting opens the caller's own configuration, the settings
		// files or cordon itself: an allowWrite of ~/.bashrc, of
		// ~/.claude/commands/x, of a symlink to them, or Claude Code's
		// allow Edit(~/.zshrc) (for its own tool) is no writable root.
		own := withTargets(fsys, ownPaths(p, req))
		isOwn := func(w string) bool {
			real, _, err := mounts.Resolve(fsys, w)
			return covered(w, own) || err == nil && covered(real, own)
		}
		if isOwn(ws) {
			return pl, fmt.Errorf("%w: the workspace %s is protected configuration (the settings files, shell startup files, ~/.claude/commands, ...): cordon cannot make it writable", ErrInvalid, ws)
		}
		writable = slices.DeleteFunc(writable, func(w string) bool { return w != ws && isOwn(w) })
		writable = outermost(writable)
	}

	// What must stay read-only in each writable root: the always-protected
	// paths, the caller's own configuration and the settings files where a
	// root covers them, and the denyWrite paths. Each gets its directories
	// pinned (see mounts.Protect) and, when it does not exist yet, is
	// moved aside after the run if it appears.
	inWritable, inGitDir := p.Protected()
	inWritable = append(inWritable, gitRedirects(".git/")...)
	inGitDir = append(inGitDir, gitRedirects("")...)
	prot, err := mounts.Protect(fsys, writable, inWritable, inGitDir, policy.ProtectedBelow, p.TrustedDirs)
	if err != nil {
		return pl, err
	}
	// cordon's own binary among them, when a writable root holds it:
	// pinned like the others, or renaming its directory would put a binary
	// of the command's choosing where the next `cordon run` is started from.
	readOnlyPaths := append(ownPaths(p, req), denyWrite...)
	// (not those inside a protected directory, .claude/hooks/fmt.sh: read
	// only already)
	inProtected := func(abs string) bool {
		return slices.ContainsFunc(prot.Rules, func(r mounts.Rule) bool {
			return r.Access != mounts.ReadWrite && paths.Below(abs, r.Path)
		})
	}
	for _, w := range writable {
		var names []string
		for _, abs := range readOnlyPaths {
			if paths.Below(abs, w) && !inProtected(abs) {
				names = append(names, strings.TrimPrefix(abs, strings.TrimSuffix(w, "/")+"/"))
			}
		}
		if len(names) == 0 {
			continue
		}
		more, err := mounts.Protect(fsys, []string{w}, names, nil, nil, nil)
		if err != nil {
			return pl, err
		}
		prot.Rules = append(prot.Rules, more.Rules...)
		prot.Scrub = append(prot.Scrub, more.Scrub...)
		prot.Links = append(prot.Links, more.Links...)
	}
	// The protected paths' read-only binds: no writable bind goes below
	// them (a pin on the way to a denied path there, or a re-opened path),
	// or .claude/commands/x would take commands the next session runs.
	var readOnly []string
	for _, r := range prot.Rules {
		if r.Access != mounts.ReadWrite {
			readOnly = append(readOnly, r.Path)
		}
	}
	// But nothing the command cannot see is bound: a bind there would
	// bring it back into view (a repository in a denyRead directory of
	// the workspace, cordon's own state in a workspace holding it).
	hidden := hiddenBy(fsys, denyRead, allowRead, writable, req.Host.State)
	prot.Drop(hidden)
	// (Not with nested namespaces: a process of the command could have a
	// root and mounts of its own, which the guard's paths do not know.)
	if p.SyscallGuard && !p.Sandbox.AllowNestedUserNamespaces {
		pl.guard = guardFor(p, writable, prot.Roots, inWritable, inGitDir, ownPaths(p, req))
	}
	// A worktree's or submodule's real git directory is writable too, or
	// git could not commit there; its hooks and config are protected.
	writable = append(writable, prot.Roots...)
	for _, w := range writable {
		rules = append(rules, mounts.Rule{Path: w, Access: mounts.ReadWrite})
	}
	rules = append(rules, prot.Rules...)
	for _, sp := range prot.Scrub {
		if !slices.Contains(pl.scrub.Paths, sp) {
			pl.scrub.Paths = append(pl.scrub.Paths, sp)
		}
	}
	for _, l := range prot.Links {
		if !slices.Contains(pl.scrub.Links, l) {
			pl.scrub.Links = append(pl.scrub.Links, l)
		}
	}
	pl.scrub.Roots = writable
	pl.scrub.GitDirs = prot.Roots
	if len(writable) > 0 {
		pl.scrub.Nested = policy.ProtectedBelow
	}
	for _, t := range p.TrustedDirs {
		if slices.ContainsFunc(writable, func(w string) bool { return paths.Below(t, w) }) {
			pl.scrub.Trusted = append(pl.scrub.Trusted, t)
		}
	}
	// New matches of a denyWrite glob in a writable root are moved aside
	// after the run.
	for _, pat := range p.Filesystem.DenyWrite {
		base := policy.PatternBase(pat)
		if policy.IsGlob(pat) && slices.ContainsFunc(writable, func(w string) bool { return paths.Under(base, w) || paths.Under(w, base) }) {
			existing, _ := expandPattern(fsys, pat)
			pl.scrub.Globs = append(pl.scrub.Globs, ScrubGlob{Pattern: pat, Existing: existing})
		}
	}
	for _, d := range denyWrite {
		if !covered(d, writable) {
			// Outside the writable roots it is read-only already.
			continue
		}
		rules = append(rules, mounts.Rule{Path: d, Access: mounts.ReadOnly})
	}

	// Reads: denyRead hides, allowRead re-opens inside it (allowRead wins:
	// a denyRead it covers is dropped), writable again where a writable
	// root and no denyWrite cover it.
	var denied, reopened []string
	// A masked credential's fake is bound over it: its own deny goes (the
	// policy keeps one for when there is no fake), and what is above it
	// stays hidden.
	for _, f := range req.Masked.Files {
		denyRead = slices.DeleteFunc(denyRead, func(d string) bool { return d == f.Path })
		rules = append(rules, mounts.Rule{Path: f.Path, Access: mounts.ReadOnly, Source: f.Fake})
		reopened = append(reopened, f.Path)
	}
	for _, d := range denyRead {
		if covered(d, allowRead) {
			continue
		}
		denied = append(denied, d)
		rules = append(rules, mounts.Rule{Path: d, Access: mounts.Deny})
	}
	for _, d := range denied {
		for _, pin := range pinWay(fsys, d, writable) {
			// Never a writable bind inside what is hidden or read-only.
			if !covered(pin.Path, denied) && !covered(pin.Path, denyWrite) && !covered(pin.Path, readOnly) {
				rules = append(rules, pin)
			}
		}
	}
	for _, a := range allowRead {
		if !slices.ContainsFunc(denied, func(d string) bool { return paths.Below(a, d) }) {
			// Not inside a denied path: readable already.
			continue
		}
		access := mounts.ReadOnly
		if covered(a, writable) && !covered(a, denyWrite) && !covered(a, readOnly) {
			access = mounts.ReadWrite
		}
		reopened = append(reopened, a)
		rules = append(rules, mounts.Rule{Path: a, Access: access})
	}

	if sock, err := agentSocket(p, req, fsys); err != nil {
		return pl, err
	} else if sock != "" && !covered(sock, denied) {
		rules = append(rules, mounts.Rule{Path: sock, Access: mounts.ReadOnly})
	}

	var extra []specs.Mount
	if h := req.Host; h.Executable != "" {
		// cordon itself: read-only where it lives (the host root already
		// is, a writable root is not), and reachable at a fixed path for
		// the init.
		for _, w := range writable {
			if paths.Under(h.Executable, w) {
				rules = append(rules, mounts.Rule{Path: h.Executable, Access: mounts.ReadOnly})
				break
			}
		}
		extra = append(extra, specs.Mount{
			Destination: InitPath, Type: "bind", Source: h.Executable,
			Options: []string{"bind", "ro", "nosuid", "nodev"},
		})
	}
	if b := req.Masked.TrustBundle; b != "" {
		extra = append(extra, specs.Mount{
			Destination: TrustBundlePath, Type: "bind", Source: b,
			Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"},
		})
	}
	if req.Host.State != "" {
		rules = append(rules, mounts.Rule{Path: req.Host.State, Access: mounts.Deny})
		denied = append(denied, req.Host.State)
	}
	if req.Mode == ModeUnconfined {
		return pl, nil
	}
	cp := planCaches(fsys, req, writable, hidden)
	rules = append(rules, cp.rules...)
	extra = append(extra, cp.mounts...)
	pl.env = cp.env
	if req.Mode == ModeContainer {
		// No mounts: Landlock is the file-system layer (container.go),
		// and what the binds would keep read-only is put back after.
		for _, r := range rules {
			if r.Access == mounts.ReadOnly && covered(r.Path, writable) && !slices.Contains(pl.scrub.Protected, r.Path) {
				pl.scrub.Protected = append(pl.scrub.Protected, r.Path)
			}
		}
		pl.landlock, err = containerLandlock(fsys, req, writable, denied, reopened, cp.writable)
		return pl, err
	}
	if pl.landlock, err = landlockRules(fsys, append(slices.Clone(systemWritable), cp.writable...), writable, denied, reopened); err != nil {
		return pl, err
	}
	// cordon's own binary, for the tools it offers inside (it exists only
	// in the sandbox, so no host directory's rule covers it).
	pl.landlock = append(pl.landlock, LandlockRule{Path: InitPath, Access: "r"})
	if req.Masked.TrustBundle != "" {
		pl.landlock = append(pl.landlock, LandlockRule{Path: TrustBundlePath, Access: "r"})
	}

	res, err := mounts.Plan(mounts.Layout{
		FS:       fsys,
		Rules:    rules,
		MaskFile: req.Host.MaskFile,
		TmpSize:  p.Limits.TmpSize,
		Extra:    extra,
		Rootfs:   req.Host.Rootfs,
		Checked:  writable,
	})
	if err != nil {
		return pl, err
	}
	pl.mounts = res.Mounts
	pl.checks = res.Checks
	pl.landlock = append(pl.landlock, checkRules(res.Checks)...)
	return pl, nil
}

// ownPaths are the host paths that stay read-only whatever the settings:
// the caller's own configuration (policy.ProtectedInHome), cordon's binary,
// the settings files and the scripts Claude Code runs on the host by
// itself (policy.HostRun).
func ownPaths(p *policy.Policy, req Request) []string {
	own := p.OwnPaths(p.Home)
	if h := req.Host.Executable; h != "" {
		own = append(own, h)
	}
	return own
}

// hiddenBy returns whether a path (resolved) is out of the command's
// sight: below a denied path (denyRead not re-opened by an allowRead, and
// cordon's state), and not inside an allowRead or writable root below it.
func hiddenBy(fsys fs.FS, denyRead, allowRead, writable []string, state string) func(string) bool {
	var denied, open []string
	for _, d := range append(slices.Clone(denyRead), state) {
		if d == "" || slices.ContainsFunc(allowRead, func(a string) bool { return paths.Under(d, a) }) {
			continue
		}
		if real, _, err := mounts.Resolve(fsys, d); err == nil {
			denied = append(denied, real)
		}
	}
	for _, o := range append(slices.Clone(allowRead), writable...) {
		if real, _, err := mounts.Resolve(fsys, o); err == nil {
			open = append(open, real)
		}
	}
	return func(p string) bool {
		return slices.ContainsFunc(denied, func(d string) bool {
			return paths.Under(p, d) && !slices.ContainsFunc(open, func(o string) bool {
				return paths.Below(o, d) && paths.Under(p, o)
			})
		})
	}
}

// withTargets returns paths and, after them, where those that are
// symlinks lead.
func withTargets(fsys fs.FS, own []string) []string {
	for _, o := range slices.Clone(own) {
		if real, _, err := mounts.Resolve(fsys, o); err == nil && real != o {
			own = append(own, real)
		}
	}
	return own
}

// pinWay binds every directory between the writable root holding p and
// p onto itself, as mounts.Protect does for protected paths: a mountpoint
// cannot be renamed, and a denied path whose directory a command renamed
// (mv config config.old) would not exist for the next run, whose rule
// would be dropped, and whose content it would read at the new name.
func pinWay(fsys fs.FS, p string, writable []string) []mounts.Rule {
	real, _, err := mounts.Resolve(fsys, p)
	if err != nil {
		return nil
	}
	root := ""
	for _, w := range writable {
		if paths.Below(real, w) && len(w) > len(root) {
			root = w
		}
	}
	if root == "" {
		return nil
	}
	var out []mounts.Rule
	for d := path.Dir(real); paths.Below(d, root); d = path.Dir(d) {
		out = append(out, mounts.Rule{Path: d, Access: mounts.ReadWrite})
	}
	slices.Reverse(out)
	return out
}

// gitRedirects are the files of a git directory (below prefix) that send
// git elsewhere for its config and hooks: a commondir file makes another
// directory the repository's common directory, whose config git reads and
// whose hooks it runs. One planted in a repository that had none (or
// rewritten in a worktree's git directory) hands the next git command on
// the host a config of the command's choosing: core.fsmonitor runs at git
// status. They belong in policy.ProtectedInGitDir; kept here until they
// are there.
func gitRedirects(prefix string) []string {
	var out []string
	for _, rel := range []string{"commondir", "modules/*/commondir", "worktrees/*/commondir"} {
		out = append(out, prefix+rel)
	}
	return out
}

// outermost keeps the paths that are not below another of them.
func outermost(ps []string) []string {
	var out []string
	for _, p := range ps {
		if slices.Contains(out, p) {
			continue
		}
		if !slices.ContainsFunc(ps, func(q string) bool { return paths.Below(p, q) }) {
			out = append(out, p)
		}
	}
	return out
}

// seccompProfile is the agent profile, for the machine; none where the
// probe found no seccomp (a degraded sandbox; the caller has said so).
// Where the kernel has user notification (and cordon does not already run
// under a filter with a listener, which would make a second one fail), the
// refusals cordon records notify the runtime, and so do the file accesses
// rec asks for, and with guard (and a kernel for it) the calls the guard
// performs, which guarded then says.
func seccompProfile(p *policy.Policy, req Request, pr probe.Result, guard bool) (profile *specs.LinuxSeccomp, guarded bool, err error) {
	rec := req.Record
	probed := !pr.ProbedAt.IsZero()
	if probed && !pr.Seccomp.Available {
		return nil, false, nil
	}
	notify := !probed || pr.Seccomp.UserNotify
	if !notify && (rec.Writes || rec.Reads) {
		return nil, false, fmt.Errorf("%w: recording file accesses needs seccomp user notification, which this machine does not have (see cordon doctor)", ErrInvalid)
	}
	guarded = guard && notify && seccomp.GuardKernel(pr.Kernel)
	profile, err = seccomp.Profile(seccomp.Options{
		Arch: pr.Arch, KernelVersion: pr.Kernel, AllowSocketpair: p.Sandbox.AllowSocketpair,
		AllowUnixSockets:    p.Network.AllowAllUnixSockets,
		AllowUserNamespaces: p.Sandbox.AllowNestedUserNamespaces,
		Contained:           req.Mode == ModeContainer,
		// Without Landlock's TCP rules (ABI 4) nothing else would keep a
		// contained command's connections to the proxy.
		NoTCP:  req.Mode == ModeContainer && probed && pr.LandlockABI() < 4,
		Notify: notify, NotifyWrites: rec.Writes || rec.Reads, NotifyReads: rec.Reads,
		Guard: guarded,
	})
	return profile, guarded, err
}

// HostAsCommand is the host's file system as the sandboxed command of a
// caller with uid, gid and groups sees it (mounts.AsCommand; groups nil
// for the full sandbox): what the runtime looks at after the run is what
// the command could have changed.
func HostAsCommand(uid, gid uint32, groups []uint32) fs.FS {
	return mounts.AsCommand(mounts.HostFS(), uid, gid, groups)
}

// HostView reports whether m is one of the binds of the host's top-level
// entries that together make the sandbox's read-only view of the host
// root, and whether the entry is a directory (see mounts.HostView).
func HostView(m specs.Mount) (ok, dir bool) { return mounts.HostView(m) }
