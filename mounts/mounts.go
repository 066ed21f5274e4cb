// Package mounts turns path rules (this path is writable, that one is
// read-only, this one is unreadable) into the ordered mount list of a
// sandbox whose root is a read-only view of the host. It resolves every path
// through symlinks on the host file system so that a rule always lands on
// the file it names, and orders the mounts so that a mount never hides one
// it depends on.
package mounts

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/internal/paths"
)

// Access is what a sandboxed command may do under a path.
type Access int

// The kinds of access, from the least to the most permissive.
const (
	Deny Access = iota
	ReadOnly
	ReadWrite
)

func (a Access) String() string {
	switch a {
	case Deny:
		return "deny"
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("access(%d)", int(a))
}

// Rule gives an access to a path and everything below it.
type Rule struct {
	Path   string // absolute
	Access Access
	// Source, for a ReadOnly rule on a file, is the host file the
	// sandbox sees at Path instead of the file there (a masked
	// credential's fake); empty: the file itself.
	Source string `json:",omitempty"`
}

// Layout is the input of Plan.
type Layout struct {
	// FS is the host file system, rooted at "/".
	FS fs.FS
	// Rules are the path rules. Where two rules name the same file the more
	// restrictive wins; a rule on a path below another rule's path is
	// mounted on top of it.
	Rules []Rule
	// MaskFile is the host path of an empty file with mode 000 that is bound
	// read-only over denied files.
	MaskFile string
	// TmpSize is the size of the private /tmp, in bytes (0: the kernel's
	// default, half of RAM).
	TmpSize int64
	// Extra are mounts added as they are (e.g. cordon's own binary), ordered
	// with the rest.
	Extra []specs.Mount
	// Rootfs is the host directory that becomes the sandbox's root. The
	// host directory that holds it is bound first, before the sandbox's
	// own mounts appear below it and would be copied along.
	Rootfs string
	// Checked are the writable roots: what the mounts at and below them
	// must be once made is returned as Result.Checks, when FS is a
	// Recorder.
	Checked []string
}

// Result is the mount plan: the mounts in the order they must be made, and
// the rules that were dropped because their path does not exist (or lies
// where FS cannot look: see Reach).
type Result struct {
	Mounts  []specs.Mount
	Missing []Rule
	// Checks say what the paths inside the writable roots must be once
	// the mounts are made (see Check).
	Checks []Check `json:",omitempty"`
}

// replaced are the top-level host directories the sandbox gets its own
// instance of instead of the host's.
var replaced = map[string]bool{"proc": true, "dev": true, "sys": true, "tmp": true}

// mount categories, in the order they are made at equal depth.
const (
	catHostFirst = iota
	catHost
	catSystem
	catWrite
	catReadOnly
	catExtra
	catDeny
)

type planned struct {
	m   specs.Mount
	cat int
}

// Plan returns the mounts that give a read-only view of the host root with
// private /proc, /dev, /sys and /tmp, and the rules applied on top.
func Plan(l Layout) (Result, error) {
	var res Result
	var list []planned

	entries, err := fs.ReadDir(l.FS, ".")
	if err != nil {
		return res, fmt.Errorf("read host root: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if replaced[name] {
			continue
		}
		dst := "/" + name
		switch t := e.Type(); {
		case t.IsDir() && paths.Under(l.Rootfs, dst):
			list = append(list, planned{hostBind(dst, true), catHostFirst})
		case t.IsDir():
			list = append(list, planned{hostBind(dst, true), catHost})
		case t.IsRegular():
			list = append(list, planned{hostBind(dst, false), catHost})
		}
		// Top-level symlinks are copied into the root itself; sockets and
		// device nodes at the top level are left out.
	}
	for _, m := range systemMounts(l.TmpSize) {
		list = append(list, planned{m, catSystem})
	}

	resolved, missing, err := resolveRules(l.FS, l.Rules)
	if err != nil {
		return res, err
	}
	res.Missing = missing
	for _, r := range resolved {
		switch r.Access {
		case ReadWrite:
			list = append(list, planned{specs.Mount{
				Destination: r.Path, Type: "bind", Source: r.Path,
				Options: []string{"rbind", "nosuid", "nodev", "rprivate"},
			}, catWrite})
		case ReadOnly:
			m := specs.Mount{
				Destination: r.Path, Type: "bind", Source: r.Path,
				Options: []string{"rbind", "rro", "nosuid", "nodev", "rprivate"},
			}
			if r.Source != "" {
				m.Source = r.Source
				m.Options = []string{"bind", "ro", "nosuid", "nodev", "noexec", "rprivate"}
			}
			list = append(list, planned{m, catReadOnly})
		case Deny:
			if replaced[strings.Split(r.Path, "/")[1]] && !boundIn(resolved, r.Path) {
				// The host's /tmp (or /proc, ...) is not in the sandbox:
				// nothing to hide, unless a bind brings it in (a
				// workspace under /tmp must not show its denied files).
				continue
			}
			list = append(list, planned{denyMount(r, l.MaskFile), catDeny})
		}
	}
	for _, m := range l.Extra {
		list = append(list, planned{m, catExtra})
	}

	// A mount must come after every mount on an ancestor of its destination,
	// or that one would hide it: order by depth, then by category.
	slices.SortStableFunc(list, func(a, b planned) int {
		return cmp.Or(
			cmp.Compare(depth(a.m.Destination), depth(b.m.Destination)),
			cmp.Compare(a.cat, b.cat),
		)
	})
	res.Mounts = make([]specs.Mount, 0, len(list))
	for _, p := range list {
		res.Mounts = append(res.Mounts, p.m)
	}
	res.Checks = checks(l.FS, l.Checked, res.Mounts, l.MaskFile)
	return res, nil
}

// boundIn reports whether a bind of rules (ReadWrite or ReadOnly) brings
// the host's path p into the sandbox: one on p or an ancestor of it.
func boundIn(rules []resolvedRule, p string) bool {
	return slices.ContainsFunc(rules, func(r resolvedRule) bool {
		return r.Access != Deny && paths.Under(p, r.Path)
	})
}

// Every bind is made rprivate: a mount the host makes while the command
// runs must not propagate into the sandbox, where it would arrive writable.

func hostBind(dst string, dir bool) specs.Mount {
	opts := []string{"rbind", "rro", "nosuid", "nodev", "rprivate"}
	if !dir {
		opts = []string{"bind", "ro", "nosuid", "nodev", "rprivate"}
	}
	return specs.Mount{Destination: dst, Type: "bind", Source: dst, Options: opts}
}

// HostView reports whether m is one of the binds Plan makes of the host's
// top-level directories and files, which together are the sandbox's
// read-only view of the host root, and whether the entry it binds is a
// directory. A runtime may make them some other way, to the same effect.
func HostView(m specs.Mount) (ok, dir bool) {
	name, top := strings.CutPrefix(m.Destination, "/")
	if !top || name == "" || name == "." || name == ".." || strings.Contains(name, "/") || replaced[name] {
		return false, false
	}
	for _, dir := range []bool{true, false} {
		want := hostBind(m.Destination, dir)
		if m.Type == want.Type && m.Source == want.Source && slices.Equal(m.Options, want.Options) {
			return true, dir
		}
	}
	return false, false
}

// tmpfsInodeBytes is the size of a sandbox tmpfs per file it may hold.
// A tmpfs's size bounds its data, not its files: by default it may hold
// as many as half the machine's pages, and each costs the kernel about
// 1 KiB that no size counts — 3 GiB of a 24 GiB host for a command that
// creates empty files in /tmp, unaccounted where the sandbox has no
// memory cgroup. One file per 4 KiB keeps that under a quarter of the
// size.
const tmpfsInodeBytes = 4096

// tmpfsLimits are the options that bound a tmpfs of size bytes.
func tmpfsLimits(size int64) []string {
	return []string{fmt.Sprintf("size=%d", size), fmt.Sprintf("nr_inodes=%d", max(size/tmpfsInodeBytes, 1024))}
}

// systemMounts are the sandbox's own /proc, /dev, /sys and /tmp.
func systemMounts(tmpSize int64) []specs.Mount {
	tmpOpts := []string{"nosuid", "nodev", "mode=1777"}
	if tmpSize > 0 {
		tmpOpts = append(tmpOpts, tmpfsLimits(tmpSize)...)
	}
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: append([]string{"nosuid", "strictatime", "mode=755"}, tmpfsLimits(64<<20)...)},
		// No gid=5: the tty group is not mapped into a single-id user namespace.
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: append([]string{"nosuid", "noexec", "nodev", "mode=1777"}, tmpfsLimits(64<<20)...)},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: tmpOpts},
	}
}

