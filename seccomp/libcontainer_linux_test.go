//go:build linux && cgo && seccomp

package seccomp

// This file compares Compile with runc's libcontainer itself, whose
// seccomp packages are real only with the seccomp build tag:
//
//	go test -tags seccomp ./seccomp/

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	lcseccomp "github.com/opencontainers/runc/libcontainer/seccomp"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// envVariant names the variant the "libcontainer" loader loads, and
// envFlags, when set, replaces its flags ("-" for an empty list).
const (
	envVariant = "CORDON_SECCOMP_TEST_VARIANT"
	envFlags   = "CORDON_SECCOMP_TEST_FLAGS"
)

func init() {
	// libcontainer's own loader, as runc's init calls it: the spec
	// profile converted by specconv, installed by InitSeccomp into the
	// calling thread, with the filter flags logged at debug level
	loaders["libcontainer"] = func(*specs.LinuxSeccomp) error {
		p, err := profileFor(os.Getenv(envVariant), os.Getenv(envFlags))
		if err != nil {
			return err
		}
		config, err := specconv.SetupSeccomp(p)
		if err != nil {
			return err
		}
		logrus.SetOutput(os.Stderr)
		logrus.SetLevel(logrus.DebugLevel)
		if err := setNoNewPrivs(); err != nil {
			return err
		}
		if _, err := lcseccomp.InitSeccomp(config); err != nil {
			return fmt.Errorf("libcontainer: %w", err)
		}
		return nil
	}
	// hold the filtered thread still for the parent to read its filter
	calls["pause"] = func(*fixtures) error {
		fmt.Printf("tid=%d\n", unix.Gettid())
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	}
}

// profileFor is a variant's profile, with flags replaced unless empty.
func profileFor(variant, flags string) (*specs.LinuxSeccomp, error) {
	i := slices.IndexFunc(variants, func(v struct {
		name string
		opts Options
	}) bool {
		return v.name == variant
	})
	if i < 0 {
		return nil, fmt.Errorf("no variant %q", variant)
	}
	p, err := Profile(variants[i].opts)
	if err != nil {
		return nil, err
	}
	switch flags {
	case "":
	case "-":
		p.Flags = []specs.LinuxSeccompFlag{}
	default:
		p.Flags = nil
		for f := range strings.SplitSeq(flags, ",") {
			p.Flags = append(p.Flags, specs.LinuxSeccompFlag(f))
		}
	}
	return p, nil
}

