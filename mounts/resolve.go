package mounts

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// maxSymlinks bounds symlink resolution, as the kernel does (ELOOP).
const maxSymlinks = 40

// Resolve returns the real path of the absolute path p on the host file
// system fsys (rooted at "/"), following every symlink on the way as the
// kernel would, and the file's information. A symlink cannot take the
// resolution above the root. The error wraps fs.ErrNotExist when some
// component is missing.
func Resolve(fsys fs.FS, p string) (string, fs.FileInfo, error) {
	if !path.IsAbs(p) {
		return "", nil, fmt.Errorf("resolve %q: not an absolute path", p)
	}
	var (
		done = "/"
		// Not path.Clean: "link/.." is not "." when link is a symlink.
		rest      = strings.Split(p, "/")
		followed  int
		lastInfo  fs.FileInfo
		lastFound bool
	)
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			done = path.Dir(done)
			lastFound = false
			continue
		}
		next := path.Join(done, name)
		fi, err := fs.Lstat(fsys, rel(next))
		if err != nil {
			return "", nil, fmt.Errorf("resolve %q: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, lastInfo, lastFound = next, fi, true
			continue
		}
		followed++
		if followed > maxSymlinks {
			return "", nil, fmt.Errorf("resolve %q: too many levels of symbolic links", p)
		}
		target, err := fs.ReadLink(fsys, rel(next))
		if err != nil {
			return "", nil, fmt.Errorf("resolve %q: %w", p, err)
		}
		if path.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
		lastFound = false
	}
	if !lastFound {
		fi, err := fs.Stat(fsys, rel(done))
		if err != nil {
			return "", nil, fmt.Errorf("resolve %q: %w", p, err)
		}
		lastInfo = fi
	}
	return done, lastInfo, nil
}

// rel turns an absolute path into a name for fs.FS.
func rel(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}
