//go:build linux && cgo

/*
 * cordon run's client of cordon serve, in C, run from a constructor of
 * cordon's binary before the Go runtime starts: a warm run should cost
 * little more than the sandboxed command, and starting the Go runtime and
 * cordon's packages costs more than the daemon's whole part of the run.
 * It speaks docs/protocol.md exactly as serve.Call does, and leaves the
 * run to Go whenever it is not sure:
 *
 *   - argv[1] is not "run", CORDON_SERVE=0, a detached run's own process
 *     (CORDON_DETACHED_ID), stdin and stdout are terminals, or a flag
 *     before the command is not one it knows (client_flags: --detach,
 *     --tty and --help are not among them);
 *   - no socket at the state directory's serve.sock, or the connection or
 *     the request fails before the daemon said the command started;
 *   - the daemon declines the request (nothing ran): cordon_client_declined
 *     then tells Go not to ask again.
 *
 * Otherwise it exits with the run's status. The request is cordon run's
 * own arguments as given, the working directory as os.Getwd finds it, the
 * environment, and the identity of this binary (serve.BinaryID); the
 * daemon parses and compiles the arguments as cordon run would, and
 * declines what a cold run must do (a terminal, --detach).
 *
 * cordon hook claude, which Claude Code runs before every tool call, is
 * answered by the daemon the same way (hook_client): the hook's input is
 * read first into a memory file, which goes to the daemon as stdin and,
 * when the daemon does not answer (no socket, a fallback, an error, gone),
 * to Go's cordon hook claude as its stdin; the answer comes back through a
 * pipe and is written to stdout only once the daemon said the exit
 * status, so that Go never answers after part of an answer was written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/* What client() did. */
enum {
	CLIENT_NOT_TAKEN, /* nothing ran: Go runs cordon run */
	CLIENT_DECLINED,  /* nothing ran, and the daemon said so */
	CLIENT_RAN,       /* the run is over: exit with its status */
};

/*
 * client_flags are cordon run's flags the client lets through: the
 * policy's and --stats, with whether each takes a value. A Go test
 * (serve.ClientFlags) checks them against cordon run's own.
 */
struct client_flag {
	const char *name;
	int value;
};

static const struct client_flag client_flags[] = {
	{"workspace", 1}, {"w", 1}, {"settings", 1}, {"mode", 1},
	{"allow-write", 1}, {"allow-read", 1}, {"deny-read", 1}, {"deny-write", 1},
	{"allow-domain", 1}, {"deny-domain", 1}, {"memory", 1}, {"pids", 1},
	{"cpus", 1}, {"timeout", 1}, {"output-limit", 1}, {"file-size", 1},
	{"open-files", 1}, {"tmp-size", 1}, {"cwd-fd", 1}, {"session", 1},
	{"record-writes", 0}, {"record-reads", 0}, {"stats", 0}, {"serve", 0},
	{NULL, 0},
};

/* cordon_client_flag returns the i-th of client_flags (NULL past them). */
const char *cordon_client_flag(int i, int *value)
{
	if (i < 0 || i >= (int)(sizeof(client_flags) / sizeof(client_flags[0])) - 1)
		return NULL;
	*value = client_flags[i].value;
	return client_flags[i].name;
}

static const struct client_flag *lookup_flag(const char *name, size_t n)
{
	for (const struct client_flag *f = client_flags; f->name; f++)
		if (strlen(f->name) == n && memcmp(f->name, name, n) == 0)
			return f;
	return NULL;
}

/*
 * cordon_client_scan finds the command in cordon run's arguments (argv[0]
 * is the first after "run"): its index, or -1 when the arguments are not
 * the client's to send. It parses as cordon run's flag parser does
 * (urfave/cli: "--" or the first positional argument ends the flags;
 * -name and --name, =value or the next argument for a flag with a value),
 * and refuses anything else: an unknown flag, a boolean flag given a
 * value, an argument that parser would trim, or a first positional
 * argument it could take for a subcommand.
 */
/* trimmed reports whether urfave/cli might trim s (strings.TrimSpace):
 * it is empty or starts with a space, or with a byte that may begin a
 * Unicode one. */
static int trimmed(const char *s)
{
	unsigned char c = (unsigned char)s[0];
	return c == '\0' || c == ' ' || (c >= '\t' && c <= '\r') || c >= 0x80;
}

