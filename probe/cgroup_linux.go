package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroups finds the cgroup layout and tries to create a cgroup where cordon
// would put its sandboxes' cgroups, and to start a process in it with
// clone3(CLONE_INTO_CGROUP) in the unified hierarchy. It removes the
// cgroups it creates (not root's empty /cordon parents, see makeCgroup).
func (p *prober) cgroups(ctx context.Context, root bool, ms []mount) (Cgroups, Feature) {
	v1, v2 := cgroupMounts(ms)
	c := Cgroups{
		Layout:        cgroupLayout(v1, v2),
		V1Controllers: v1Controllers(v1),
		V2Controllers: []string{},
		Parents:       []string{},
		Controllers:   []string{},
		FavorDynmods:  favorDynmods(ms),
	}
	if v2 != nil {
		c.V2Mount = v2.Point
		c.V2Controllers = fields(readTrim(filepath.Join(v2.Point, "cgroup.controllers")))
	}
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		c.Own, _ = ownV2Cgroup(parseProcCgroup(string(data)))
	}
	clone3 := Feature{Step: StepUntested, Error: "the caller can create no cgroup in the unified hierarchy"}

	// Where sandboxes go (see spec.WithCgroupsPath): /cordon in every
	// hierarchy for root; the caller's own, delegated, v2 cgroup for
	// everyone else.
	type parent struct {
		dir         string
		v2          bool
		controllers []string
	}
	var parents []parent
	if root {
		for _, h := range v1 {
			parents = append(parents, parent{dir: filepath.Join(h.Point, "cordon"), controllers: h.Controllers})
		}
		if v2 != nil {
			parents = append(parents, parent{dir: filepath.Join(v2.Point, "cordon"), v2: true, controllers: c.V2Controllers})
		}
	} else if v2 != nil && c.Own != "" {
		if dir, ok := cgroupDir(*v2, c.Own); ok {
			parents = append(parents, parent{dir: dir, v2: true,
				controllers: fields(readTrim(filepath.Join(dir, "cgroup.controllers")))})
		}
	}
	switch {
	case c.Layout == LayoutNone:
		c.Create = Feature{Step: "find cgroups", Error: "no cgroup file system is mounted"}
		return c, clone3
	case len(parents) == 0 && v2 == nil:
		c.Create = Feature{Step: "find cgroups", Error: "no cgroup2 mount, and cgroup v1 is not delegated to users"}
		return c, clone3
	case len(parents) == 0:
		c.Create = Feature{Step: "find cgroups", Error: fmt.Sprintf("the caller's cgroup (%q) is not visible under the cgroup2 mount", c.Own)}
		return c, clone3
	}

	c.Create = Feature{Available: true}
	var controllers []string
	for _, par := range parents {
		c.Parents = append(c.Parents, par.dir)
		dir, undo, err := makeCgroup(par.dir, root)
		if err != nil {
			if c.Create.Available {
				c.Create = failed("create "+filepath.Join(par.dir, "probe-*"), err)
			}
			continue
		}
		if par.v2 && clone3.Step == StepUntested {
			clone3 = p.clone3(ctx, dir)
			if !clone3.Available && !root && c.Create.Available && clone3.Errno != "ENOSYS" && clone3.Errno != "E2BIG" {
				// Delegation means moving processes in, too.
				c.Create = clone3
			}
		}
		undo()
		for _, ctrl := range par.controllers {
			if !strings.HasPrefix(ctrl, "name=") {
				controllers = append(controllers, ctrl)
			}
		}
	}
	if c.Create.Available {
		slices.Sort(controllers)
		c.Controllers = slices.Compact(controllers)
		if c.Controllers == nil {
			c.Controllers = []string{}
		}
	}
	return c, clone3
}

func fields(s string) []string {
	f := strings.Fields(s)
	if f == nil {
		return []string{}
	}
	return f
}

// makeCgroup creates a uniquely named cgroup under parent (and parent
// itself when mkParent and it is missing: the empty /cordon that the first
// sandbox would create stays, so that no run races with its removal), and
// returns it with the function that removes it.
func makeCgroup(parent string, mkParent bool) (string, func(), error) {
	if mkParent {
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", nil, err
		}
	}
	sweepProbeCgroups(parent)
	var b [4]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(parent, fmt.Sprintf("probe-%d-%s", os.Getpid(), hex.EncodeToString(b[:])))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, unwrapPath(err)
	}
	return dir, func() {
		// A process that just ended may still count for a moment.
		for range 50 {
			if err := unix.Rmdir(dir); err == nil || !errors.Is(err, unix.EBUSY) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}, nil
}

// sweepProbeCgroups removes the cgroups under parent that probes left
// when they were killed before removing their own (SIGTERM or SIGKILL to
// a cordon that was probing): those whose prober is gone. Only an empty
// cgroup can be removed, so a live one never is.
func sweepProbeCgroups(parent string) {
	paths, _ := filepath.Glob(filepath.Join(parent, "probe-*-*"))
	for _, p := range paths {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(p), "probe-"), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() {
			continue
		}
		if err := unix.Kill(n, 0); errors.Is(err, unix.ESRCH) {
			_ = unix.Rmdir(p)
		}
	}
}

// unwrapPath keeps the errno of a *PathError, whose path the step names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clone3 starts a probe child with clone3(CLONE_INTO_CGROUP) in the cgroup
// dir and checks that the child sees itself there.
func (p *prober) clone3(ctx context.Context, dir string) Feature {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return failed("open cgroup", err)
	}
	defer unix.Close(fd)
	rep := p.run(ctx, "cgroup", nil, &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd})
	if !rep.Available {
		return rep.Feature
	}
	if filepath.Base(rep.Cgroup) != filepath.Base(dir) {
		return Feature{Step: "clone3", Error: fmt.Sprintf("the child is in cgroup %q, want %s", rep.Cgroup, filepath.Base(dir))}
	}
	return Feature{Available: true}
}
