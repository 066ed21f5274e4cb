package runtime

import (
	"bytes"
	"errors"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/spec"
)

// guardCall is one call the guard performs for a thread of the sandbox.
type guardCall struct {
	gd       *guardian
	tid      int // the thread, in the supervisor's pid namespace
	listener int
	id       uint64
	proc     *guardProc
	// links counts the symbolic links followed, as the kernel does: 40.
	links int
	// named is the path the call makes as the process gave it, relative
	// to namedDir, for the record (namedPath).
	named    string
	namedDir int32
}

const maxLinks = 40

// perform decodes the notified call name and performs it.
func (c *guardCall) perform(name string, a [6]uint64) outcome {
	fail := func(err error) outcome {
		if r, ok := errors.AsType[refusedError](err); ok {
			return outcome{fd: -1, refused: r.r}
		}
		return outcome{fd: -1, err: err}
	}
	p, err := c.gd.proc(c.tid)
	if err != nil {
		return fail(err)
	}
	c.proc = p
	dirfd := func(i int) int32 { return int32(a[i]) }
	var paths []string
	for _, i := range pathArgs[name] {
		s, err := readPath(c.tid, a[i])
		if err != nil {
			return fail(err)
		}
		paths = append(paths, s)
	}
	// What was read is the process's only while its call is pending.
	if ioctl(c.listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&c.id)) != nil {
		return fail(unix.ESRCH)
	}
	// The name made, as given, for the record.
	if i := len(paths) - 1; i >= 0 {
		c.named, c.namedDir = paths[i], atFDCWD
		if d := targetDirfd[name]; d >= 0 {
			c.namedDir = int32(a[d])
		}
	}
	switch name {
	case "open", "openat", "creat":
		var out outcome
		switch name {
		case "open":
			out = c.open(atFDCWD, paths[0], int(int32(a[1])), uint32(a[2]))
		case "openat":
			out = c.open(dirfd(0), paths[0], int(int32(a[2])), uint32(a[3]))
		default:
			out = c.open(atFDCWD, paths[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, uint32(a[1]))
		}
		return out
	case "mkdir":
		return fail(c.mkdir(atFDCWD, paths[0], uint32(a[1])))
	case "mkdirat":
		return fail(c.mkdir(dirfd(0), paths[0], uint32(a[2])))
	case "mknod":
		return fail(c.mknod(atFDCWD, paths[0], uint32(a[1]), int(a[2])))
	case "mknodat":
		return fail(c.mknod(dirfd(0), paths[0], uint32(a[2]), int(a[3])))
	case "symlink":
		return fail(c.symlink(paths[0], atFDCWD, paths[1]))
	case "symlinkat":
		return fail(c.symlink(paths[0], dirfd(1), paths[1]))
	case "link":
		return fail(c.link(atFDCWD, paths[0], atFDCWD, paths[1], 0))
	case "linkat":
		return fail(c.link(dirfd(0), paths[0], dirfd(2), paths[1], int(int32(a[4]))))
	case "rename":
		return fail(c.rename(atFDCWD, paths[0], atFDCWD, paths[1], 0))
	case "renameat":
		return fail(c.rename(dirfd(0), paths[0], dirfd(2), paths[1], 0))
	case "renameat2":
		return fail(c.rename(dirfd(0), paths[0], dirfd(2), paths[1], uint(uint32(a[4]))))
	}
	return fail(unix.ENOSYS)
}

// targetDirfd is where each call takes the directory descriptor of the
// path it makes (its last path argument); -1 for the working directory.
var targetDirfd = map[string]int{
	"open": -1, "openat": 0, "creat": -1, "mkdir": -1, "mkdirat": 0, "mknod": -1, "mknodat": 0,
	"symlink": -1, "symlinkat": 1, "link": -1, "linkat": 2, "rename": -1, "renameat": 2, "renameat2": 2,
}

// namedPath is the path the call makes, made absolute from the directory
// the process gave (for the record of a call that failed: read before it
// is answered, while that directory is still the process's).
func (c *guardCall) namedPath() string {
	if c.named == "" || strings.HasPrefix(c.named, "/") {
		return c.named
	}
	return c.absolute(c.namedDir, c.named)
}

// absolute makes the relative path p absolute from dirfd as the thread
// sees it, for the record; p when it cannot.
func (c *guardCall) absolute(dirfd int32, p string) string {
	b, err := c.base(dirfd)
	if err != nil {
		return p
	}
	defer unix.Close(b)
	dir, err := fdPath(b)
	if err != nil || !strings.HasPrefix(dir, "/") {
		return p
	}
	return path.Join(dir, p)
}

