//go:build unix

package darwin

import (
	"fmt"
	"os"
	"syscall"
)

// rlimitResources maps Rlimit names to setrlimit's resources.
var rlimitResources = map[string]int{"fsize": syscall.RLIMIT_FSIZE, "nofile": syscall.RLIMIT_NOFILE}

// LimitChild sets the rlimits and executes sandbox-exec when this process
// is cordon re-executed by Run to do so ("cordon darwin-rlimit-exec ...",
// see LimitArgs); otherwise it returns at once. Call it first in main, or
// in an init function of package main. It only ever executes
// /usr/bin/sandbox-exec, with the arguments it was given.
func LimitChild() {
	if len(os.Args) < 2 || os.Args[1] != LimitCommand {
		return
	}
	rl, args, err := ParseLimitArgs(os.Args[2:])
	if err != nil {
		limitFail(err)
	}
	for _, r := range rl {
		res, ok := rlimitResources[r.Name]
		if !ok {
			limitFail(fmt.Errorf("unknown limit %q", r.Name))
		}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(res, &cur); err != nil {
			limitFail(fmt.Errorf("read the %s limit: %w", r.Name, err))
		}
		v := clampRlimit(r.Value, cur.Max)
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			limitFail(fmt.Errorf("set the %s limit to %d: %w", r.Name, v, err))
		}
	}
	err = syscall.Exec(sandboxExec, append([]string{SandboxExec}, args...), os.Environ())
	limitFail(fmt.Errorf("execute %s: %w", sandboxExec, err))
}

func limitFail(err error) {
	fmt.Fprintf(os.Stderr, "cordon: %v\n", err)
	os.Exit(ExitCordonFailed)
}
