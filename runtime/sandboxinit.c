//go:build linux && cgo

/*
 * cordon's init: the first process of every sandbox `cordon run` starts
 * (PID 1 of its pid namespace). It is C, run from a constructor of cordon's
 * own binary before the Go runtime starts, for three reasons: a sandboxed
 * command should not pay for a second Go runtime start; the init must be
 * single-threaded to drop its capability for good; and the command's user
 * namespace must be made between clone and execve, with a seccomp filter
 * installed in the child, which Go's os.StartProcess cannot do.
 *
 *   cordon sandbox-init [--parent-fd=N] [--seccomp-fd=S [--notify-fd=F]]
 *                       [--landlock-fd=L] [--proxy-fd=P --proxy-ports=H,S]
 *                       [--uid=U --gid=G] [--rlimit=RESOURCE:SOFT:HARD...]
 *                       [--contained] [--pass-fd=D] -- COMMAND [ARGS...]
 *   cordon sandbox-init [...] --command-fd=C --
 *
 * It starts COMMAND in a process group of its own (the terminal's
 * foreground group when the sandbox has a terminal), with the caller's own
 * ids in a user namespace of its own when --uid/--gid are given (the
 * sandbox's user namespace maps only root, as libcontainer requires), under
 * the seccomp program read from S (a little-endian uint64 of filter flags,
 * then struct sock_filter[]; see spec.InitSeccompFD), which it then
 * installs in itself as well (without a listener) before the command runs, and with the Landlock rules read from L
 * (records "r", "w" or "l", NUL, path, NUL; see spec.InitLandlockFD) as far as
 * the kernel's Landlock ABI allows. With --proxy-fd it listens on
 * 127.0.0.1 at each of the ports inside the sandbox's network namespace and
 * hands the listening sockets to cordon over the unix socket P: cordon
 * serves its filtering proxy on them from the host, and no bridge process
 * runs in the sandbox. When the program notifies (SECCOMP_FILTER_FLAG_NEW_LISTENER
 * in its flags), the command's filter comes with a listener, which goes to
 * cordon over the unix socket F before COMMAND executes: cordon answers
 * the notifications and records what the sandbox refused. It
 * passes on every signal it receives to that group, reaps orphans, and ends
 * every process of the sandbox when COMMAND exits or when cordon on the
 * host goes away (the lifeline descriptor N reaches end of file, or the
 * parent-death signal arrives). Its exit status is COMMAND's, 128+S when a
 * signal S ended it, 127 when COMMAND is not found, 126 when it cannot be
 * executed, 125 when the init itself fails. COMMAND gets its standard
 * descriptors and, with --pass-fd, D as its descriptor 3 (cordon run
 * --cwd-fd: a pipe on which its shell says where it ended); nothing else.
 *
 * With --contained the init runs with no namespace around it (cordon's
 * container mode, where the kernel or an outer container refuses them):
 * it is cordon's child on the host, not PID 1. It sets no_new_privs
 * itself, becomes the child subreaper of the command's tree, takes every
 * capability from the command (a root caller's command keeps uid 0 and
 * nothing else), applies the Landlock rules as the file-system layer
 * itself (a kernel without Landlock is then a failure, not a fallback),
 * with their TCP port rules ("connect"/"bind", NUL, port, NUL) where the
 * ABI has them (4), and ends the command's whole tree by walking /proc
 * below itself; it does not die with cordon's thread but when the lifeline
 * closes, after ending that tree.
 *
 * With --command-fd the sandbox is made ahead of its command (cordon
 * serve's pool): everything that does not need the command is done before
 * it comes. The init makes the command's process and confines itself; that
 * process takes its user namespace, Landlock rules and seccomp program
 * (handing the listener to cordon), then waits on the unix socket C for the
 * command (see receive_command) and executes it exactly as if it had been
 * given on the command line, in the working directory and with the standard
 * descriptors it came with. It says its own failures on that stderr from
 * then on: the init's is not the command's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/types.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define INIT_COMMAND "sandbox-init"

static void fail(const char *what, int err)
{
	fprintf(stderr, "cordon: %s: %s\n", what, strerror(err));
}

#define MAX_PROXY_PORTS 4
#define MAX_RLIMITS 16

struct rlimit_arg {
	int resource;
	struct rlimit limit;
};

struct options {
	int parent_fd, seccomp_fd, landlock_fd, proxy_fd, notify_fd, command_fd, pass_fd;
	int proxy_ports[MAX_PROXY_PORTS], nproxy;
	struct rlimit_arg rlimits[MAX_RLIMITS];
	int nrlimits;
	long uid, gid;
	/* contained: no namespaces around the init (see the header). */
	int contained;
	char **argv;
};

/*
 * hand_listeners makes a listening socket on 127.0.0.1:port for each proxy
 * port and sends them all over the unix socket fd, then closes its copies.
 */
static int hand_listeners(const struct options *o, const char **what)
{
	int fds[MAX_PROXY_PORTS];
	char cbuf[CMSG_SPACE(sizeof(fds))] = { 0 };
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = CMSG_SPACE(o->nproxy * sizeof(int)) };
	struct cmsghdr *c;
	int one = 1, i, rc = 0;

	for (i = 0; i < o->nproxy; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->proxy_ports[i]),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fds[i], 512) < 0) {
			*what = "proxy listener on 127.0.0.1";
			rc = -1;
			i++;
			goto out;
		}
	}
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(o->nproxy * sizeof(int));
	memcpy(CMSG_DATA(c), fds, o->nproxy * sizeof(int));
	if (sendmsg(o->proxy_fd, &msg, MSG_NOSIGNAL) < 0) {
		*what = "hand the proxy listeners to cordon";
		rc = -1;
	}