int cordon_client_scan(int argc, char **argv)
{
	int i = 0, dashdash = 0;
	while (i < argc) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			dashdash = 1;
			break;
		}
		if (a[0] != '-')
			break;
		const char *name = a + 1;
		if (*name == '-')
			name++;
		const char *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		const struct client_flag *f = lookup_flag(name, n);
		if (!f || (!f->value && eq))
			return -1;
		if (f->value && !eq) {
			if (i + 1 >= argc)
				return -1;
			i++;
		}
		i++;
	}
	if (i >= argc)
		return -1;
	const char *c = argv[i];
	/* urfave/cli trims an argument to classify it, and takes "help" for
	 * its help command: Go decides those. */
	if (trimmed(c) || c[0] == '-' || strcmp(c, "help") == 0 || strcmp(c, "h") == 0)
		return -1;
	/* Without "--", an argument it trims to nothing right after the
	 * command has it parse flags again. */
	if (!dashdash && i + 1 < argc && trimmed(argv[i + 1]))
		return -1;
	return i;
}

/* clean reports whether an absolute path is as filepath.Clean leaves it. */
static int clean(const char *p)
{
	if (p[0] != '/')
		return 0;
	if (p[1] == '\0')
		return 1;
	if (p[strlen(p) - 1] == '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
		return 0;
	size_t n = strlen(p);
	if ((n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
		return 0;
	return 1;
}

/*
 * cordon_client_state_root writes cordon's state directory into out, as
 * runtime.StateRoot finds it from CORDON_STATE_ROOT (state), the
 * effective uid, whether /run may be written (run_writable: root keeps its
 * state there then) and XDG_RUNTIME_DIR (xdg, used when owned_xdg says it
 * is a directory of the caller's that nobody else writes to). It returns -1
 * when it would not be sure (a path filepath.Clean would change), or too
 * long.
 */
int cordon_client_state_root(const char *state, uid_t euid, int run_writable, const char *xdg, int owned_xdg, char *out, size_t n)
{
	int w;
	if (state && state[0] == '/') {
		if (!clean(state))
			return -1;
		w = snprintf(out, n, "%s", state);
	} else if (euid == 0 && run_writable) {
		w = snprintf(out, n, "/run/cordon");
	} else if (xdg && xdg[0] && owned_xdg) {
		if (!clean(xdg))
			return -1;
		w = snprintf(out, n, "%s/cordon", strcmp(xdg, "/") == 0 ? "" : xdg);
	} else {
		w = snprintf(out, n, "/tmp/cordon-%u", (unsigned)euid);
	}
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* serve_socket writes the address of cordon serve's socket into addr, in
 * this process's state directory (cordon_client_state_root); -1 when it
 * cannot be sure of it. */
static int owned_dir(const char *dir);

static int serve_socket(struct sockaddr_un *addr)
{
	char root[PATH_MAX];
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	uid_t euid = geteuid();
	int owned = xdg && xdg[0] && owned_dir(xdg);
	int runw = euid == 0 && access("/run", W_OK) == 0;
	if (cordon_client_state_root(getenv("CORDON_STATE_ROOT"), euid, runw, xdg, owned, root, sizeof(root)) < 0)
		return -1;
	*addr = (struct sockaddr_un){.sun_family = AF_UNIX};
	int w = snprintf(addr->sun_path, sizeof(addr->sun_path), "%s/serve.sock", root);
	return w < 0 || (size_t)w >= sizeof(addr->sun_path) ? -1 : 0;
}

/* own_daemon reports whether the daemon at the other end of sock runs as
 * this process's user: nothing goes to a socket another user planted
 * where the daemon's would be (serve.Dial checks the same). */
static int own_daemon(int sock)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	return getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred) &&
	       cred.uid == geteuid();
}

static int owned_dir(const char *dir)
{
	struct stat st;
	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

/* A growing buffer. */
struct buf {
	char *p;
	size_t len, cap;
	int failed;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/*
 * put_json writes s as a JSON string. Bytes that are not UTF-8 go as they
 * are: Go's decoder replaces each with U+FFFD, as Go's encoder would.
 */
static void put_json(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put(b, "\"", 1);
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(b, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"':
			puts_(b, "\\\"");
			break;
		case '\\':
			puts_(b, "\\\\");
			break;
		case '\n':
			puts_(b, "\\n");
			break;
		case '\t':
			puts_(b, "\\t");
			break;
		case '\r':
			puts_(b, "\\r");
			break;
		default: {
			char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
			puts_(b, e);
		}
		}
	}
	put(b, run, (size_t)(s - run));
	put(b, "\"", 1);
}

static void put_list(struct buf *b, char **v, int n)
{
	put(b, "[", 1);
	for (int i = 0; i < n; i++) {
		if (i)
			put(b, ",", 1);
		put_json(b, v[i]);
	}
	put(b, "]", 1);
}

/*
 * cordon_client_request encodes the request line (serve.Request, newline
 * included; hook is its Hook, NULL for a run) into a malloc'd string; NULL
 * when out of memory.
 */
char *cordon_client_request(char **args, int nargs, const char *cwd, char **env, const char *binary, const char *hook)
{
	struct buf b = {0};
	int nenv = 0;
	while (env && env[nenv])
		nenv++;
	puts_(&b, "{\"cordon\":1,");
	if (hook && hook[0]) {
		puts_(&b, "\"hook\":");
		put_json(&b, hook);
		put(&b, ",", 1);
	}
	puts_(&b, "\"args\":");
	put_list(&b, args, nargs);
	puts_(&b, ",\"cwd\":");
	put_json(&b, cwd);
	puts_(&b, ",\"env\":");
	put_list(&b, env, nenv);
	if (binary && binary[0]) {
		puts_(&b, ",\"binary\":");
		put_json(&b, binary);
	}
	puts_(&b, "}\n");
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/*
 * cordon_client_answer reads one line of the daemon's (without its
 * newline): its type into typ (up to n bytes with the NUL) and its status,
 * when the line has one, into *status. Type and status come first, in this
 * order (docs/protocol.md). It returns 1 with a status, 0 without, -1 when
 * the line is not one of the daemon's.
 */
int cordon_client_answer(const char *line, size_t len, char *typ, size_t n, int *status)
{
	static const char head[] = "{\"type\":\"";
	static const char st[] = ",\"status\":";
	size_t i = sizeof(head) - 1;
	if (len < i || memcmp(line, head, i) != 0)
		return -1;
	size_t t = 0;
	for (; i < len && line[i] != '"'; i++) {
		char c = line[i];
		if (!(c >= 'a' && c <= 'z') || t + 1 >= n)
			return -1;
		typ[t++] = c;
	}
	if (i >= len || t == 0)
		return -1;
	typ[t] = '\0';
	i++;
	if (i < len && line[i] == '}')
		return i + 1 == len ? 0 : -1;
	if (len - i < sizeof(st) - 1 || memcmp(line + i, st, sizeof(st) - 1) != 0)
		return i < len && line[i] == ',' ? 0 : -1;
	i += sizeof(st) - 1;
	int neg = 0;
	if (i < len && line[i] == '-') {
		neg = 1;
		i++;
	}
	long v = 0;
	size_t digits = 0;
	for (; i < len && line[i] >= '0' && line[i] <= '9'; i++, digits++) {
		if (digits >= 9)
			return -1;
		v = v * 10 + (line[i] - '0');
	}
	if (digits == 0 || i >= len || (line[i] != ',' && line[i] != '}'))
		return -1;
	*status = (int)(neg ? -v : v);
	return 1;
}

/* working_directory is os.Getwd's answer: $PWD when it names ".". */
char *cordon_client_cwd(void)
{
	const char *pwd = getenv("PWD");
	struct stat dot, st;
	if (pwd && pwd[0] == '/' && stat(".", &dot) == 0 && stat(pwd, &st) == 0 && dot.st_dev == st.st_dev &&
	    dot.st_ino == st.st_ino)
		return strdup(pwd);
	return getcwd(NULL, 0);
}

/* cordon_client_binary is serve.BinaryID of this binary as os.Executable
 * names it. */
int cordon_client_binary(char *out, size_t n)
{
	char path[PATH_MAX + 1];
	ssize_t l = readlink("/proc/self/exe", path, PATH_MAX);
	if (l <= 0)
		return -1;
	path[l] = '\0';
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	if ((size_t)l > dl && strcmp(path + l - dl, deleted) == 0)
		path[l - dl] = '\0';
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	int w = snprintf(out, n, "%llu:%llu:%lld:%lld", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (long long)st.st_size, (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Signals: the handler writes their numbers to a pipe the client polls. */
static int sig_pipe[2] = {-1, -1};
static struct sigaction sig_saved[NSIG];
static int sig_caught[NSIG];

static void on_signal(int sig)
{
	int e = errno;
	unsigned char c = (unsigned char)sig;
	(void)!write(sig_pipe[1], &c, 1);
	errno = e;
}

/* catchable are the signals the client passes on, as serve.Call does
 * everything signal.Notify gives it but SIGCHLD, SIGURG, SIGPIPE and
 * SIGWINCH; the faults stay the process's own. */
static int catchable(int sig)
{
	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGCHLD:
	case SIGURG:
	case SIGPIPE:
	case SIGWINCH:
	case SIGSEGV:
	case SIGBUS:
	case SIGFPE:
	case SIGILL:
	case SIGTRAP:
		return 0;
	}
	/* glibc's own real-time signals. */
	return sig < 32 || sig >= SIGRTMIN;
}

static int catch_signals(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (int sig = 1; sig < NSIG; sig++) {
		if (!catchable(sig))
			continue;
		if (sigaction(sig, &sa, &sig_saved[sig]) == 0)
			sig_caught[sig] = 1;
	}
	return 0;
}

/* release_signals gives the signals back as they were, and raises those
 * that came meanwhile: nothing ran, and Go's run will see them. */
static void release_signals(void)
{
	int got[NSIG] = {0};
	unsigned char c;
	while (sig_pipe[0] >= 0 && read(sig_pipe[0], &c, 1) == 1)
		got[c] = 1;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig_caught[sig]) {
			sigaction(sig, &sig_saved[sig], NULL);
			sig_caught[sig] = 0;
		}
	if (sig_pipe[0] >= 0) {
		close(sig_pipe[0]);
		close(sig_pipe[1]);
		sig_pipe[0] = sig_pipe[1] = -1;
	}
	for (int sig = 1; sig < NSIG; sig++)
		if (got[sig])
			raise(sig);
}

/* send_all_fd writes all of p to fd (a pipe or file). */
static int send_all_fd(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* cwd_fd is the descriptor --cwd-fd names among cordon run's flags
 * (argv[0..n), which cordon_client_scan took): -1 without one, -2 for one
 * the client leaves to Go (not a plain number, or not open). */
static int cwd_fd(int n, char **argv)
{
	int fd = -1;
	for (int i = 0; i < n && strcmp(argv[i], "--") != 0; i++) {
		const char *name = argv[i] + 1;
		if (*name == '-')
			name++;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct client_flag *f = lookup_flag(name, len);
		if (!f || !f->value)
			continue;
		const char *v = eq ? eq + 1 : argv[++i];
		if (strcmp(f->name, "cwd-fd") != 0)
			continue;
		char *end;
		errno = 0;
		long l = strtol(v, &end, 10);
		if (errno || end == v || *end || v[0] < '0' || v[0] > '9' || l < 3 || l > INT_MAX || fcntl((int)l, F_GETFD) < 0)
			return -2;
		fd = (int)l;
	}
	return fd;
}

/* send_fds sends the line with the descriptors fds (at most four)
 * attached to its first byte. */
static int send_fds(int sock, const char *line, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = {.iov_base = (void *)line, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = CMSG_SPACE(nfds * sizeof(int))};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	ssize_t w;
	do
		w = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w != 1)
		return -1;
	return send_all(sock, line + 1, strlen(line + 1));
}

/* send_request sends the line with the three standard descriptors, and
 * fd3 (--cwd-fd's) when it is one. */
static int send_request(int sock, const char *line, int fd3)
{
	int fds[4] = {0, 1, 2, fd3};
	return send_fds(sock, line, fds, fd3 >= 0 ? 4 : 3);
}

static void say(const char *msg) { (void)!write(2, msg, strlen(msg)); }

/* The longest line of the daemon's the client reads (an exit with many
 * notes). */
#define MAX_LINE (1 << 20)

/* converse passes signals on and reads the daemon's lines until the run
 * ends. */
static int converse(int sock, int *status)
{
	struct buf in = {0};
	int started = 0;
	for (;;) {
		/* Whole lines first. */
		char *nl;
		while (in.len > 0 && (nl = memchr(in.p, '\n', in.len))) {
			size_t n = (size_t)(nl - in.p);
			char typ[16];
			int st = 0;
			int has = cordon_client_answer(in.p, n, typ, sizeof(typ), &st);
			memmove(in.p, nl + 1, in.len - n - 1);
			in.len -= n + 1;
			if (has < 0)
				goto bad;
			if (strcmp(typ, "started") == 0) {
				started = 1;
			} else if (strcmp(typ, "exit") == 0 || strcmp(typ, "error") == 0) {
				if (has != 1)
					goto bad;
				/* An error was said on the command's stderr by the
				 * daemon already. */
				*status = st;
				free(in.p);
				return CLIENT_RAN;
			} else if (strcmp(typ, "fallback") == 0) {
				if (started)
					goto bad;
				free(in.p);
				return CLIENT_DECLINED;
			}
		}
		struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sig_pipe[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			goto gone;
		}
		if (p[1].revents & POLLIN) {
			unsigned char c;
			while (read(sig_pipe[0], &c, 1) == 1) {
				char msg[48];
				snprintf(msg, sizeof(msg), "{\"type\":\"signal\",\"signal\":%d}\n", c);
				(void)send_all(sock, msg, strlen(msg));
				if (c == SIGTSTP || c == SIGTTIN || c == SIGTTOU)
					/* Job control, as serve.Call: the command stops,
					 * then the client; SIGCONT resumes both. */
					kill(getpid(), SIGSTOP);
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char chunk[4096];
			ssize_t r = read(sock, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				goto gone;
			if (in.len + (size_t)r > MAX_LINE)
				goto bad;
			put(&in, chunk, (size_t)r);
			if (in.failed)
				goto bad;
		}
	}
bad:
gone:
	free(in.p);
	if (!started)
		return CLIENT_NOT_TAKEN;
	say("cordon: cordon serve went away during the run\n");
	*status = 125;
	return CLIENT_RAN;
}

/* cold: this cordon run will not be served (CORDON_SERVE=0, no daemon's
 * socket, or the daemon declined): it makes its sandbox itself. */
static int cold;

/* open_stdio puts /dev/null where a standard descriptor is closed, as Go's
 * runtime does for a cold run: the client would otherwise hand the command
 * the first descriptors it opens itself — its signal pipe as stdin, its
 * connection to the daemon as stderr. */
static int open_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lower ones are open: this one is the lowest free. */
		int n = open("/dev/null", O_RDWR);
		if (n != fd) {
			if (n >= 0)
				close(n);
			return -1;
		}
	}
	return 0;
}

static int client(int argc, char **argv, char **envp, int *status)
{
	if (open_stdio() != 0)
		return CLIENT_NOT_TAKEN;
	const char *v = getenv("CORDON_SERVE");
	if (v && strcmp(v, "0") == 0) {
		cold = 1;
		return CLIENT_NOT_TAKEN;
	}
	v = getenv("CORDON_DETACHED_ID");
	if (v && v[0])
		return CLIENT_NOT_TAKEN;
	/* A process runtime.SealSelf made: Go knows its binary. */
	if (getenv("_CORDON_SEALED_FROM"))
		return CLIENT_NOT_TAKEN;
	/* A terminal is a cold run's: Go decides (--tty=false). */
	if (isatty(0) && isatty(1))
		return CLIENT_NOT_TAKEN;
	int ci = cordon_client_scan(argc - 2, argv + 2);
	if (ci < 0)
		return CLIENT_NOT_TAKEN;
	int fd3 = cwd_fd(ci, argv + 2);
	if (fd3 == -2)
		return CLIENT_NOT_TAKEN;
	struct sockaddr_un addr;
	if (serve_socket(&addr) < 0)
		return CLIENT_NOT_TAKEN;
	struct stat st;
	if (lstat(addr.sun_path, &st) != 0) {
		cold = 1;
		return CLIENT_NOT_TAKEN;
	}
	char bin[128];
	if (cordon_client_binary(bin, sizeof(bin)) < 0)
		return CLIENT_NOT_TAKEN;
	char *cwd = cordon_client_cwd();
	if (!cwd)
		return CLIENT_NOT_TAKEN;
	char *line = cordon_client_request(argv + 2, argc - 2, cwd, envp, bin, NULL);
	free(cwd);
	if (!line)
		return CLIENT_NOT_TAKEN;
	int ret = CLIENT_NOT_TAKEN;
	if (catch_signals() != 0) {
		free(line);
		return CLIENT_NOT_TAKEN;
	}
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock >= 0 && connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0 && own_daemon(sock) &&
	    send_request(sock, line, fd3) == 0)
		ret = converse(sock, status);
	free(line);
	if (sock >= 0)
		close(sock);
	if (ret != CLIENT_RAN)
		release_signals();
	return ret;
}

/* HOOK_INPUT_LIMIT is cordon hook claude's (hookInputLimit): the client
 * keeps one byte more, so that Go and the daemon refuse a longer input
 * alike. */
#define HOOK_INPUT_LIMIT (8LL * (10 << 20))

/* cordon_client_hook_input_limit is HOOK_INPUT_LIMIT, for Go's tests. */
long long cordon_client_hook_input_limit(void) { return HOOK_INPUT_LIMIT; }

/* keep_input copies stdin, to its end or one byte past HOOK_INPUT_LIMIT,
 * into a memory file, rewound: -1 on failure (then stdin may be read in
 * part: the caller runs nothing but exits). */
static int keep_input(void)
{
	int fd = memfd_create("cordon-hook-input", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	char chunk[65536];
	long long kept = 0;
	while (kept <= HOOK_INPUT_LIMIT) {
		ssize_t r = read(0, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(fd, chunk + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				close(fd);
				return -1;
			}
			off += w;
		}
		kept += r;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* hook_converse reads the daemon's answer to a hook request: the hook's
 * output from the pipe out into *answer, and the status from the socket.
 * CLIENT_RAN only with an exit status and the output to its end. */
static int hook_converse(int sock, int out, int *status, struct buf *answer)
{
	struct buf in = {0};
	int got = 0, outEOF = 0;
	for (;;) {
		char *nl;
		while (!got && in.len > 0 && (nl = memchr(in.p, '\n', in.len))) {
			size_t n = (size_t)(nl - in.p);
			char typ[16];
			int st = 0;
			if (cordon_client_answer(in.p, n, typ, sizeof(typ), &st) != 1 || strcmp(typ, "exit") != 0)
				goto fail; /* a fallback, an error: Go answers */
			*status = st;
			got = 1;
		}
		if (got && outEOF)
			break;
		struct pollfd p[2] = {{.fd = got ? -1 : sock, .events = POLLIN}, {.fd = outEOF ? -1 : out, .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		char chunk[65536];
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(out, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				goto fail;
			if (r == 0)
				outEOF = 1;
			else if (answer->len + (size_t)r > 2 * HOOK_INPUT_LIMIT)
				goto fail;
			else
				put(answer, chunk, (size_t)r);
			if (answer->failed)
				goto fail;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(sock, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0 || in.len + (size_t)r > MAX_LINE)
				goto fail;
			put(&in, chunk, (size_t)r);
			if (in.failed)
				goto fail;
		}
	}
	free(in.p);
	return CLIENT_RAN;
fail:
	free(in.p);
	return CLIENT_NOT_TAKEN;
}

/*
 * hook_client asks the daemon for cordon hook claude's answer (argv[3..]
 * are its flags, which the daemon parses as the hook does). *input is the
 * memory file holding what it read of stdin, -1 when it read nothing:
 * unless it returns CLIENT_RAN, Go's hook reads that instead.
 */
static int hook_client(int argc, char **argv, char **envp, int *status, int *input)
{
	*input = -1;
	if (open_stdio() != 0)
		return CLIENT_NOT_TAKEN;
	const char *v = getenv("CORDON_SERVE");
	if ((v && strcmp(v, "0") == 0) || getenv("_CORDON_SEALED_FROM"))
		return CLIENT_NOT_TAKEN;
	struct sockaddr_un addr;
	struct stat st;
	if (serve_socket(&addr) < 0 || lstat(addr.sun_path, &st) != 0)
		return CLIENT_NOT_TAKEN;
	char bin[128];
	if (cordon_client_binary(bin, sizeof(bin)) < 0)
		return CLIENT_NOT_TAKEN;
	char *cwd = cordon_client_cwd();
	if (!cwd)
		return CLIENT_NOT_TAKEN;
	char *line = cordon_client_request(argv + 3, argc - 3, cwd, envp, bin, "claude");
	free(cwd);
	if (!line)
		return CLIENT_NOT_TAKEN;
	*input = keep_input();
	int ret = CLIENT_NOT_TAKEN;
	int out[2] = {-1, -1};
	int sock = -1;
	struct buf answer = {0};
	if (*input < 0 || pipe2(out, O_CLOEXEC) != 0)
		goto done;
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fds[3] = {*input, out[1], 2};
	if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0 || !own_daemon(sock) ||
	    send_fds(sock, line, fds, 3) != 0)
		goto done;
	close(out[1]);
	out[1] = -1;
	ret = hook_converse(sock, out[0], status, &answer);
	if (ret == CLIENT_RAN && answer.len > 0 && send_all_fd(1, answer.p, answer.len) != 0) {
		/* Unanswered, the call would go on unsandboxed: blocked. */
		say("cordon hook: write the answer: the output is closed\n");
		*status = 2;
	}
done:
	free(line);
	free(answer.p);
	if (sock >= 0)
		close(sock);
	for (int i = 0; i < 2; i++)
		if (out[i] >= 0)
			close(out[i]);
	return ret;
}

static int declined;

/* runtime/preheat.c */
void cordon_prime_cgroups(void);

/* cordon_client_declined reports whether the daemon declined this run. */
int cordon_client_declined(void) { return declined; }

/* goReserve is the address space Go's runtime reserves as it starts, before
 * main (its heap's page summaries cover the whole address space: about
 * 700 MiB on amd64; threads' stacks come on top). */
#define GO_RESERVE (768ULL << 20)

static void *no_work(void *arg) { return arg; }

/* check_go_start ends cordon with one line and exit 125 where Go's runtime
 * cannot start, which would abort with a page of output and exit 2: an
 * RLIMIT_AS (ulimit -v) below what it reserves, or an RLIMIT_NPROC
 * (ulimit -u) that leaves no thread to start (tried only when the limit
 * is small: a thread costs a run). cordon hook exits 2 instead, which
 * Claude Code takes for "block the call": any other status lets it go
 * on, unsandboxed. The inits and probe children run under the limits
 * cordon sets them: not theirs to refuse. */
static void check_go_start(int argc, char **argv)
{
	struct rlimit rl;
	char msg[200];
	int code = argc >= 2 && strcmp(argv[1], "hook") == 0 ? 2 : 125;

	if (argc >= 2 && (strcmp(argv[1], "sandbox-init") == 0 || strcmp(argv[1], "init") == 0 ||
			  strcmp(argv[1], "probe-child") == 0))
		return;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < GO_RESERVE) {
		snprintf(msg, sizeof(msg),
			 "cordon: the address space limit (RLIMIT_AS, ulimit -v) is %llu MiB, below the %llu MiB "
			 "cordon's Go runtime reserves as it starts\n",
			 (unsigned long long)(rl.rlim_cur >> 20), GO_RESERVE >> 20);
		say(msg);
		_exit(code);
	}
	/* Root's processes are not counted against it. */
	if (getuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024) {
		pthread_t th;
		int err = pthread_create(&th, NULL, no_work, NULL);
		if (err == 0) {
			pthread_join(th, NULL);
		} else if (err == EAGAIN) {
			snprintf(msg, sizeof(msg),
				 "cordon: no thread can be started: the process limit (RLIMIT_NPROC, ulimit -u) of %llu "
				 "for uid %u is reached, and cordon's Go runtime needs several\n",
				 (unsigned long long)rl.rlim_cur, (unsigned)getuid());
			say(msg);
			_exit(code);
		}
	}
}

__attribute__((constructor)) static void cordon_serve_client(int argc, char **argv, char **envp)
{
	if (argc >= 3 && strcmp(argv[1], "hook") == 0 && strcmp(argv[2], "claude") == 0) {
		int status = 0, input = -1;
		if (hook_client(argc, argv, envp, &status, &input) == CLIENT_RAN)
			_exit(status);
		/* Go answers, from the input as it was read. */
		if (input >= 0) {
			if (lseek(input, 0, SEEK_SET) != 0 || dup2(input, 0) != 0) {
				say("cordon hook: the hook's input could not be kept\n");
				_exit(2);
			}
			close(input);
		}
		check_go_start(argc, argv);
		return;
	}
	if (argc < 3 || strcmp(argv[1], "run") != 0) {
		check_go_start(argc, argv);
		return;
	}
	int status = 0;
	switch (client(argc, argv, envp, &status)) {
	case CLIENT_RAN:
		_exit(status);
	case CLIENT_DECLINED:
		declined = 1;
		cold = 1;
		break;
	}
	/* Not served: Go's runtime starts. */
	check_go_start(argc, argv);
	if (cold)
		cordon_prime_cgroups();
}
