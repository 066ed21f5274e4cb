package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"

	"cordon.dev/cordon/seccomp"
)

// Preheat starts, in the background, work a cold run will wait for
// later: the cgroup lock's grace period (primeCgroups), the parse of the
// default seccomp profile (seccomp.Preload, 0.4-0.5 ms) and libcontainer's
// JSON encoders. encoding/json builds the encoder of a type the first
// time it meets it, by reflection; for libcontainer's configs.Config,
// which Run sends to the sandbox's init and saves in the state, that
// took about 1 ms of a cold run's critical path. Built now, on the other
// CPU, while the policy compiles.
//
// Only for a run that starts a sandbox itself, soon: a process cannot
// exit while the write waits in the kernel (a served run's client would
// be held for the grace period).
func Preheat() {
	go seccomp.Preload()
	go func() { _, _ = json.Marshal(&libcontainer.State{}) }()
	primeCgroups()
}

// primeCgroups starts, in the background, the wait the kernel makes the
// first cgroup migration after a quiet spell pay, so that the sandbox's
// own migration, a few milliseconds later, does not pay it.
//
// Every write to a cgroup.procs file takes a global lock for writing
// (cgroup_threadgroup_rwsem), whose first writer waits for an RCU grace
// period: 7-9 ms on a 2-CPU VM, the largest single step of a cold run as
// root. Writers that follow within about a grace period of the last one
// do not wait. primeCgroups writes cordon's own pid into the cgroup it is
// already in, which moves nothing, while cordon compiles the policy; when
// libcontainer then moves the sandbox's first process into the run's
// cgroups, the grace period is over or nearly so.
//
// It does nothing for a caller that cannot write its own cgroup (no
// sandbox cgroup will be made for it either), and errors are ignored: it
// only ever saves time.
func primeCgroups() {
	if os.Geteuid() != 0 || cgroupsPrimed() {
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
