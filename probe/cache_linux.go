package probe

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A cache directory holds a file per key (cachePath), so that callers
// with different keys — two cordon binaries, an integration test's and the
// installed one — do not probe over each other's result; at most
// maxCacheEntries, the oldest removed when a new one is written.
const maxCacheEntries = 8

// cachePath is key's file in dir: probe-HASH.json, HASH from the key.
func cachePath(dir string, key cacheKey) string {
	data, _ := json.Marshal(key)
	sum := sha256.Sum256(data)
	return filepath.Join(dir, "probe-"+hex.EncodeToString(sum[:8])+".json")
}

// cacheSchema changes whenever Result or the probes change meaning: an
// older cache is then ignored.
const cacheSchema = 2

// maxCacheSize bounds what Load reads from a cache file.
const maxCacheSize = 1 << 20

// CacheDir returns where Load keeps its cache for the caller:
// $XDG_CACHE_HOME/cordon when XDG_CACHE_HOME is an absolute path;
// otherwise /var/cache/cordon for root and ~/.cache/cordon for everyone
// else. The boot id in the key makes the cache per boot wherever it is.
func CacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "cordon")
	}
	if os.Geteuid() == 0 {
		return "/var/cache/cordon"
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		return filepath.Join(home, ".cache", "cordon")
	}
	return ""
}

// cacheKey is everything a cached result depends on. Two keys are equal
// when the cached facts still hold.
type cacheKey struct {
	Schema int    `json:"schema"`
	BootID string `json:"bootId"`
	// Binary identifies the probing binary: path, inode, size, times and
	// build version.
	Binary string `json:"binary"`
	EUID   int    `json:"euid"`
	EGID   int    `json:"egid"`
	// The caller's user and mount namespaces (a container, an unshared
	// shell).
	UserNS  uint64 `json:"userNs"`
	MountNS uint64 `json:"mountNs"`
	// Cgroup is the caller's v2 cgroup: delegation depends on it.
	Cgroup string `json:"cgroup"`
	// The caller's confinement.
	SeccompFilters int    `json:"seccompFilters"`
	NoNewPrivs     bool   `json:"noNewPrivs"`
	AppArmor       string `json:"apparmor"`
	// Sysctls are the user namespace sysctls, "name=value;...".
	Sysctls string `json:"sysctls"`
}

// cacheEntry is the content of the cache file.
type cacheEntry struct {
	Key    cacheKey `json:"key"`
	Result Result   `json:"result"`
}

// currentKey returns the key of a probe by the caller with exe.
func currentKey(exe string) (cacheKey, error) {
	k := cacheKey{Schema: cacheSchema, BootID: bootID(), EUID: os.Geteuid(), EGID: os.Getegid()}
	if k.BootID == "" {
		return k, errors.New("no boot id")
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return k, err
		}
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	var st unix.Stat_t
	if err := unix.Stat(exe, &st); err != nil {
		return k, err
	}
	k.Binary = fmt.Sprintf("%s dev=%d ino=%d size=%d mtime=%d.%d ctime=%d.%d version=%s",
		exe, st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec, version())
	k.UserNS, k.MountNS = nsInode("user"), nsInode("mnt")
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		k.Cgroup, _ = ownV2Cgroup(parseProcCgroup(string(data)))
	}
	status := readTrim("/proc/self/status")
	k.SeccompFilters, _ = strconv.Atoi(statusField(status, "Seccomp_filters"))
	k.NoNewPrivs = statusField(status, "NoNewPrivs") == "1"
	k.AppArmor = appArmorLabel()
	var s []string
	sys := sysctls()
	for _, name := range SysctlNames {
		if v, ok := sys[name]; ok {
			s = append(s, name+"="+v)
		}
	}
	k.Sysctls = strings.Join(s, ";")
	return k, nil
}

// memo keeps the last result of Load in this process.
var memo struct {
	sync.Mutex
	key cacheKey
	r   Result
	ok  bool
}