// pathArgs are where the calls the guard performs take their paths.
var pathArgs = map[string][]int{
	"open": {0}, "openat": {1}, "creat": {0}, "mkdir": {0}, "mkdirat": {1}, "mknod": {0}, "mknodat": {1},
	"symlink": {0, 1}, "symlinkat": {0, 2}, "link": {0, 1}, "linkat": {1, 3},
	"rename": {0, 1}, "renameat": {1, 3}, "renameat2": {1, 3},
}

// readPath reads a path argument as the kernel would: NUL-terminated, at
// most PATH_MAX bytes with the NUL (ENAMETOOLONG), EFAULT where it cannot
// be read.
func readPath(pid int, addr uint64) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var out []byte
	var buf [512]byte
	for len(out) < unix.PathMax {
		// Never across a page boundary in one read: the next page may not
		// be mapped, and the path may end before it.
		n := min(uint64(len(buf)), 4096-addr%4096)
		local := []unix.Iovec{{Base: &buf[0]}}
		local[0].SetLen(int(n))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: int(n)}}
		got, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil || got <= 0 {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			out = append(out, buf[:i]...)
			if len(out) >= unix.PathMax {
				break
			}
			return string(out), nil
		}
		out = append(out, buf[:got]...)
		addr += uint64(got)
	}
	return "", unix.ENAMETOOLONG
}

// proc returns what the guard knows of the thread tid, read again when
// the thread is new, another has its number, or the sandbox called umask.
func (gd *guardian) proc(tid int) (*guardProc, error) {
	p := gd.procs[tid]
	if p != nil && p.gen == gd.gen && unix.Faccessat(p.dir, "fd", unix.F_OK, 0) == nil {
		return p, nil
	}
	if p != nil {
		unix.Close(p.dir)
		delete(gd.procs, tid)
	}
	if len(gd.procs) >= 4096 {
		for t, q := range gd.procs {
			unix.Close(q.dir)
			delete(gd.procs, t)
		}
	}
	dir, err := unix.Open("/proc/"+strconv.Itoa(tid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, unix.ESRCH
	}
	p = &guardProc{dir: dir, gen: gd.gen}
	if err := p.readStatus(); err != nil {
		unix.Close(dir)
		return nil, err
	}
	gd.procs[tid] = p
	return p, nil
}

// readStatus reads the thread's umask and its ids in the sandbox.
func (p *guardProc) readStatus() error {
	fd, err := unix.Openat(p.dir, "status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return unix.ESRCH
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return unix.ESRCH
	}
	p.umask = 0o22
	last := func(v string) int {
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(f[len(f)-1])
		return n
	}
	for line := range strings.Lines(string(buf[:n])) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
		switch k {
		case "Umask":
			if u, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				p.umask = int(u)
			}
		case "NStgid":
			p.tgid = last(v)
		case "NSpid":
			p.tid = last(v)
		}
	}
	return nil
}

// base returns, open with O_PATH, the directory a path relative to dirfd
// starts from for the thread: its working directory, or the descriptor.
func (c *guardCall) base(dirfd int32) (int, error) {
	if dirfd == atFDCWD {
		fd, err := unix.Openat(c.proc.dir, "cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.ESRCH
		}
		return fd, nil
	}
	if dirfd < 0 {
		return -1, unix.EBADF
	}
	fd, err := unix.Openat(c.proc.dir, "fd/"+strconv.Itoa(int(dirfd)), unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return -1, unix.EBADF
	}
	return fd, err
}

// at is a name in a directory the guard holds open, where a call makes
// it.
type at struct {
	dir      int
	name     string // "" for the root, "." or ".." as given
	trailing bool   // the path ended in a slash
	path     string // the directory's path, as the sandbox sees it
}

func (t at) close() {
	if t.dir >= 0 {
		unix.Close(t.dir)
	}
}

// full is the path of t's name, clean.
func (t at) full() string {
	if t.path == "/" {
		return "/" + t.name
	}
	return t.path + "/" + t.name
}

// parent resolves every name of p but the last, from dirfd (p relative)
// or the root, as the thread would.
func (c *guardCall) parent(dirfd int32, p string) (at, error) {
	if p == "" {
		return at{dir: -1}, unix.ENOENT
	}
	start := c.gd.root
	if p[0] != '/' {
		b, err := c.base(dirfd)
		if err != nil {
			return at{dir: -1}, err
		}
		defer unix.Close(b)
		start = b
	}
	return c.parentFrom(start, p)
}

