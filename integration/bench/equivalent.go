package main

// bubblewrap with cordon's isolation: issue 11 compares a cold cordon run
// with bubblewrap "with equivalent isolation". The plain bubblewrap
// contender has none of the default policy's limits, masks or seccomp
// filter; this one is given them, translated from the very spec `cordon
// spec` compiles:
//
//   - the spec's mounts, in order, as bubblewrap's binds, tmpfs, proc and
//     dev, its masked /proc paths, its read-only ones (masked too where
//     bubblewrap's --proc does not make them read-only), the root
//     read-only;
//   - the spec's seccomp profile, compiled by cordon's seccomp package
//     (the program cordon's init loads), passed with --seccomp; its notify
//     rules fail with ENOSYS without a supervisor, as they would under
//     runc without one;
//   - the spec's memory (with swap) and pids limits, in fresh cgroups made
//     for each run by a small static C program (cgrun, compiled here) whose
//     child joins them and executes bubblewrap, and which removes them
//     once bubblewrap has exited — the least a runner with limits must do,
//     in two hierarchies where libcontainer uses every one;
//   - the spec's environment and working directory.
//
// What bubblewrap cannot give is left out and said: Landlock, cordon's
// violation records and protected-path checks, the proxy.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/seccomp"
)

// cgrunSource makes cgroups, runs a command in them and removes them:
//
//	cgrun -c DIR [-w FILE=VALUE]... [-c DIR ...] -- ARGV
//
// Each DIR gets "-PID" appended. The child writes itself into every
// cgroup.procs before it executes ARGV, as libcontainer's init is moved
// into its cgroups before it runs anything. Exit: ARGV's status, 128+N
// when killed by signal N, 125 when cgrun fails.
const cgrunSource = `#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dirs[8][512];
static int ndirs;

static int put(const char *dir, const char *file, const char *value) {
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) return -1;
	ssize_t n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -1 : 0;
}

/* cleanup removes the cgroups once they are empty: the last of the
 * command's processes may still be exiting when it returns (rmdir says
 * EBUSY meanwhile), as libcontainer's removal waits for them too. It
 * tries again every 20 us, for at most a second, so that the wait
 * measured is the kernel's, not a sleep's. */
static void cleanup(void) {
	for (int i = 0; i < ndirs; i++)
		for (int tries = 0; rmdir(dirs[i]) < 0 && errno == EBUSY && tries < 50000; tries++)
			usleep(20);
}

int main(int argc, char **argv) {
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc && ndirs < 8) {
			snprintf(dirs[ndirs], sizeof dirs[0], "%s-%d", argv[++i], getpid());
			if (mkdir(dirs[ndirs], 0755) < 0) { perror(dirs[ndirs]); cleanup(); return 125; }
			ndirs++;
		} else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc && ndirs > 0) {
			char *kv = argv[++i], *eq = strchr(kv, '=');
			if (!eq) { fprintf(stderr, "cgrun: -w %s: no =\n", kv); cleanup(); return 125; }
			*eq = 0;
			if (put(dirs[ndirs - 1], kv, eq + 1) < 0) { perror(kv); cleanup(); return 125; }
		} else {
			fprintf(stderr, "cgrun: bad argument %s\n", argv[i]);
			cleanup();
			return 125;
		}
	}
	if (i + 1 >= argc) { fprintf(stderr, "cgrun: no command\n"); cleanup(); return 125; }
	pid_t pid = fork();
	if (pid < 0) { perror("fork"); cleanup(); return 125; }
	if (pid == 0) {
		for (int d = 0; d < ndirs; d++)
			if (put(dirs[d], "cgroup.procs", "0") < 0) { perror(dirs[d]); _exit(125); }
		execv(argv[i + 1], argv + i + 1);
		perror(argv[i + 1]);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
	cleanup();
	if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
`

