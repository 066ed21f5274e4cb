//go:build linux

package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The suite's shared state, set up once by TestMain.
var (
	// cordonBin is the cordon binary under test, in a directory every user
	// can read and execute.
	cordonBin string
	// helperBin is this test binary, copied where a sandbox can see it (not
	// under /tmp, which is private inside): run with helperEnv set, it is a
	// small tool for the inside of a sandbox (see helper_test.go).
	helperBin string
	// wsRoots are where workspaces live: outside /tmp (the default) and
	// under /tmp (bound on top of the sandbox's private /tmp).
	wsRootOutside, wsRootTmp string
	// suiteToken marks every process this suite starts in a sandbox (as
	// the value of suiteEnv) and the sleeps it starts (see uniqueSleep).
	suiteToken string
	// cgroupsBefore are the cordon cgroups that existed before the suite.
	cgroupsBefore map[string]bool
)

// testUserName is the unprivileged user the suite creates when it runs as
// root, and runs cordon as in the "user" variant of every test.
const testUserName = "cordon-test"

// Environment variables the suite sets in every run.
const (
	suiteEnv = "CORDON_IT_SUITE" // suiteToken
	boxEnv   = "CORDON_IT_BOX"   // the box's own token
)

// binaryEnv names a cordon binary to test instead of building one.
const binaryEnv = "CORDON_IT_BINARY"

func TestMain(m *testing.M) {
	if status, ok := runHelper(); ok {
		os.Exit(status)
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	cleanup, err := setupSuite()
	defer cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: setup: %v\n", err)
		return 1
	}
	code := m.Run()
	if left := sweep(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "--- FAIL: the suite left these behind:\n")
		for _, l := range left {
			fmt.Fprintf(os.Stderr, "    %s\n", l)
		}
		code = 1
	}
	return code
}

func setupSuite() (cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	suiteToken = randomDigits(5)
	cgroupsBefore = map[string]bool{}
	for _, d := range cgroupRunDirs("run-*") {
		cgroupsBefore[d] = true
	}

	modRoot, err := filepath.Abs("..")
	if err != nil {
		return cleanup, err
	}
	if _, err := os.Stat(filepath.Join(modRoot, "go.mod")); err != nil {
		return cleanup, fmt.Errorf("module root: %w", err)
	}

	// The binary must be reachable by every user: MkdirTemp makes 0700.
	binDir, err := os.MkdirTemp(os.TempDir(), "cordon-it-bin-")
	if err != nil {
		return cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(binDir) })
	if err := os.Chmod(binDir, 0o755); err != nil {
		return cleanup, err
	}
	cordonBin = filepath.Join(binDir, "cordon")
	if prebuilt := os.Getenv(binaryEnv); prebuilt != "" {
		// A binary built elsewhere (bisecting, a release build).
		if err := copyFile(prebuilt, cordonBin, 0o755); err != nil {
			return cleanup, fmt.Errorf("%s: %w", binaryEnv, err)
		}
	} else if err := buildCordon(modRoot, cordonBin); err != nil {
		return cleanup, err
	}

	if wsRootOutside, err = makeRoot("/var/tmp", "cordon-it-"); err != nil {
		return cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(wsRootOutside) })
	if wsRootTmp, err = makeRoot("/tmp", "cordon-it-ws-"); err != nil {
		return cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(wsRootTmp) })

	helperBin = filepath.Join(wsRootOutside, "helper")
	self, err := os.Executable()
	if err != nil {
		return cleanup, err
	}
	if err := copyFile(self, helperBin, 0o755); err != nil {
		return cleanup, fmt.Errorf("copy the helper: %w", err)
	}

	setupCallers()
	for _, c := range callers {
		if c.missing != "" {
			continue
		}
		dir, err := os.MkdirTemp(os.TempDir(), "cordon-it-cache-")
		if err != nil {
			return cleanup, err
		}
		undo = append(undo, func() { os.RemoveAll(dir) })
		if err := os.Chown(dir, c.uid, c.gid); err != nil && os.Geteuid() == 0 {
			return cleanup, err
		}
		c.cacheDir = dir
	}
	return cleanup, nil
}

// buildCordon builds cmd/cordon as `make build` does.
func buildCordon(modRoot, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	args := []string{"build", "-tags", "seccomp,runc_nocriu,netgo,osusergo", "-trimpath",
		"-ldflags", "-linkmode external -extldflags -static", "-o", out, "./cmd/cordon"}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = modRoot
	var outBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, outBuf.Bytes())
	}
	return nil
}

// makeRoot makes a directory every user can reach.
func makeRoot(parent, pattern string) (string, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

func randomDigits(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	var s strings.Builder
	for _, c := range b {
		s.WriteByte('1' + c%9) // no zeros: a sleep's fraction keeps every digit
	}
	return s.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// setupCallers fills callers: root when the suite runs as root, and an
// unprivileged user (created when the suite runs as root, otherwise the
// current user).
func setupCallers() {
	uid := os.Geteuid()
	if uid == 0 {
		callers["root"] = &caller{name: "root", uid: 0, gid: 0, username: "root"}
		u, err := ensureUser(testUserName)
		if err != nil {
			callers["user"] = &caller{name: "user", missing: fmt.Sprintf("the unprivileged user %s (%v)", testUserName, err)}
			return
		}
		callers["user"] = u
		return
	}
	callers["root"] = &caller{name: "root", missing: fmt.Sprintf("root (the suite runs as uid %d)", uid)}
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	callers["user"] = &caller{name: "user", uid: uid, gid: os.Getegid(), username: name}
}

// ensureUser creates the unprivileged test user unless it exists, and keeps
// it afterwards.
func ensureUser(name string) (*caller, error) {
	u, err := user.Lookup(name)
	if err != nil {
		out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/bash", name).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("useradd: %v: %s", err, bytes.TrimSpace(out))
		}
		if u, err = user.Lookup(name); err != nil {
			return nil, err
		}
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, err
	}
	return &caller{
		name: "user", uid: uid, gid: gid, username: name,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
	}, nil
}

// sweep lists what the suite left behind: processes of its sandboxes, state
// directories of its runs, cgroups of runs that are gone.
func sweep() []string {
	var left []string
	deadline := time.Now().Add(5 * time.Second)
	var procs []proc
	for {
		procs = procsWhere(func(p proc) bool {
			return p.env(suiteEnv) == suiteToken || strings.Contains(p.cmdline(), "."+suiteToken)
		})
		if len(procs) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range procs {
		left = append(left, fmt.Sprintf("process %d: %s", p.pid, p.cmdline()))
	}
	for _, c := range callers {
		if c.missing != "" {
			continue
		}
		for _, d := range stateRunDirs(c) {
			if ws := stateWorkspace(d); strings.HasPrefix(ws, wsRootOutside+"/") || strings.HasPrefix(ws, wsRootTmp+"/") {
				left = append(left, fmt.Sprintf("state directory %s (workspace %s)", d, ws))
			}
		}
	}
	// A cgroup of a run that is still live (someone else's) has its state
	// directory; one seen twice around the state listing without one is
	// left over.
	first := cgroupRunDirs("run-*")
	live := map[string]bool{}
	for _, root := range allStateRoots() {
		ds, _ := filepath.Glob(filepath.Join(root, "run-*"))
		for _, d := range ds {
			live[filepath.Base(d)] = true
		}
	}
	second := map[string]bool{}
	for _, d := range cgroupRunDirs("run-*") {
		second[d] = true
	}
	for _, d := range first {
		if !cgroupsBefore[d] && second[d] && !live[filepath.Base(d)] {
			left = append(left, "cgroup "+d)
		}
	}
	return left
}
