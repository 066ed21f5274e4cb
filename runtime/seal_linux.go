package runtime

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/opencontainers/runc/libcontainer/exeseal"
	"golang.org/x/sys/unix"
)

// sealedEnv carries cordon's path on disk across SealSelf's execve: the
// sealed process's own /proc/self/exe is a memory file.
const sealedEnv = "_CORDON_SEALED_FROM"

// executable is cordon's binary on disk: what the sandbox's init is bound
// from (spec.Host.Executable) and what names a compiled seccomp program.
var executable = sync.OnceValues(func() (string, error) {
	if path := os.Getenv(sealedEnv); path != "" && exeseal.IsSelfExeCloned() {
		return path, nil
	}
	return os.Executable()
})

func init() {
	// Read before anything can start a process: it is nobody else's.
	if path := os.Getenv(sealedEnv); path != "" {
		_, _ = executable()
		os.Unsetenv(sealedEnv)
	}
}

// Executable returns cordon's binary on disk, as os.Executable does, also
// in a process SealSelf made.
func Executable() (string, error) { return executable() }

// SealSelf executes this process again from a sealed copy of its binary in
// memory — what libcontainer makes for every sandbox's setup process,
// against CVE-2019-5736 — so that libcontainer finds it sealed already
// and copies it no more: cordon serve makes many sandboxes, and a copy
// costs a rootless caller several milliseconds each. It returns nil at
// once in a sealed process, and otherwise only on failure.
func SealSelf() error {
	if exeseal.IsSelfExeCloned() {
		return nil
	}
	path, err := os.Executable()
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	defer self.Close()
	fi, err := self.Stat()
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	sealed, err := exeseal.CloneBinary(self, fi.Size(), path, StateRoot())
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	if !exeseal.IsCloned(sealed) {
		sealed.Close()
		return fmt.Errorf("seal: no sealed memory file on this kernel")
	}
	env := append(os.Environ(), sealedEnv+"="+path)
	err = unix.Exec("/proc/self/fd/"+strconv.Itoa(int(sealed.Fd())), os.Args, env)
	sealed.Close()
	return fmt.Errorf("seal: %w", err)
}
