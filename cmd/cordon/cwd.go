package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/policy"
	"cordon.dev/cordon/spec"
)

// cordon run --cwd-fd N runs a shell command (bash -c COMMAND, as cordon
// hook claude writes it) so that its working directory can carry over to
// the next, as Claude Code's own shell does: when COMMAND ends with status
// 0, its shell writes the directory it ended in (pwd -P) on the command's
// descriptor 3, a pipe to cordon; cordon writes that directory on N when
// the host's directory at that path is the one the sandbox showed, and
// nothing otherwise (the caller's shell stays where it is). The command
// is as untrusted as what it says: a path the sandbox only made (its
// private /tmp), hid (a masked directory), or reached through a symbolic
// link on the host is not passed on.

// cwdArgs are the sandbox's arguments for a command run with --cwd-fd:
// COMMAND runs in bash as Claude Code runs it in its own shell (eval), with
// no descriptor 3 of its own.
func cwdArgs(args []string) ([]string, error) {
	var command string
	switch {
	case len(args) == 3 && args[0] == "bash" && args[1] == "-c":
		command = args[2]
	case len(args) == 4 && args[0] == "bash" && args[1] == "-c" && args[2] == "--":
		command = args[3]
	default:
		return nil, fmt.Errorf("--cwd-fd runs a command given as bash -c COMMAND, not %q", strings.Join(args, " "))
	}
	return []string{"bash", "-c", "eval -- " + policy.ShellQuote(command) + " 3>&- && { pwd -P >&3; :; } 2>/dev/null"}, nil
}

// cwdFile is the descriptor --cwd-fd names, closed to every program cordon
// starts: the caller waits for all of its copies to close.
func cwdFile(fd int) (*os.File, error) {
	if fd < 3 {
		return nil, fmt.Errorf("--cwd-fd %d: a descriptor above 2", fd)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, fmt.Errorf("--cwd-fd %d: %w", fd, err)
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "cwd-fd"), nil
}

// cwdReport reads what the command's shell says on its descriptor 3 and
// passes the directory on.
type cwdReport struct {
	out  *os.File // where the directory goes (--cwd-fd)
	w    *os.File // the command's descriptor 3
	said chan []byte
}

// maxCwdReport bounds what is read of the command's report: a path and
// its newline.
const maxCwdReport = 4096 + 1

// newCwdReport makes the pipe for the command's descriptor 3 and reads it
// to its end (a command that writes more is not blocked).
func newCwdReport(out *os.File) (*cwdReport, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("--cwd-fd: %w", err)
	}
	c := &cwdReport{out: out, w: w, said: make(chan []byte, 1)}
	go func() {
		defer r.Close()
		data, _ := io.ReadAll(io.LimitReader(r, maxCwdReport+1))
		_, _ = io.Copy(io.Discard, r)
		c.said <- data
	}()
	return c, nil
}

// done passes on the directory the command of s said it ended in, when
// status is 0 and the host's directory is the one the sandbox showed; then
// it closes out. The sandbox and every process of it are gone.
func (c *cwdReport) done(s *specs.Spec, status int) {
	c.w.Close()
	said := <-c.said
	defer c.out.Close()
	if status != 0 {
		return
	}
	if dir, ok := endDir(s, said); ok {
		_, _ = io.WriteString(c.out, dir)
	}
}

// close gives up on the report (the command did not run).
func (c *cwdReport) close() {
	c.w.Close()
	c.out.Close()
}

// endDir is the directory a command's shell said it ended in (pwd -P and
// a newline), when the host's directory at that path is the one the
// sandbox of s showed: bound from the same path (spec.SeesHost), with no
// symbolic link on the host's way to it, and a directory.
func endDir(s *specs.Spec, said []byte) (string, bool) {
	line, ok := bytes.CutSuffix(said, []byte("\n"))
	dir := string(line)
	if !ok || len(said) > maxCwdReport || bytes.ContainsAny(line, "\n\x00") || !spec.SeesHost(s, dir) {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return "", false
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	return dir, true
}