// denyMount hides a path: a directory under an empty tmpfs that nobody may
// enter, a file under an empty file that nobody may read. Both are
// read-only, so their modes cannot be changed from inside.
func denyMount(r resolvedRule, maskFile string) specs.Mount {
	if r.dir {
		mode := "mode=000"
		if r.nested {
			// Paths re-opened below it must stay reachable: traversable,
			// not listable.
			mode = "mode=111"
		}
		return specs.Mount{
			Destination: r.Path, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"ro", "nosuid", "nodev", "noexec", mode, "size=4k"},
		}
	}
	return specs.Mount{
		Destination: r.Path, Type: "bind", Source: maskFile,
		Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"},
	}
}

type resolvedRule struct {
	Rule
	dir    bool
	nested bool // another rule's path lies below this one
}

// resolveRules resolves every rule's path through symlinks, drops rules on
// paths that do not exist, and keeps the most restrictive rule per path.
func resolveRules(fsys fs.FS, rules []Rule) ([]resolvedRule, []Rule, error) {
	var (
		out     []resolvedRule
		missing []Rule
		index   = map[string]int{}
	)
	for _, r := range rules {
		if !path.IsAbs(r.Path) {
			return nil, nil, fmt.Errorf("rule path %q is not absolute", r.Path)
		}
		real, fi, err := Resolve(fsys, r.Path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// (what the command cannot reach needs neither hiding nor
			// opening: it could not get there)
			missing = append(missing, r)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if real == "/" {
			return nil, nil, fmt.Errorf("rule on %q: the root itself cannot be remounted", r.Path)
		}
		if r.Source != "" && (r.Access != ReadOnly || fi.IsDir()) {
			return nil, nil, fmt.Errorf("rule on %q: only a read-only rule on a file may take another source", r.Path)
		}
		rr := resolvedRule{Rule: Rule{Path: real, Access: r.Access, Source: r.Source}, dir: fi.IsDir()}
		if i, ok := index[real]; ok {
			if r.Access < out[i].Access {
				out[i].Access = r.Access
			}
			if r.Source != "" || out[i].Source != "" {
				// a stand-in file must not take another rule's place,
				// nor lose its own
				return nil, nil, fmt.Errorf("rule on %q: another rule names the file bound in its place", r.Path)
			}
			continue
		}
		index[real] = len(out)
		out = append(out, rr)
	}
	for i := range out {
		for j := range out {
			if i != j && paths.Below(out[j].Path, out[i].Path) {
				out[i].nested = true
			}
		}
	}
	return out, missing, nil
}

func depth(p string) int {
	p = path.Clean(p)
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}
