package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"cordon.dev/cordon/runtime"
)

// A detached run is cordon itself, started again with the same arguments
// in a session of its own, with this variable naming the run: it keeps
// the sandbox (and its proxy and records) for as long as the command runs,
// its output goes to the run's log, and it says on descriptor 3 when the
// command has started.
const detachedEnv = "CORDON_DETACHED_ID"

// detachedID is the run id this process was started for with --detach,
// "" in a run of its own.
var detachedID = sync.OnceValue(func() string {
	id := os.Getenv(detachedEnv)
	// Not the command's to see.
	os.Unsetenv(detachedEnv)
	return id
})

// logsDir holds the logs of detached runs, which outlive their runs.
func logsDir() string { return filepath.Join(runtime.StoreDir(), "logs") }

// logPath is the log of the run id.
func logPath(id string) string { return filepath.Join(logsDir(), id+".log") }

// logLock is the file the detached run holds a lock on for as long as it
// may still write its log: its run ends (and leaves cordon list) before
// it writes the command's status, the log's last line.
func logLock(id string) string { return logPath(id) + ".lock" }

// writing reports whether the detached run id may still write its log.
func writing(id string) bool {
	f, err := os.Open(logLock(id))
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil
}

// logMax is the size at which a run's log is rotated (to NAME.log.1): a
// dev server logs for days; the log keeps its latest 8-16 MiB.
const logMax = 8 << 20

// logKeep is how long the log of a finished run is kept.
const logKeep = 7 * 24 * time.Hour

// detach starts the run in the background and returns once its command
// runs, printing the run's id; a run that cannot start is cordon's
// failure, with its reason.
func detach(cmd *cli.Command) error {
	if cmd.Bool("tty") {
		return errors.New("--detach and --tty do not go together: a detached run has no terminal (its output goes to cordon logs)")
	}
	id := runtime.NewID()
	if err := os.MkdirAll(logsDir(), 0o700); err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	pruneLogs()
	log, err := os.OpenFile(logPath(id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	defer log.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer readyR.Close()
	exe, err := os.Executable()
	if err != nil {
		readyW.Close()
		return err
	}
	child := exec.Command(exe, os.Args[1:]...)
	child.Env = append(os.Environ(), detachedEnv+"="+id)
	child.Stdin, child.Stdout, child.Stderr = null, log, log
	child.ExtraFiles = []*os.File{readyW}
	// A session of its own: no terminal, no hangup when the caller's
	// terminal goes.
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = child.Start()
	readyW.Close()
	if err != nil {
		return fmt.Errorf("start the detached run: %w", err)
	}
	ready, _ := io.ReadAll(readyR)
	if string(ready) == "ok" {
		_ = child.Process.Release()
		fmt.Fprintln(stdout, id)
		return nil
	}
	_ = child.Wait()
	data, _ := os.ReadFile(logPath(id))
	var reasons []string
	for _, l := range strings.Split(string(data), "\n") {
		if r, ok := strings.CutPrefix(l, "cordon: "); ok && !strings.HasPrefix(r, "warning: ") {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) == 0 {
		return fmt.Errorf("the detached run did not start (log: %s)", logPath(id))
	}
	return errors.New(reasons[len(reasons)-1])
}

// detachedIO sets up the detached run's side: the command's output, and
// cordon's own messages, go through a rotating log; started tells the
// caller the command runs. done ends the log with the command's status.
func detachedIO(id string) (out *os.File, started func(), done func(status int, err error), err error) {
	lock, err := os.OpenFile(logLock(id), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, nil, nil, fmt.Errorf("lock %s: %w", logLock(id), err)
	}
	rl, err := openRotating(logPath(id), logMax)
	if err != nil {
		lock.Close()
		return nil, nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		rl.Close()
		lock.Close()
		return nil, nil, nil, err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(rl, r)
	}()
	stderr = w
	ready := os.NewFile(3, "ready")
	started = func() {
		if ready != nil {
			_, _ = ready.WriteString("ok")
			ready.Close()
			ready = nil
		}
	}
	done = func(status int, err error) {
		if err == nil {
			fmt.Fprintf(w, "cordon: the command exited with status %d\n", status)
		}
		w.Close()
		<-copied
		rl.Close()
		lock.Close() // the log is complete
		// cordon's own failure, if any, is said last, straight to the log.
		stderr = os.Stderr
	}
	return w, started, done, nil
}

// rotating is a log file that moves itself to NAME.1 when it grows past
// max bytes.
type rotating struct {
	path string
	max  int64
	f    *os.File
	size int64
}

func openRotating(path string, max int64) (*rotating, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rotating{path: path, max: max, f: f, size: fi.Size()}, nil
}

func (r *rotating) Write(p []byte) (int, error) {
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		r.f.Close()
		if err := os.Rename(r.path, r.path+".1"); err != nil {
			return 0, err
		}
		f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return 0, err
		}
		r.f, r.size = f, 0
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotating) Close() error { return r.f.Close() }

// pruneLogs removes the logs of runs that ended more than logKeep ago.
func pruneLogs() {
	live := map[string]bool{}
	if list, err := runtime.List(runtime.StateRoot()); err == nil {
		for _, s := range list {
			live[s.ID] = true
		}
	}
	entries, _ := os.ReadDir(logsDir())
	for _, e := range entries {
		id, _, _ := strings.Cut(e.Name(), ".")
		info, err := e.Info()
		if err != nil || live[id] || time.Since(info.ModTime()) < logKeep {
			continue
		}
		os.Remove(filepath.Join(logsDir(), e.Name()))
	}
}

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print the output of a detached run (cordon run --detach)",
		ArgsUsage: "ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what the run writes until it ends"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return errors.New("logs takes one run id (cordon list shows them)")
			}
			id := cmd.Args().First()
			if strings.ContainsAny(id, "/\x00") || id == "" || id[0] == '.' {
				return fmt.Errorf("no run %q", id)
			}
			return printLog(ctx, stdout, id, cmd.Bool("follow"))
		},
	}
}