// parentFrom is parent from the directory start (the root for an absolute
// p).
func (c *guardCall) parentFrom(start int, p string) (at, error) {
	t := at{dir: -1}
	trimmed := strings.TrimRight(p, "/")
	t.trailing = len(trimmed) < len(p)
	if trimmed == "" {
		// "/" (or "//"): the root itself.
		t.dir, t.name = dup(c.gd.root), ""
		t.trailing = false
	} else {
		dir, name := "", trimmed
		if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
			dir, name = trimmed[:i+1], trimmed[i+1:]
		}
		t.name = name
		var err error
		if dir == "" {
			t.dir = dup(start)
		} else if t.dir, err = c.resolve(start, dir); err != nil {
			return t, err
		}
	}
	var err error
	if t.path, err = fdPath(t.dir); err != nil {
		t.close()
		return at{dir: -1}, err
	}
	if err := c.procAllowed(t.dir, t.path); err != nil {
		t.close()
		return at{dir: -1}, err
	}
	if !c.gd.onSandboxMount(t.dir) {
		t.close()
		return at{dir: -1}, unix.EACCES
	}
	return t, nil
}

// writable refuses to make anything in t's directory, as its mount
// (read-only: EROFS) and then the sandbox's Landlock rules (EACCES)
// would.
func (c *guardCall) writable(t at) error {
	if readOnly(t.dir) {
		return unix.EROFS
	}
	if !c.gd.allows(t.path, llWrite) {
		return unix.EACCES
	}
	return nil
}

// readOnly reports whether fd lies on a read-only mount.
func readOnly(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
}

// fileWritable refuses to write the existing file at t (st), as its mount
// would (a regular file, directory or link on a read-only one: EROFS) and
// then the sandbox's Landlock rules (EACCES).
func (c *guardCall) fileWritable(t at, st unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR, unix.S_IFLNK:
		obj, err := unix.Openat(t.dir, t.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		ro := readOnly(obj)
		unix.Close(obj)
		if ro {
			return unix.EROFS
		}
	}
	if !c.gd.allows(t.full(), llWrite) {
		return unix.EACCES
	}
	return nil
}

// reachable refuses, as the mounts and the Landlock rules would, what the
// object obj (at path p) is not allowed for: want.
func (c *guardCall) reachable(obj int, p string, want llRight) error {
	if !c.gd.onSandboxMount(obj) || !c.gd.allows(p, want) {
		return unix.EACCES
	}
	return nil
}

func dup(fd int) int {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return d
}

