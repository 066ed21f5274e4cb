package mounts

import (
	"slices"

	"golang.org/x/sys/unix"

	"cordon.dev/cordon/internal/dirent"
)

// Entries implements entriesFS with getdents(2): nothing is allocated for
// the entries that are neither a subdirectory nor one of names.
func (h osRoot) Entries(dir string, names []string) (has, subdirs []string, err error) {
	// Not through a symlink: what is below a link is not the root's.
	fd, err := unix.Open("/"+dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(fd)
	err = dirent.Read(fd, make([]byte, 16<<10), func(name []byte, isDir bool) {
		if i := slices.IndexFunc(names, func(n string) bool { return n == string(name) }); i >= 0 {
			has = append(has, names[i])
		}
		if isDir {
			subdirs = append(subdirs, string(name))
		}
	})
	slices.Sort(has)
	slices.Sort(subdirs)
	return has, subdirs, err
}
