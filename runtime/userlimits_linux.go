package runtime

import (
	"os"
	"strconv"
	"strings"
)

// The kernel counts some resources per user, across user namespaces: what
// a process in the sandbox's user namespace takes is charged to that
// namespace and to every one above it, up to the caller's own count on
// the host, which the caller's editor, file watchers and desktop share.
// Each user namespace has its own limits for some of them
// (/proc/sys/user/max_*, the "ucounts"): set in the sandbox's, they bound
// what the whole sandbox may take, and leave the rest to the host.

// userLimits are the per-user limits of the host (the initial user
// namespace's, which the fs.* sysctls show) and the sandbox's user
// namespace's own file for each.
var userLimits = []struct{ host, own string }{
	{"/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances"},
	{"/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"},
	{"/proc/sys/fs/fanotify/max_user_groups", "/proc/sys/user/max_fanotify_groups"},
	{"/proc/sys/fs/fanotify/max_user_marks", "/proc/sys/user/max_fanotify_marks"},
}

// shareUserLimits gives the sandbox's user namespace half of each of the
// host user's limits in userLimits: a command that takes every inotify
// instance it can (a runaway file watcher, or one on purpose) leaves the
// other half to the host user's programs. It runs in libcontainer's init,
// in the sandbox's new user namespace, where it is root (the limits of a
// user namespace are its root's to set), before /proc/sys becomes
// read-only. A limit the kernel lacks (fanotify's before Linux 5.13) is
// skipped, and so is every one where /proc/sys is read-only already
// (cordon inside a container): the sandbox then shares the host's, which
// docs/limits.md says.
func shareUserLimits() {
	for _, l := range userLimits {
		data, err := os.ReadFile(l.host)
		if err != nil {
			continue
		}
		host, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || host < 2 {
			continue
		}
		_ = os.WriteFile(l.own, []byte(strconv.FormatInt(host/2, 10)), 0)
	}
}
