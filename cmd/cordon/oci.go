package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"cordon.dev/cordon/runtime"
)

// The OCI verbs (create, start, state, kill, delete, exec, ps, pause,
// resume, update, events, features, and list and spec with runc's flags)
// are runc's command line, for containerd's runc shim (BinaryName), nerdctl
// (--runtime) and the OCI validation suite. They take runc's global flags,
// log as runc does, and fail as runc does: the error in the log (a JSON
// line with "level":"error" under --log-format json) and on stderr, exit
// status 1 (255 for exec).

// globalFlags are runc's global flags. They are persistent: accepted
// before the verb, as containerd passes them, and after it.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", Usage: "root `DIR` of the OCI containers' state (default: /run/cordon-oci as root, $XDG_RUNTIME_DIR/cordon-oci otherwise)"},
		&cli.StringFlag{Name: "log", Usage: "write the OCI verbs' log to `FILE` (default: stderr)"},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "the OCI verbs' log format: text or json"},
		&cli.BoolFlag{Name: "systemd-cgroup", Usage: "let systemd manage the containers' cgroups (cgroupsPath \"slice:prefix:name\"); refused where systemd does not run"},
		&cli.BoolFlag{Name: "debug", Usage: "log debug messages"},
		&cli.StringFlag{Name: "rootless", Value: "auto", Usage: "ignore cgroup permission errors: true, false or auto"},
	}
}

// ociCommands are the OCI verbs that are not also cordon commands.
func ociCommands() []*cli.Command {
	return []*cli.Command{
		ociCreateCommand(),
		ociStartCommand(),
		ociStateCommand(),
		ociKillCommand(),
		ociDeleteCommand(),
		ociExecCommand(),
		ociPsCommand(),
		ociPauseCommand(),
		ociResumeCommand(),
		ociUpdateCommand(),
		ociEventsCommand(),
		ociFeaturesCommand(),
		ociHookCommand(),
		ociMonitorCommand(),
	}
}

// ociRuntime is the runtime the global flags describe.
func ociRuntime(cmd *cli.Command) (runtime.OCI, error) {
	var root string
	if cmd.IsSet("root") {
		abs, err := filepath.Abs(cmd.String("root"))
		if err != nil {
			return runtime.OCI{}, err
		}
		if abs == "/" {
			return runtime.OCI{}, errors.New("option --root argument should not be set to /")
		}
		root = abs
	} else {
		var err error
		if root, err = runtime.DefaultOCIRoot(); err != nil {
			return runtime.OCI{}, err
		}
	}
	return runtime.OCI{
		Root:          root,
		SystemdCgroup: cmd.Bool("systemd-cgroup"),
		Rootless:      cmd.String("rootless"),
	}, nil
}

// ociAction wraps an OCI verb: it sets up runc's logging, and on failure
// logs the error, prints it on stderr (unless the log is stderr) and exits
// with status failStatus.
func ociAction(failStatus int, fn func(ctx context.Context, cmd *cli.Command, o runtime.OCI) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		err := runtime.ConfigureLog(cmd.String("log"), cmd.String("log-format"), cmd.Bool("debug"))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitStatus(1)
		}
		o, err := ociRuntime(cmd)
		if err == nil {
			err = fn(ctx, cmd, o)
		}
		var st exitStatus
		if err == nil || errors.As(err, &st) {
			return err
		}
		if !runtime.LogError(err) {
			fmt.Fprintln(stderr, err)
		}
		return exitStatus(failStatus)
	}
}

// Argument counts, checked as runc checks them.
const (
	exactArgs = iota
	minArgs
	maxArgs
)

func checkArgs(cmd *cli.Command, n, kind int) error {
	got := cmd.Args().Len()
	switch {
	case kind == exactArgs && got != n:
		return fmt.Errorf("cordon: %q requires exactly %d argument(s)", cmd.Name, n)
	case kind == minArgs && got < n:
		return fmt.Errorf("cordon: %q requires a minimum of %d argument(s)", cmd.Name, n)
	case kind == maxArgs && got > n:
		return fmt.Errorf("cordon: %q requires a maximum of %d argument(s)", cmd.Name, n)
	}
	return nil
}

// ociVerb is a verb on one container: exactly one argument, its id.
func ociVerb(name, usage string, fn func(o runtime.OCI, id string) error) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "CONTAINER-ID",
		Action: ociAction(1, func(_ context.Context, cmd *cli.Command, o runtime.OCI) error {
			if err := checkArgs(cmd, 1, exactArgs); err != nil {
				return err
			}
			return fn(o, cmd.Args().First())
		}),
	}
}
