package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/opencontainers/runtime-spec/specs-go"

	"cordon.dev/cordon/seccomp"
)

// seccompProgram returns the compiled program for the profile, opened for
// reading, in the format spec.InitSeccompFD describes. Programs are
// compiled once and kept under root/seccomp, named by a hash of the profile
// and of the cordon binary that compiled it: compiling costs milliseconds,
// opening the file microseconds.
func seccompProgram(root string, p *specs.LinuxSeccomp) (*os.File, error) {
	key, err := programKey(p)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "seccomp")
	path := filepath.Join(dir, key+".bpf")
	if f, err := os.Open(path); err == nil {
		return f, nil
	}
	prog, err := seccomp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("seccomp profile: %w", err)
	}
	data := binary.LittleEndian.AppendUint64(nil, uint64(prog.Flags))
	data = append(data, prog.Filter...)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("seccomp cache: %w", err)
	}
	// Written whole before it has a name, so that a cordon killed half
	// way leaves no partial program behind (see unnamedFile).
	f, link, drop, err := unnamedFile(dir)
	if err != nil {
		return nil, fmt.Errorf("seccomp cache: %w", err)
	}
	defer drop()
	defer f.Close() // after link: an unnamed file is linked by its descriptor
	if _, err := f.Write(data); err != nil {
		return nil, fmt.Errorf("seccomp cache: %w", err)
	}
	// Concurrent runs race to the same content: a name that exists holds
	// it already.
	if err := link(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("seccomp cache: %w", err)
	}
	return os.Open(path)
}

// programKey names a compiled profile: the profile itself and the binary
// that compiles it (a new cordon may compile differently).
func programKey(p *specs.LinuxSeccomp) (string, error) {
	h := sha256.New()
	// encoded into the hash: json.Marshal would copy the profile's tens of
	// kilobytes of JSON once more
	if err := json.NewEncoder(h).Encode(p); err != nil {
		return "", fmt.Errorf("seccomp profile: %w", err)
	}
	if exe, err := executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			h.Write([]byte(exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + fi.ModTime().String()))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// withoutSeccomp is s without its seccomp profile, for libcontainer's
// config: cordon's init installs the profile (seccompProgram), and
// converting its hundreds of rules to libcontainer's form, only to drop
// them, cost a cold run 40 kB of heap.
func withoutSeccomp(s *specs.Spec) *specs.Spec {
	if s.Linux == nil || s.Linux.Seccomp == nil {
		return s
	}
	linux := *s.Linux
	linux.Seccomp = nil
	rest := *s
	rest.Linux = &linux
	return &rest
}