// prepareEquivalent returns the contender "bubblewrap (cordon's
// isolation)", or why there is none: it needs root (for the cgroups),
// gcc, and cgroup hierarchies for memory and pids.
func prepareEquivalent(bwrap, cordon, work, ws, truePath string, env []string) (*contender, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("needs root (for its cgroups)")
	}
	cmd := exec.Command(cordon, "spec", "--", truePath)
	cmd.Dir, cmd.Env = ws, env
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cordon spec: %w", err)
	}
	// The spec's root directory is made by a run.
	run := exec.Command(cordon, "run", "--", truePath)
	run.Dir, run.Env = ws, append(slices.Clone(env), "CORDON_SERVE=0")
	if out, err := run.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cordon run: %v: %s", err, out)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Linux == nil || s.Process == nil || s.Root == nil {
		return nil, fmt.Errorf("cordon spec: no linux, process or root section")
	}

	cgrun, err := buildC(work, "cgrun", cgrunSource)
	if err != nil {
		return nil, err
	}
	argv := []string{cgrun}
	limits, err := cgroupArgs(s.Linux.Resources)
	if err != nil {
		return nil, err
	}
	argv = append(argv, limits...)
	argv = append(argv, "--", bwrap, "--unshare-all", "--die-with-parent", "--new-session",
		"--uid", "0", "--gid", "0", "--clearenv")
	for _, kv := range s.Process.Env {
		k, v, _ := strings.Cut(kv, "=")
		argv = append(argv, "--setenv", k, v)
	}
	mounts, err := bwrapMounts(s)
	if err != nil {
		return nil, err
	}
	argv = append(argv, mounts...)

	var files []string
	if s.Linux.Seccomp != nil {
		prog, err := seccomp.Compile(s.Linux.Seccomp)
		if err != nil {
			return nil, fmt.Errorf("seccomp: %w", err)
		}
		path := filepath.Join(work, "seccomp.bpf")
		if err := os.WriteFile(path, prog.Filter, 0o600); err != nil {
			return nil, err
		}
		files = append(files, path)
		argv = append(argv, "--seccomp", "3")
	}
	argv = append(argv, "--chdir", s.Process.Cwd)
	c := &contender{name: "bubblewrap (cordon's isolation)", dir: ws, argv: append(slices.Clone(argv), truePath), files: files}
	return c, checkEquivalent(c, argv, s.Linux.Seccomp != nil)
}

// checkEquivalent makes sure the contender's command runs confined: in
// a user namespace, under seccomp when the spec has a profile, with the
// root read-only. argv is the contender's without its command.
func checkEquivalent(c *contender, argv []string, filtered bool) error {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return err
	}
	check := *c
	check.argv = append(slices.Clone(argv), sh, "-c",
		`grep -E '^Seccomp:' /proc/self/status; cat /proc/self/uid_map; touch /etc/cordon-bench-probe 2>/dev/null && echo writable; true`)
	_, _, out, err := onceOutput(&check)
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	got := string(out)
	switch {
	case filtered && !strings.Contains(got, "Seccomp:\t2"):
		return fmt.Errorf("%s: no seccomp filter in the sandbox: %s", c.name, got)
	case strings.Contains(got, "4294967295"):
		return fmt.Errorf("%s: no user namespace: %s", c.name, got)
	case strings.Contains(got, "writable"):
		return fmt.Errorf("%s: the root is writable: %s", c.name, got)
	}
	return nil
}