// Load returns the probe result for the caller: the one this process or an
// earlier one found on this boot, with this binary, for this caller, when
// the cache still holds it (Result.Cached is then set); otherwise it runs
// the probes and caches their result. A cache that cannot be written is
// no error: the next call probes again.
func Load(ctx context.Context, o Options) (Result, error) {
	key, keyErr := currentKey(o.Executable)
	useCache := keyErr == nil && !o.NoCache
	dir := o.CacheDir
	if dir == "" {
		dir = CacheDir()
	}
	if useCache && !o.Fresh {
		memo.Lock()
		if memo.ok && memo.key == key {
			r := memo.r
			memo.Unlock()
			return r, nil
		}
		memo.Unlock()
		if r, err := readCache(dir, key); err == nil {
			r.Cached = true
			remember(key, r)
			return r, nil
		}
	}
	r, err := Run(ctx, o)
	if err != nil {
		return r, err
	}
	if useCache && !transient(r) {
		_ = writeCache(dir, key, r)
		c := r
		c.Cached = true
		remember(key, c)
	}
	return r, nil
}

func remember(key cacheKey, r Result) {
	memo.Lock()
	defer memo.Unlock()
	memo.key, memo.r, memo.ok = key, r, true
}

// ownedPrivate reports whether st is owned by the caller and not writable by
// anyone else: another user must not plant facts cordon would trust.
func ownedPrivate(st *unix.Stat_t) bool {
	return int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0
}

// readCache returns the cached result for key. Anything unexpected — a
// file or directory not the caller's own or writable by others, a symlink,
// unknown fields, another key — is an error, and the cache is not used.
func readCache(dir string, key cacheKey) (Result, error) {
	if dir == "" {
		return Result{}, errors.New("no cache directory")
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return Result{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || !ownedPrivate(&st) {
		return Result{}, fmt.Errorf("cache directory %s is not a directory of uid %d closed to others", dir, os.Geteuid())
	}
	path := cachePath(dir, key)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return Result{}, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return Result{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || !ownedPrivate(&st) || st.Size > maxCacheSize {
		return Result{}, fmt.Errorf("cache file %s is not a regular file of uid %d closed to others", f.Name(), os.Geteuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCacheSize+1))
	if err != nil {
		return Result{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e cacheEntry
	if err := dec.Decode(&e); err != nil {
		return Result{}, fmt.Errorf("cache file %s: %w", f.Name(), err)
	}
	if dec.More() {
		return Result{}, fmt.Errorf("cache file %s: data after the entry", f.Name())
	}
	if e.Key != key || e.Result.EUID != key.EUID || e.Result.BootID != key.BootID {
		return Result{}, fmt.Errorf("cache file %s: another boot, binary or caller", f.Name())
	}
	return e.Result, nil
}

// writeCache replaces key's cache file atomically, then removes the
// oldest files beyond maxCacheEntries.
func writeCache(dir string, key cacheKey, r Result) error {
	if dir == "" {
		return errors.New("no cache directory")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || !ownedPrivate(&st) {
		return fmt.Errorf("cache directory %s is not a directory of uid %d closed to others", dir, os.Geteuid())
	}
	r.Cached = false
	data, err := json.Marshal(cacheEntry{Key: key, Result: r})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), cachePath(dir, key)); err != nil {
		return err
	}
	pruneCache(dir)
	return nil
}

// pruneCache keeps the newest maxCacheEntries cache files of dir, and
// removes the single probe.json of cordon's earlier releases.
func pruneCache(dir string) {
	_ = os.Remove(filepath.Join(dir, "probe.json"))
	paths, _ := filepath.Glob(filepath.Join(dir, "probe-*.json"))
	if len(paths) <= maxCacheEntries {
		return
	}
	type entry struct {
		path  string
		mtime int64
	}
	var es []entry
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			es = append(es, entry{p, st.Mtim.Nano()})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(b.mtime, a.mtime) })
	for _, e := range es[min(len(es), maxCacheEntries):] {
		_ = os.Remove(e.path)
	}
}
