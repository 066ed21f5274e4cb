package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/mounts"
	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/seccomp"
)

// plan is the file system part of a sandbox.
type plan struct {
	mounts []specs.Mount
	// scrub are protected paths that did not exist: whatever appears there
	// during the run is moved away after it (see AnnotationScrub).
	scrub []string
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
	writable := p.WritableRoots()
	inWritable, inGitDir := p.Protected()
	prot, err := mounts.Protect(fsys, writable, inWritable, inGitDir)
	if err != nil {
		return pl, err
	}
	// A worktree's or submodule's real git directory is writable too, or
	// git could not commit there; its hooks and config are protected.
	writable = append(writable, prot.Roots...)
	for _, w := range writable {
		rules = append(rules, mounts.Rule{Path: w, Access: mounts.ReadWrite})
	}
	rules = append(rules, prot.Rules...)
	pl.scrub = prot.Scrub
	for _, d := range p.Filesystem.DenyWrite {
		rules = append(rules, mounts.Rule{Path: d, Access: mounts.ReadOnly})
	}
	for _, d := range p.Filesystem.DenyRead {
		rules = append(rules, mounts.Rule{Path: d, Access: mounts.Deny})
	}
	for _, a := range p.Filesystem.AllowRead {
		rules = append(rules, mounts.Rule{Path: a, Access: mounts.ReadOnly})
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
	}

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

// below reports whether p is dir or lies below it.
func below(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func seccompProfile(_ *policy.Policy, pr probe.Result) (*specs.LinuxSeccomp, error) {
	return seccomp.Profile(seccomp.Options{Arch: pr.Arch, KernelVersion: pr.Kernel})
}