// bwrapMounts translates the spec's file system into bubblewrap's
// arguments, in the spec's order. cordon's own binary, bound for its init,
// is left out: bubblewrap's init is not in the sandbox.
func bwrapMounts(s specs.Spec) ([]string, error) {
	// The root's own entries: cordon's root directory holds the host
	// root's symbolic links (/bin -> usr/bin, ...) and mount points.
	var args []string
	entries, err := os.ReadDir(s.Root.Path)
	if err != nil {
		return nil, fmt.Errorf("the spec's root: %w", err)
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(filepath.Join(s.Root.Path, e.Name()))
			if err != nil {
				return nil, err
			}
			args = append(args, "--symlink", target, "/"+e.Name())
		}
	}
	dev := false
	for _, m := range s.Mounts {
		ro := slices.Contains(m.Options, "ro") || slices.Contains(m.Options, "rro")
		switch {
		case m.Destination == "/.cordon/cordon":
		case m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind"):
			if ro {
				args = append(args, "--ro-bind", m.Source, m.Destination)
			} else {
				args = append(args, "--bind", m.Source, m.Destination)
			}
		case m.Destination == "/dev" && m.Type == "tmpfs":
			// bubblewrap's /dev: a tmpfs with the same device nodes
			// libcontainer binds, devpts and /dev/shm.
			args = append(args, "--dev", "/dev")
			dev = true
		case dev && (m.Destination == "/dev/pts" || m.Destination == "/dev/shm" || m.Destination == "/dev/mqueue"):
		case m.Type == "tmpfs":
			if mode := option(m.Options, "mode"); mode != "" {
				args = append(args, "--perms", mode)
			}
			args = append(args, "--tmpfs", m.Destination)
			if ro {
				args = append(args, "--remount-ro", m.Destination)
			}
		case m.Type == "proc":
			args = append(args, "--proc", m.Destination)
		case m.Type == "sysfs":
			args = append(args, "--ro-bind", "/sys", m.Destination)
		case m.Type == "mqueue":
			args = append(args, "--mqueue", m.Destination)
		default:
			return nil, fmt.Errorf("mount %s of type %s: no bubblewrap equivalent here", m.Destination, m.Type)
		}
	}
	// bubblewrap's own --proc binds /proc/sys, sysrq-trigger, irq and bus
	// read-only; it cannot bind the sandbox's /proc/X onto itself, so the
	// spec's other read-only paths are masked like its masked paths, with
	// as many mount calls.
	for _, p := range append(slices.Clone(s.Linux.MaskedPaths), s.Linux.ReadonlyPaths...) {
		switch p {
		case "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus":
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			args = append(args, "--perms", "0000", "--tmpfs", p, "--remount-ro", p)
		} else if err == nil {
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	if s.Root.Readonly {
		args = append(args, "--remount-ro", "/")
	}
	return args, nil
}

// cgroupArgs are cgrun's arguments for the spec's memory and pids limits,
// in the v1 hierarchies of those controllers or in the unified one.
func cgroupArgs(r *specs.LinuxResources) ([]string, error) {
	if r == nil || r.Memory == nil && r.Pids == nil {
		return nil, nil
	}
	var mem, pids []string // -w arguments
	if r.Memory != nil && r.Memory.Limit != nil {
		mem = append(mem, "memory.limit_in_bytes="+strconv.FormatInt(*r.Memory.Limit, 10))
		if r.Memory.Swap != nil {
			mem = append(mem, "memory.memsw.limit_in_bytes="+strconv.FormatInt(*r.Memory.Swap, 10))
		}
	}
	if r.Pids != nil && r.Pids.Limit != nil {
		pids = append(pids, "pids.max="+strconv.FormatInt(*r.Pids.Limit, 10))
	}
	v1 := func(ctrl string, ws []string) []string {
		dir := filepath.Join("/sys/fs/cgroup", ctrl)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil || len(ws) == 0 {
			return nil
		}
		args := []string{"-c", filepath.Join(dir, "cordon-bench")}
		for _, w := range ws {
			// memsw only exists with swap accounting
			if f, _, _ := strings.Cut(w, "="); f == "memory.memsw.limit_in_bytes" {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					continue
				}
			}
			args = append(args, "-w", w)
		}
		return args
	}
	args := append(v1("memory", mem), v1("pids", pids)...)
	if len(args) > 0 {
		return args, nil
	}
	// cgroup v2: memory.max, memory.swap.max (swap beyond memory), pids.max
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.subtree_control"); err != nil {
		return nil, fmt.Errorf("no cgroup hierarchy for memory or pids")
	}
	args = []string{"-c", "/sys/fs/cgroup/cordon-bench"}
	if r.Memory != nil && r.Memory.Limit != nil {
		args = append(args, "-w", "memory.max="+strconv.FormatInt(*r.Memory.Limit, 10))
		if r.Memory.Swap != nil {
			args = append(args, "-w", "memory.swap.max="+strconv.FormatInt(*r.Memory.Swap-*r.Memory.Limit, 10))
		}
	}
	for _, w := range pids {
		args = append(args, "-w", w)
	}
	return args, nil
}

func option(opts []string, key string) string {
	for _, o := range opts {
		if v, ok := strings.CutPrefix(o, key+"="); ok {
			return v
		}
	}
	return ""
}
