//go:build linux

package integration

// What a test that waits in vain for a run prints about where it is
// stuck (running.waitStdout): the run's processes and threads, and
// whether the machine gave them a CPU.

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// threadStacks describes the threads of the process pid and of its
// descendants: cgroups, command, wait channel, scheduling (time run and
// time waited to run, in ns) and kernel stack (root can read those).
func threadStacks(pid int) string {
	var b strings.Builder
	for _, p := range descendants(pid) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p))
		fmt.Fprintf(&b, "process %d: %s\n  cgroups: %s\n", p, strings.ReplaceAll(string(cmdline), "\x00", " "), strings.ReplaceAll(strings.TrimSpace(string(cgroup)), "\n", " "))
		for line := range strings.Lines(string(cgroup)) {
			// "N:controllers:/path": what throttles or freezes it
			f := strings.SplitN(strings.TrimSpace(line), ":", 3)
			if len(f) != 3 {
				continue
			}
			file := map[string]string{"cpu": "cpu.stat", "freezer": "freezer.state"}[f[1]]
			if file == "" {
				continue
			}
			file = path.Join("/sys/fs/cgroup", f[1], f[2], file)
			if data, err := os.ReadFile(file); err == nil {
				fmt.Fprintf(&b, "  %s: %s\n", file, strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", " "))
			}
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, t := range tasks {
			dir := fmt.Sprintf("/proc/%d/task/%s/", p, t.Name())
			wchan, _ := os.ReadFile(dir + "wchan")
			stat, _ := os.ReadFile(dir + "stat")
			sched, _ := os.ReadFile(dir + "schedstat")
			stack, _ := os.ReadFile(dir + "stack")
			fmt.Fprintf(&b, "  thread %s wchan %s schedstat %s stat %s\n%s", t.Name(), wchan, strings.TrimSpace(string(sched)), strings.TrimSpace(string(stat)), stack)
		}
	}
	return b.String()
}

// descendants is pid and the processes below it (children of any of
// their threads), at most 64.
func descendants(pid int) []int {
	pids := []int{pid}
	for i := 0; i < len(pids) && len(pids) < 64; i++ {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pids[i]))
		for _, t := range tasks {
			kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pids[i], t.Name()))
			for _, f := range strings.Fields(string(kids)) {
				if n, err := strconv.Atoi(f); err == nil {
					pids = append(pids, n)
				}
			}
		}
	}
	return pids
}

// runnable names the machine's threads that are running or waiting to
// run: whether something else took the CPUs.
func runnable() string {
	var names []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		tasks, _ := os.ReadDir("/proc/" + p.Name() + "/task")
		for _, t := range tasks {
			stat, _ := os.ReadFile("/proc/" + p.Name() + "/task/" + t.Name() + "/stat")
			// pid (comm) state ...: comm may hold spaces and brackets.
			i := strings.LastIndexByte(string(stat), ')')
			if i > 0 && i+2 < len(stat) && stat[i+2] == 'R' {
				names = append(names, t.Name()+" "+string(stat[strings.IndexByte(string(stat), '(')+1:i]))
			}
		}
	}
	return strings.Join(names, ", ")
}
