//go:build linux && cgo

/*
 * cordon_prime_cgroups: the cgroup half of runtime.Preheat, started from
 * C before the Go runtime, for a cordon run that is known to be cold (see
 * serve/client.c, which finds out first). Every write to a cgroup.procs
 * file takes a global lock for writing whose first writer after a quiet
 * spell waits for an RCU grace period (7-12 ms on a 2-CPU VM); writing
 * this process's pid into the cgroup it is already in moves nothing and
 * starts that wait now, on a thread of its own, some 2 ms before the Go
 * runtime could, so that libcontainer's move of the sandbox's first
 * process into the run's cgroups finds it over.
 *
 * Root only (nobody else gets a sandbox cgroup that libcontainer moves a
 * process into), and every failure is silent: it only ever saves time.
 * The process cannot exit while the write waits, which is why only a run
 * that will start a sandbox itself calls it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int primed;

/* cordon_cgroups_primed reports whether cordon_prime_cgroups started. */
int cordon_cgroups_primed(void) { return primed; }

/* own_cgroup_procs writes the path of this process's cgroup.procs into
 * out: in the unified hierarchy when /sys/fs/cgroup is one, else in the
 * pids controller's (the lock is global; any hierarchy will do). */
static int own_cgroup_procs(char *out, size_t n)
{
	struct statfs fs;
	if (statfs("/sys/fs/cgroup", &fs) != 0)
		return -1;
	int unified = fs.f_type == CGROUP2_SUPER_MAGIC;
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	int found = -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		/* ID:CONTROLLERS:PATH */
		char *controllers = strchr(line, ':');
		if (!controllers)
			continue;
		char *path = strchr(++controllers, ':');
		if (!path)
			continue;
		*path++ = 0;
		int match = 0;
		if (unified)
			match = strcmp(line, "0:") == 0 && controllers[0] == 0;
		else
			for (char *save, *c = strtok_r(controllers, ",", &save); c; c = strtok_r(NULL, ",", &save))
				match |= strcmp(c, "pids") == 0;
		if (!match || path[0] != '/')
			continue;
		int w = snprintf(out, n, "%s%s/cgroup.procs", unified ? "/sys/fs/cgroup" : "/sys/fs/cgroup/pids", path);
		found = w > 0 && (size_t)w < n ? 0 : -1;
		break;
	}
	free(line);
	fclose(f);
	return found;
}

static void *prime(void *arg)
{
	(void)arg;
	char path[PATH_MAX];
	if (own_cgroup_procs(path, sizeof(path)) != 0)
		return NULL;
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	dprintf(fd, "%d", (int)getpid()); /* nothing moves either way */
	close(fd);
	return NULL;
}

void cordon_prime_cgroups(void)
{
	if (geteuid() != 0 || primed)
		return;
	/* The thread takes no signal: Go's handlers, installed later, are
	 * for its own threads. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_t t;
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&t, &attr, prime, NULL) == 0)
			primed = 1;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