// printLog writes the run's log (its rotated part first) to w; with
// follow, it goes on until the run has ended and its log is read to the
// end.
func printLog(ctx context.Context, w io.Writer, id string, follow bool) error {
	path := logPath(id)
	if old, err := os.ReadFile(path + ".1"); err == nil {
		if _, err := w.Write(old); err != nil {
			return err
		}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no logs of run %s (only detached runs have logs; they are kept for 7 days after the run)", id)
	}
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		if !writing(id) && !running(id) {
			// It may have written a last line since the copy.
			_, err := io.Copy(w, f)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
		// Rotated meanwhile: the rest of the old file, then the new one.
		if st, err := os.Stat(path); err == nil {
			if cur, err := f.Stat(); err == nil && !os.SameFile(st, cur) {
				if _, err := io.Copy(w, f); err != nil {
					return err
				}
				nf, err := os.Open(path)
				if err != nil {
					return err
				}
				f.Close()
				f = nf
			}
		}
	}
}

// running reports whether the run id is live.
func running(id string) bool {
	list, err := runtime.List(runtime.StateRoot())
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list, func(s runtime.Sandbox) bool { return s.ID == id && !s.Orphaned })
}

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "end runs: SIGTERM to the command, SIGKILL to everything left after the grace time",
		ArgsUsage: "ID...",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "time", Aliases: []string{"t"}, Value: 10 * time.Second, Usage: "grace `DURATION` between SIGTERM and SIGKILL"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return errors.New("stop takes one or more run ids (cordon list shows them)")
			}
			root := runtime.StateRoot()
			list, err := runtime.List(root)
			if err != nil {
				return err
			}
			var errs []error
			for _, id := range cmd.Args().Slice() {
				i := slices.IndexFunc(list, func(s runtime.Sandbox) bool { return s.ID == id })
				if i < 0 {
					errs = append(errs, fmt.Errorf("no run %s", id))
					continue
				}
				if err := stop(ctx, root, list[i], cmd.Duration("time")); err != nil {
					errs = append(errs, fmt.Errorf("stop %s: %w", id, err))
				}
			}
			return errors.Join(errs...)
		},
	}
}

// stop asks the run's cordon to end the command (it passes SIGTERM on to
// the command's process group), and after grace kills that cordon, whose
// sandbox then ends with it; what is left, GC removes.
func stop(ctx context.Context, root string, s runtime.Sandbox, grace time.Duration) error {
	gone := func() bool { return !running(s.ID) }
	ownerGone := func() bool { _, err := os.Stat(filepath.Join("/proc", fmt.Sprint(s.Owner))); return err != nil }
	if !s.Orphaned {
		// Signals go through a handle on the process (a pidfd on Linux):
		// the owner's pid may be another process's by the time the grace
		// is over. The run still being live after the handle is taken
		// means the handle is its owner's.
		owner, err := os.FindProcess(s.Owner)
		if err != nil || gone() {
			return nil
		}
		defer owner.Release()
		if err := owner.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		if waitFor(ctx, grace, gone) {
			// The sandbox is gone; its cordon lets go of the run's lock
			// file just after, then exits.
			waitFor(ctx, 2*time.Second, ownerGone)
			return nil
		}
		if err := owner.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
	}
	// The init ends the sandbox when its cordon goes; GC removes the rest.
	waitFor(ctx, 2*time.Second, ownerGone)
	if _, err := runtime.GC(root); err != nil {
		return err
	}
	if list, err := runtime.List(root); err == nil && slices.ContainsFunc(list, func(l runtime.Sandbox) bool { return l.ID == s.ID }) {
		return errors.New("still there after SIGKILL")
	}
	return nil
}

// waitFor polls ok until it holds or d has passed.
func waitFor(ctx context.Context, d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if ok() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}
