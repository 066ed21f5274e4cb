package runtime

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
)

// usage reads the sandbox's cgroup before it is destroyed. paths are its
// cgroup directories by controller, when known already (a pooled
// sandbox's, read while it waited); nil has them read from c.
func usage(c *libcontainer.Container, paths map[string]string, st *os.ProcessState, wall time.Duration) Usage {
	u := Usage{Wall: wall}
	if st != nil {
		u.User, u.System = st.UserTime(), st.SystemTime()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			u.PeakMemory = ru.Maxrss * 1024
		}
	}
	if paths == nil {
		state, err := c.State()
		if err != nil {
			return u
		}
		paths = state.CgroupPaths
	}
	if dir := paths["memory"]; dir != "" {
		if peak := readInt(filepath.Join(dir, "memory.max_usage_in_bytes")); peak > 0 {
			u.PeakMemory, u.FromCgroup = peak, true
		} else if peak := readInt(filepath.Join(dir, "memory.peak")); peak > 0 {
			u.PeakMemory, u.FromCgroup = peak, true
		}
		u.OOMKills = max(readKey(filepath.Join(dir, "memory.oom_control"), "oom_kill"), readKey(filepath.Join(dir, "memory.events"), "oom_kill"))
		if lim := readInt(filepath.Join(dir, "memory.limit_in_bytes")); lim > 0 && lim < 1<<62 {
			u.MemoryLimit = lim
		} else if lim := readInt(filepath.Join(dir, "memory.max")); lim > 0 {
			u.MemoryLimit = lim
		}
	}
	if dir := paths["pids"]; dir != "" {
		u.Pids = readInt(filepath.Join(dir, "pids.peak"))
	}
	if dir := paths["cpuacct"]; dir != "" {
		if user, sys := readKey(filepath.Join(dir, "cpuacct.stat"), "user"), readKey(filepath.Join(dir, "cpuacct.stat"), "system"); user+sys > 0 {
			// USER_HZ ticks.
			u.User, u.System = time.Duration(user)*10*time.Millisecond, time.Duration(sys)*10*time.Millisecond
		}
	}
	return u
}

func readInt(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// readKey reads "key value" from a cgroup file such as memory.events.
func readKey(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
