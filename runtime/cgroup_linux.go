package runtime

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/cgroups"
)

// PrimeCgroups starts, in the background, the wait the kernel makes the
// first cgroup migration after a quiet spell pay, so that the sandbox's
// own migration, a few milliseconds later, does not pay it.
//
// Every write to a cgroup.procs file takes a global lock for writing
// (cgroup_threadgroup_rwsem), whose first writer waits for an RCU grace
// period: 7-9 ms on a 2-CPU VM, the largest single step of a cold run as
// root. Writers that follow within about a grace period of the last one
// do not wait. PrimeCgroups writes cordon's own pid into the cgroup it is
// already in, which moves nothing, while cordon compiles the policy; when
// libcontainer then moves the sandbox's first process into the run's
// cgroups, the grace period is over or nearly so.
//
// It does nothing for a caller that cannot write its own cgroup (no
// sandbox cgroup will be made for it either), and errors are ignored: it
// only ever saves time.
func PrimeCgroups() {
	if os.Geteuid() != 0 {
		return
	}
	go func() {
		dir, err := ownCgroup()
		if err != nil {
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			return
		}
		_, _ = f.WriteString(strconv.Itoa(os.Getpid()))
		_ = f.Close()
	}()
}

// ownCgroup is the directory of the cgroup cordon is in: in the unified
// hierarchy, or else in the pids controller's (any v1 hierarchy would do,
// the lock is global).
func ownCgroup() (string, error) {
	if cgroups.IsCgroup2UnifiedMode() {
		own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
		if err != nil {
			return "", err
		}
		return filepath.Join("/sys/fs/cgroup", own[""]), nil
	}
	return cgroups.GetOwnCgroupPath("pids")
}