func TestCompileMatchesLibcontainer(t *testing.T) {
	// libcontainer loads its program into the kernel and nowhere else; a
	// child loads it, and this process reads it back as a tracer, which
	// needs CAP_SYS_ADMIN and no seccomp filter of its own
	// (PTRACE_SECCOMP_GET_FILTER).
	if os.Geteuid() != 0 {
		skipOrFail(t, "reading a filter back needs CAP_SYS_ADMIN (run as root)")
	}
	if mode := seccompMode(t); mode != "0" {
		skipOrFail(t, "this process runs under seccomp (mode "+mode+"): the kernel refuses to show filters to it")
	}
	ins := inputs()
	tests := []struct {
		variant, flags string
	}{
		{"amd64", ""},
		{"amd64_socketpair", ""},
		{"arm64", ""},
		{"riscv64", ""},
		{"amd64", "-"},
		{"amd64", string(specs.LinuxSeccompFlagLog)},
		{"amd64", string(specs.LinuxSeccompFlagLog) + "," + string(specs.LinuxSeccompFlagSpecAllow)},
	}
	for _, tc := range tests {
		t.Run(tc.variant+"/flags="+tc.flags, func(t *testing.T) {
			p, err := profileFor(tc.variant, tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			prog := mustCompile(t, p)
			theirs, theirFlags := libcontainerProgram(t, tc.variant, tc.flags)
			if theirFlags != prog.Flags {
				t.Errorf("flags %#x, libcontainer's %#x", prog.Flags, theirFlags)
			}
			t.Logf("%d instructions; libcontainer's %d", len(prog.Filter)/8, len(theirs)/8)
			// both end with libseccomp's program, byte for byte
			if plain := libseccompProgram(t, p); !bytes.HasSuffix(theirs, plain) || !bytes.HasSuffix(prog.Filter, plain) {
				t.Error("a program does not end with libseccomp's")
			}
			ours, lc := newProgramVM(t, prog.Filter), newProgramVM(t, theirs)
			isStubbed := stubbed(t, p)
			enosys := 0
			for _, in := range ins {
				got, want := ours.evalRaw(in.audit, in.nr, in.args...), lc.evalRaw(in.audit, in.nr, in.args...)
				if got != want {
					t.Fatalf("%v = %#x, libcontainer's program %#x", in, got, want)
				}
				if isStubbed(in) {
					enosys++
				}
			}
			if enosys == 0 {
				t.Error("no input reached the ENOSYS stub")
			}
		})
	}
}

// libcontainerProgram loads a profile with libcontainer in a child and
// returns the program the kernel holds for it, and the flags libcontainer
// passed to seccomp(2).
func libcontainerProgram(t *testing.T, variant, flags string) ([]byte, uint) {
	t.Helper()
	cmd := childCommand(t, "pause", envLoader+"=libcontainer", envVariant+"="+variant, envFlags+"="+flags)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.Bytes())
	}
	tid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "tid="))
	if err != nil {
		t.Fatalf("child said %q", line)
	}
	prog, err := seccompFilter(tid)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EIO) {
		skipOrFail(t, fmt.Sprintf("PTRACE_SECCOMP_GET_FILTER: %v (a kernel without CONFIG_CHECKPOINT_RESTORE?)", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.Bytes())
	}
	// runc's own integration tests read the flags from this debug line
	m := regexp.MustCompile(`seccomp filter flags: (\d+)`).FindSubmatch(stderr.Bytes())
	if m == nil {
		t.Fatalf("libcontainer logged no filter flags:\n%s", stderr.Bytes())
	}
	f, err := strconv.ParseUint(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return prog, uint(f)
}

// seccompFilter returns the newest seccomp filter of thread tid, as
// struct sock_filter[]: it seizes the thread, stops it, reads the filter
// and lets it go.
func seccompFilter(tid int) ([]byte, error) {
	// ptrace requests must come from the thread that seized
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ptrace := func(req, addr uintptr, data unsafe.Pointer) (uintptr, error) {
		r, _, e := unix.Syscall6(unix.SYS_PTRACE, req, uintptr(tid), addr, uintptr(data), 0, 0)
		if e != 0 {
			return 0, e
		}
		return r, nil
	}
	// no SIGSTOP, which would stop the child's other threads for good
	if _, err := ptrace(unix.PTRACE_SEIZE, 0, nil); err != nil {
		return nil, fmt.Errorf("PTRACE_SEIZE: %w", err)
	}
	defer ptrace(unix.PTRACE_DETACH, 0, nil)
	if _, err := ptrace(unix.PTRACE_INTERRUPT, 0, nil); err != nil {
		return nil, fmt.Errorf("PTRACE_INTERRUPT: %w", err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil {
		return nil, fmt.Errorf("wait for the stop: %w", err)
	}
	// index 0 is the newest filter; a nil buffer asks for its length
	n, err := ptrace(unix.PTRACE_SECCOMP_GET_FILTER, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER: %w", err)
	}
	filter := make([]unix.SockFilter, n)
	if _, err := ptrace(unix.PTRACE_SECCOMP_GET_FILTER, 0, unsafe.Pointer(&filter[0])); err != nil {
		return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER: %w", err)
	}
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(&filter[0])), len(filter)*8)), nil
}

// seccompMode is this process's Seccomp line of /proc/self/status.
func seccompMode(t *testing.T) string {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Seccomp:\s*(\d+)`).FindSubmatch(status)
	if m == nil {
		return "unknown"
	}
	return string(m[1])
}

// skipOrFail skips t for a missing need, or fails it with
// CORDON_INTEGRATION=1.
func skipOrFail(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CORDON_INTEGRATION") == "1" {
		t.Fatal(reason)
	}
	t.Skip(reason)
}
