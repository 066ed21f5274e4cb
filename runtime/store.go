//go:build unix

package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The violation store: JSON lines in StoreDir, the current file and one
// rotated generation, appended to under an exclusive lock on a separate
// lock file (a lock on the data file would not survive its rotation).
const (
	storeFile = "violations.jsonl"
	storeOld  = "violations.jsonl.1"
	storeLock = "violations.lock"
	// storeMax is the size at which the current file is rotated: the store
	// holds at most about twice this.
	storeMax = 4 << 20
)

// StoreDir is where violations are recorded: $XDG_STATE_HOME/cordon when
// it is set, otherwise /var/lib/cordon for root and
// ~/.local/state/cordon for everyone else.
func StoreDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "cordon")
	}
	if os.Geteuid() == 0 {
		return "/var/lib/cordon"
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "cordon-state-"+fmt.Sprint(os.Geteuid()))
	}
	return filepath.Join(home, ".local", "state", "cordon")
}

// lockStore takes the store's lock, creating the directory.
func lockStore(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, storeLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// AppendViolations adds vs to the store in dir, rotating it when it has
// grown past its bound. Concurrent runs append whole lines, in turn.
func AppendViolations(dir string, vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	lock, err := lockStore(dir)
	if err != nil {
		return fmt.Errorf("violation store: %w", err)
	}
	defer lock.Close()
	path := filepath.Join(dir, storeFile)
	if fi, err := os.Stat(path); err == nil && fi.Size()+int64(buf.Len()) > storeMax {
		if err := os.Rename(path, filepath.Join(dir, storeOld)); err != nil {
			return fmt.Errorf("violation store: rotate: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("violation store: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("violation store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("violation store: %w", err)
	}
	return nil
}

// Filter selects violations from the store.
type Filter struct {
	// Since keeps those recorded at or after it (zero: all).
	Since time.Time
	// Run keeps one run's (empty: all runs).
	Run string
	// Kind keeps one kind (empty: all kinds).
	Kind string
}

// ReadViolations returns the violations in the store in dir that f
// selects, oldest first. A line that does not parse (a write cut short by
// a full disk) is skipped.
func ReadViolations(dir string, f Filter) ([]Violation, error) {
	lock, err := os.Open(filepath.Join(dir, storeLock))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("violation store: %w", err)
	}
	defer lock.Close()
	// Shared: no rotation while reading.
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_SH); err != nil {
		return nil, fmt.Errorf("violation store: %w", err)
	}
	var out []Violation
	for _, name := range []string{storeOld, storeFile} {
		file, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("violation store: %w", err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var v Violation
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				continue
			}
			if (f.Run != "" && v.Run != f.Run) || (f.Kind != "" && v.Kind != f.Kind) || v.Time.Before(f.Since) {
				continue
			}
			out = append(out, v)
		}
		err = sc.Err()
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("violation store: %s: %w", name, err)
		}
	}
	return out, nil
}
