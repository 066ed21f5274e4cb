package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NewID returns a fresh sandbox id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}

func stateFile(root, id, name string) string {
	return filepath.Join(root, id, name)
}

// startTime returns the start time of a process in clock ticks since boot
// (field 22 of /proc/PID/stat), or 0 when it does not exist or has exited
// (a zombie). With the pid it identifies a process across pid reuse.
func startTime(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may contain spaces and parentheses: skip past the
	// last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); start time is field 22.
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return 0
	}
	t, _ := strconv.ParseUint(fields[19], 10, 64)
	return t
}

// alive reports whether the process pid that started at start still runs.
func alive(pid int, start uint64) bool {
	return pid > 0 && start != 0 && startTime(pid) == start
}
