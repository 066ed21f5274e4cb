package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"cordon.dev/cordon/darwin"
	"cordon.dev/cordon/probe"
	"cordon.dev/cordon/runtime"
)

func init() {
	// cordon executed again by a run to set the command's rlimits does
	// that, executes sandbox-exec, and nothing else (darwin.LimitChild).
	darwin.LimitChild()
}

// runNative runs the command under sandbox-exec: macOS has no namespaces,
// so there is no OCI spec to execute (seatbelt_run.go).
func runNative(ctx context.Context, cmd *cli.Command) (bool, error) {
	if cmd.Bool("detach") {
		return true, errors.New("--detach: not available on macOS yet")
	}
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return true, fmt.Errorf("no command given (usage: cordon %s [flags] -- COMMAND [ARGS...])", cmd.Name)
	}
	pol, err := loadPolicy(cmd)
	if err != nil {
		return true, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return true, fmt.Errorf("working directory: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return true, fmt.Errorf("cordon's own path: %w", err)
	}
	terminal := term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	if cmd.IsSet("tty") {
		terminal = cmd.Bool("tty")
	}
	status, err := seatbeltRun(ctx, macOS, seatbeltRequest{
		policy: pol, args: args, cwd: cwd, self: self, environ: os.Environ(),
		terminal: terminal, stats: cmd.Bool("stats"), session: cmd.String("session"),
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
	})
	switch {
	case err != nil:
		return true, err
	case status != 0:
		return true, exitStatus(status)
	}
	return true, nil
}

// macOS is the system a macOS run uses.
var macOS = seatbeltSystem{
	run:   darwin.Run,
	check: darwin.Check,
	startMonitor: func(ctx context.Context, tag string, report func(darwin.Violation)) (func(time.Duration), error) {
		m, err := darwin.StartMonitor(ctx, tag, report)
		if err != nil {
			return nil, err
		}
		return func(flush time.Duration) { _ = m.Stop(flush) }, nil
	},
	openPTY: darwin.OpenPTY,
	stat:    os.Stat,
	fsys:    os.DirFS("/"),
	boot:    bootOnce,
	usage:   seatbeltUsage,
}

// bootOnce is what sayOnce needs to say a warning once per boot: the
// boot time stands for the boot's id.
func bootOnce() probe.Result {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return probe.Result{}
	}
	return probe.Result{BootID: fmt.Sprintf("%08x", tv.Sec)}
}

// seatbeltUsage is what the command used, from wait(2)'s resource usage:
// its own and that of the processes it waited for.
func seatbeltUsage(ps *os.ProcessState, wall time.Duration) runtime.Usage {
	u := runtime.Usage{Wall: wall, User: ps.UserTime(), System: ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		u.PeakMemory = ru.Maxrss // bytes on macOS
	}
	return u
}
