package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The peak RSS of a contender is measured apart from its timings, through
// maxrss: a static C program that forks (a real fork, of its own few
// hundred KiB) and reads the peak from wait4. Measured from the bench
// itself, every contender would show at least the bench's own RSS: Go
// starts a command with vfork, so the command's memory until its execve
// is the bench's, and the kernel counts that memory's peak as the
// command's (bare /bin/true showed 11 MiB that way, 1 MiB through maxrss).

// The executables' cached pages are dropped before (evict): the kernel
// maps a file's cached folios whole, and a binary the Go linker has just
// written is cached in larger folios than one read back from the disk, so
// that a fresh build's peak RSS is several MiB higher than the same
// binary's once it has been evicted, as after a reboot (cordon run:
// 19.0 against 15.5 MiB). Every contender's executable is treated alike.

// maxrssSource: maxrss OUT ARGV writes ARGV's peak RSS in KiB (wait4's
// ru_maxrss: the largest of the process and the descendants it waited
// for) to the file OUT and exits with ARGV's status.
const maxrssSource = `#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: maxrss OUT ARGV\n"); return 125; }
	pid_t pid = fork();
	if (pid < 0) { perror("fork"); return 125; }
	if (pid == 0) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) { perror("wait4"); return 125; }
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) { perror(argv[1]); return 125; }
	if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
`

// buildC compiles a C program of the bench's, statically as cordon is
// linked.
func buildC(work, name, source string) (string, error) {
	src := filepath.Join(work, name+".c")
	bin := filepath.Join(work, name)
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return "", err
	}
	if out, err := exec.Command("gcc", "-O2", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s.c: %v: %s", name, err, out)
	}
	return bin, nil
}

// measureRSS measures the peak RSS of every contender rssRuns times,
// interleaved, through maxrss (built in work) once their executables have
// been evicted. Without gcc it says so and measures nothing.
func measureRSS(work string, cs []*contender) error {
	maxrss, err := buildC(work, "maxrss", maxrssSource)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: peak RSS not measured: %v\n", err)
		return nil
	}
	for _, c := range cs {
		if err := evict(c.argv[0]); err != nil {
			return err
		}
	}
	for range rssRuns {
		for _, c := range cs {
			rss, err := peakRSS(maxrss, c)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			c.rss = append(c.rss, rss)
		}
	}
	return nil
}

// peakRSS runs c once through maxrss and returns its peak RSS in KiB.
func peakRSS(maxrss string, c *contender) (int64, error) {
	outFile := filepath.Join(filepath.Dir(maxrss), "maxrss.out")
	mc := *c
	mc.argv = append([]string{maxrss, outFile}, c.argv...)
	if _, _, err := once(&mc); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}

// kib is the median of peak RSS samples, "-" when none were taken.
func kib(rss []int64) string {
	if len(rss) == 0 {
		return "-"
	}
	return fmt.Sprintf("%d KiB", median(rss))
}