out:
	{
		int saved = errno;
		while (i-- > 0)
			if (fds[i] >= 0)
				close(fds[i]);
		errno = saved;
	}
	return rc;
}

/* The compiled seccomp profile. */
struct program {
	unsigned long flags;
	struct sock_fprog prog;
};

/* Only with a listener: the init's own copy has none. */
#define CORDON_SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)

/* The kernel's limit, with room for cordon's ENOSYS prologue. */
#define MAX_INSNS 8192

static int read_program(int fd, struct program *p)
{
	static struct sock_filter insns[MAX_INSNS];
	unsigned char head[8];
	size_t have = 0, want;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -1;
	if (st.st_size < 16 || (st.st_size - 8) % sizeof(struct sock_filter) != 0 ||
	    (size_t)(st.st_size - 8) / sizeof(struct sock_filter) > MAX_INSNS) {
		errno = EINVAL;
		return -1;
	}
	if (pread(fd, head, sizeof(head), 0) != sizeof(head))
		return -1;
	p->flags = 0;
	for (int i = 7; i >= 0; i--)
		p->flags = p->flags << 8 | head[i];
	want = st.st_size - 8;
	while (have < want) {
		n = pread(fd, (char *)insns + have, want - have, 8 + have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		have += n;
	}
	p->prog.len = want / sizeof(struct sock_filter);
	p->prog.filter = insns;
	return 0;
}

/* install loads p with the given flags; with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER it returns the listener. */
static int install(const struct program *p, unsigned long flags)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &p->prog);
}

/* send_fd passes fd over the unix socket sock. */
static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'N';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* A failure report from the child before its command runs. */
struct report {
	int err;
	char what[64];
};

/* The command of a pooled sandbox's child, once it has it: from then on
 * the child says its own failures on the command's stderr (the init's is
 * not the command's). */
static const char *child_command;

static void report_and_exit(int fd, const char *what)
{
	struct report r = { .err = errno };
	if (child_command) {
		if (strcmp(what, "exec") != 0)
			fprintf(stderr, "cordon: %s: %s\n", what, strerror(r.err));
		else if (r.err == ENOENT && !strchr(child_command, '/'))
			fprintf(stderr, "cordon: %s: command not found\n", child_command);
		else
			fprintf(stderr, "cordon: %s: %s\n", child_command, strerror(r.err));
	}
	strncpy(r.what, what, sizeof(r.what) - 1);
	if (write(fd, &r, sizeof(r)) < 0) {
		/* nothing left to tell */
	}
	_exit(127);
}

static int write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int len = strlen(data), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == len;
	if (!ok) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

static const char *getenv_from(char **envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/*
 * binary_file reports whether file looks like a binary, as bash judges it
 * before it runs a file the kernel would not: a NUL among its first 80
 * bytes, before any newline.
 */
static int binary_file(const char *file)
{
	char b[80];
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = read(fd, b, sizeof(b));
	close(fd);
	for (ssize_t i = 0; i < n && b[i] != '\n'; i++)
		if (b[i] == 0)
			return 1;
	return 0;
}

/*
 * exec_file executes file. A file the kernel does not know how to run
 * (ENOEXEC: a script without a "#!" line) runs under /bin/sh, as execvp(3)
 * and every shell run it, unless it looks like a binary (another
 * architecture's, say): that stays ENOEXEC, as in bash.
 */
static void exec_file(const char *file, char **argv, char **envp)
{
	size_t argc = 0;
	char **sh;

	execve(file, argv, envp);
	if (errno != ENOEXEC || binary_file(file))
		return;
	while (argv[argc])
		argc++;
	sh = malloc((argc + 2) * sizeof(*sh));
	if (!sh) {
		errno = ENOEXEC;
		return;
	}
	sh[0] = "/bin/sh";
	sh[1] = (char *)file;
	memcpy(sh + 2, argv + 1, argc * sizeof(*sh)); /* argv[1..], then its NULL */
	execve(sh[0], sh, envp);
	free(sh);
	errno = ENOEXEC;
}

/*
 * exec_path runs the command as a shell would: a name with a slash as it is,
 * otherwise the first match in PATH; EACCES is remembered while the search
 * goes on, as execvp(3) does.
 */
static void exec_path(char **argv, char **envp)
{
	const char *name = argv[0], *path, *p;
	char buf[PATH_MAX];
	int eacces = 0;

	if (strchr(name, '/')) {
		exec_file(name, argv, envp);
		return;
	}
	path = getenv_from(envp, "PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dirlen = end - p;
		if (dirlen == 0) {
			/* An empty entry is the current directory. */
			snprintf(buf, sizeof(buf), "%s", name);
		} else if (dirlen + 1 + strlen(name) < sizeof(buf)) {
			memcpy(buf, p, dirlen);
			buf[dirlen] = '/';
			strcpy(buf + dirlen + 1, name);
		} else {
			buf[0] = 0;
		}
		if (buf[0]) {
			exec_file(buf, argv, envp);
			if (errno == EACCES)
				eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ELOOP && errno != ENAMETOOLONG)
				return;
		}
		p = end;
		if (*p == 0)
			break;
	}
	errno = eacces ? EACCES : ENOENT;
}

/* The Landlock rules, as read: NUL-separated "r"/"w" and path pairs. */
struct landlock_rules {
	char *data;
	size_t len;
};

