//go:build unix

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
	"sync/atomic"
	"syscall"
	"time"
)

// sandboxExec is the program Run executes: SandboxExec, which tests
// replace with a stand-in.
var sandboxExec = SandboxExec

// outputDrain bounds the wait for the command's output after it ended,
// when something it started still holds the other end.
const outputDrain = 2 * time.Second

// forwarded are the signals cordon passes to the command's process group.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// Run executes argv under /usr/bin/sandbox-exec with the profile and
// returns how it ended. The profile goes on sandbox-exec's command line,
// or, when that would not fit in ARG_MAX with argv and the environment,
// in a private temporary file removed afterwards. The command leads a new
// session and process group; signals cordon receives are forwarded to the
// group, and the group is killed when ctx ends, when the timeout fires and
// when the command has exited (a process that started a session of its
// own escapes that: macOS has no pid namespace). When sandbox-exec itself
// fails (the profile is refused: ExitProfileRefused; the command cannot
// be executed: ExitExecFailed) its message is on the command's stderr and
// its status is returned as the command's; use LookCommand before and
// Check after to tell them apart. An error means the command could not be
// started, with status ExitCordonFailed.
func Run(ctx context.Context, profile string, argv []string, o Options) (Result, error) {
	failed := Result{Status: ExitCordonFailed}
	if len(argv) == 0 {
		return failed, fmt.Errorf("%w: no command", ErrInvalid)
	}
	if profile == "" {
		return failed, fmt.Errorf("%w: empty profile", ErrInvalid)
	}
	if len(o.Rlimits) > 0 && o.Self == "" {
		return failed, fmt.Errorf("%w: rlimits without cordon's own path", ErrInvalid)
	}
	env := o.Env
	if env == nil {
		env = []string{}
	}
	cmd, removeProfile, err := command(profile, argv, env, o.Rlimits, o.Self)
	if err != nil {
		return failed, err
	}
	defer removeProfile()
	cmd.Dir = o.Dir
	cmd.Env = env
	var stop []func()
	defer func() {
		for i := len(stop) - 1; i >= 0; i-- {
			stop[i]()
		}
	}()

	stdout, stderr := o.Stdout, o.Stderr
	var limited []*limitWriter
	if o.OutputLimit > 0 {
		if stdout != nil {
			lw := newLimitWriter(stdout, "stdout", o.OutputLimit)
			stdout, limited = lw, append(limited, lw)
		}
		if stderr != nil && o.PTY == nil {
			lw := newLimitWriter(stderr, "stderr", o.OutputLimit)
			stderr, limited = lw, append(limited, lw)
		}
	}

	var finish []func(time.Duration) // after the command: copy out what is left
	var childEnds []*os.File         // pipe ends cordon made for the command
	if o.PTY != nil {
		restore, err := o.PTY.attach(cmd, o.Stdin, stdout)
		if err != nil {
			return failed, err
		}
		stop = append(stop, restore)
		finish = append(finish, o.PTY.drain)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		stdin, closeStdin, err := inputPipe(o.Stdin)
		if err != nil {
			return failed, err
		}
		stop = append(stop, closeStdin)
		cmd.Stdin = stdin
		if stdin != o.Stdin {
			childEnds = append(childEnds, stdin)
		}
		for _, out := range []struct {
			w   io.Writer
			dst *io.Writer
		}{{stdout, &cmd.Stdout}, {stderr, &cmd.Stderr}} {
			f, wait, err := outputPipe(out.w)
			if err != nil {
				return failed, err
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

	// Signals are forwarded from the moment the command exists.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		for _, f := range childEnds {
			f.Close()
		}
		return failed, fmt.Errorf("start %s: %w", cmd.Path, err)
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
	if o.Started != nil {
		o.Started(pid)
	}

	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var timedOut atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				group(s.(syscall.Signal))
			case <-timeout:
				timedOut.Store(true)
				group(syscall.SIGKILL)
				return
			case <-ctx.Done():
				group(syscall.SIGKILL)
				return
			case <-done:
				return
			}
		}
	}()

	err = cmd.Wait() // every stdio is an *os.File: this returns when the command exits
	// Nothing the command started in its group outlives it.
	group(syscall.SIGKILL)
	for _, f := range finish {
		f(outputDrain)
	}
	for _, lw := range limited {
		lw.Done()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return failed, fmt.Errorf("wait for %s: %w", cmd.Path, err)
	}
	status := runStatus(cmd.ProcessState, timedOut.Load())
	return Result{Status: status, TimedOut: timedOut.Load() && status == ExitTimedOut, State: cmd.ProcessState}, nil
}

// command prepares the exec.Cmd that runs argv under the profile, and a
// func that removes the profile's file when one was needed.
func command(profile string, argv, env []string, rl []Rlimit, self string) (*exec.Cmd, func(), error) {
	file, remove := "", func() {}
	if !Inline(profile, argv, env) {
		f, err := os.CreateTemp("", "cordon-profile-*.sb")
		if err != nil {
			return nil, nil, fmt.Errorf("profile file: %w", err)
		}
		remove = func() { os.Remove(f.Name()) }
		_, err = f.WriteString(profile)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			remove()
			return nil, nil, fmt.Errorf("profile file: %w", err)
		}
		file = f.Name()
	}
	path, args := Command(self, rl, profile, file, argv)
	if path == SandboxExec {
		path = sandboxExec
	}
	cmd := exec.Command(path)
	cmd.Args = args
	return cmd, remove, nil
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
	cmd, remove, err := command(profile, []string{"/usr/bin/true"}, nil, nil, "")
	if err != nil {
		return err
	}
	defer remove()
	var stderr strings.Builder
	cmd.Env = []string{}
	cmd.Stderr = &stderr
	if err := runContext(ctx, cmd); err != nil {
		return fmt.Errorf("sandbox-exec refused the profile: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// runContext runs cmd, killing it when ctx ends.
func runContext(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	return cmd.Wait()
}
