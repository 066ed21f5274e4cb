package mounts

import (
	"io/fs"
	"os"
	"slices"
)

// entriesFS is a file system that can list a directory's subdirectories
// and say which of some names it holds without an fs.DirEntry for every
// entry (HostFS on Linux): what the searches below writable roots do for
// thousands of directories on every compilation.
type entriesFS interface {
	// Entries returns which of names the directory dir (an fs.FS path)
	// holds, as any kind of entry, and its subdirectories (symlinks are
	// not), both in name order.
	Entries(dir string, names []string) (has, subdirs []string, err error)
}

// HostFS is the host's file system from "/", as os.DirFS("/"), with a
// fast Entries where the system has one.
func HostFS() fs.FS {
	d := os.DirFS("/")
	if h, ok := d.(dirFS); ok {
		return osRoot{h}
	}
	return d
}

// dirFS is what os.DirFS implements. osRoot must keep all of it: with
// only fs.FS embedded, fs.Lstat falls back to Stat, which follows
// symlinks, and every symlink-safe resolution (Resolve, protected links,
// the mount checks' identities) would take a link for its target.
type dirFS interface {
	fs.FS
	fs.StatFS
	fs.ReadLinkFS
	fs.ReadDirFS
	fs.ReadFileFS
}

type osRoot struct{ dirFS }

// entries is Entries of fsys when it has one, otherwise from fs.ReadDir.
func entries(fsys fs.FS, dir string, names []string) (has, subdirs []string, err error) {
	if e, ok := fsys.(entriesFS); ok {
		return e.Entries(dir, names)
	}
	des, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range des {
		if slices.Contains(names, d.Name()) {
			has = append(has, d.Name())
		}
		if d.IsDir() {
			subdirs = append(subdirs, d.Name())
		}
	}
	return has, subdirs, nil
}