// fdPath is the path of what fd is open on, as the sandbox sees it: the
// kernel writes it from the root of the mount namespace fd lies in, the
// sandbox's.
func fdPath(fd int) (string, error) {
	var buf [unix.PathMax + 1]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// resolve opens, with O_PATH, the directory p (every symbolic link in it
// followed) from start, or from the root when p is absolute, as the
// thread would reach it. The kernel resolves it, confined to the root or
// below start; what that refuses — ".." above start, an absolute link, a
// link of /proc — is walked one name at a time (walk).
func (c *guardCall) resolve(start int, p string) (int, error) {
	var fd int
	var err error
	if p[0] == '/' {
		fd, err = openat2(c.gd.root, "."+p, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
	} else {
		fd, err = openat2(start, p, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
	}
	// ENOENT too: /proc/self means nothing to the guard's own thread (it
	// is in no process of the sandbox's pid namespace).
	if err != unix.EXDEV && err != unix.ELOOP && err != unix.ENOENT {
		return fd, err
	}
	return c.walk(dup(start), p)
}

// walk resolves p from cur (which it takes and closes; the root for an
// absolute p) one name at a time: symbolic links are followed, the last
// one's too, ".." stops at the root, and in /proc "self" and "thread-self"
// name the thread's own entries and the links of its own entries (fd/N,
// cwd, root) lead where its own would.
func (c *guardCall) walk(cur int, p string) (int, error) {
	if cur < 0 {
		return -1, unix.EMFILE
	}
	names := strings.Split(p, "/")
	if p != "" && p[0] == '/' {
		unix.Close(cur)
		cur = dup(c.gd.root)
	}
	for len(names) > 0 {
		name := names[0]
		names = names[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if id, err := identify(cur); err == nil && id == c.gd.rootID {
				continue
			}
			next, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			unix.Close(cur)
			if err != nil {
				return -1, err
			}
			cur = next
			continue
		}
		next, err := unix.Openat(cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(cur)
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			unix.Close(cur)
			cur = next
			continue
		}
		// A symbolic link.
		if c.links++; c.links > maxLinks {
			unix.Close(next)
			unix.Close(cur)
			return -1, unix.ELOOP
		}
		if onProc(cur) {
			obj, more, err := c.procLink(cur, name, next)
			unix.Close(next)
			unix.Close(cur)
			if err != nil {
				return -1, err
			}
			if more != "" {
				names = append(strings.Split(more, "/"), names...)
			}
			cur = obj
			continue
		}
		var buf [unix.PathMax + 1]byte
		n, err := unix.Readlinkat(next, "", buf[:])
		unix.Close(next)
		if err != nil {
			unix.Close(cur)
			return -1, err
		}
		target := string(buf[:n])
		if strings.HasPrefix(target, "/") {
			unix.Close(cur)
			cur = dup(c.gd.root)
		}
		names = append(strings.Split(target, "/"), names...)
	}
	return cur, nil
}

// onProc reports whether fd lies on a proc file system.
func onProc(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// procRootIno is the inode number of a proc file system's root.
const procRootIno = 1

// procLink follows the link name (open as link, O_PATH|O_NOFOLLOW) of the
// proc directory dir as the thread would: "self" and "thread-self" at the
// root name its own directory (returned as more, names to walk from dir),
// the links of a process's directory (fd/N, cwd, root, exe) are followed
// by the kernel — only the thread's own process's: the guard may reach
// what the thread may not (another process's memory), so other processes'
// entries are refused — and the other links of the root (mounts, net) are
// read.
func (c *guardCall) procLink(dir int, name string, link int) (obj int, more string, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return -1, "", err
	}
	if st.Ino == procRootIno {
		switch name {
		case "self":
			return dup(dir), strconv.Itoa(c.proc.tgid), nil
		case "thread-self":
			return dup(dir), strconv.Itoa(c.proc.tgid) + "/task/" + strconv.Itoa(c.proc.tid), nil
		}
		var buf [unix.PathMax + 1]byte
		n, err := unix.Readlinkat(link, "", buf[:])
		if err != nil {
			return -1, "", err
		}
		if bytes.HasPrefix(buf[:n], []byte("/")) {
			return dup(c.gd.root), string(buf[:n]), nil
		}
		return dup(dir), string(buf[:n]), nil
	}
	p, err := fdPath(dir)
	if err != nil {
		return -1, "", err
	}
	if err := c.procAllowed(dir, p); err != nil {
		return -1, "", err
	}
	obj, err = unix.Openat(dir, name, unix.O_PATH|unix.O_CLOEXEC, 0)
	return obj, "", err
}

// procAllowed refuses a directory of /proc that belongs to another
// process than the thread's (dir's path p): the guard may reach there what
// the thread may not.
func (c *guardCall) procAllowed(dir int, p string) error {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok || !onProc(dir) {
		return nil
	}
	pid, _, _ := strings.Cut(rest, "/")
	if n, err := strconv.Atoi(pid); err == nil && n != c.proc.tgid {
		return unix.EACCES
	}
	return nil
}

// refuse returns the guard's refusal of making (or opening for writing,
// linking, renaming) full, or nil.
func (c *guardCall) refuse(full string, carries bool) *guardRefusal {
	var r *spec.Refusal
	if carries {
		r = c.gd.g.Carries(full)
	} else {
		r = c.gd.g.Refuses(full)
	}
	if r == nil {
		return nil
	}
	if r.GitDir != "" && c.gd.madeGitDir(r.GitDir) {
		// Looked at after the run (checkMade).
		c.gd.made = append(c.gd.made, full)
		return nil
	}
	return &guardRefusal{path: full, reason: r.Reason}
}

// makesRepo refuses the entry t would add when it makes its directory a
// git repository that runs commands (spec.MakesRepo).
func (c *guardCall) makesRepo(t at) *guardRefusal {
	g := c.gd.g
	if !slices.Contains(spec.RepoNames, t.name) || g.InGitDir(t.path) || !g.InRoot(t.path) {
		return nil
	}
	has := func(n string) bool {
		var st unix.Stat_t
		return unix.Fstatat(t.dir, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	if spec.MakesRepo(t.name, has) {
		return &guardRefusal{path: t.full(), reason: "it would make " + t.path + " a git repository (HEAD, objects, refs and a config or hooks), whose commands git on the host would run"}
	}
	return nil
}

// withUmask runs make with the thread's umask as the guard's.
func (c *guardCall) withUmask(make func() error) error {
	if u := c.proc.umask | c.gd.floor; u != c.gd.umask {
		unix.Umask(u)
		c.gd.umask = u
	}
	return make()
}

// stat says what is at t's name, not following a link.
func (t at) stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(t.dir, t.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// open opens p as open(2) would for the thread, with flags and mode.
func (c *guardCall) open(dirfd int32, p string, flags int, mode uint32) outcome {
	out := outcome{fd: -1, cloexec: flags&unix.O_CLOEXEC != 0}
	flags &^= unix.O_CLOEXEC
	if flags&unix.O_TMPFILE == unix.O_TMPFILE {
		// An unnamed file in the directory p: nothing to refuse until it
		// is linked (linkat stops here too).
		t, err := c.parent(dirfd, p)
		if err != nil {
			out.err = err
			return out
		}
		defer t.close()
		dir, err := c.walk(dup(t.dir), t.name)
		if err != nil {
			out.err = err
			return out
		}
		defer unix.Close(dir)
		if p, err := fdPath(dir); err != nil || c.reachable(dir, p, llWrite) != nil {
			out.err = unix.EACCES
			return out
		}
		out.err = c.withUmask(func() error {
			out.fd, out.err = unix.Openat(dir, ".", flags|unix.O_CLOEXEC|unix.O_NOCTTY, mode)
			return out.err
		})
		return out
	}
	follow := flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
	start := -1
	for tries := 0; ; tries++ {
		var t at
		var err error
		if start >= 0 {
			t, err = c.parentFrom(start, p)
			unix.Close(start)
			start = -1
		} else {
			t, err = c.parent(dirfd, p)
		}
		if err != nil {
			out.err = err
			return out
		}
		if t.name == "" || t.name == "." || t.name == ".." || t.trailing {
			// A directory, or a path that must be one: opened for
			// writing or creating, EISDIR (or what resolving it gives).
			dir, err := c.walk(dup(t.dir), t.name)
			t.close()
			if err == nil {
				unix.Close(dir)
				err = unix.EISDIR
			}
			out.err = err
			return out
		}
		st, serr := t.stat()
		if serr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK && follow {
			if c.links++; c.links > maxLinks {
				t.close()
				out.err = unix.ELOOP
				return out
			}
			if onProc(t.dir) {
				out = c.reopenProc(t, flags, out.cloexec)
				t.close()
				return out
			}
			var buf [unix.PathMax + 1]byte
			n, err := unix.Readlinkat(t.dir, t.name, buf[:])
			if err != nil {
				t.close()
				out.err = err
				return out
			}
			// Resolve the link's target from the link's directory.
			p = string(buf[:n])
			start = t.dir
			continue
		}
		if r := c.refuse(t.full(), false); r != nil {
			t.close()
			out.refused = r
			return out
		}
		if serr == nil && slices.Contains(c.gd.g.Names, t.name) && flags&(unix.O_ACCMODE|unix.O_TRUNC) != 0 &&
			!slices.Contains(c.gd.made, t.full()) {
			// A repository's .git file names its git directory: pointed
			// elsewhere, it hands git hooks and a config of the command's.
			// (One made during the run, git rewrites; checkMade looks.)
			t.close()
			out.refused = &guardRefusal{path: t.full(), reason: "protected: the .git of a repository"}
			return out
		}
		// Opened only to read (O_CREAT of a file that is there, a lock
		// file), it must be readable; anything else writes.
		switch {
		case serr != nil:
			out.err = c.writable(t)
		case flags&unix.O_ACCMODE == unix.O_RDONLY && flags&unix.O_TRUNC == 0:
			if !c.gd.allows(t.full(), llReadAll) {
				out.err = unix.EACCES
			}
		default:
			out.err = c.fileWritable(t, st)
		}
		if out.err != nil {
			t.close()
			return out
		}
		if serr != nil && flags&unix.O_CREAT != 0 {
			if r := c.makesRepo(t); r != nil {
				t.close()
				out.refused = r
				return out
			}
		}
		if serr == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFIFO:
				if flags&unix.O_NONBLOCK == 0 && flags&unix.O_ACCMODE != unix.O_RDWR {
					// It waits for the other end: on a thread of its own.
					out = c.openAsync(t, flags, out.cloexec)
					t.close()
					return out
				}
			case unix.S_IFCHR:
				if unix.Major(st.Rdev) == 5 && unix.Minor(st.Rdev) == 0 {
					out = c.openTTY(flags, out.cloexec)
					t.close()
					return out
				}
			}
		}
		out.err = c.withUmask(func() error {
			out.fd, out.err = unix.Openat(t.dir, t.name, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
			return out.err
		})
		if out.err == nil && serr != nil && slices.Contains(c.gd.g.Names, t.name) {
			// A new .git file (a worktree's, a submodule's): what it
			// names is looked at after the run (checkMade).
			c.gd.made = append(c.gd.made, t.full())
		}
		t.close()
		if out.err == unix.ELOOP && follow && tries < 4 {
			// A link appeared since the look: look again.
			continue
		}
		return out
	}
}

// reopenProc opens the proc link t (/proc/self/fd/N, /dev/stdout) as the
// thread would: what it leads to, again, with flags. Its path is
// refused as any other's.
func (c *guardCall) reopenProc(t at, flags int, cloexec bool) outcome {
	out := outcome{fd: -1, cloexec: cloexec}
	link, err := unix.Openat(t.dir, t.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		out.err = err
		return out
	}
	obj, more, err := c.procLink(t.dir, t.name, link)
	unix.Close(link)
	if err != nil {
		out.err = err
		return out
	}
	if more != "" {
		// "self" and the root's other links: the rest is a path.
		dir, err := c.walk(obj, more)
		if err != nil {
			out.err = err
			return out
		}
		obj = dir
	}
	defer unix.Close(obj)
	p, err := fdPath(obj)
	if err != nil {
		out.err = err
		return out
	}
	if r := c.refuse(p, false); r != nil {
		out.refused = r
		return out
	}
	want := llWrite
	if flags&unix.O_ACCMODE == unix.O_RDONLY && flags&unix.O_TRUNC == 0 {
		want = llReadAll
	}
	if strings.HasPrefix(p, "/") {
		// (pipes and sockets lie on no mount of the sandbox's, and
		// Landlock does not look at them)
		if out.err = c.reachable(obj, p, want); out.err != nil {
			return out
		}
	}
	flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW
	out.fd, out.err = unix.Open("/proc/self/fd/"+strconv.Itoa(obj), flags|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	return out
}

// openAsync opens the FIFO t for the thread on another thread, which
// answers the call when the other end comes: the guard's own must not
// wait, every process of the sandbox would wait with it.
func (c *guardCall) openAsync(t at, flags int, cloexec bool) outcome {
	obj, err := unix.Openat(t.dir, t.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return outcome{fd: -1, err: err}
	}
	listener, id := c.listener, c.id
	go func() {
		defer unix.Close(obj)
		resp := seccompNotifResp{ID: id}
		if _, err := asSandbox(false); err != nil {
			resp.Error = -int32(unix.EACCES)
			_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
			return
		}
		fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(obj), flags|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = addFD(listener, id, fd, cloexec)
			unix.Close(fd)
			if err == nil {
				return
			}
		}
		errno, ok := errors.AsType[unix.Errno](err)
		if !ok {
			errno = unix.EACCES
		}
		resp.Error = -int32(errno)
		_ = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}()
	return outcome{fd: -1, async: true}
}

// openTTY opens /dev/tty for the thread: its controlling terminal, found
// among its standard descriptors (the guard's own /dev/tty is cordon's),
// or the sandbox's terminal of that number. Without one, ENXIO.
func (c *guardCall) openTTY(flags int, cloexec bool) outcome {
	out := outcome{fd: -1, cloexec: cloexec, err: unix.ENXIO}
	tty := ttyNr(c.proc.dir)
	if tty == 0 {
		return out
	}
	flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW
	for fd := range 3 {
		var st unix.Stat_t
		name := "fd/" + strconv.Itoa(fd)
		if unix.Fstatat(c.proc.dir, name, &st, 0) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == tty {
			// The thread's own descriptor of it: reopened as its /dev/tty
			// would be.
			out.fd, out.err = unix.Openat(c.proc.dir, name, flags|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			return out
		}
	}
	if unix.Major(tty) == 136 {
		out.fd, out.err = c.gd.openInRoot("/dev/pts/"+strconv.Itoa(int(unix.Minor(tty))), flags|unix.O_NOCTTY)
	}
	return out
}

// ttyNr is the controlling terminal of the process of the /proc directory
// dir, 0 for none.
func ttyNr(dir int) uint64 {
	data, err := readAt(dir, "stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 5 {
		return 0
	}
	n, _ := strconv.ParseInt(f[4], 10, 64)
	return uint64(uint32(n))
}

func readAt(dir int, name string) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 1024)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// mkdir makes the directory p for the thread.
func (c *guardCall) mkdir(dirfd int32, p string, mode uint32) error {
	t, err := c.parent(dirfd, p)
	if err != nil {
		return err
	}
	defer t.close()
	if t.name == "" || t.name == "." || t.name == ".." {
		return unix.EEXIST
	}
	if r := c.refuseMaking(t, false); r != nil {
		return r
	}
	if err := c.withUmask(func() error { return unix.Mkdirat(t.dir, t.name+trailing(t), mode) }); err != nil {
		return err
	}
	if c.gd.g.IsGitDir(t.full()) {
		c.gd.madeGitDirAt(t.dir, t.name)
	}
	return nil
}

func trailing(t at) string {
	if t.trailing {
		return "/"
	}
	return ""
}

// refusedError carries a refusal as the error of a call.
type refusedError struct{ r *guardRefusal }

func (e refusedError) Error() string { return e.r.reason }

// refuseMaking returns the guard's refusal of a new entry at t (one that
// may bring a directory's content with carries), as an error, or what the
// sandbox's Landlock rules say to making anything there; nil when it may
// be made.
func (c *guardCall) refuseMaking(t at, carries bool) error {
	if err := c.writable(t); err != nil {
		return err
	}
	if r := c.refuse(t.full(), carries); r != nil {
		return refusedError{r}
	}
	if r := c.makesRepo(t); r != nil {
		return refusedError{r}
	}
	return nil
}

// mknod makes the node p for the thread.
func (c *guardCall) mknod(dirfd int32, p string, mode uint32, dev int) error {
	t, err := c.parent(dirfd, p)
	if err != nil {
		return err
	}
	defer t.close()
	if t.name == "" || t.name == "." || t.name == ".." {
		return unix.EEXIST
	}
	if err := c.refuseMaking(t, false); err != nil {
		return err
	}
	return c.withUmask(func() error { return unix.Mknodat(t.dir, t.name+trailing(t), mode, dev) })
}

// symlink makes the link p to target for the thread. A link can lead to a
// directory, which brings what it holds to p.
func (c *guardCall) symlink(target string, dirfd int32, p string) error {
	if target == "" {
		return unix.ENOENT
	}
	t, err := c.parent(dirfd, p)
	if err != nil {
		return err
	}
	defer t.close()
	if t.name == "" || t.name == "." || t.name == ".." {
		return unix.EEXIST
	}
	// In a git directory (it holds HEAD: git init probes for symbolic
	// links there, tXXXXXX), a name none of git's own entries take is no
	// submodule's git directory on its way to hooks.
	carries := !(hasHead(t.dir) && !slices.Contains(gitDirEntries, t.name) && c.gd.g.InGitDir(t.full()))
	if err := c.refuseMaking(t, carries); err != nil {
		return err
	}
	return unix.Symlinkat(target, t.dir, t.name+trailing(t))
}

// gitDirEntries are the names of a git directory's entries the guard
// decides on (spec.Guard.GitDir), and what makes one.
var gitDirEntries = []string{"hooks", "config", "config.worktree", "commondir", "modules", "worktrees", ".git"}

// hasHead reports whether the directory dir holds a regular file HEAD.
func hasHead(dir int) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, "HEAD", &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// link makes the hard link newp of oldp for the thread. A protected file
// is not linked elsewhere (where it could be written), nor anything where
// one belongs.
func (c *guardCall) link(olddirfd int32, oldp string, newdirfd int32, newp string, flags int) error {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL
	}
	dst, err := c.parent(newdirfd, newp)
	if err != nil {
		return err
	}
	defer dst.close()
	if dst.name == "" || dst.name == "." || dst.name == ".." {
		return unix.EEXIST
	}
	if err := c.refuseMaking(dst, false); err != nil {
		return err
	}
	if oldp == "" && flags&unix.AT_EMPTY_PATH != 0 {
		obj, err := c.base(olddirfd)
		if err != nil {
			return err
		}
		defer unix.Close(obj)
		if err := c.linkable(obj); err != nil {
			return err
		}
		return unix.Linkat(obj, "", dst.dir, dst.name+trailing(dst), unix.AT_EMPTY_PATH)
	}
	src, err := c.parent(olddirfd, oldp)
	if err != nil {
		return err
	}
	defer src.close()
	if flags&unix.AT_SYMLINK_FOLLOW != 0 {
		// What the name leads to: a file, or what a proc link leads to
		// (an O_TMPFILE file is published so, by /proc/self/fd/N).
		obj, err := c.walk(dup(src.dir), src.name)
		if err != nil {
			return err
		}
		defer unix.Close(obj)
		if err := c.linkable(obj); err != nil {
			return err
		}
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(obj), dst.dir, dst.name+trailing(dst), unix.AT_SYMLINK_FOLLOW)
	}
	if r := c.refuse(src.full(), false); r != nil {
		return refusedError{r}
	}
	if err := c.writable(src); err != nil {
		return err
	}
	return unix.Linkat(src.dir, src.name+trailing(src), dst.dir, dst.name+trailing(dst), 0)
}

// linkable refuses to link the file obj (reached by a descriptor or a
// proc link) when it is protected, or lies where the sandbox may not
// write.
func (c *guardCall) linkable(obj int) error {
	p, err := fdPath(obj)
	if err != nil {
		return err
	}
	if r := c.refuse(strings.TrimSuffix(p, " (deleted)"), false); r != nil {
		return refusedError{r}
	}
	return c.reachable(obj, parentDir(p), llWrite)
}

// rename renames oldp to newp for the thread. What is protected is not
// moved away; nothing is moved where a protected name is, nor a
// directory (or link) where one would lie below it.
func (c *guardCall) rename(olddirfd int32, oldp string, newdirfd int32, newp string, flags uint) error {
	src, err := c.parent(olddirfd, oldp)
	if err != nil {
		return err
	}
	defer src.close()
	dst, err := c.parent(newdirfd, newp)
	if err != nil {
		return err
	}
	defer dst.close()
	for _, t := range []at{src, dst} {
		if t.name == "" || t.name == "." || t.name == ".." {
			return unix.EBUSY
		}
	}
	st, err := src.stat()
	if err != nil {
		return err
	}
	if err := c.writable(src); err != nil {
		return err
	}
	if r := c.refuse(src.full(), false); r != nil {
		return refusedError{r}
	}
	if r := c.gd.g.Refuses(dst.full()); r != nil && r.Content != spec.NoContent && st.Mode&unix.S_IFMT == unix.S_IFREG {
		// git rewriting a config: decided by what it would hold.
		if err := c.writable(dst); err != nil {
			return err
		}
		return c.renameChecked(src, dst, r.Content, flags)
	}
	// (a file renamed onto a .git repoints a repository)
	carries := st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Mode&unix.S_IFMT == unix.S_IFLNK || slices.Contains(c.gd.g.Names, dst.name)
	if err := c.refuseMaking(dst, carries); err != nil {
		return err
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		// The other way too.
		dt, err := dst.stat()
		if err != nil {
			return err
		}
		if r := c.refuse(dst.full(), false); r != nil {
			return refusedError{r}
		}
		if err := c.refuseMaking(src, dt.Mode&unix.S_IFMT == unix.S_IFDIR || dt.Mode&unix.S_IFMT == unix.S_IFLNK); err != nil {
			return err
		}
	}
	// The kernel refuses to move a mount point of the mount namespace of
	// the one renaming (EBUSY): the pins and the protected paths' binds.
	// The guard's thread is in the host's: the sandbox's own are found
	// where its names lead, on its mounts.
	for _, t := range []at{src, dst} {
		if mountRoot(t) {
			// Recorded: the path as the guard saw it says which bind.
			return refusedError{&guardRefusal{path: t.full(), reason: "a mount point in the sandbox (a protected path's bind, or a pin): nothing is renamed onto or from it", errno: unix.EBUSY}}
		}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && c.gd.g.MovedIn(src.full(), dst.full()) {
		if err := c.checkMoved(src, dst.full()); err != nil {
			return err
		}
	}
	return unix.Renameat2(src.dir, src.name+trailing(src), dst.dir, dst.name+trailing(dst), flags)
}

// mountRoot reports whether t's name is a mount point in the sandbox:
// looked up from t's directory, which lies on the sandbox's mounts, it
// leads to the root of a mount.
func mountRoot(t at) bool {
	var st unix.Statx_t
	err := unix.Statx(t.dir, t.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, 0, &st)
	return err == nil && st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}

// movedMax bounds the look into a directory a rename moves in.
const movedMax = 10000

// checkMoved refuses the rename of the directory src to to when what it
// holds would be refused there (a denied pattern that reaches to but not
// where it is, spec.Guard.MovedIn). Nothing of the sandbox's can add to it
// meanwhile: what makes a name waits for this thread.
func (c *guardCall) checkMoved(src at, to string) error {
	dir, err := unix.Openat(src.dir, src.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	seen := 0
	var look func(dir int, rel string) error
	look = func(dir int, rel string) error {
		defer unix.Close(dir)
		f := os.NewFile(uintptr(dup(dir)), "")
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return err
		}
		for _, n := range names {
			if seen++; seen > movedMax {
				return refusedError{&guardRefusal{path: to, reason: "a directory of more than " + strconv.Itoa(movedMax) + " entries moved where a denied pattern reaches: too large to check"}}
			}
			p := to + rel + "/" + n
			if r := c.refuse(p, false); r != nil {
				return refusedError{r}
			}
			sub, err := unix.Openat(dir, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // not a directory
			}
			if err := look(sub, rel+"/"+n); err != nil {
				return err
			}
		}
		return nil
	}
	return look(dir, "")
}
