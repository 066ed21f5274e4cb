package darwin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// SandboxExec is the only sandbox-exec cordon runs: one found on PATH could
// be anyone's.
const SandboxExec = "/usr/bin/sandbox-exec"

// Options are the host side of one run.
type Options struct {
	// Dir is the command's working directory.
	Dir string
	// Env is the command's environment (see Environ); nil is an empty one,
	// never cordon's own.
	Env []string
	// Stdin, Stdout and Stderr are the command's. A pipe or socket is
	// handed over as it is; anything else (a terminal, a file) is copied
	// through a pipe, so that the command never holds the user's terminal.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// PTY, when set, is the command's terminal: its controlling terminal
	// and its stdio. Stdin is copied to it (in raw mode when Stdin is a
	// terminal, whose size it follows) and its output to Stdout. Compile
	// the profile with its Name as Request.TTY.
	PTY *PTY
}

// outputDrain bounds the wait for the command's output after it ended,
// when something it started still holds the other end.
const outputDrain = 2 * time.Second

// forwarded are the signals cordon passes to the command's process group.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// Run executes argv under /usr/bin/sandbox-exec with the profile and
// returns its exit status: the command's, or 128+N when signal N ended it.
// The command leads a new session and process group; signals cordon
// receives are forwarded to the group, and the group is killed when ctx
// ends and when the command has exited (a process that started a session
// of its own escapes that: macOS has no pid namespace). When sandbox-exec
// itself fails (the profile is refused, the command is not found) its
// message is on the command's stderr and its status is returned as the
// command's; use Check to tell them apart beforehand. An error means the
// command could not be started, with status ExitCordonFailed.
func Run(ctx context.Context, profile string, argv []string, o Options) (int, error) {
	if len(argv) == 0 {
		return ExitCordonFailed, fmt.Errorf("%w: no command", ErrInvalid)
	}
	if profile == "" {
		return ExitCordonFailed, fmt.Errorf("%w: empty profile", ErrInvalid)
	}
	cmd := exec.Command(SandboxExec, append([]string{"-p", profile, "--"}, argv...)...)
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	var stop []func()
	defer func() {
		for i := len(stop) - 1; i >= 0; i-- {
			stop[i]()
		}
	}()

	var finish []func(time.Duration) // after the command: copy out what is left
	var childEnds []*os.File         // pipe ends cordon made for the command
	if o.PTY != nil {
		restore, err := o.PTY.attach(cmd, o.Stdin, o.Stdout)
		if err != nil {
			return ExitCordonFailed, err
		}
		stop = append(stop, restore)
		finish = append(finish, o.PTY.drain)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		stdin, closeStdin, err := inputPipe(o.Stdin)
		if err != nil {
			return ExitCordonFailed, err
		}
		stop = append(stop, closeStdin)
		cmd.Stdin = stdin
		if stdin != o.Stdin {
			childEnds = append(childEnds, stdin)
		}
		for _, out := range []struct {
			w   io.Writer
			dst *io.Writer
		}{{o.Stdout, &cmd.Stdout}, {o.Stderr, &cmd.Stderr}} {
			f, wait, err := outputPipe(out.w)
			if err != nil {
				return ExitCordonFailed, err
			}
			if f != nil {
				*out.dst = f
				if f != out.w {
					childEnds = append(childEnds, f)
				}
			}
			finish = append(finish, wait)
		}
	}

	if err := cmd.Start(); err != nil {
		return ExitCordonFailed, fmt.Errorf("start %s: %w", SandboxExec, err)
	}
	if o.PTY != nil {
		o.PTY.started()
	}
	// The command holds its ends now; cordon's copies would keep them open.
	for _, f := range childEnds {
		f.Close()
	}
	pid := cmd.Process.Pid
	group := func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				group(s.(syscall.Signal))
			case <-ctx.Done():
				group(syscall.SIGKILL)
				return
			case <-done:
				return
			}
		}
	}()

	err := cmd.Wait() // every stdio is an *os.File: this returns when the command exits
	// Nothing the command started in its group outlives it.
	group(syscall.SIGKILL)
	for _, f := range finish {
		f(outputDrain)
	}
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return exitStatus(cmd.ProcessState), nil
	}
	return ExitCordonFailed, fmt.Errorf("wait for %s: %w", SandboxExec, err)
}

// inputPipe returns what the command reads as stdin: r itself when it is a
// pipe or socket, an empty input when it is nil, and otherwise the read
// end of a pipe that a goroutine fills from r. The returned func closes
// cordon's ends.
func inputPipe(r io.Reader) (*os.File, func(), error) {
	if f, ok := r.(*os.File); ok && direct(f) {
		return f, func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if r == nil {
		pw.Close()
		return pr, func() { pr.Close() }, nil
	}
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	// The goroutine may stay blocked reading a terminal; closing the write
	// end makes its next write fail.
	return pr, func() { pr.Close(); pw.Close() }, nil
}

// outputPipe returns what the command writes to: w itself when it is a
// pipe or socket, nothing (/dev/null) when it is nil, and otherwise the
// write end of a pipe that a goroutine copies to w. The returned func, run
// after the command ended, waits up to a bound for the copy to finish: a
// process that escaped the group may hold the pipe open.
func outputPipe(w io.Writer) (*os.File, func(time.Duration), error) {
	if w == nil {
		return nil, func(time.Duration) {}, nil
	}
	if f, ok := w.(*os.File); ok && direct(f) {
		return f, func(time.Duration) {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("output pipe: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(w, pr)
		close(done)
	}()
	return pw, func(d time.Duration) {
		pw.Close()
		select {
		case <-done:
		case <-time.After(d):
			pr.Close()
			<-done
		}
	}, nil
}

// Check asks sandbox-exec to compile the profile, running /usr/bin/true
// under it, and returns its complaint when it refuses.
func Check(ctx context.Context, profile string) error {
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, SandboxExec, "-p", profile, "--", "/usr/bin/true")
	cmd.Env = []string{}
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sandbox-exec refused the profile: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