static int read_all(int fd, struct landlock_rules *r)
{
	struct stat st;
	size_t have = 0;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return -1;
	if (st.st_size <= 0 || st.st_size > (16 << 20)) {
		errno = EINVAL;
		return -1;
	}
	r->data = malloc(st.st_size + 1);
	if (!r->data)
		return -1;
	while (have < (size_t)st.st_size) {
		n = pread(fd, r->data + have, st.st_size - have, have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		have += n;
	}
	r->data[have] = 0;
	r->len = have;
	return 0;
}

/*
 * Landlock's kernel interface, written out: distribution headers lag the
 * kernels they run on (Debian 12's know ABI 1 and 2), and the interface is
 * stable.
 */
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define LANDLOCK_RULE_PATH_BENEATH 1
#define LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#define LANDLOCK_RULE_NET_PORT 2
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

struct landlock_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net; /* ABI 4 */
	__u64 scoped;             /* ABI 6 */
};

struct landlock_path_beneath_attr {
	__u64 allowed_access;
	__s32 parent_fd;
} __attribute__((packed));

struct landlock_net_port_attr {
	__u64 allowed_access;
	__u64 port;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* handled returns the file system rights a Landlock ABI knows. */
static __u64 handled(int abi)
{
	__u64 h = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
		  LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
		  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		  LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		h |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return h;
}

/*
 * apply_landlock restricts this process to the rules. A kernel without
 * Landlock leaves the mounts as the only layer (cordon doctor says so);
 * any other failure is fatal: the caller reports it and nothing runs.
 */
static int apply_landlock(const struct landlock_rules *r, int contained, const char **what)
{
	struct landlock_ruleset_attr attr = { 0 };
	int abi, rs;
	size_t size;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (contained) {
			/* Landlock is the container mode's file-system layer:
			 * cordon chose the mode for a kernel that has it. */
			*what = "landlock (the container mode needs it)";
			return -1;
		}
		return (errno == ENOSYS || errno == EOPNOTSUPP) ? 0 : (*what = "landlock version", -1);
	}
	attr.handled_access_fs = handled(abi);
	size = offsetof(struct landlock_ruleset_attr, handled_access_net);
	if (contained && abi >= 4) {
		/* No network namespace: TCP reaches only the ports the rules
		 * name (the proxy's), and nothing listens. */
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
		size = offsetof(struct landlock_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		/* No abstract unix socket and no signal beyond the sandbox. */
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rs = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return (*what = "landlock ruleset", -1);
	for (size_t off = 0; off < r->len;) {
		const char *access = r->data + off;
		const char *path = access + strlen(access) + 1;
		struct landlock_path_beneath_attr pb = { 0 };
		struct stat st;
		int fd;

		if ((size_t)(path - r->data) >= r->len) {
			errno = EINVAL;
			return (*what = "landlock rules", -1);
		}
		off = (path - r->data) + strlen(path) + 1;
		if (access[0] == '=')
			continue; /* a check, verified by verify_mounts */
		if (strcmp(access, "connect") == 0 || strcmp(access, "bind") == 0) {
			/* A TCP port (ABI 4): without the ABI, the caller knew
			 * (cordon refuses TCP in the seccomp program instead). */
			struct landlock_net_port_attr np = { 0 };
			char *end;
			if (!attr.handled_access_net)
				continue;
			errno = 0;
			np.port = strtoul(path, &end, 10);
			if (errno || *end || end == path || np.port > 65535) {
				errno = EINVAL;
				return (*what = "landlock port rule", -1);
			}
			np.allowed_access = access[0] == 'c' ? LANDLOCK_ACCESS_NET_CONNECT_TCP : LANDLOCK_ACCESS_NET_BIND_TCP;
			if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
				return (*what = "landlock port rule", -1);
			continue;
		}
		if (strcmp(access, "w") == 0)
			pb.allowed_access = attr.handled_access_fs;
		else if (strcmp(access, "l") == 0)
			pb.allowed_access = LANDLOCK_ACCESS_FS_READ_DIR;
		else
			pb.allowed_access = LL_READ;
		pb.allowed_access &= attr.handled_access_fs;
		fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			/* Gone since the spec was compiled, or behind a mask:
			 * nothing to grant. */
			if (errno == ENOENT || errno == EACCES || errno == ENOTDIR || errno == ELOOP)
				continue;
			return (*what = path, -1);
		}
		if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
			pb.allowed_access &= LL_FILE;
		pb.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
			close(fd);
			return (*what = path, -1);
		}
		close(fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return (*what = "landlock restrict", -1);
	close(rs);
	return 0;
}

/*
 * The mounts were made by libcontainer from paths, following symlinks
 * (bind sources) and looking destinations up in the sandbox's root, some
 * time after cordon resolved them; inside a writable root another
 * sandbox's command can swap a directory for a symlink, or rename it away
 * and back, in between. The check records among the rules ("=" + kind,
 * see spec.LandlockRule) say what each path inside a writable root must be
 * now: reached without any symlink, the very file cordon resolved (device
 * and inode), read-only where a protection or a mask was bound. Anything
 * else, and nothing runs.
 */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct cordon_open_how {
	__u64 flags, mode, resolve;
};
#define CORDON_RESOLVE_NO_MAGICLINKS 0x02
#define CORDON_RESOLVE_NO_SYMLINKS 0x04
#define CORDON_TMPFS_MAGIC 0x01021994

/* open_nofollow opens path (absolute) with O_PATH, refusing a symlink
 * anywhere in it. */
static int open_nofollow(const char *path)
{
	struct cordon_open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				       .resolve = CORDON_RESOLVE_NO_SYMLINKS | CORDON_RESOLVE_NO_MAGICLINKS };
	char buf[PATH_MAX], *name, *save = NULL;
	int fd, dir;

	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Before Linux 5.6: one component at a time, none a symlink. */
	if (path[0] != '/' || strlen(path) >= sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	strcpy(buf, path);
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (name = strtok_r(buf, "/", &save); dir >= 0 && name; name = strtok_r(NULL, "/", &save)) {
		struct stat st;
		fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (fd < 0)
			return -1;
		if (fstat(fd, &st) < 0) {
			close(fd);
			return -1;
		}
		if (S_ISLNK(st.st_mode)) {
			close(fd);
			errno = ELOOP;
			return -1;
		}
		dir = fd;
	}
	return dir;
}

static int read_only(int fd)
{
	struct statvfs sv;
	return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* check_one says whether the file at fd is what the check record wants. */
static int check_one(int fd, const char *want)
{
	struct stat st;
	struct statfs sf;
	unsigned long long dev, ino;
	int n = 0;

	if (fstat(fd, &st) < 0)
		return 0;
	if (strcmp(want, "mask") == 0)
		return S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0 && st.st_size == 0 && read_only(fd);
	if (strcmp(want, "tmpfs") == 0)
		return S_ISDIR(st.st_mode) && ((st.st_mode & 07777) == 0 || (st.st_mode & 07777) == 0111) &&
		       fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == CORDON_TMPFS_MAGIC && read_only(fd);
	if (sscanf(want, "same:%llu:%llu%n", &dev, &ino, &n) == 2 && want[n] == 0)
		return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	if (sscanf(want, "ro:%llu:%llu%n", &dev, &ino, &n) == 2 && want[n] == 0)
		return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino && read_only(fd);
	return 0;
}

/* verify_mounts checks every check record; on a mismatch it names the
 * path in *what and returns -1. */
static int verify_mounts(const struct landlock_rules *r, const char **what)
{
	for (size_t off = 0; off < r->len;) {
		const char *access = r->data + off;
		const char *path = access + strlen(access) + 1;
		int fd, ok;

		if ((size_t)(path - r->data) >= r->len) {
			errno = EINVAL;
			return (*what = "landlock rules", -1);
		}
		off = (path - r->data) + strlen(path) + 1;
		if (access[0] != '=')
			continue;
		fd = open_nofollow(path);
		ok = fd >= 0 && check_one(fd, access + 1);
		if (fd >= 0)
			close(fd);
		if (!ok) {
			*what = path;
			return -1;
		}
	}
	return 0;
}

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define CORDON_CLOSE_RANGE_CLOEXEC (1U << 2)

/* close_range_cloexec marks every descriptor from first on close-on-exec. */
static int close_range_cloexec(int first)
{
	long max;

	if (syscall(SYS_close_range, first, ~0U, CORDON_CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -1;
	/* Before Linux 5.11. */
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 1 << 20)
		max = 1 << 20;
	for (int fd = first; fd < max; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

static int receive_command(struct options *o, char ***envp, const char **what);
static int drop_capabilities(void);

/* pass_fd3 makes fd the command's descriptor 3, open across its execve;
 * the report pipe moves out of its way first. */
static int pass_fd3(int fd, int *report_fd)
{
	if (*report_fd == 3) {
		int moved = fcntl(3, F_DUPFD_CLOEXEC, 4);
		if (moved < 0)
			return -1;
		*report_fd = moved;
	}
	if (fd == 3)
		return fcntl(3, F_SETFD, 0);
	if (dup2(fd, 3) < 0)
		return -1;
	close(fd);
	return 0;
}

static void child(const struct options *o, const struct program *prog, const struct landlock_rules *ll,
		  char **envp, int report_fd, int go_fd, int foreground)
{
	sigset_t none;
	char map[64];
	struct options commanded;

	if (o->uid >= 0) {
		/* This process made the namespace with CAP_SETFCAP in effect,
		 * so it may map the init's own ids (root) to itself. */
		if (write_file("/proc/self/setgroups", "deny") < 0)
			report_and_exit(report_fd, "user namespace: setgroups");
		snprintf(map, sizeof(map), "%ld 0 1\n", o->uid);
		if (write_file("/proc/self/uid_map", map) < 0)
			report_and_exit(report_fd, "user namespace: uid_map");
		snprintf(map, sizeof(map), "%ld 0 1\n", o->gid);
		if (write_file("/proc/self/gid_map", map) < 0)
			report_and_exit(report_fd, "user namespace: gid_map");
		/* The new namespace came with every capability in it; none
		 * survives the execve of a non-root id, and none may come back
		 * by a later one. */
		for (int cap = 0; cap <= 63; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
				report_and_exit(report_fd, "drop the capability bounding set");
		if (setresgid(o->gid, o->gid, o->gid) < 0)
			report_and_exit(report_fd, "setresgid");
		if (setresuid(o->uid, o->uid, o->uid) < 0)
			report_and_exit(report_fd, "setresuid");
	}
	if (setpgid(0, 0) < 0)
		report_and_exit(report_fd, "setpgid");
	if (foreground && tcsetpgrp(0, getpid()) < 0)
		report_and_exit(report_fd, "set the terminal's foreground process group");
	if (o->contained) {
		/* No user namespace took the caller's capabilities away: a root
		 * caller's command keeps uid 0 and nothing else, for good (with
		 * no_new_privs an execve gives back no more than is left). */
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
			report_and_exit(report_fd, "clear the ambient capabilities");
		for (int cap = 0; cap <= 63; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
				report_and_exit(report_fd, "drop the capability bounding set");
		if (drop_capabilities() < 0)
			report_and_exit(report_fd, "drop capabilities");
	}
	if (ll) {
		const char *what = "landlock";
		if (apply_landlock(ll, o->contained, &what) < 0)
			report_and_exit(report_fd, what);
	}
	/* Last, as it forbids much of the above (new user namespaces
	 * first of all); and before the wait below, so that the kernel
	 * takes the program in while the init loads its own copy. */
	if (prog) {
		int listener = install(prog, prog->flags);
		if (listener < 0)
			report_and_exit(report_fd, errno == EBUSY ? "seccomp (a filter with a listener is already in place)" : "seccomp");
		if (prog->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) {
			/* The command must never hold its own listener: it could
			 * answer for cordon. */
			if (send_fd(o->notify_fd, listener) < 0)
				report_and_exit(report_fd, "hand the seccomp listener to cordon");
			close(listener);
		}
	}
	if (o->notify_fd >= 0)
		close(o->notify_fd);
	/* The init confines itself first: the command never sees an
	 * unconfined PID 1. */
	{
		char go;
		ssize_t n;
		do {
			n = read(go_fd, &go, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1)
			report_and_exit(report_fd, "wait for the init");
		close(go_fd);
	}
	/* Nothing but stdin, stdout and stderr reaches the command: a
	 * descriptor the runtime or its caller left open (a file outside the
	 * workspace, a directory, a socket) would be a way around the mounts. */
	if (close_range_cloexec(3) < 0)
		report_and_exit(report_fd, "close inherited descriptors");
	if (o->command_fd >= 0) {
		/* A pooled sandbox: all of the above is done before its
		 * command comes, and the command comes to a process confined
		 * already. */
		const char *what = "";
		commanded = *o;
		if (receive_command(&commanded, &envp, &what) < 0)
			report_and_exit(report_fd, what);
		o = &commanded;
		child_command = o->argv[0];
	}
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		report_and_exit(report_fd, "signal mask");
	if (o->pass_fd >= 0 && pass_fd3(o->pass_fd, &report_fd) < 0)
		report_and_exit(report_fd, "pass descriptor 3 to the command");
	exec_path(o->argv, envp);
	report_and_exit(report_fd, "exec");
}

/* drop_capabilities leaves the init with no capability at all: with its
 * permitted set empty it cannot get one back, and it never executes
 * anything, so its bounding set does not matter. */
static int drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	return syscall(SYS_capset, &hdr, data);
}

/* controlling_terminal reports whether fd is this session's terminal (the
 * one cordon made for the sandbox), not merely some terminal on stdin. */
static int controlling_terminal(int fd)
{
	pid_t sid;
	return ioctl(fd, TIOCGSID, &sid) == 0 && sid == getsid(0);
}

/*
 * kill_all ends every other process of the sandbox. kill(-1) reaches every
 * process the caller may signal: only as PID 1 of its own pid namespace is
 * that the sandbox and nothing else — started any other way (a spec run
 * without a pid namespace), the init must not take the host down with it.
 */
static int kill_descendants(pid_t self);

static void kill_all(pid_t child, int contained)
{
	if (getpid() == 1)
		kill(-1, SIGKILL);
	else if (contained) {
		if (child > 0)
			kill(-child, SIGKILL);
		kill_descendants(getpid());
	} else if (child > 0)
		kill(-child, SIGKILL);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#define SYS_pidfd_send_signal 424
#endif

/*
 * signal_child signals pid c if it is still a child of parent: a
 * grandchild's number, read from /proc, may have been reaped by its parent
 * and reused since. The pidfd pins the process that is checked.
 */
static void signal_child(pid_t parent, pid_t c, int sig)
{
	char path[64], buf[512], *p;
	int fd, sfd, n;
	long ppid;

	fd = syscall(SYS_pidfd_open, c, 0);
	if (fd < 0) {
		if (errno == ENOSYS)
			kill(c, sig); /* before Linux 5.3 */
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", c);
	sfd = open(path, O_RDONLY | O_CLOEXEC);
	n = sfd < 0 ? -1 : read(sfd, buf, sizeof(buf) - 1);
	if (sfd >= 0)
		close(sfd);
	if (n > 0) {
		buf[n] = 0;
		/* pid (comm) state ppid: comm may hold anything but the last ')'. */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == parent)
			syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
	}
	close(fd);
}

/*
 * kill_tree sends SIGKILL to every descendant of pid that /proc lists
 * (/proc/PID/task/TID/children), deepest last, and returns how many it
 * found.
 */
static int kill_tree(pid_t pid, int depth)
{
	char path[64], buf[4096];
	int found = 0, n, fd;
	DIR *tasks;
	struct dirent *t;

	if (depth > 64)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	tasks = opendir(path);
	if (!tasks)
		return 0;
	while ((t = readdir(tasks))) {
		char *p, *end;
		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, t->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		for (p = buf;; p = end) {
			long c = strtol(p, &end, 10);
			if (end == p)
				break;
			/* Stopped first, so that it starts no more while its own
			 * children are found. */
			signal_child(pid, c, SIGSTOP);
			found += 1 + kill_tree(c, depth + 1);
			signal_child(pid, c, SIGKILL);
		}
	}
	closedir(tasks);
	return found;
}

/*
 * kill_descendants ends every process below the init when it is not PID 1
 * of a namespace of its own (the container mode): as the child subreaper
 * it inherits whatever a command's process leaves behind, so the tree
 * /proc shows below it is the whole sandbox. Rounds go on, each reaping
 * what the last killed, until none is left: a process that forked while
 * its parent was killed is this process's child by then.
 */
static int kill_descendants(pid_t self)
{
	for (int round = 0; round < 1000; round++) {
		int found = kill_tree(self, 0);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (found == 0)
			return 0;
		usleep(1000);
	}
	return -1;
}

static int wait_status(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return -1;
}

static int parse(int argc, char **argv, struct options *o)
{
	int i;

	o->parent_fd = o->seccomp_fd = o->landlock_fd = o->proxy_fd = o->notify_fd = o->command_fd = o->pass_fd = -1;
	o->nproxy = 0;
	o->nrlimits = 0;
	o->uid = o->gid = -1;
	o->contained = 0;
	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		char *v = strchr(argv[i], '='), *end;
		long n;
		if (strcmp(argv[i], "--contained") == 0) {
			o->contained = 1;
			continue;
		}
		if (!v)
			goto bad;
		if (strncmp(argv[i], "--proxy-ports=", 14) == 0) {
			for (char *p = v + 1;;) {
				errno = 0;
				n = strtol(p, &end, 10);
				if (errno || end == p || n < 1 || n > 65535 || o->nproxy == MAX_PROXY_PORTS)
					goto bad;
				o->proxy_ports[o->nproxy++] = n;
				if (*end == 0)
					break;
				if (*end != ',')
					goto bad;
				p = end + 1;
			}
			continue;
		}
		if (strncmp(argv[i], "--rlimit=", 9) == 0) {
			/* RESOURCE:SOFT:HARD, numbers (RLIMIT_* values). */
			struct rlimit_arg *r = &o->rlimits[o->nrlimits];
			unsigned long long soft, hard;
			if (o->nrlimits == MAX_RLIMITS)
				goto bad;
			errno = 0;
			n = strtol(v + 1, &end, 10);
			if (errno || end == v + 1 || *end != ':' || n < 0 || n >= RLIM_NLIMITS)
				goto bad;
			r->resource = n;
			soft = strtoull(end + 1, &end, 10);
			if (errno || *end != ':')
				goto bad;
			hard = strtoull(end + 1, &end, 10);
			if (errno || *end || soft > hard)
				goto bad;
			r->limit.rlim_cur = soft;
			r->limit.rlim_max = hard;
			o->nrlimits++;
			continue;
		}
		errno = 0;
		n = strtol(v + 1, &end, 10);
		if (errno || *end || end == v + 1 || n < 0 || n > INT_MAX)
			goto bad;
		if (strncmp(argv[i], "--parent-fd=", 12) == 0)
			o->parent_fd = n;
		else if (strncmp(argv[i], "--seccomp-fd=", 13) == 0)
			o->seccomp_fd = n;
		else if (strncmp(argv[i], "--landlock-fd=", 14) == 0)
			o->landlock_fd = n;
		else if (strncmp(argv[i], "--proxy-fd=", 11) == 0)
			o->proxy_fd = n;
		else if (strncmp(argv[i], "--notify-fd=", 12) == 0)
			o->notify_fd = n;
		else if (strncmp(argv[i], "--command-fd=", 13) == 0)
			o->command_fd = n;
		else if (strncmp(argv[i], "--pass-fd=", 10) == 0)
			o->pass_fd = n;
		else if (strncmp(argv[i], "--uid=", 6) == 0)
			o->uid = n;
		else if (strncmp(argv[i], "--gid=", 6) == 0)
			o->gid = n;
		else
			goto bad;
	}
	if (o->command_fd >= 0) {
		/* The command comes later, on the socket. */
		if (i + 1 != argc) {
			fprintf(stderr, "cordon: %s: --command-fd and a command on the command line\n", INIT_COMMAND);
			return -1;
		}
		o->argv = NULL;
		return 0;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "cordon: %s: no command\n", INIT_COMMAND);
		return -1;
	}
	if ((o->proxy_fd < 0) != (o->nproxy == 0)) {
		fprintf(stderr, "cordon: %s: --proxy-fd and --proxy-ports go together\n", INIT_COMMAND);
		return -1;
	}
	if (o->notify_fd >= 0 && o->seccomp_fd < 0) {
		fprintf(stderr, "cordon: %s: --notify-fd needs --seccomp-fd\n", INIT_COMMAND);
		return -1;
	}
	if ((o->uid < 0) != (o->gid < 0)) {
		fprintf(stderr, "cordon: %s: --uid and --gid go together\n", INIT_COMMAND);
		return -1;
	}
	if (o->contained && o->uid >= 0) {
		fprintf(stderr, "cordon: %s: --contained takes no --uid\n", INIT_COMMAND);
		return -1;
	}
	o->argv = argv + i + 1;
	return 0;
bad:
	fprintf(stderr, "cordon: %s: bad argument %s\n", INIT_COMMAND, argv[i]);
	return -1;
}

/* The largest command message: argv and environment as execve(2) takes them. */
#define MAX_COMMAND (4 << 20)

/*
 * receive_command reads the command of a pooled sandbox from o->command_fd:
 * a little-endian uint32 of the message's length (these 12 bytes
 * included), a uint32 argc and a uint32 envc, then the working directory,
 * argc arguments and envc NAME=value strings, each NUL-terminated, with
 * the command's stdin, stdout and stderr attached (SCM_RIGHTS) to the
 * first bytes, and a fourth for descriptor 3 (see --pass-fd) when the
 * command has one. They become descriptors 0, 1 and 2, the init moves to the
 * working directory (inside the sandbox, as the sandbox's root user, as
 * libcontainer would have), and o->argv and *envp are the command's.
 */
static int receive_command(struct options *o, char ***envp, const char **what)
{
	unsigned char head[12];
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = head, .iov_len = sizeof(head) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fds[4] = { -1, -1, -1, -1 }, nfds = 0;
	size_t have, len, argc, envc, off, i;
	char *data, **v;
	ssize_t n;

	memset(cbuf, 0, sizeof(cbuf));
	*what = "receive the command";
	do {
		n = recvmsg(o->command_fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0) {
		if (n == 0)
			errno = ECONNRESET;
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(fds, CMSG_DATA(c), (nfds > 4 ? 4 : nfds) * sizeof(int));
		}
	if (nfds < 3 || nfds > 4 || (msg.msg_flags & MSG_CTRUNC)) {
		errno = EBADMSG;
		return -1;
	}
	for (have = n; have < sizeof(head); have += n) {
		do {
			n = read(o->command_fd, head + have, sizeof(head) - have);
		} while (n < 0 && errno == EINTR);
		if (n <= 0) {
			errno = n == 0 ? EBADMSG : errno;
			return -1;
		}
	}
	len = head[0] | head[1] << 8 | head[2] << 16 | (size_t)head[3] << 24;
	argc = head[4] | head[5] << 8 | head[6] << 16 | (size_t)head[7] << 24;
	envc = head[8] | head[9] << 8 | head[10] << 16 | (size_t)head[11] << 24;
	if (len <= sizeof(head) || len > MAX_COMMAND || argc == 0 || argc > MAX_COMMAND / 2 || envc > MAX_COMMAND / 2) {
		errno = EBADMSG;
		return -1;
	}
	len -= sizeof(head);
	data = malloc(len + 1);
	v = calloc(argc + 1 + envc + 1, sizeof(char *));
	if (!data || !v)
		return -1;
	for (have = 0; have < len; have += n) {
		do {
			n = read(o->command_fd, data + have, len - have);
		} while (n < 0 && errno == EINTR);
		if (n <= 0) {
			errno = n == 0 ? EBADMSG : errno;
			return -1;
		}
	}
	data[len] = 0;
	/* The working directory, then argc and envc strings, nothing more. */
	off = strlen(data) + 1;
	for (i = 0; i < argc + envc; i++) {
		if (off >= len) {
			errno = EBADMSG;
			return -1;
		}
		v[i < argc ? i : i + 1] = data + off;
		off += strlen(data + off) + 1;
	}
	if (off != len || data[len - 1] != 0) {
		errno = EBADMSG;
		return -1;
	}
	close(o->command_fd);
	o->command_fd = -1;
	o->pass_fd = fds[3];
	for (i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0) {
			*what = "take the command's standard descriptors";
			return -1;
		}
		if (fds[i] > 2)
			close(fds[i]);
	}
	if (chdir(data) < 0) {
		/* Said on the command's stderr, now the client's: the init's
		 * own goes to the daemon, and the client would get 125 alone. */
		int err = errno;
		fprintf(stderr, "cordon: working directory %s: %s\n", data, strerror(err));
		errno = err;
		*what = data;
		return -1;
	}
	o->argv = v;
	*envp = v + argc + 1;
	return 0;
}

/* set_rlimit sets a resource limit of the sandbox. A hard limit above the
 * caller's own (ulimit -H, limits.conf) takes a privilege the sandbox
 * never has, and would keep the command from starting at all: the
 * caller's hard limit, which is tighter than asked, is kept then. */
static int set_rlimit(int resource, struct rlimit want)
{
	struct rlimit cur;

	if (setrlimit(resource, &want) == 0)
		return 0;
	if (errno != EPERM || getrlimit(resource, &cur) < 0 || cur.rlim_max == RLIM_INFINITY ||
	    (want.rlim_max != RLIM_INFINITY && want.rlim_max <= cur.rlim_max)) {
		errno = EPERM;
		return -1;
	}
	want.rlim_max = cur.rlim_max;
	if (want.rlim_cur == RLIM_INFINITY || want.rlim_cur > want.rlim_max)
		want.rlim_cur = want.rlim_max;
	return setrlimit(resource, &want);
}

/* rlimit_name names a resource limit in an error. */
static const char *rlimit_name(int resource)
{
	static char buf[24];

	switch (resource) {
	case RLIMIT_AS:
		return "RLIMIT_AS (address space)";
	case RLIMIT_DATA:
		return "RLIMIT_DATA (memory as data size)";
	case RLIMIT_NPROC:
		return "RLIMIT_NPROC (pids)";
	case RLIMIT_NOFILE:
		return "RLIMIT_NOFILE (open files)";
	case RLIMIT_FSIZE:
		return "RLIMIT_FSIZE (file size)";
	}
	snprintf(buf, sizeof(buf), "rlimit %d", resource);
	return buf;
}

static int sandbox_init(int argc, char **argv, char **envp)
{
	struct options o;
	struct program prog, *progp = NULL;
	struct landlock_rules ll, *llp = NULL;
	struct report r;
	struct stat st;
	sigset_t all;
	int report[2], go[2], sfd, foreground, status = -1;
	pid_t pid;
	ssize_t n;

	if (parse(argc, argv, &o) < 0)
		return 125;

	/* Same-uid processes of the sandbox must not reach into the init's
	 * memory through /proc/1/mem. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (o.contained) {
		/* No pid namespace ends the sandbox with the init: the init
		 * inherits every orphan of the command's tree and ends them all
		 * itself (kill_descendants), when the command ends and when the
		 * lifeline says cordon is gone, so it must outlive cordon. And
		 * no runtime set no_new_privs, which Landlock and the seccomp
		 * program need. */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
			fail("contained init", errno);
			return 125;
		}
	} else {
		/* Die with cordon: the parent-death signal, and the lifeline
		 * for the moment before this call. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	}
	/* The spec's rlimits, for this process and all it starts: set here
	 * rather than by libcontainer in its Go init, whose runtime does not
	 * survive an address space limit. */
	for (int i = 0; i < o.nrlimits; i++) {
		if (set_rlimit(o.rlimits[i].resource, o.rlimits[i].limit) < 0) {
			char what[64];
			snprintf(what, sizeof(what), "set %s", rlimit_name(o.rlimits[i].resource));
			fail(what, errno);
			return 125;
		}
	}
	if (o.parent_fd >= 0 && (fstat(o.parent_fd, &st) < 0 || !S_ISFIFO(st.st_mode)))
		o.parent_fd = -1;
	if (o.parent_fd >= 0)
		fcntl(o.parent_fd, F_SETFD, FD_CLOEXEC);
	if (o.seccomp_fd >= 0) {
		/* Asked for and unreadable: nothing runs without it. */
		if (read_program(o.seccomp_fd, &prog) < 0) {
			fail("read the seccomp program", errno);
			return 125;
		}
		close(o.seccomp_fd);
		progp = &prog;
		if ((prog.flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) && o.notify_fd < 0) {
			fprintf(stderr, "cordon: %s: the seccomp program notifies and there is no --notify-fd\n", INIT_COMMAND);
			return 125;
		}
		/* The kernel takes a filter (and a Landlock domain) from a
		 * process without privilege only with no_new_privs, which the
		 * spec sets. */
		if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
			fprintf(stderr, "cordon: %s: no_new_privs is not set\n", INIT_COMMAND);
			return 125;
		}
	}

	if (o.proxy_fd >= 0) {
		const char *what = "";
		if (hand_listeners(&o, &what) < 0) {
			fail(what, errno);
			return 125;
		}
		close(o.proxy_fd);
	}
	if (o.landlock_fd >= 0) {
		if (read_all(o.landlock_fd, &ll) < 0) {
			fail("read the landlock rules", errno);
			return 125;
		}
		close(o.landlock_fd);
		llp = &ll;
		{
			const char *what = "";
			if (verify_mounts(&ll, &what) < 0) {
				fprintf(stderr, "cordon: %s is not what the sandbox was planned with (it changed while the "
						"sandbox was set up); nothing ran\n", what);
				return 125;
			}
		}
	}
	/* With --command-fd, the child receives the command (see child):
	 * it is made, confined, and waits for its command before any comes. */

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0) {
		fail("signalfd", errno);
		return 125;
	}
	if (pipe2(report, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		fail("pipe", errno);
		return 125;
	}
	foreground = controlling_terminal(0);

	pid = syscall(SYS_clone, SIGCHLD | (o.uid >= 0 ? CLONE_NEWUSER : 0), 0, 0, 0, 0);
	if (pid == 0) {
		close(report[0]);
		close(go[1]);
		close(sfd);
		child(&o, progp, llp, envp, report[1], go[0], foreground);
	}
	if (pid < 0) {
		fail(o.uid >= 0 ? "create the command's user namespace" : "fork", errno);
		return 125;
	}
	close(report[1]);
	close(go[0]);
	if (o.notify_fd >= 0)
		close(o.notify_fd);
	/* The command's alone: its reader waits for every writer to go. */
	if (o.pass_fd >= 0)
		close(o.pass_fd);
	if (o.command_fd >= 0)
		close(o.command_fd);
	/* The capability that made the command's namespace is not needed
	 * any more. */
	if (drop_capabilities() < 0) {
		fail("drop capabilities", errno);
		kill(pid, SIGKILL);
		return 125;
	}
	/* The init is as confined as the command, before the command runs
	 * (its notifying system calls, none of which it makes, would fail
	 * with ENOSYS: the listener is the command's). */
	if (progp && install(progp, progp->flags & ~(unsigned long)(SECCOMP_FILTER_FLAG_NEW_LISTENER |
								     CORDON_SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)) < 0) {
		fail("seccomp", errno);
		kill(pid, SIGKILL);
		return 125;
	}
	if (write(go[1], "g", 1) != 1) {
		fail("start the command", errno);
		kill(pid, SIGKILL);
		return 125;
	}
	close(go[1]);
	/* The report pipe closes when the command's execve succeeds. */
	do {
		n = read(report[0], &r, sizeof(r));
	} while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == sizeof(r)) {
		waitpid(pid, NULL, 0);
		r.what[sizeof(r.what) - 1] = 0;
		if (o.command_fd >= 0) {
			/* The child said why, where it could. */
			if (strcmp(r.what, "exec") == 0)
				return r.err == ENOENT ? 127 : 126;
			fail(r.what, r.err);
			return 125;
		}
		if (strcmp(r.what, "exec") == 0) {
			if (r.err == ENOENT && !strchr(o.argv[0], '/')) {
				fprintf(stderr, "cordon: %s: command not found\n", o.argv[0]);
				return 127;
			}
			fail(o.argv[0], r.err);
			return r.err == ENOENT ? 127 : 126;
		}
		fail(r.what, r.err);
		return 125;
	}

	while (status < 0) {
		struct pollfd fds[2] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = o.parent_fd, .events = POLLIN },
		};
		struct signalfd_siginfo si;
		int ws;
		pid_t w;

		if (poll(fds, o.parent_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll", errno);
			break;
		}
		if (o.parent_fd >= 0 && fds[1].revents) {
			char buf[64];
			if (read(o.parent_fd, buf, sizeof(buf)) <= 0) {
				/* cordon is gone: so is everything it started. */
				kill_all(pid, o.contained);
				_exit(128 + SIGKILL);
			}
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(-pid, si.ssi_signo);
			continue;
		}
		while ((w = waitpid(-1, &ws, WNOHANG)) > 0) {
			if (w == pid)
				status = wait_status(ws);
		}
	}
	/* The command is done: nothing it started outlives it. */
	kill_all(pid, o.contained);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	return status < 0 ? 125 : status;
}

__attribute__((constructor)) static void cordon_sandbox_init(int argc, char **argv, char **envp)
{
	if (argc < 2 || strcmp(argv[1], INIT_COMMAND) != 0)
		return;
	exit(sandbox_init(argc - 2, argv + 2, envp));
}
