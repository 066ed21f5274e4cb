package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

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
}

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
	ws, fi, err := mounts.Resolve(fsys, p.Workspace)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return pl, fmt.Errorf("%w: workspace %s does not exist", ErrInvalid, p.Workspace)
		}
		return pl, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return pl, fmt.Errorf("%w: workspace %s is not a directory", ErrInvalid, p.Workspace)
	}
	if ws == "/" {
		return pl, fmt.Errorf("%w: the workspace cannot be / (it would make the whole host writable)", ErrInvalid)
	}

	var rules []mounts.Rule
	if p.Mode == policy.ReadOnly {
		rules = append(rules, mounts.Rule{Path: ws, Access: mounts.ReadOnly})
	}
	writable := []string{ws}
	if p.Mode == policy.ReadOnly {
		writable = nil
	}
	for _, a := range p.Filesystem.AllowWrite {
		if p.Mode == policy.ReadOnly {
			break
		}
		paths, err := expandPattern(fsys, a)
		if err != nil {
			return pl, err
		}
		writable = append(writable, paths...)
	}
	inWritable, inGitDir := p.Protected()
	prot, err := mounts.Protect(fsys, writable, inWritable, inGitDir)
	if err != nil {
		return pl, err
	}
	// The caller's own configuration, where a writable root covers it:
	// protected relative to that root.
	for _, w := range writable {
		var names []string
		for _, rel := range policy.ProtectedInHome {
			if abs := path.Join(p.Home, rel); within(abs, w) {
				names = append(names, strings.TrimPrefix(abs, strings.TrimSuffix(w, "/")+"/"))
			}
		}
		if len(names) == 0 {
			continue
		}
		more, err := mounts.Protect(fsys, []string{w}, names, nil)
		if err != nil {
			return pl, err
		}
		prot.Rules = append(prot.Rules, more.Rules...)
		prot.Scrub = append(prot.Scrub, more.Scrub...)
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
	pl.scrub.Roots = writable
	pl.scrub.GitDirs = prot.Roots
	var denied, reopened []string
	for _, list := range []struct {
		patterns  []string
		access    mounts.Access
		denyWrite bool
	}{
		{p.Filesystem.DenyWrite, mounts.ReadOnly, true},
		{p.Filesystem.DenyRead, mounts.Deny, false},
		{p.Filesystem.AllowRead, mounts.ReadOnly, false},
	} {
		for _, pat := range list.patterns {
			paths, err := expandPattern(fsys, pat)
			if err != nil {
				return pl, err
			}
			for _, path := range paths {
				rules = append(rules, mounts.Rule{Path: path, Access: list.access})
				switch {
				case list.access == mounts.Deny:
					denied = append(denied, path)
				case !list.denyWrite:
					reopened = append(reopened, path)
				}
			}
			// A file matching a denyWrite glob that appears in a writable
			// root during the run is moved aside after it.
			base := policy.PatternBase(pat)
			if list.denyWrite && policy.IsGlob(pat) && slices.ContainsFunc(writable, func(w string) bool {
				return below(base, w) || below(w, base)
			}) {
				pl.scrub.Globs = append(pl.scrub.Globs, ScrubGlob{Pattern: pat, Existing: paths})
			}
		}
	}

	var extra []specs.Mount
	if h := req.Host; h.Executable != "" {
		// cordon itself: read-only where it lives (the host root already
		// is, a writable root is not), and reachable at a fixed path for
		// the init.
		for _, w := range writable {
			if below(h.Executable, w) {
				rules = append(rules, mounts.Rule{Path: h.Executable, Access: mounts.ReadOnly})
				break
			}
		}
		extra = append(extra, specs.Mount{
			Destination: InitPath, Type: "bind", Source: h.Executable,
			Options: []string{"bind", "ro", "nosuid", "nodev"},
		})
	}
	if req.Host.State != "" {
		rules = append(rules, mounts.Rule{Path: req.Host.State, Access: mounts.Deny})
		denied = append(denied, req.Host.State)
	}
	if pl.landlock, err = landlockRules(fsys, writable, denied, reopened); err != nil {
		return pl, err
	}
	// cordon's own binary, for the tools it offers inside (it exists only
	// in the sandbox, so no host directory's rule covers it).
	pl.landlock = append(pl.landlock, LandlockRule{Path: InitPath, Access: "r"})

	res, err := mounts.Plan(mounts.Layout{
		FS:       fsys,
		Rules:    rules,
		MaskFile: req.Host.MaskFile,
		Extra:    extra,
		Rootfs:   req.Host.Rootfs,
	})
	if err != nil {
		return pl, err
	}
	pl.mounts = res.Mounts
	return pl, nil
}

// within reports whether p lies strictly below dir.
func within(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// below reports whether p is dir or lies below it.
func below(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// seccompProfile is the agent profile, for the machine; none where the
// probe found no seccomp (a degraded sandbox; the caller has said so).
func seccompProfile(p *policy.Policy, pr probe.Result) (*specs.LinuxSeccomp, error) {
	if !pr.ProbedAt.IsZero() && !pr.Seccomp.Available {
		return nil, nil
	}
	return seccomp.Profile(seccomp.Options{Arch: pr.Arch, KernelVersion: pr.Kernel, AllowSocketpair: p.Sandbox.AllowSocketpair})
}
