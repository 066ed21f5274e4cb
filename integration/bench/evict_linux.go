package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// evict drops the page cache of the file at path (POSIX_FADV_DONTNEED);
// pages mapped by a running process stay.
func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
